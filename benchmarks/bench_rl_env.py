"""RL-environment benchmark: `are-gaia2`'s own overhead per `env_response`, against the model call.

verifiers' rollout loop (0.3.1, v0) times every turn itself: the model call (`timing.model.spans`)
and the environment's part (`timing.env.spans`: `get_prompt_messages`, i.e. our `env_response` —
applying the completion to the orchestra rollout, the tool call in ARE, the clock, notifications,
and running the agent loop to its next request). The model is a fixed-latency OpenAI-compatible
mock server on loopback (`devtools/orchestra_dev/mock_openai.py`, `--latency` s per call) that
answers a read tool call every time, so each episode runs `--turns` turns; verifiers' own OpenAI
client talks to it over HTTP. Scenario loading (`setup_state`) is not an `env_response` and is
not counted. Reported: median and p99 (ms) of both, and env/model as ratios measured in the same
run, at 1 and at 64 concurrent rollouts (`--concurrency 1 64`).

    .venv/bin/python benchmarks/bench_rl_env.py [--latency 0.05] [--turns 8] [--concurrency 1 64] [--json OUT]

64 concurrent rollouts need 64 judges (ARE's judge costs seconds to build, once per process).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "devtools"))

from orchestra_dev.mock_openai import MockServer  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def measure(concurrency: int, *, latency: float, turns: int) -> dict[str, Any]:
    import verifiers as vf

    os.environ.setdefault("BENCH_MOCK_KEY", "none")
    env = vf.load_environment("are-gaia2", source="bundled", capability="mini", max_turns=turns)
    n_examples = len(env.get_eval_dataset())
    rollouts = max(concurrency, 4)
    per_example = -(-rollouts // n_examples)
    with MockServer(latency=latency) as server:
        client = vf.ClientConfig(api_base_url=server.base_url, api_key_var="BENCH_MOCK_KEY", max_retries=0)
        started = time.perf_counter()
        out = asyncio.run(
            env.evaluate(
                client, "mock-policy", num_examples=n_examples, rollouts_per_example=per_example, max_concurrent=concurrency, on_progress=lambda *a, **k: None
            )
        )
        wall = time.perf_counter() - started
    env_ms: list[float] = []
    model_ms: list[float] = []
    errors = 0
    for o in out["outputs"]:
        errors += o.get("error") is not None
        timing = o["timing"]
        timing = timing if isinstance(timing, dict) else timing.model_dump()
        env_ms += [(s["end"] - s["start"]) * 1000 for s in timing["env"]["spans"]]
        model_ms += [(s["end"] - s["start"]) * 1000 for s in timing["model"]["spans"]]
    row = {
        "concurrency": concurrency,
        "rollouts": len(out["outputs"]),
        "errors": errors,
        "env_responses": len(env_ms),
        "model_calls": len(model_ms),
        "env_median_ms": statistics.median(env_ms),
        "env_p99_ms": pct(env_ms, 0.99),
        "model_median_ms": statistics.median(model_ms),
        "model_p99_ms": pct(model_ms, 0.99),
        "wall_s": wall,
    }
    row["median_ratio"] = row["env_median_ms"] / row["model_median_ms"]
    row["p99_ratio"] = row["env_p99_ms"] / row["model_p99_ms"]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05, help="the mock model's fixed latency per call (s)")
    parser.add_argument("--turns", type=int, default=8, help="turns per rollout (max_turns)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 64])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    rows = [measure(c, latency=args.latency, turns=args.turns) for c in args.concurrency]
    print(f"mock model latency {args.latency * 1000:.0f} ms, {args.turns} turns per rollout (ms; ratio = env_response / model call)")
    print(f"{'conc':>4} {'rollouts':>8} {'env med':>8} {'env p99':>8} {'model med':>9} {'model p99':>9} {'med ratio':>9} {'p99 ratio':>9}")
    for r in rows:
        print(
            f"{r['concurrency']:>4} {r['rollouts']:>8} {r['env_median_ms']:>8.1f} {r['env_p99_ms']:>8.1f} {r['model_median_ms']:>9.1f} "
            f"{r['model_p99_ms']:>9.1f} {r['median_ratio']:>9.2f} {r['p99_ratio']:>9.2f}"
        )
    if args.json:
        args.json.write_text(json.dumps({"latency_s": args.latency, "turns": args.turns, "rows": rows}, indent=2))
    return 0 if all(r["errors"] == 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
