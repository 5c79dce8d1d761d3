"""CPU per rollout of the concurrency figure, in one process, with its profile (issue 30).

Runs `orchestra.rl.batches.rollouts` against the loopback mock model (`orchestra_dev.mock_openai`)
as `run_all.py --only concurrency` does, but with the mock server in a **child process**, so that
`time.process_time()` and the profile are orchestra's alone. One warm-up batch first (imports, the
scenario's template, the judge), then `--repeats` measured batches; prints CPU ms per rollout, and
with `--profile` the cProfile of the last batch grouped into the parts of a rollout.

    .venv/bin/python benchmarks/profile_rollout.py --rollouts 32 --concurrency 8 --steps 4 --profile
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "devtools"))

#: The parts of a rollout, each a list of (file fragment, function name or None) whose cumulative
#: time is attributed to that part (first match wins, outermost frames first).
PARTS: list[tuple[str, list[tuple[str, str | None]]]] = [
    ("cold start (Session.start)", [("orchestra/session.py", "start")]),
    ("model client", [("orchestra/openai_client.py", "complete_openai")]),
    ("judge + finish", [("orchestra/session.py", "finish"), ("orchestra/rollout.py", "_record"), ("orchestra/record.py", None)]),
    ("close", [("orchestra/session.py", "close")]),
]


def serve_mock(latency: float) -> tuple[subprocess.Popen[str], str]:
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[2]);"
        "from orchestra_dev.mock_openai import MockServer\n"
        "with MockServer(latency=float(sys.argv[1])) as s:\n"
        "    print(s.base_url, flush=True)\n"
        "    sys.stdin.read()\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(latency), str(REPO / "devtools")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def smallest_scenario() -> Path:
    files = sorted((p for p in (REPO / "scenarios").rglob("*.json") if p.name != "manifest.json"), key=lambda p: (p.stat().st_size, str(p)))
    return files[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rollouts", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--steps", type=int, default=4, help="model calls per rollout (EnvConfig.max_steps)")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="profile the last batch")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--dump", help="write the last batch's pstats here")
    args = parser.parse_args()

    import anyio

    import orchestra
    from orchestra.are.judge_pool import JudgePool
    from orchestra.rl import EnvConfig
    from orchestra.rl.batches import rollouts

    print(f"orchestra from {orchestra.__file__}", file=sys.stderr)
    path = smallest_scenario()
    config = EnvConfig(max_steps=args.steps)
    pool = JudgePool()
    proc, url = serve_mock(args.latency)
    try:

        def batch(n: int, offset: int) -> list[Any]:
            specs = [config.spec(str(path), sample_index=offset + i) for i in range(n)]

            async def go() -> list[Any]:
                return [r async for r in rollouts(specs, url, model="bench", concurrency=args.concurrency, judge_pool=pool)]

            return anyio.run(go)

        def warm_up() -> None:  # imports, the scenario's template, the judges (named: a sampling profiler's stacks tell it apart)
            batch(args.concurrency, 10_000)

        def measured(offset: int) -> list[Any]:
            return batch(args.rollouts, offset)

        warm_up()
        while pool.builds < args.concurrency:
            pool.warm()
        per: list[float] = []
        prof = None
        for r in range(args.repeats):
            last = r == args.repeats - 1
            if last and args.profile:
                prof = cProfile.Profile(time.process_time)
                prof.enable()
            c0 = time.process_time()
            records = measured(r * args.rollouts)
            cpu = time.process_time() - c0
            if prof is not None:
                prof.disable()
            errors = [x.error for x in records if x.error]
            calls = sum(x.result.model_calls for x in records if x.result)
            per.append(cpu / len(records))
            print(
                f"batch {r}: {len(records)} rollouts, {calls} model calls, {len(errors)} errors, CPU {cpu * 1000:.0f} ms = {cpu / len(records) * 1000:.2f} ms/rollout"
            )
            if errors:
                print(errors[0])
        per.sort()
        print(f"CPU per rollout: median {per[len(per) // 2] * 1000:.2f} ms, min {per[0] * 1000:.2f} ms")
        if prof is not None:
            n = args.rollouts
            stats = pstats.Stats(prof)
            if args.dump:
                stats.dump_stats(args.dump)
            total = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
            print(f"\nprofiled batch: {total * 1000 / n:.2f} ms/rollout of own time (profiler overhead included)")
            for name, matches in PARTS:
                cum = 0.0
                for (file, _line, func), v in stats.stats.items():  # type: ignore[attr-defined]
                    if any(f in file and (fn is None or fn == func) for f, fn in matches):
                        cum = max(cum, v[3])
                print(f"  {name:32s} {cum * 1000 / n:7.2f} ms/rollout (cumulative of its outermost frame)")
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(args.top)
            print(out.getvalue())
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(args.top + 20)
            print(out.getvalue())
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(10)


if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
