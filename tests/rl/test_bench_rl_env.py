"""`benchmarks/bench_rl_env.py` runs and reports what the issue asks: env_response vs model call,
median and p99, at each concurrency (a smoke run: tiny sizes; no timing is asserted)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from support.helpers import REPO

pytest.importorskip("verifiers")


@pytest.mark.slow  # about a minute: two verifiers evaluations, judges built per rollout
def test_the_rl_env_benchmark_reports_env_response_against_the_model_call_per_concurrency(tmp_path):
    out = tmp_path / "bench.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "bench_rl_env.py"), "--latency", "0.01", "--turns", "2", "--concurrency", "1", "2", "--json", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert [r["concurrency"] for r in report["rows"]] == [1, 2]
    for row in report["rows"]:
        assert row["errors"] == 0 and row["env_responses"] > 0 and row["model_calls"] >= row["env_responses"]
        for key in ("env_median_ms", "env_p99_ms", "model_median_ms", "model_p99_ms", "median_ratio", "p99_ratio"):
            assert math.isfinite(row[key]) and row[key] > 0, key
        assert row["median_ratio"] == pytest.approx(row["env_median_ms"] / row["model_median_ms"])
    assert "env_response / model call" in done.stdout
