"""The `orchestra` command line. One module per command; each exposes `add_parser` and `run`."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from orchestra import __version__
from orchestra.cli import compare, judge_check, parity_agent, plugins, replay, run, scenarios, show, teams, trace
from orchestra.cli._trace import tracing_from_args
from orchestra.errors import OrchestraError

COMMANDS = (replay, judge_check, run, show, compare, teams, scenarios, plugins, parity_agent, trace)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="orchestra", description="Teams of LLM agents inside ARE / Gaia2.")
    parser.add_argument("--version", action="version", version=f"orchestra {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv: ARE's own logs too)")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error (default: one line)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        module.add_parser(sub)
    return parser


def configure_logging(verbosity: int) -> None:
    """Quiet by default: ARE logs every event at INFO and warns on normal turn handling."""
    logging.basicConfig(level=logging.WARNING if verbosity == 0 else logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("are").setLevel(logging.DEBUG if verbosity >= 2 else logging.CRITICAL)
    for noisy in ("LiteLLM", "litellm", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING if verbosity >= 2 else logging.ERROR)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.argv = list(argv) if argv is not None else sys.argv[1:]
    configure_logging(args.verbose)
    try:
        with tracing_from_args(args):  # a no-op unless the command has --trace and it (or OTEL_TRACES_EXPORTER) is set
            return int(args.func(args) or 0)
    except OrchestraError as exc:
        print(f"orchestra: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("orchestra: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug or an unexpected failure: one line, the traceback only with --debug
        if args.debug:
            raise
        print(f"orchestra: error: {type(exc).__name__}: {exc} (run with --debug for the traceback)", file=sys.stderr)
        return 2
