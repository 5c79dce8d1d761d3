"""Scenario-source options shared by every command that takes scenarios."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from orchestra.errors import OrchestraError

SOURCE_HELP = "scenario file, folder, bundled[:CONFIG] or hf:CONFIG[/SPLIT][@REVISION]"


def add_filter_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("scenario selection")
    g.add_argument("--capability", action="append", default=[], metavar="TAG", help="keep scenarios tagged TAG (e.g. Time); repeatable")
    g.add_argument("--id", dest="scenario_ids", action="append", default=[], metavar="ID", help="keep this scenario id; repeatable")
    g.add_argument("--limit", type=_positive, help="at most this many scenarios (1 or more)")


def _positive(text: str) -> int:
    """`--limit N`: N >= 1 (a negative limit once meant "one", zero "one" too)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {n}")
    return n


def filter_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {"capabilities": args.capability, "scenario_ids": args.scenario_ids, "limit": args.limit}


def no_scenario_error(args: argparse.Namespace, sources: Sequence[object]) -> OrchestraError:
    """The error for sources and filters that select no scenario (`--id` misspelt): a mistake to
    report (exit 2), not a successful run of zero rollouts."""
    given = [f"{flag} {v}" for flag, values in (("--capability", args.capability), ("--id", args.scenario_ids)) for v in values]
    filters = f" matching {' '.join(given)}" if given else ""
    return OrchestraError(f"no scenario{filters} in {', '.join(map(str, sources))} (`orchestra scenarios SOURCE` lists ids and capabilities)")
