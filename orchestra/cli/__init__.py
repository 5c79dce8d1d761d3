"""The `orchestra` command line. One module per command; each exposes `add_parser` and `run`.

A command's module is imported only when that command runs: `orchestra --help` lists the
commands from `COMMANDS` alone, and `orchestra teams list` never imports the rollout machinery
(litellm, ARE, pydantic models) behind `orchestra run`. So the quick commands start in a fraction
of a second.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
from collections.abc import Iterable, Sequence

from orchestra import __version__
from orchestra.cli._trace import tracing_from_args
from orchestra.errors import OrchestraError, one_line_warnings

#: The commands in `--help` order: name -> (module, the one-line help `orchestra --help` shows).
#: The help is the one each module's `add_parser` gives (a test keeps them equal).
COMMANDS: dict[str, tuple[str, str]] = {
    "replay": ("orchestra.cli.replay", "replay the oracle over scenarios and print one verdict line per scenario"),
    "judge-check": ("orchestra.cli.judge_check", "oracle and every perturbation per scenario, verdicts vs expectations"),
    "run": ("orchestra.cli.run", "run a team (--team) or one agent (--scaffold + --model) over scenarios and judge each rollout"),
    "gaia2": (
        "orchestra.cli.gaia2",
        "Gaia2's leaderboard protocol: standard, agent2agent and noise phases, ARE's submission files, the seven-column table",
    ),
    "show": ("orchestra.cli.show", "one rollout of a run folder as a transcript (DIR/NAME, NAME as in DIR/rollouts/)"),
    "compare": ("orchestra.cli.compare", "two run folders side by side: per capability pass@1 deltas, per scenario flips"),
    "report": ("orchestra.cli.report", "a run folder as one self-contained HTML page: summary, charts, every rollout's transcript"),
    "teams": ("orchestra.cli.teams", "check team files (orchestra/teams/shipped/*.yaml) or list the shipped teams"),
    "scenarios": ("orchestra.cli.scenarios", "list scenarios: id, capabilities, turns, universe size, split"),
    "plugins": ("orchestra.cli.plugins", "list plugins, what each registers, and the hooks each implements"),
    "parity-agent": ("orchestra.cli.parity_agent", "ARE's default agent vs an orchestra scaffold with the same scripted policy"),
    "serve": ("orchestra.cli.serve", "Gaia2 as a server: OpenEnv routes, MCP tools and a model proxy per session, on the simulated clock"),
    "trace": ("orchestra.cli.trace", "print a finished run's span tree from a --trace jsonl:PATH export"),
}


def build_parser(commands: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The command line. `commands`: those whose own parser is built (their modules imported);
    the others are listed by name and help only. None: every command in full."""
    full = set(COMMANDS) if commands is None else set(commands)
    parser = argparse.ArgumentParser(prog="orchestra", description="Teams of LLM agents inside ARE / Gaia2.")
    parser.add_argument("--version", action="version", version=f"orchestra {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging: retries, preflight, ARE's warnings (-vv: all of ARE's own logs too)")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error (default: one line)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        if name in full:
            importlib.import_module(module).add_parser(sub)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The command `argv` names: its first word that is not an option (the top-level options
    take no value), if that is a command."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in COMMANDS else None


class AreRecords(logging.Filter):
    """Keeps ARE's log records off the command's stderr unless asked for: `-v` shows ARE's warnings,
    `-vv` all of them. ARE also logs through the root logger (`logging.warning("Last turn was already
    rejected, skipping validation")` in its validation, on normal turn handling), so a record is
    ARE's by its logger (`are.*`) or by the file that logged it (inside the imported `are` package)."""

    def __init__(self, verbosity: int) -> None:
        super().__init__()
        self.verbosity = verbosity

    def filter(self, record: logging.LogRecord) -> bool:
        if self.verbosity >= 2 or not from_are(record):
            return True
        return self.verbosity == 1 and record.levelno >= logging.WARNING


