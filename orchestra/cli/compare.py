"""`orchestra compare DIR_A DIR_B`: two runs side by side — the settings they differ in, per capability pass@1 deltas
over the scenarios both judged, per scenario flips; runs with no scenario in common are said to be so (exit 1)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from orchestra.runs.run_dir import MANIFEST, Manifest, read_results
from orchestra.runs.summary import compare, format_compare


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="two run folders side by side: per capability pass@1 deltas, per scenario flips")
    p.add_argument("a", type=Path, metavar="DIR_A", help="a run folder (`orchestra run --out DIR`)")
    p.add_argument("b", type=Path, metavar="DIR_B")
    p.add_argument("--json", action="store_true", help="the comparison as one JSON object")
    p.set_defaults(func=run)


def _manifest(folder: Path) -> Manifest | None:
    path = folder / MANIFEST
    return Manifest.model_validate_json(path.read_text()) if path.is_file() else None


def run(args: argparse.Namespace) -> int:
    """0 when the runs share a judged scenario; 1 when they share none (nothing was compared)."""
    result = compare(read_results(args.a), read_results(args.b), _manifest(args.a), _manifest(args.b))
    print(json.dumps(result, indent=1) if args.json else format_compare(result, str(args.a), str(args.b)))
    return 0 if result["overlap"] else 1
