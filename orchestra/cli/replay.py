"""`orchestra replay`: replay each scenario's oracle (optionally perturbed) and judge it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from orchestra.cli._judge import add_judge_options, judge_config
from orchestra.cli._output import emit_json, outcome_line, outcome_record, write_outcome
from orchestra.cli._sources import SOURCE_HELP, add_filter_options, filter_kwargs, no_scenario_error
from orchestra.cli._trace import add_trace_options
from orchestra.clock import ClockConfig
from orchestra.perturbations import KINDS
from orchestra.rollout import execute_sources_sync
from orchestra.session import SessionConfig


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="replay the oracle over scenarios and print one verdict line per scenario",
        description="Replay each scenario's oracle actions through the session tool path at the oracle's "
        "timing, judge the rollout (ARE's scripted judge, or --judge llm|strict), and print id, verdict, reward, simulated seconds.",
    )
    p.add_argument("sources", nargs="+", metavar="SOURCE", help=SOURCE_HELP)
    p.add_argument("--perturb", choices=KINDS, help="perturb the oracle trajectory (the judge must then reject it)")
    p.add_argument("--reward-mode", choices=("binary", "dense"), default="binary")
    p.add_argument("--out", type=Path, help="write each rollout's event log and judge verdict/rationale here")
    p.add_argument("--json", action="store_true", help="print one JSON object per scenario instead of a table")
    add_session_options(p)
    add_filter_options(p)
    add_trace_options(p)
    p.set_defaults(func=run)


def add_session_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("simulated clock")
    defaults = ClockConfig()
    g.add_argument("--decode-rate", type=float, default=defaults.decode_rate_tps, help="completion tokens per simulated second")
    g.add_argument("--prefill-rate", type=float, default=defaults.prefill_rate_tps, help="prompt tokens per simulated second")
    g.add_argument("--tool-call-seconds", type=float, default=defaults.tool_call_seconds, help="simulated seconds per tool call")
    g.add_argument("--time-scale", type=float, default=defaults.time_scale, help="multiplier on every turn's cost")
    p.add_argument("--notifications", choices=("low", "medium", "high"), default="medium", help="ARE notification verbosity")
    add_judge_options(p)


def session_config(args: argparse.Namespace) -> SessionConfig:
    clock = ClockConfig(
        decode_rate_tps=args.decode_rate,
        prefill_rate_tps=args.prefill_rate,
        tool_call_seconds=args.tool_call_seconds,
        time_scale=args.time_scale,
    )
    return SessionConfig(
        clock=clock, notification_verbosity=args.notifications, reward_mode=getattr(args, "reward_mode", "binary"), judge=judge_config(args)
    )


def run(args: argparse.Namespace) -> int:
    config = session_config(args)
    outcomes = []
    for o in execute_sources_sync(args.sources, perturbations=(args.perturb,), session=config, **filter_kwargs(args)):
        outcomes.append(o)
        if args.out:
            write_outcome(args.out, o)
        if args.json:
            emit_json(outcome_record(o))
        else:
            print(outcome_line(o), flush=True)
    if not outcomes:
        raise no_scenario_error(args, args.sources)
    errors = sum(o.error is not None for o in outcomes)
    judged = [o for o in outcomes if o.result is not None and o.error is None]
    passed = sum(o.result.success for o in judged if o.result)
    if not args.json:
        mean = sum(o.result.reward for o in judged if o.result) / len(judged) if judged else 0.0
        na = sum(o.not_applicable is not None for o in outcomes)
        print(f"\n{len(outcomes)} rollout(s): {passed} passed, {len(judged) - passed} failed, {na} not applicable, "
              f"{errors} error(s); mean reward {mean:.3f}", file=sys.stderr)
    if errors:
        return 1
    if args.perturb is None and passed != len(judged):
        return 1  # the unperturbed oracle must always pass
    return 0
