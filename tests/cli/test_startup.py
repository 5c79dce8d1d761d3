"""The quick commands start without the heavy imports (litellm, ARE): what keeps them under a second.

Behavioural checks only (which modules a command imported); the timings are in
benchmarks/bench_startup.py.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys

import pytest

from orchestra.cli import COMMANDS, build_parser, command_of
from support.helpers import REPO

#: Runs `orchestra ARGS...` in this process, then prints which of the watched packages it imported.
RUNNER = """
import json, sys
from orchestra.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:  # --help
    code = exc.code
watched = ("litellm", "are", "pydantic", "orchestra.rollout", "orchestra.session", "orchestra.cli.run")
print(json.dumps({"exit": code, "imported": sorted(m for m in watched if m in sys.modules)}))
"""


def imported_by(*args: str) -> set[str]:
    env = {**os.environ, "ORCHESTRA_PLUGINS": ""}
    proc = subprocess.run([sys.executable, "-c", RUNNER, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["exit"] == 0, proc.stderr[-3000:]
    return set(report["imported"])


@pytest.mark.parametrize("args", [["--help"], ["teams", "list"], ["scenarios", "bundled"]])
def test_quick_commands_import_no_model_no_are_and_no_rollout_machinery(args):
    assert imported_by(*args) == set()


def test_plugins_lists_the_plugins_without_importing_litellm_or_are():
    # building a host collects the model providers; litellm learns of them at the first model call
    assert not imported_by("plugins") & {"litellm", "are", "orchestra.cli.run"}


def test_only_the_command_that_runs_is_imported():
    assert command_of(["-v", "teams", "list"]) == "teams"
    assert command_of(["--help"]) is None and command_of(["no-such-command"]) is None
    parser = build_parser(["scenarios"])
    assert parser.parse_args(["scenarios", "bundled"]).sources == ["bundled"]
    with pytest.raises(SystemExit):
        parser.parse_args(["no-such-command"])


def test_the_command_table_matches_the_command_modules():
    """`orchestra --help` shows the table's one-liners: they are each module's own."""
    for name, (module, help_text) in COMMANDS.items():
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).add_parser(sub)
        (action,) = sub._choices_actions
        assert (action.dest, action.help) == (name, help_text)
    assert set(build_parser()._subparsers._group_actions[0].choices) == set(COMMANDS)  # type: ignore[union-attr]
