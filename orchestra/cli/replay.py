"""`orchestra replay`: replay each scenario's oracle (optionally perturbed) and judge it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio

from orchestra.cli._options import (
    SOURCE_HELP,
    add_executor_options,
    add_filter_options,
    add_noise_options,
    add_session_options,
    executor_of,
    filter_kwargs,
    no_scenario_error,
    session_config,
)
from orchestra.cli._output import emit_json, noise_totals, outcome_line, outcome_record, totals_line
from orchestra.cli._trace import add_trace_options
from orchestra.host import Host
from orchestra.runs.batch import BatchRun
from orchestra.runs.preflight import check_judge
from orchestra.runs.runner import in_batch_order, specs_for
from orchestra.scenario_files import resolve
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
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="a run folder, as `orchestra run --out` writes it: results.jsonl, manifest.json, rollouts/NAME.json "
        "with each rollout's trajectory (`orchestra show DIR/NAME`); a rerun resumes",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object per scenario instead of a table")
    p.add_argument("--no-progress", action="store_true", help="accepted as on `run` and `gaia2` (this command prints plain lines)")
    add_session_options(p)
    add_noise_options(p)
    add_filter_options(p)
    add_executor_options(p)
    add_trace_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = session_config(args)
    host = Host.create()
    executor = executor_of(args, host)
    host.judge_builder(config.judge.mode)  # an unknown judge fails once, before any scenario loads
    check_judge(config.judge, host)  # a dead judge endpoint too (the oracle calls no model)
    outcomes = []
    specs = specs_for(resolve(args.sources, **filter_kwargs(args)), perturbations=(args.perturb,), session=config)
    if not specs:
        raise no_scenario_error(args, args.sources)
    # A run folder (`--out`): what finished there before is kept, the rest runs and is kept as each ends.
    batch = BatchRun.open(specs, args.out, plugins=host.third_party())
    anyio.run(lambda: batch.run(host=host, executor=executor))
    records = batch.records if args.out else in_batch_order(batch.records, specs)
    for o in records:
        outcomes.append(o)
        if args.json:
            emit_json(outcome_record(o))
        else:
            print(outcome_line(o), flush=True)
    if not outcomes:
        raise no_scenario_error(args, args.sources)
    errors = sum(o.status == "ERROR" for o in outcomes)
    judged = [o for o in outcomes if o.status in ("PASS", "FAIL")]
    passed = sum(o.status == "PASS" for o in judged)
    if not args.json:
        print(f"\n{totals_line(outcomes)}", file=sys.stderr)
        totals = noise_totals(outcomes)
        if totals:
            print(totals, file=sys.stderr)
    if errors:
        return 1
    if args.perturb is None and config.noise is None and passed != len(judged):
        return 1  # the unperturbed oracle must always pass (under noise its failed calls may fail it)
    return 0
