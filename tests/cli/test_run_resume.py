"""Runs that survive: results stream to DIR/results.jsonl, a rerun resumes, Ctrl-C and kill -9 lose
at most the rollouts in flight, a changed configuration refuses to resume."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestra.cli import main
from orchestra.runs.run_dir import read_results

REPO = Path(__file__).resolve().parents[2]
RUNS = "3"


@pytest.fixture(scope="module")
def starters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("starters")
    for path in sorted((REPO / "scenarios").glob("*/validation/starter_*.json")):
        shutil.copy(path, folder / path.name)
    return folder


def _argv(starters: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "--model", "orchestra/oracle", "--scenarios", str(starters), "--runs", RUNS, "--out", str(out), *extra]


@pytest.fixture(scope="module")
def reference(starters: Path, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The results file of an uninterrupted run, its lines sorted."""
    out = tmp_path_factory.mktemp("reference") / "run"
    assert main(_argv(starters, out)) == 0
    return sorted((out / "results.jsonl").read_text().splitlines())


def _lines(out: Path) -> list[str]:
    path = out / "results.jsonl"
    return path.read_text().splitlines() if path.is_file() else []


def _start_and_stop(starters: Path, out: Path, sig: int) -> tuple[subprocess.CompletedProcess[str], float]:
    """Start a run in a subprocess, signal it once two rollouts finished; its result and how long it took to stop."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestra.cli", *_argv(starters, out, "--no-progress")], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 300
    while len(_lines(out)) < 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never wrote two results"
        time.sleep(0.05)
    sent = time.monotonic()
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr), time.monotonic() - sent


def test_results_stream_with_a_manifest_and_a_summary(starters, reference, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_argv(starters, out, "--json")) == 0
    lines = _lines(out)
    assert len(lines) == 7 * int(RUNS) and sorted(lines) == reference
    records = read_results(out)
    assert {(r.scenario_id, r.sample_index) for r in records} == {(r.scenario_id, i) for r in records for i in range(int(RUNS))}
    assert all(r.spec is not None and r.status == "PASS" for r in records)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["orchestra_version"] and manifest["runs"] == int(RUNS) and len(manifest["scenarios"]) == 7
    assert all(len(e["sha256"]) == 64 and e["capabilities"] for e in manifest["scenarios"].values())
    assert manifest["configurations"][0]["session"]["clock"]["decode_rate_tps"]
    summary = json.loads((out / "summary.json").read_text())
    everything = summary["capabilities"][-1]
    assert everything["capability"] == "all" and everything["pass_at_1"] == 1.0 and everything["pass_hat_k"][RUNS] == 1.0
    # --json keeps stdout machine-readable: one object per rollout, nothing else
    assert all(json.loads(line)["status"] == "PASS" for line in capsys.readouterr().out.splitlines())


def test_a_finished_run_resumes_to_nothing_and_a_changed_configuration_is_refused(starters, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_argv(starters, out)) == 0
    before = _lines(out)
    capsys.readouterr()
    assert main(_argv(starters, out)) == 0
    assert f"{7 * int(RUNS)} of {7 * int(RUNS)} rollout(s) finished before; running 0" in capsys.readouterr().err
    assert _lines(out) == before
    assert main(_argv(starters, out, "--decode-rate", "3")) == 2
    err = capsys.readouterr().err
    assert "holds a run of another configuration (" in err and "decode_rate_tps: 50.0 before, 3.0 now" in err and "Traceback" not in err
    assert _lines(out) == before


def test_an_error_record_is_run_again_on_resume(starters, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_argv(starters, out)) == 0
    lines = _lines(out)
    broken = json.loads(lines[0])
    broken["error"], broken["result"] = "harness failed", None
    (out / "results.jsonl").write_text("\n".join([json.dumps(broken), *lines[1:]]) + "\n")
    capsys.readouterr()
    assert main(_argv(starters, out)) == 0
    assert "1 ERROR rollout(s) run again; running 1" in capsys.readouterr().err
    assert sorted(_lines(out)) == sorted(lines)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_a_run_stopped_midway_resumes_to_the_same_results(sig, starters, reference, tmp_path, capsys):
    out = tmp_path / "run"
    stopped, took = _start_and_stop(starters, out, sig)
    kept = _lines(out)
    assert 2 <= len(kept) < len(reference), "the run was not stopped midway"
    if sig == signal.SIGINT:
        assert stopped.returncode == 130, stopped.stderr
        assert f"of {len(reference)} rollout(s) finished, kept in {out / 'results.jsonl'}; resume with: orchestra run" in stopped.stderr
        assert "never awaited" not in stopped.stderr and "Traceback" not in stopped.stderr
        assert took < 10, took  # generous on a loaded machine; measured well under a second
    else:
        assert stopped.returncode == -signal.SIGKILL
    assert all(json.loads(line) for line in kept if line.strip())  # every kept line is whole (a torn one is dropped on resume)
    assert main(_argv(starters, out)) == 0
    err = capsys.readouterr().err
    assert "finished before" in err
    assert sorted(_lines(out)) == reference


@pytest.mark.slow
def test_the_oracle_team_over_the_corpus_is_the_same_at_any_concurrency(tmp_path, capsys):
    """Acceptance: `--team oracle` over the whole corpus, `--runs 3`: every rollout 1.0, and the
    records at `--concurrency 8` equal those at `--concurrency 1`."""
    corpus = str(REPO / "scenarios" / "corpus")
    files = {}
    for n in ("1", "8"):
        out = tmp_path / f"c{n}"
        assert main(["run", "--team", "oracle", "--scenarios", corpus, "--runs", "3", "--concurrency", n, "--out", str(out), "--json"]) == 0
        files[n] = sorted(_lines(out))
    assert files["1"] == files["8"] and len(files["1"]) == 3 * len(list((REPO / "scenarios" / "corpus").glob("*/validation/*.json")))
    assert all(r.status == "PASS" and r.result is not None and r.result.reward == 1.0 for r in read_results(tmp_path / "c1"))
