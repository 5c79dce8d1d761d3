"""`orchestra parity-agent`: ARE's own default agent vs an orchestra scaffold, same scripted policy.

For each scenario, ARE's real default agent (`ScenarioRunner` + `ARESimulationAgent` + ARE's
`LiteLLMEngine`, in ARE's environment on a simulated clock) and orchestra's `react` scaffold (the
normal `run` path) are driven by the same policy; the command prints, per scenario, whether verdicts,
agent tool calls (with arguments) and every prompt the model received are identical, and the first
difference of each kind as a unified diff.

POLICY is a list of model replies (.json / .jsonl / .yaml: strings or {"text": ...} objects,
played in order), a Python file defining `make_policy()` or `policy(messages) -> str`, or the word
`oracle` (the replies orchestra's oracle model gives, recorded once, then played to both agents).
Exit status: 0 when every scenario is identical, 1 when any differs, 2 on bad input (a scenario
that cannot be run is reported and skipped; the others still run).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from orchestra.cli._options import SOURCE_HELP, add_filter_options, filter_kwargs
from orchestra.cli._output import emit_json
from orchestra.errors import OrchestraError

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.parity.compare import ParityReport


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "parity-agent",
        help="ARE's default agent vs an orchestra scaffold with the same scripted policy",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("sources", nargs="+", metavar="SOURCE", help=SOURCE_HELP)
    p.add_argument("--policy", required=True, metavar="POLICY", help="policy file (.json/.jsonl/.yaml/.py) or 'oracle'")
    p.add_argument("--max-iterations", type=_positive, help="iteration budget of both agents (ARE's default: 80)")
    p.add_argument("--json", action="store_true", help="one JSON object per scenario")
    p.add_argument("--out", type=Path, help="write each scenario's report and both sides' prompts and event logs here")
    add_filter_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from orchestra.parity.harness import run_parity
    from orchestra.parity.policy import load_policy_file
    from orchestra.scenario_files import resolve

    policy = "oracle" if args.policy == "oracle" else load_policy_file(args.policy)
    files = list(resolve(args.sources, **filter_kwargs(args)))
    if not files:
        raise OrchestraError(f"no scenario found in {', '.join(args.sources)} (after filters)")
    differing = errors = 0
    for file in files:
        try:
            report = run_parity(file, policy, max_iterations=args.max_iterations)
        except OrchestraError as exc:
            # One bad scenario (malformed file, broken policy for it) must not lose the others' results.
            errors += 1
            if args.json:
                emit_json({"scenario_id": file.stem, "source": str(file.path), "status": "ERROR", "error": str(exc)})
            print(f"orchestra: error: {exc}", file=sys.stderr, flush=True)
            continue
        if report.policy_failure:  # the policy's fault, not a parity finding
            errors += 1
        else:
            differing += not report.identical
        if args.out:
            write_report(args.out, report)
        if args.json:
            emit_json(report.to_json())
        else:
            print(report.render(), flush=True)
        if report.policy_failure:
            print(f"orchestra: error: {report.scenario_id} ({report.source}): {report.policy_failure}", file=sys.stderr, flush=True)
    if not args.json:
        print(f"\n{len(files)} scenario(s): {len(files) - differing - errors} identical, {differing} different, {errors} error(s)", file=sys.stderr)
    return 2 if errors else 1 if differing else 0


def write_report(out: Path, report: ParityReport) -> None:
    out.mkdir(parents=True, exist_ok=True)
    stem = report.scenario_id
    (out / f"{stem}.parity.txt").write_text(report.render() + "\n", encoding="utf-8")
    (out / f"{stem}.parity.json").write_text(json.dumps(report.to_json(), indent=2, default=str) + "\n", encoding="utf-8")
    for trace in (report.are, report.orchestra):
        side = trace.side.lower()
        requests = [{"messages": r.messages, "params": r.params, "reply": r.reply, "error": r.error} for r in trace.requests]
        (out / f"{stem}.{side}.requests.json").write_text(json.dumps(requests, indent=1, default=str) + "\n", encoding="utf-8")
        (out / f"{stem}.{side}.events.json").write_text(json.dumps(trace.event_log, indent=1, default=str) + "\n", encoding="utf-8")
