"""64 concurrent sessions on one `orchestra serve` process: no error, and every episode's record is
the one `orchestra run`'s executor produces for the same spec (event log, verdict, simulated time).

The server is a real subprocess on loopback; 64 httpx clients play step-mode episodes at once
(`benchmarks/bench_serve.py`'s client: the session's oracle answers through the proxy).
"""

from __future__ import annotations

import asyncio
import importlib.util

import anyio
import pytest

from orchestra.rl.selection import one_scenario
from orchestra.rollout import execute
from orchestra.serve.sessions import SessionRequest
from support.helpers import REPO

pytestmark = pytest.mark.slow


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_serve", REPO / "benchmarks" / "bench_serve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_64_concurrent_sessions_match_orchestra_run() -> None:
    bench = load_bench()
    with bench.serve("--max-sessions", "64") as url:
        run = asyncio.run(bench.measure(url, 64, 64))
    assert len(run["results"]) == 64 and run["step"]["n"] > 64
    reference = {}
    for scenario in bench.SCENARIOS:
        file = one_scenario(scenario)
        spec = SessionRequest(scenario=scenario, model="orchestra/oracle").spec(file)
        record = anyio.run(lambda s=spec, f=file: execute(s, file=f))
        assert record.result is not None
        reference[scenario] = (record.result.event_log_sha256, record.result.reward, record.result.sim_seconds)
    for result in run["results"]:
        assert (result["event_log_sha256"], result["reward"], result["sim_seconds"]) == reference[result["scenario"]], result
    assert {r["reward"] for r in run["results"]} == {1.0}
