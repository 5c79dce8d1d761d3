"""`orchestra scenarios`: list scenarios of any source, with counts per capability."""

from __future__ import annotations

import argparse
import sys
from collections import Counter, deque

from orchestra.cli._options import SOURCE_HELP, add_filter_options, filter_kwargs
from orchestra.cli._output import emit_json
from orchestra.errors import ScenarioError
from orchestra.scenario_files import resolve
from orchestra.scenario_info import describe


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scenarios", help="list scenarios: id, capabilities, turns, universe size, split")
    p.add_argument("sources", nargs="+", metavar="SOURCE", help=SOURCE_HELP)
    p.add_argument("--json", action="store_true", help="one JSON object per scenario")
    add_filter_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Every valid scenario listed; every file that is not one named on stderr (then exit 1)."""
    counts: Counter[str] = Counter()
    n = 0
    rejected: list[str] = []
    # A source that cannot be read fails before the header; each file's text is let go once described
    # (the bundled corpus is 34 MB of JSON).
    files = deque(resolve(args.sources, **filter_kwargs(args)))
    if not args.json:
        print(f"{'scenario':<40} {'capabilities':<26} {'turns':>5} {'universe bytes':>15}  split")
    while files:
        file = files.popleft()
        try:
            info = describe(file)
        except ScenarioError as exc:
            rejected.append(str(exc))
            continue
        n += 1
        counts.update(info.capabilities)
        if args.json:
            emit_json(info.as_dict())
        else:
            print(f"{info.scenario_id:<40} {','.join(info.capabilities):<26} {info.turns:>5} {info.universe_bytes:>15,}  {info.split or '-'}")
    summary = ", ".join(f"{cap} {c}" for cap, c in sorted(counts.items()))
    print(f"\n{n} scenario(s); per capability: {summary or 'none'}", file=sys.stderr if args.json else sys.stdout)
    for reason in rejected:
        print(f"orchestra: not a scenario: {reason}", file=sys.stderr)
    if rejected:
        print(f"{len(rejected)} file(s) rejected (`orchestra replay` would refuse them too)", file=sys.stderr)
    return 1 if rejected else 0
