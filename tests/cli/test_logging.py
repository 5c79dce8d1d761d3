"""ARE's log records stay out of a command's rows unless asked for (`-v`); the command line's
logging set-up is the command line's only: importing orchestra changes no one's logging."""

from __future__ import annotations

import contextlib
import importlib
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestra.cli import main

REPO = Path(__file__).resolve().parents[2]
#: A multi-turn scenario whose perturbed first turn is rejected: ARE's validation then logs
#: `WARNING root: Last turn was already rejected, skipping validation` through the root logger.
REJECTED_TURN = ["bundled", "--id", "univ_02_mt_adapt_one_on_one_slot", "--perturb", "missing"]
ARE_LINE = "Last turn was already rejected, skipping validation"


@contextlib.contextmanager
def bare_root_logger() -> Iterator[None]:
    """The root logger as a fresh process has it (pytest's own handlers, added for each test phase,
    set aside), so `main` sets up logging as it does for a user; restored afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    are_level = logging.getLogger("are").level
    root.handlers = []
    try:
        yield
    finally:
        root.handlers = handlers
        root.setLevel(level)
        logging.getLogger("are").setLevel(are_level)


@pytest.mark.parametrize(("verbose", "shown"), [([], False), (["-v"], True)], ids=["quiet", "-v"])
def test_are_root_logger_lines_are_kept_out_of_the_table(verbose, shown, capsys):
    with bare_root_logger():
        code = main([*verbose, "replay", *REJECTED_TURN])
    captured = capsys.readouterr()
    assert code == 0
    assert ARE_LINE not in captured.out
    assert (ARE_LINE in captured.err) is shown, captured.err
    rows = captured.out.strip().splitlines()
    assert len(rows) == 1 and rows[0].split()[:3] == ["univ_02_mt_adapt_one_on_one_slot", "[missing]", "FAIL"]
    if not shown:  # quiet: the summary line and nothing else
        assert captured.err.strip().splitlines() == ["1 rollout(s): 0 passed, 1 failed, 0 error(s); mean reward 0.000 over 1 judged"]


def test_orchestra_s_own_warnings_still_show_and_are_s_need_vv():
    from orchestra.cli import AreRecords, configure_logging

    with bare_root_logger():
        configure_logging(0)
        (ours,) = logging.getLogger().handlers
    are_file = str(Path(importlib.import_module("are").__file__ or "").parent / "simulation" / "validation" / "base.py")

    def record(name: str, level: int, pathname: str) -> logging.LogRecord:
        return logging.LogRecord(name, level, pathname, 1, "message", None, None)

    assert any(isinstance(f, AreRecords) for f in ours.filters)
    assert ours.filter(record("orchestra.models", logging.WARNING, str(REPO / "orchestra" / "models.py")))
    assert not ours.filter(record("root", logging.WARNING, are_file))
    assert not ours.filter(record("are.simulation", logging.ERROR, are_file))
    assert AreRecords(1).filter(record("root", logging.WARNING, are_file)) and not AreRecords(1).filter(record("are.x", logging.INFO, are_file))
    assert AreRecords(2).filter(record("are.x", logging.INFO, are_file))


def test_importing_orchestra_leaves_the_program_s_logging_alone():
    code = (
        "import logging, orchestra, orchestra.cli, orchestra.runs.runner, orchestra.cli.replay, orchestra.cli.run\n"
        "root = logging.getLogger()\n"
        "assert root.handlers == [] and root.level == logging.WARNING, (root.handlers, root.level)\n"
        "assert logging.getLogger('are').level == logging.NOTSET\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
