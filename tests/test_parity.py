"""Parity with ARE's native harness on the same trajectories (slow: ARE builds a judge per call)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import SCENARIOS, STARTER
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
    exe = Path(sys.executable).parent / "are-benchmark"
    for config in sorted({p.parent.parent.name for p in STARTER}):
        expected = len([p for p in STARTER if p.parent.parent.name == config])
        proc = subprocess.run(
            [str(exe), "run", "--oracle", "-d", str(SCENARIOS), "--config", config, "--split", "validation",
             "--output_dir", str(tmp_path / config), "--num_runs", "1"],
            capture_output=True, text=True, timeout=900, cwd=tmp_path,
        )
        text = proc.stdout + proc.stderr
        assert proc.returncode == 0, text[-3000:]
        assert f"Scenarios: {expected} unique" in text, text[-3000:]  # none silently dropped
        assert "Micro success rate: 100.0%" in text, text[-3000:]
