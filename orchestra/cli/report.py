"""`orchestra report DIR [-o FILE]`: a run folder as one static, self-contained HTML file (`orchestra.runs.report`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from orchestra.runs.report import REPORT, load_run, write_report


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="a run folder as one self-contained HTML page: summary, charts, every rollout's transcript")
    p.add_argument("folder", type=Path, metavar="DIR", help="a run folder (`orchestra run --out DIR`)")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help=f"where to write the page (default: DIR/{REPORT})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    folder = load_run(args.folder)
    for note in folder.notes:
        print(f"orchestra: note: {args.folder}: {note}", file=sys.stderr)
    out = args.output or args.folder / REPORT
    size = write_report(folder, out)
    statuses = [r.status for r in folder.records]
    counts = ", ".join(f"{statuses.count(s)} {s}" for s in ("PASS", "FAIL", "ERROR", "N/A") if statuses.count(s))
    print(f"{out}: {len(folder.records)} rollout(s) ({counts}), {size / 1e6:.1f} MB")
    return 0
