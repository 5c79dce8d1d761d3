"""Judge-pool benchmark: 16 concurrent `GaiaEnv.reset`s of one scenario against one, per judge mode.

A reset loads the scenario, runs ARE's oracle pre-run and sets up the judge. Concurrent episodes
each need their own judge; the pool builds the first (3-6 s: ARE compiles its checkers' prompt
templates) and clones it for the others (`orchestra.are.judges.clone_judge`, as the scripted
judge's `clone_scripted_judge`). Every figure starts from a new pool (`new_judge_pool`), so "one
reset" is what the first episode of a process costs (a build and a reset), and "16 concurrent"
is 16 episodes opened at once (one build, 15 clones, 16 resets). Reported, per mode: both wall
times and their ratio (target <= 2), measured in the same run; with `--baseline`, also 16
concurrent strict resets from a pool that builds every judge (no clones: the old behaviour) and
its ratio to one reset. Then, for information, the same from a warm pool (16 idle judges): one
reset and 16 concurrent ones (the resets themselves are CPU-bound: this ratio grows with N on a
machine with fewer than N cores).

    .venv/bin/python benchmarks/bench_judge_pool.py [--scenario PATH] [--n 16] [--baseline] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SCENARIO = REPO / "scenarios" / "execution" / "validation" / "starter_execution_calendar.json"


async def _resets(pool: Any, mode: str, scenario: Path, n: int) -> float:
    """Wall seconds of `n` concurrent resets of `scenario` with judges from `pool`."""
    from orchestra.judging.settings import JudgeConfig
    from orchestra.rl.env import EnvConfig, GaiaEnv

    config = EnvConfig(judge=JudgeConfig(mode=mode))
    envs = [GaiaEnv(config, judge_pool=pool) for _ in range(n)]
    started = time.perf_counter()
    await asyncio.gather(*(env.reset(scenario, seed=0) for env in envs))
    wall = time.perf_counter() - started
    for env in envs:
        env.close()
    return wall


def measure(mode: str, scenario: Path, n: int, *, baseline: bool) -> dict[str, Any]:
    from orchestra.are.judge_pool import JudgePool
    from orchestra.are.judges import BUILTIN_JUDGES, new_judge_pool
    from orchestra.judging.settings import JudgeConfig

    config = JudgeConfig(mode=mode)
    one = asyncio.run(_resets(new_judge_pool(config), mode, scenario, 1))
    pool = new_judge_pool(config)
    many = asyncio.run(_resets(pool, mode, scenario, n))
    row: dict[str, Any] = {"mode": mode, "n": n, "one_s": one, "many_s": many, "ratio": many / one, "builds": pool.builds - pool.clones, "clones": pool.clones}
    row["warm_one_s"] = asyncio.run(_resets(pool, mode, scenario, 1))
    row["warm_many_s"] = asyncio.run(_resets(pool, mode, scenario, n))
    row["warm_ratio"] = row["warm_many_s"] / row["warm_one_s"]
    if baseline:
        built = JudgePool(lambda: BUILTIN_JUDGES[mode](config), mode=mode)  # no clone: every judge is built
        row["built_many_s"] = asyncio.run(_resets(built, mode, scenario, n))
        row["built_ratio"] = row["built_many_s"] / one
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", type=Path, default=DEFAULT_SCENARIO)
    parser.add_argument("--n", type=int, default=16, help="concurrent resets")
    parser.add_argument("--modes", nargs="+", default=["scripted", "strict"], choices=["scripted", "strict"])
    parser.add_argument("--baseline", action="store_true", help="also time N concurrent resets from a pool that builds every judge (N builds: minutes)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    sys.path.insert(0, str(REPO))
    from orchestra.are.judges import new_judge_pool
    from orchestra.judging.settings import JudgeConfig

    asyncio.run(_resets(new_judge_pool(JudgeConfig()), "scripted", args.scenario, 1))  # imports ARE, litellm: a process's cost, not a reset's
    rows = [measure(mode, args.scenario, args.n, baseline=args.baseline and mode != "scripted") for mode in args.modes]
    print(f"{args.scenario.name}: one reset vs {args.n} concurrent, each from a new pool (s; target ratio <= 2)")
    print(
        f"{'judge':>8} {'one':>7} {args.n:>5}x {'ratio':>6} {'built':>5} {'cloned':>6} | {'warm one':>8} {'warm':>6} {'ratio':>6} | {'no clones':>9} {'ratio':>6}"
    )
    for r in rows:
        built = f"{r['built_many_s']:>9.2f} {r['built_ratio']:>6.2f}" if "built_many_s" in r else f"{'-':>9} {'-':>6}"
        print(
            f"{r['mode']:>8} {r['one_s']:>7.2f} {r['many_s']:>6.2f} {r['ratio']:>6.2f} {r['builds']:>5} {r['clones']:>6} | "
            f"{r['warm_one_s']:>8.3f} {r['warm_many_s']:>6.2f} {r['warm_ratio']:>6.1f} | {built}"
        )
    if args.json:
        args.json.write_text(json.dumps({"scenario": str(args.scenario), "n": args.n, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
