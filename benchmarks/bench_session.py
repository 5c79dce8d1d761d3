"""Session benchmark: orchestra's rollout machinery against ARE's own, measured in one process.

Reports, on the largest bundled scenario (by file size):

1. cold start — read + parse + preprocess (oracle run, turns) + judge ready + environment started —
   with a warm judge from orchestra's pool, against ARE's own `preprocess_scenario` with the same
   scripted judge config (which builds a judge every time): ratio ARE / orchestra;
2. per-step overhead — one cheap READ tool call through `Session.call_tool` (argument check, event
   logging, clock advance, event processing) against calling the same ARE `AppTool` directly:
   ratio orchestra / raw;
3. a whole oracle rollout — orchestra's oracle replay + judging, against the same scenario through
   ARE's own oracle harness (`ScenarioRunner` with `oracle=True`, as `are-benchmark run --oracle`):
   ratio ARE / orchestra.

Every figure is a median over `--repeats` runs; all baselines run in this same process, so the
ratios hold on any machine. Wall times are printed for context only.

    .venv/bin/python benchmarks/bench_session.py [--repeats 5] [--scenario PATH] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[1]


def median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def largest_scenario() -> Path:
    files = sorted((REPO / "scenarios").rglob("*.json"), key=lambda p: (p.stat().st_size, str(p)))
    if not files:
        sys.exit("no bundled scenarios under scenarios/")
    return files[-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=200, help="tool calls per per-step measurement")
    ap.add_argument("--scenario", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as JSON")
    args = ap.parse_args()
    logging.disable(logging.WARNING)

    from orchestra.are import judge_pool
    from orchestra.are.judge_pool import _no_llm_engine
    from orchestra.oracle.replay import build_plan, replay
    from orchestra.scenario_files import read_scenario_file
    from orchestra.session import Session

    path = args.scenario or largest_scenario()
    file = read_scenario_file(path)
    print(f"scenario: {path.relative_to(REPO) if path.is_relative_to(REPO) else path} ({path.stat().st_size:,} bytes)")

    pool = judge_pool.JudgePool()
    t0 = time.perf_counter()
    pool.warm()
    judge_build = time.perf_counter() - t0

    # 1. cold start with a warm judge vs ARE's preprocess_scenario (judge built inside)
    def orchestra_cold_start() -> None:
        with Session.open(read_scenario_file(path), judge_pool=pool):
            pass

    from are.simulation.data_handler.importer import JsonScenarioImporter
    from are.simulation.scenarios.scenario_imported_from_json.utils import preprocess_scenario
    from are.simulation.validation import ScriptedGraphPerEventJudgeConfig

    def are_cold_start() -> None:
        sc, _, _ = JsonScenarioImporter().import_from_json_to_benchmark(path.read_text(), load_completed_events=False)
        preprocess_scenario(sc, judge_config=ScriptedGraphPerEventJudgeConfig(engine=_no_llm_engine), max_scenario_duration=1800)

    orch_cold = median_seconds(orchestra_cold_start, args.repeats)
    are_cold = median_seconds(are_cold_start, max(1, min(args.repeats, 3)))

    # 2. per-step overhead: Session.call_tool vs the raw ARE AppTool
    tool_name = "SystemApp__get_current_time"
    with Session.open(file, judge_pool=pool) as s:
        _, raw_tool = s._tools[tool_name]

        def session_steps() -> None:
            for _ in range(args.steps):
                s.call_tool(tool_name, {})

        def raw_steps() -> None:
            for _ in range(args.steps):
                raw_tool()

        session_step = median_seconds(session_steps, args.repeats) / args.steps
        raw_step = median_seconds(raw_steps, args.repeats) / args.steps

    # 3. whole oracle rollout: orchestra replay + judge vs ARE's oracle harness
    def orchestra_oracle() -> None:
        with Session.open(read_scenario_file(path), judge_pool=pool) as s:
            replay(s, build_plan(s))
            assert s.finish().success

    from are.simulation.scenario_runner import ScenarioRunner
    from are.simulation.scenarios.config import ScenarioRunnerConfig

    def are_oracle() -> None:
        sc, _, _ = JsonScenarioImporter().import_from_json_to_benchmark(path.read_text(), load_completed_events=False)
        sc.initialize()
        sc.patch_oracle_user_message_order()
        result = ScenarioRunner().run(ScenarioRunnerConfig(oracle=True, export=False), sc)
        assert result.success, result

    orch_oracle = median_seconds(orchestra_oracle, args.repeats)
    are_oracle_t = median_seconds(are_oracle, args.repeats)

    rows = [
        ("judge build (once per process)", judge_build, None, None),
        ("cold start: orchestra (warm judge)", orch_cold, "ARE preprocess_scenario", are_cold),
        ("per step: Session.call_tool", session_step, "raw ARE AppTool call", raw_step),
        ("oracle rollout: orchestra replay+judge", orch_oracle, "ARE oracle harness", are_oracle_t),
    ]
    print(f"\n{'measurement':<42}{'seconds':>12}   {'baseline':<28}{'seconds':>12}{'ratio':>10}")
    for name, ours, base_name, base in rows:
        if base is None:
            print(f"{name:<42}{ours:>12.6f}")
        else:
            print(f"{name:<42}{ours:>12.6f}   {base_name:<28}{base:>12.6f}{base / ours if 'step' not in name else ours / base:>9.2f}x")
    print(
        "\nratios: cold start and oracle rollout = ARE / orchestra (higher: orchestra faster); "
        "per step = orchestra / raw ARE call (the session's overhead factor)"
    )
    figures = {
        "scenario": str(path),
        "bytes": path.stat().st_size,
        "repeats": args.repeats,
        "judge_build_s": judge_build,
        "cold_start_s": orch_cold,
        "are_preprocess_s": are_cold,
        "cold_start_speedup_vs_are": are_cold / orch_cold,
        "session_step_s": session_step,
        "raw_tool_step_s": raw_step,
        "step_overhead_factor": session_step / raw_step,
        "oracle_rollout_s": orch_oracle,
        "are_oracle_harness_s": are_oracle_t,
        "oracle_rollout_speedup_vs_are": are_oracle_t / orch_oracle,
    }
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
