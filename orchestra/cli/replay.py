"""`orchestra replay`: replay each scenario's oracle (optionally perturbed) and judge it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from orchestra.cli._options import SOURCE_HELP, add_filter_options, add_session_options, filter_kwargs, no_scenario_error, session_config
from orchestra.cli._output import emit_json, outcome_line, outcome_record, write_outcome
from orchestra.cli._trace import add_trace_options
from orchestra.host import Host
from orchestra.preflight import check_judge
from orchestra.runner import execute_sources_sync
from orchestra.spec import KINDS


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="replay the oracle over scenarios and print one verdict line per scenario",
        description="Replay each scenario's oracle actions through the session tool path at the oracle's "
        "timing, judge the rollout (ARE's scripted judge, or --judge llm|strict), and print id, verdict, reward, simulated seconds.",
    )
    p.add_argument("sources", nargs="+", metavar="SOURCE", help=SOURCE_HELP)
    p.add_argument("--perturb", choices=KINDS, help="perturb the oracle trajectory (the judge must then reject it)")
    p.add_argument("--out", type=Path, help="write each rollout's event log and judge verdict/rationale here")
    p.add_argument("--json", action="store_true", help="print one JSON object per scenario instead of a table")
    add_session_options(p)
    add_filter_options(p)
    add_trace_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = session_config(args)
    host = Host.create()
    host.judge_builder(config.judge.mode)  # an unknown judge fails once, before any scenario loads
    check_judge(config.judge, host)  # a dead judge endpoint too (the oracle calls no model)
    outcomes = []
    for o in execute_sources_sync(args.sources, perturbations=(args.perturb,), session=config, host=host, **filter_kwargs(args)):
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
        print(
            f"\n{len(outcomes)} rollout(s): {passed} passed, {len(judged) - passed} failed, {na} not applicable, {errors} error(s); mean reward {mean:.3f}",
            file=sys.stderr,
        )
    if errors:
        return 1
    if args.perturb is None and passed != len(judged):
        return 1  # the unperturbed oracle must always pass
    return 0
