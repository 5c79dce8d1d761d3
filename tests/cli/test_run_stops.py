"""How `orchestra run` / `orchestra gaia2` report what stops them after the run started: an error
raised inside the rollouts' task group is orchestra's own one line (not `ExceptionGroup: ...`),
`SystemExit` inside the run (Ray's SIGTERM handler raises it) stops it as Ctrl-C does, and stdout
closed under the run (`| head -1`) stops it quietly, keeping what finished, with the resume hint."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import orchestra.cli.gaia2
from orchestra.cli import main
from orchestra.errors import OrchestraError
from orchestra.runs.run_dir import read_results
from support.helpers import plugin_team

SCENARIOS = ("starter_execution_calendar", "starter_search_lookup", "starter_time_deadline")
REPO = Path(__file__).resolve().parents[2]


def _team(tmp_path: Path, plugin: str, after: int) -> Path:
    """Once `after` rollout(s) closed, the next agent step raises SystemExit(15), as Ray's SIGTERM handler does."""
    return plugin_team(tmp_path, plugin=plugin, after=after, action="raise SystemExit(15)", name="exiting")


def test_an_error_raised_after_the_run_started_is_its_own_line(tmp_path, capsys, scenario_path):
    argv = ["run", "--team", "oracle", "--scenarios", str(scenario_path("starter_search_lookup")), "--executor", "process"]
    code = main([*argv, "--trace", f"jsonl:{tmp_path / 't.jsonl'}", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.strip().splitlines()[-1] == (
        "orchestra: error: tracing records the rollouts of this process only: not with --executor process (use --executor local to trace)"
    )
    assert "ExceptionGroup" not in err


def test_an_exception_group_is_one_line_per_error(monkeypatch, capsys, tmp_path):
    def fails(args):
        raise ExceptionGroup("unhandled errors in a TaskGroup", [OrchestraError("first"), ExceptionGroup("inner", [ValueError("second")])])

    monkeypatch.setattr(orchestra.cli.gaia2, "run", fails)
    assert main(["gaia2", "--model", "orchestra/oracle", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "orchestra: error: first",
        "orchestra: error: ValueError: second (run with --debug for the traceback)",
    ]


@pytest.mark.parametrize(
    ("after", "said"), [(1, "1 of 3 rollout(s) finished, kept in {results}; resume with"), (0, "none of 3 rollout(s) finished; rerun with")]
)
def test_system_exit_inside_the_run_stops_it_as_ctrl_c_does(tmp_path, capsys, scenario_path, monkeypatch, after, said):
    monkeypatch.syspath_prepend(str(tmp_path))
    team = _team(tmp_path, f"exiter_{after}", after)
    out = tmp_path / "run"
    argv = ["run", "--team", str(team), "--scenarios", *(str(scenario_path(s)) for s in SCENARIOS), "--out", str(out), "--no-progress"]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == f"orchestra: interrupted: {said.format(results=out / 'results.jsonl')}: orchestra {' '.join(argv)}"
    assert "Traceback" not in err and "ExceptionGroup" not in err
    assert (len(read_results(out)) if after else (out / "results.jsonl").exists()) == after  # nothing kept: no results file


class ClosedPipe(io.StringIO):
    def write(self, s: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_stdout_closed_stops_the_run_and_keeps_what_finished(tmp_path, capsys, scenario_path, monkeypatch):
    out = tmp_path / "run"
    argv = ["run", "--team", "oracle", "--scenarios", *(str(scenario_path(s)) for s in SCENARIOS), "--out", str(out), "--no-progress"]
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(argv) == 141
    err = capsys.readouterr().err
    assert (
        err.strip().splitlines()[-1]
        == f"orchestra: stdout closed: 1 of 3 rollout(s) finished, kept in {out / 'results.jsonl'}; resume with: orchestra {' '.join(argv)}"
    )
    assert "Traceback" not in err and "ExceptionGroup" not in err
    assert [r.status for r in read_results(out)] == ["PASS"]


def test_the_program_piped_into_head_stops_quietly(tmp_path, scenario_path):
    """As the program (`orchestra run ... | head -1`): exit 141, the resume hint, no second BrokenPipeError at exit."""
    out = tmp_path / "run"
    argv = ["run", "--team", "oracle", "--scenarios", *(str(scenario_path(s)) for s in SCENARIOS), "--out", str(out), "--no-progress"]
    proc = subprocess.Popen([sys.executable, "-m", "orchestra.cli", *argv], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().split()[1] == "PASS"
        proc.stdout.close()  # as `head -1` does
        _, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 141, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("orchestra: stdout closed: ") and last.endswith(f"resume with: orchestra {' '.join(argv)}"), stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr and "BrokenPipeError" not in stderr
    assert len(read_results(out)) in (1, 2)


def test_system_exit_inside_the_program_ends_it_as_ctrl_c_does(tmp_path, scenario_path):
    """As the program, SystemExit inside the run (SIGTERM while Ray connects) ends the process as Ctrl-C does: no exception group traceback."""
    team = _team(tmp_path, "exiter_program", 1)
    out = tmp_path / "run"
    argv = ["run", "--team", str(team), "--scenarios", *(str(scenario_path(s)) for s in SCENARIOS), "--out", str(out), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "orchestra.cli", *argv], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"orchestra: interrupted: 1 of 3 rollout(s) finished, kept in {out / 'results.jsonl'}; resume with: orchestra {' '.join(argv)}"
    )
    assert "Traceback" not in done.stderr and "SystemExit" not in done.stderr
    assert len(read_results(out)) == 1


def test_any_command_piped_into_a_closed_reader_ends_quietly(monkeypatch, capsys):
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["scenarios", str(REPO / "scenarios")]) == 141
    assert capsys.readouterr().err == ""
