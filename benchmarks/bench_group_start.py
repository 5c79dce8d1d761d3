"""Group starts: `GaiaEnv.reset_group(n=8)` on the 2.6 MB universe against one cold start, in one run.

A GRPO group loads its scenario once and starts every member from a copy of the loaded world
(`orchestra.are.loading.ScenarioTemplate`); this measures what that costs. Both figures come from
the same process, each after a warm-up of its own kind, with warm starts between calls turned off
(`ORCHESTRA_WARM_STARTS=0`) so the cold start is a cold start and the group pays its own load.
Reported: wall and CPU seconds of one cold `reset`, of `reset_group(n)`, their ratio (the target is
<= 2.0 for n = 8), and whether the members' initial-state hashes are equal (they must be).

    ORCHESTRA_WARM_STARTS=0 .venv/bin/python benchmarks/bench_group_start.py [--n 8] [--repeats 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: The bundled corpus's largest universe (2.6 MB).
BIG = "univ_00_search_cab_spend"


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scenario", default=None, help="a scenario file (default: the bundled 2.6 MB universe's)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    os.environ["ORCHESTRA_WARM_STARTS"] = "0"
    import anyio

    from orchestra.rl import EnvConfig, GaiaEnv
    from orchestra.scenario_files import resolve

    path = args.scenario or str(next(iter(resolve(["bundled"], scenario_ids=[BIG]))).path)

    async def measure() -> dict[str, object]:
        env = GaiaEnv(EnvConfig())
        await env.reset(path)  # imports, the judge pool
        env.close()
        await env.reset_group(path, 2)
        env.close()
        cold, group, hashes = [], [], set()
        for _ in range(args.repeats):
            t, c = time.perf_counter(), time.process_time()
            await env.reset(path)
            cold.append((time.perf_counter() - t, time.process_time() - c))
            env.close()
            t, c = time.perf_counter(), time.process_time()
            members = await env.reset_group(path, args.n)
            group.append((time.perf_counter() - t, time.process_time() - c))
            hashes |= {m.initial_state_sha256 for m in members}
            env.close()
        cold_wall, group_wall = statistics.median(w for w, _ in cold), statistics.median(w for w, _ in group)
        return {
            "scenario": Path(path).stem,
            "n": args.n,
            "cold_wall_s": round(cold_wall, 3),
            "cold_cpu_s": round(statistics.median(c for _, c in cold), 3),
            "group_wall_s": round(group_wall, 3),
            "group_cpu_s": round(statistics.median(c for _, c in group), 3),
            "ratio": round(group_wall / cold_wall, 2),
            "identical_initial_states": len(hashes) == 1,
        }

    result = anyio.run(measure)
    print(
        f"{result['scenario']}: one cold reset {result['cold_wall_s']} s (CPU {result['cold_cpu_s']} s); reset_group(n={args.n}) "
        f"{result['group_wall_s']} s (CPU {result['group_cpu_s']} s): {result['ratio']}x one cold start (target <= 2.0); "
        f"initial states identical: {result['identical_initial_states']}"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    sys.exit(0 if main()["identical_initial_states"] else 1)
