"""Executors benchmark: rollouts per second with `local`, `process` and `ray`, in one run.

Runs the oracle team (`orchestra/teams/shipped/oracle.yaml`) over the whole bundled corpus with each executor in
turn, in this same process — `local` (one rollout at a time on this event loop, the baseline),
`process` (`--workers` worker processes) and `ray` (`--workers` actors on a private local Ray
cluster) — and prints wall seconds, rollouts per second and the ratio to `local`. Worker start-up
(spawning, importing ARE, building a judge; the Ray cluster's start) is included: it is what a
command pays. It also checks that the three executors gave identical records (event-log hashes
included) and exits 1 otherwise.

    .venv/bin/python benchmarks/bench_executors.py [--workers 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2, help="worker processes / Ray actors (default 2: this machine's cores)")
    parser.add_argument("--executors", nargs="+", default=["local", "process", "ray"])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)

    from orchestra.record import RolloutRecord
    from orchestra.runs.run_dir import rollout_key
    from orchestra.runs.runner import execute_all, specs_for
    from orchestra.scenario_files import resolve
    from orchestra.teams.loading import read_team, team_path

    batch = specs_for(resolve([str(ROOT / "scenarios")]), team=read_team(team_path("oracle")).config)
    rows: list[dict[str, object]] = []
    records: dict[str, dict[str, str]] = {}
    for name in args.executors:

        async def go(name: str = name) -> list[RolloutRecord]:
            workers = None if name == "local" else args.workers
            return [r async for r in execute_all(batch, executor=name, workers=workers)]

        start = time.perf_counter()
        done = anyio.run(go)
        seconds = time.perf_counter() - start
        records[name] = {rollout_key(r.spec): r.model_dump_json() for r in done if r.spec is not None}
        passed = sum(r.status == "PASS" for r in done)
        rows.append(
            {"executor": name, "workers": 1 if name == "local" else args.workers, "rollouts": len(done), "passed": passed, "seconds": round(seconds, 2)}
        )
        print(f"{name:8} {len(done)} rollouts, {passed} passed, {seconds:.1f} s", file=sys.stderr, flush=True)

    base = next((float(str(r["seconds"])) for r in rows if r["executor"] == "local"), None)
    print(f"\n{'executor':9} {'workers':>7} {'rollouts':>8} {'seconds':>8} {'rollouts/s':>10} {'vs local':>8}")
    for row in rows:
        seconds = float(str(row["seconds"]))
        row["rollouts_per_second"] = round(int(str(row["rollouts"])) / seconds, 3)
        row["speedup_vs_local"] = round(base / seconds, 2) if base else None
        print(
            f"{row['executor']!s:9} {row['workers']!s:>7} {row['rollouts']!s:>8} {seconds:8.1f} {row['rollouts_per_second']!s:>10} "
            f"{(str(row['speedup_vs_local']) + 'x') if base else '-':>8}"
        )
    reference = records[args.executors[0]]
    same = all(r == reference for r in records.values())
    print(f"\nrecords identical across executors (event-log hashes included): {same}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "identical": same, "cpus": os.cpu_count()}, indent=1) + "\n")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
