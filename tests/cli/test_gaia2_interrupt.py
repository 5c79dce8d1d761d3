"""Ctrl-C stops `orchestra gaia2` at once — even while a rollout is inside synchronous work that
never yields to the event loop — keeps every finished rollout, says where and the command that
resumes; the resumed run runs only what is missing and ends with the files an uninterrupted run
writes. Checked by behaviour, not by a stopwatch: the rollout in flight is stuck in a one-hour
`time.sleep`, so a command that waits for it never exits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestra.cli import main
from support.helpers import blocking_team, gaia2_folder, interrupt_when_blocked


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    source = gaia2_folder(tmp_path / "gaia2")  # the run keeps two scenarios: standard, agent2agent and noise hold 1 rollout each
    monkeypatch.syspath_prepend(str(tmp_path))
    return source, blocking_team(tmp_path, plugin="gaia2_blocker", after=1)


def _argv(source: Path, team: Path, out: Path) -> list[str]:
    ids = ["--id", "starter_execution_calendar", "--id", "starter_multiturn_followup"]
    return ["gaia2", "--team", str(team), "--runs", "1", "--source", str(source), *ids, "--out", str(out), "--no-progress", "--no-preflight"]


def _files(out: Path) -> dict[str, bytes]:
    """The folder's files, its own path written as `OUT` (`output.jsonl` names traces by it)."""
    return {str(p.relative_to(out)): p.read_bytes().replace(str(out).encode(), b"OUT") for p in sorted(out.rglob("*")) if p.is_file()}


def test_ctrl_c_stops_at_once_keeps_what_finished_and_the_rerun_completes_it(setup, tmp_path, capsys):
    source, team = setup
    out = tmp_path / "interrupted"
    argv = _argv(source, team, out)
    done = interrupt_when_blocked(argv, tmp_path, ready=(out / "standard" / "results.jsonl").is_file, wait_s=600)
    stderr = done.stderr
    assert done.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == (
        f"orchestra: interrupted in phase agent2agent: none of its 1 rollout(s) finished (earlier phases are complete); rerun with: orchestra {' '.join(argv)}"
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
