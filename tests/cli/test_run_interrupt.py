"""Ctrl-C stops `orchestra run` at once — even while a rollout is inside synchronous work that
never yields to the event loop (a scenario loading, the judge) — keeps everything finished, says
what finished and the command that resumes. Checked by behaviour, not by a stopwatch: the rollout
in flight is stuck in a one-hour `time.sleep`, so a run that waits for it never exits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from orchestra.cli import main
from orchestra.runs.run_dir import read_results
from support.helpers import blocking_team, interrupt_when_blocked

SCENARIOS = ("starter_execution_calendar", "starter_search_lookup", "starter_time_deadline")


@pytest.fixture
def blocking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    return blocking_team(tmp_path, plugin="sigint_blocker", after=2)


def _argv(team: Path, scenarios: list[str], out: Path) -> list[str]:
    return ["run", "--team", str(team), "--scenarios", *scenarios, "--out", str(out), "--no-progress"]


def test_ctrl_c_stops_a_rollout_stuck_in_synchronous_work_and_keeps_what_finished(blocking, tmp_path, scenario_path, capsys):
    out = tmp_path / "run"
    scenarios = [str(scenario_path(s)) for s in SCENARIOS]
    done = interrupt_when_blocked(_argv(blocking, scenarios, out), tmp_path)
    stdout, stderr = done.stdout, done.stderr
    assert done.returncode == 130, stderr
    assert stdout.split("\n")[0].split()[1] == "PASS" and len(stdout.strip().splitlines()) == 2
    assert stderr.strip().splitlines()[-1] == (
        f"orchestra: interrupted: 2 of 3 rollout(s) finished, kept in {out / 'results.jsonl'}; "
        f"resume with: orchestra {' '.join(_argv(blocking, scenarios, out))}"
    )
    assert "never awaited" not in stderr and "Traceback" not in stderr
    kept = (out / "results.jsonl").read_text().splitlines()
    assert len(kept) == 2 and all(json.loads(line)["result"]["reward"] == 1.0 for line in kept)
    assert len(list((out / "rollouts").glob("*.json"))) == 2
    # the command it printed resumes: only the third rollout runs (no blocking in this process)
    assert main(_argv(blocking, scenarios, out)) == 0
    assert "2 of 3 rollout(s) finished before; running 1" in capsys.readouterr().err
    records = read_results(out)
    assert len(records) == 3 and all(r.status == "PASS" for r in records)


def _children(pid: int) -> set[int]:
    """The processes whose parent is `pid` (from /proc: Linux)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_ctrl_c_with_worker_processes_leaves_no_worker_running_and_resumes(blocking, tmp_path, scenario_path, capsys):
    """Ctrl-C ends the process at once (`os._exit`): the worker stuck in the rollout in flight must
    not outlive it (it used to run on, orphaned, until its rollout ended: here an hour)."""
    out = tmp_path / "run"
    scenarios = [str(scenario_path(s)) for s in SCENARIOS]
    argv = [*_argv(blocking, scenarios, out), "--executor", "process", "--workers", "1"]
    workers: set[int] = set()

    def find_workers(proc: subprocess.Popen[str]) -> None:
        workers.update(pid for pid in _children(proc.pid) if "spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"))
        assert workers, "no worker process found"

    try:
        done = interrupt_when_blocked(argv, tmp_path, on_blocked=find_workers)
    finally:
        left = [pid for pid in workers if _alive(pid)]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    assert done.returncode == 130, done.stderr
    assert not left, f"worker process(es) {left} still running after the command ended"
    assert len((out / "results.jsonl").read_text().splitlines()) == 2
    assert main(argv) == 0  # resumes: only the third rollout runs (no blocking in this process)
    assert "2 of 3 rollout(s) finished before; running 1" in capsys.readouterr().err
    assert [r.status for r in read_results(out)] == ["PASS"] * 3
