"""Ctrl-C stops `orchestra gaia2` at once — even while a rollout is inside synchronous work that
never yields to the event loop — keeps every finished rollout, says where and the command that
resumes; the resumed run runs only what is missing and ends with the files an uninterrupted run
writes. Checked by behaviour, not by a stopwatch: the rollout in flight is stuck in a one-hour
`time.sleep`, so a command that waits for it never exits."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestra.cli import main
from orchestra.scenario_files import bundled_root

REPO = Path(__file__).resolve().parents[2]

BLOCKER = '''
"""Test plugin: once one rollout closed, the next agent step blocks in synchronous code for an hour."""
import os
import time
from pathlib import Path

from orchestra.hookspecs import hookimpl

closed = 0


@hookimpl
def rollout_closed(rollout):
    global closed
    closed += 1


@hookimpl
def pre_step(agent):
    mark = os.environ.get("BLOCKER_MARK")
    if mark and closed >= 1:
        Path(mark).write_text("blocked")
        time.sleep(3600)
    return None
'''

#: A Gaia2 folder in ARE's layout with one starter per config; the run keeps two scenarios, so the
#: phases hold 1 (standard: execution), 1 (agent2agent) and 1 (noise) rollout.
STARTERS = {
    "execution": "execution/validation/starter_execution_calendar.json",
    "search": "search/validation/starter_search_lookup.json",
    "adaptability": "adaptability/validation/starter_adaptability_reply.json",
    "time": "time/validation/starter_time_deadline.json",
    "ambiguity": "ambiguity/validation/starter_ambiguity_clarify.json",
    "mini": "execution/validation/starter_multiturn_followup.json",
}


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    source = tmp_path / "gaia2"
    for config, rel in STARTERS.items():
        target = source / config / "validation" / Path(rel).name
        target.parent.mkdir(parents=True)
        shutil.copy(bundled_root() / rel, target)
    (tmp_path / "gaia2_blocker.py").write_text(BLOCKER)
    team = tmp_path / "blocked.yaml"
    team.write_text("name: blocked\nmain:\n  scaffold: tool_calling\n  model: orchestra/oracle\nplugins: [gaia2_blocker]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return source, team


def _argv(source: Path, team: Path, out: Path) -> list[str]:
    ids = ["--id", "starter_execution_calendar", "--id", "starter_multiturn_followup"]
    return ["gaia2", "--team", str(team), "--runs", "1", "--source", str(source), *ids, "--out", str(out), "--no-progress", "--no-preflight"]


def _files(out: Path) -> dict[str, bytes]:
    """The folder's files, its own path written as `OUT` (`output.jsonl` names traces by it)."""
    return {str(p.relative_to(out)): p.read_bytes().replace(str(out).encode(), b"OUT") for p in sorted(out.rglob("*")) if p.is_file()}


def test_ctrl_c_stops_at_once_keeps_what_finished_and_the_rerun_completes_it(setup, tmp_path, capsys):
    source, team = setup
    out = tmp_path / "interrupted"
    mark = tmp_path / "blocked.mark"
    env = {**os.environ, "BLOCKER_MARK": str(mark), "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    argv = _argv(source, team, out)
    proc = subprocess.Popen([sys.executable, "-m", "orchestra.cli", *argv], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        while not (mark.exists() and (out / "standard" / "results.jsonl").is_file()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the second rollout never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        # Without the fix the command waits for the one-hour sleep: this limit only keeps a broken
        # run from hanging the suite.
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == (
        f"orchestra: interrupted in phase agent2agent: 0 of its 1 rollout(s) finished, kept in {out / 'agent2agent' / 'results.jsonl'} "
        f"(earlier phases are complete); resume with: orchestra {' '.join(argv)}"
    )
    assert "Traceback" not in stderr and "never awaited" not in stderr
    kept = (out / "standard" / "results.jsonl").read_text().splitlines()
    assert len(kept) == 1 and json.loads(kept[0])["result"]["reward"] == 1.0
    assert len(list((out / "standard" / "execution" / "hf").glob("*.json"))) == 1
    assert not (out / "agent2agent" / "results.jsonl").exists() or not (out / "agent2agent" / "results.jsonl").read_text()

    # the printed command resumes: the finished phase is not run again, the missing rollouts run
    # (and a trace torn by a kill while it was written is dropped)
    (out / "standard" / "execution" / "hf" / "torn.json.tmp").write_text("{")
    capsys.readouterr()
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "standard: all 1 rollout(s) finished before; not run again" in err
    assert "agent2agent: 1 rollout(s)" in err and "noise: 1 rollout(s)" in err

    # and the folder equals an uninterrupted run's
    clean = tmp_path / "clean"
    assert main(_argv(source, team, clean)) == 0
    assert _files(out) == _files(clean)