def from_are(record: logging.LogRecord) -> bool:
    """Did ARE log `record` (its `are` logger, or the root logger from ARE's own code)?"""
    if record.name == "are" or record.name.startswith("are."):
        return True
    package = sys.modules.get("are")  # ARE logs only once imported; never imported here
    folders = getattr(package, "__path__", None) or []
    return any(record.pathname.startswith(os.path.join(folder, "")) for folder in folders)


def configure_logging(verbosity: int) -> None:
    """Quiet by default: ARE logs every event at INFO and warns on normal turn handling.

    The command line's own stderr handler (the one `basicConfig` adds) leaves ARE's records out
    (`AreRecords`); nothing changes at import, so a program that imports orchestra keeps its logging."""
    root = logging.getLogger()
    before = list(root.handlers)
    logging.basicConfig(level=logging.WARNING if verbosity == 0 else logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    for handler in root.handlers:
        if handler not in before:
            handler.addFilter(AreRecords(verbosity))
    logging.getLogger("are").setLevel({0: logging.CRITICAL, 1: logging.WARNING}.get(verbosity, logging.DEBUG))
    for noisy in ("LiteLLM", "litellm", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING if verbosity >= 2 else logging.ERROR)


#: The exit status of an interrupted command (128 + SIGINT, as a shell reports it).
INTERRUPTED = 130

#: The exit status of a command whose stdout closed (`orchestra ... | head -1`: 128 + SIGPIPE, as a shell reports a tool killed by it).
CLOSED_OUTPUT = 141


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (`argv`: the words after `orchestra`; None: the program's own arguments).

    Run as the program (no `argv`), an interrupted command ends the process as soon as its output
    is written: everything finished is on disk and traces are flushed by then, while the
    interpreter's own finalization (ARE, litellm: about half a million objects) would take seconds."""
    code = _main(argv, program=argv is None)
    if argv is None and code == INTERRUPTED:
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(code)
    return code


def _main(argv: Sequence[str] | None, *, program: bool) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = command_of(argv)
    args = build_parser([command] if command else []).parse_args(argv)
    args.argv = argv  # `run` prints the command that resumes an interrupted run
    args.program = program  # run as the program (not `main(argv)` in-process): `run` may end the process on Ctrl-C
    configure_logging(args.verbose)
    try:
        with one_line_warnings(), tracing_from_args(args):  # tracing: a no-op unless the command has --trace and it (or OTEL_TRACES_EXPORTER) is set
            return int(args.func(args) or 0)
    except BaseExceptionGroup as group:  # the rollouts' task group wraps what they raise: each error as if alone
        return _failed(group, leaves(group), debug=args.debug, program=program)
    except (Exception, KeyboardInterrupt) as exc:
        return _failed(exc, [exc], debug=args.debug, program=program)


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions `exc` stands for: an exception group's (nested groups flattened), else `exc` itself."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


def _failed(raised: BaseException, errors: list[BaseException], *, debug: bool, program: bool) -> int:
    """A command that raised `raised` (standing for `errors`): one line per error on stderr, exit 2;
    a bug or an unexpected failure shows its traceback only with --debug. Stdout closed (`| head -1`)
    ends the command quietly, as a Unix tool on EPIPE: exit `CLOSED_OUTPUT`, later writes to stdout
    (the interpreter's last flush) going to /dev/null, as Python's documentation recommends."""
    if any(not isinstance(e, (Exception, KeyboardInterrupt)) for e in errors):
        raise raised  # SystemExit and the like: not an error to report
    if any(isinstance(e, BrokenPipeError) for e in errors):
        if program:
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return CLOSED_OUTPUT
    if any(isinstance(e, KeyboardInterrupt) for e in errors):
        print("orchestra: interrupted", file=sys.stderr)
        return INTERRUPTED
    if debug and not all(isinstance(e, OrchestraError) for e in errors):
        raise raised
    for exc in errors:
        if isinstance(exc, OrchestraError):
            print(f"orchestra: error: {exc}", file=sys.stderr)
        else:
            print(f"orchestra: error: {type(exc).__name__}: {exc} (run with --debug for the traceback)", file=sys.stderr)
    return 2
