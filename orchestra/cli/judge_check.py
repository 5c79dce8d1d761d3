"""`orchestra judge-check`: verify the verifier.

For each scenario, replay the oracle (the judge must accept: reward 1.0) and every perturbation
(the judge must reject: reward 0.0), and print the table of verdicts against those expectations —
the Gaia2 paper's perturbation test, as a command. Perturbations that cannot apply to a scenario
are shown as `n/a` with the reason, never counted as passes. With `--parity`, each trajectory is
also judged by ARE's own offline harness and the two verdicts are compared.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from orchestra.cli._options import (
    SOURCE_HELP,
    add_executor_options,
    add_filter_options,
    add_session_options,
    executor_of,
    filter_kwargs,
    no_scenario_error,
    session_config,
)
from orchestra.cli._output import emit_json, outcome_record, write_outcome
from orchestra.cli._trace import add_trace_options
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.record import RolloutRecord
from orchestra.runs.preflight import check_judge
from orchestra.runs.runner import execute_sources_sync
from orchestra.spec import KINDS, PerturbationKind

COLUMNS: tuple[PerturbationKind | None, ...] = (None, *KINDS)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "judge-check",
        help="oracle and every perturbation per scenario, verdicts vs expectations",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("sources", nargs="+", metavar="SOURCE", help=SOURCE_HELP)
    p.add_argument("--parity", action="store_true", help="also judge every trajectory with ARE's native offline harness (slow: ~5 s each)")
    p.add_argument("--out", type=Path, help="write each rollout's event log and verdict here")
    p.add_argument("--json", action="store_true", help="one JSON object per rollout, with `expected` and `as_expected`")
    p.add_argument("--no-progress", action="store_true", help="accepted as on `run` and `gaia2` (this command prints plain lines)")
    add_session_options(p, reward_mode=False)
    add_filter_options(p)
    add_executor_options(p)
    add_trace_options(p)
    p.set_defaults(func=run)


def as_expected(o: RolloutRecord) -> bool | None:
    """True/False when judged; None when not applicable or errored."""
    if o.result is None or o.error is not None:
        return None
    return o.result.success == o.expected_success and o.result.reward == (1.0 if o.expected_success else 0.0)


def cell(o: RolloutRecord, parity: bool) -> str:
    if o.error is not None:
        return "ERROR"
    if o.not_applicable is not None:
        return "n/a"
    assert o.result is not None
    mark = "ok" if as_expected(o) else "WRONG"
    text = f"{o.result.reward:.1f} {mark}"
    if parity and o.native is not None:
        text += " =ARE" if o.native.success == o.result.success else " !=ARE"
    return text


def run(args: argparse.Namespace) -> int:
    config = session_config(args)
    host = Host.create()
    executor = executor_of(args, host)
    host.judge_builder(config.judge.mode)  # an unknown judge fails once, before any scenario loads
    if args.parity and config.judge.mode == "strict":
        raise OrchestraError("--parity compares with ARE's own judge, and ARE has no strict judge: use --judge scripted or --judge llm")
    if args.parity and not config.judge.are_bool_bug:
        raise OrchestraError("--parity compares with ARE's own LLM judge, which lowers True/False in replies: drop --no-judge-are-bool-bug")
    check_judge(config.judge, host)  # a dead judge endpoint too (the oracle calls no model)
    rows: dict[str, dict[str | None, RolloutRecord]] = defaultdict(dict)
    problems: list[str] = []
    for o in execute_sources_sync(
        args.sources, perturbations=COLUMNS, session=config, native_parity=args.parity, host=host, executor=executor, **filter_kwargs(args)
    ):
        rows[o.source][o.perturbation] = o
        if args.out:
            write_outcome(args.out, o)
        if args.json:
            rec = outcome_record(o)
            rec["expected_reward"] = 1.0 if o.expected_success else 0.0
            rec["as_expected"] = as_expected(o)
            rec["judge"] = config.judge.label
            emit_json(rec)
        label = f"{o.scenario_id} [{o.perturbation or 'oracle'}]"
        if o.error is not None:
            problems.append(f"{label}: {o.error}")
        elif as_expected(o) is False:
            problems.append(f"{label}: expected reward {1.0 if o.expected_success else 0.0}, got {o.result.reward if o.result else None}")
        if o.native is not None and o.result is not None and o.native.success != o.result.success:
            problems.append(f"{label}: orchestra says {o.result.success}, ARE's harness says {o.native.success}")
    if not rows:
        raise no_scenario_error(args, args.sources)
    if not args.json:
        print_table(rows, args.parity)
        print(f"judge: {config.judge.label}")
    for p in problems:
        print(f"PROBLEM {p}", file=sys.stderr)
    return 1 if problems else 0


def print_table(rows: dict[str, dict[str | None, RolloutRecord]], parity: bool) -> None:
    headers = ["scenario", *(c or "oracle" for c in COLUMNS)]
    table = []
    reasons = []
    for by_kind in rows.values():
        first = next(iter(by_kind.values()))
        table.append([first.scenario_id, *(cell(by_kind[c], parity) if c in by_kind else "-" for c in COLUMNS)])
        for c in COLUMNS:
            o = by_kind.get(c)
            if o is not None and o.not_applicable:
                reasons.append(f"  {first.scenario_id} [{c}]: {o.not_applicable}")
    widths = [max(len(str(r[i])) for r in [headers, *table]) for i in range(len(headers))]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    print("  ".join("-" * w for w in widths))
    for r in table:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    print("\nexpected: oracle 1.0, every perturbation 0.0; 'ok' = as expected" + ("; '=ARE' = ARE's native harness agrees" if parity else ""))
    if reasons:
        print("not applicable:")
        print("\n".join(reasons))
