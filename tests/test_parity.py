"""Parity with ARE's native harness on the same trajectories (slow: ARE builds a judge per call)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO, SCENARIOS, STARTER
from orchestra.oracle_runs import replay_sources
from orchestra.perturbations import KINDS

pytestmark = pytest.mark.slow


def test_orchestra_verdicts_equal_are_native_verdicts(judge_pool):
    compared = 0
    for o in replay_sources(STARTER, perturbations=(None, *KINDS), judge_pool=judge_pool, native_parity=True):
        assert o.error is None, o.error
        if o.not_applicable:
            continue
        assert o.result is not None and o.native is not None
        assert o.native.success == o.result.success, (o.scenario_id, o.perturbation, o.result.rationale, o.native.rationale)
        compared += 1
    assert compared >= len(STARTER) * 2


def test_are_benchmark_oracle_run_scores_every_bundled_scenario(tmp_path):
    """ARE's own harness (`are-benchmark run --oracle`) on the bundled files: every scenario passes."""
    configs = sorted({p.parent.parent.name for p in STARTER})
    for config in configs:
        proc = subprocess.run(
            [str(REPO / ".venv" / "bin" / "are-benchmark") if (REPO / ".venv" / "bin" / "are-benchmark").exists() else "are-benchmark",
             "run", "--oracle", "-d", str(SCENARIOS), "--config", config, "--split", "validation",
             "--output_dir", str(tmp_path / config), "--num_runs", "1"],
            capture_output=True, text=True, timeout=900, cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        text = proc.stdout + proc.stderr
        assert "100.0%" in text or "Success rate: 100" in text, text[-3000:]
