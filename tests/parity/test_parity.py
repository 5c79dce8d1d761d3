"""Parity with ARE's native harness on the same trajectories (slow: ARE builds a judge per call)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from orchestra.oracle.perturbations import KINDS
from orchestra.runs.runner import execute_sources_sync
from support.helpers import SCENARIOS, STARTER

pytestmark = pytest.mark.slow


def test_orchestra_verdicts_equal_are_native_verdicts(judge_pool):
    compared = 0
    for o in execute_sources_sync(STARTER, perturbations=(None, *KINDS), judge_pool=judge_pool, native_parity=True):
        assert o.error is None, o.error
        if o.not_applicable:
            continue
        assert o.result is not None and o.native is not None
        assert o.native.success == o.result.success, (o.scenario_id, o.perturbation, o.result.rationale, o.native.rationale)
        compared += 1
    assert compared >= len(STARTER) * 2


def test_are_benchmark_oracle_run_scores_every_bundled_scenario(tmp_path):
    """ARE's own harness (`are-benchmark run --oracle`) on the bundled files: every scenario passes."""
    exe = Path(sys.executable).parent / "are-benchmark"
    for config in sorted({p.parent.parent.name for p in STARTER}):
        expected = len([p for p in STARTER if p.parent.parent.name == config])
        proc = subprocess.run(
            [
                str(exe),
                "run",
                "--oracle",
                "-d",
                str(SCENARIOS),
                "--config",
                config,
                "--split",
                "validation",
                "--output_dir",
                str(tmp_path / config),
                "--num_runs",
                "1",
            ],
            capture_output=True,
            text=True,
            timeout=900,
            cwd=tmp_path,
        )
        text = proc.stdout + proc.stderr
        assert proc.returncode == 0, text[-3000:]
        assert f"Scenarios: {expected} unique" in text, text[-3000:]  # none silently dropped
        assert "Micro success rate: 100.0%" in text, text[-3000:]


def test_corpus_oracle_verdicts_equal_are_native_verdicts(judge_pool):
    """Every corpus scenario's oracle trajectory: orchestra and ARE's offline harness both accept it."""
    corpus = sorted((SCENARIOS / "corpus").rglob("*.json"))
    assert len(corpus) >= 36
    for o in execute_sources_sync(corpus, judge_pool=judge_pool, native_parity=True):
        assert o.error is None, o.error
        assert o.result.success and o.native.success, (o.scenario_id, o.result.rationale, o.native.rationale)


def test_are_benchmark_oracle_run_scores_the_corpus(tmp_path):
    exe = Path(sys.executable).parent / "are-benchmark"
    corpus = SCENARIOS / "corpus"
    for config_dir in sorted(p for p in corpus.iterdir() if p.is_dir()):
        expected = len(list((config_dir / "validation").glob("*.json")))
        proc = subprocess.run(
            [
                str(exe),
                "run",
                "--oracle",
                "-d",
                str(corpus),
                "--config",
                config_dir.name,
                "--split",
                "validation",
                "--output_dir",
                str(tmp_path / config_dir.name),
                "--num_runs",
                "1",
            ],
            capture_output=True,
            text=True,
            timeout=1800,
            cwd=tmp_path,
        )
        text = proc.stdout + proc.stderr
        assert proc.returncode == 0, text[-3000:]
        assert f"Scenarios: {expected} unique" in text, text[-3000:]
        assert "Micro success rate: 100.0%" in text, text[-3000:]
