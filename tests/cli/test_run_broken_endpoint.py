"""A model endpoint that breaks after preflight (or with `--no-preflight`): every rollout ends
ERROR within seconds, and the run stops at once with the command that resumes it — it used to
retry each of 80 steps 5 times (~21 minutes of silence per rollout) and, at the default
`--max-consecutive-errors 10`, take ~3.5 hours to stop. Loopback servers only
(`orchestra_dev.mock_openai`); backoff 0 keeps the tests quick (the retries' count, not their
waits, is what is checked)."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path

import anyio
import pytest

from orchestra.agent import MAX_FAILED_CALLS_IN_A_ROW
from orchestra.cli import main
from orchestra.models import ModelConfig, ModelError, complete
from orchestra.runs.run_dir import read_results
from orchestra.types import ModelRequest
from orchestra_dev.mock_openai import MockServer

SCENARIOS = ("starter_search_lookup", "starter_time_deadline", "starter_execution_calendar")


def _argv(endpoint: str, scenarios: list[Path], out: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--model",
        "openai/mock",
        "--endpoint",
        endpoint,
        "--model-backoff",
        "0",
        "--scenarios",
        *map(str, scenarios),
        "--out",
        str(out),
        "--no-progress",
        *extra,
    ]


@pytest.mark.parametrize("fault", ["invalid_json", "no_choices"])
def test_a_malformed_reply_is_permanent_never_retried(fault):
    with MockServer(latency=0.0, fault=fault) as server:
        config = ModelConfig(model="openai/mock", endpoint=server.base_url, max_retries=4, backoff_seconds=0)
        request = ModelRequest(messages=[{"role": "user", "content": "hi"}], action_format="tool_calls")
        with pytest.raises(ModelError, match="malformed reply, not retried") as raised:
            anyio.run(lambda: complete(config, request))
    assert raised.value.permanent and server.requests == 1


def test_an_http_500_is_retried_and_each_retry_is_shown(caplog):
    with MockServer(latency=0.0, fault="http500") as server, caplog.at_level(logging.WARNING, logger="orchestra.models"):
        config = ModelConfig(model="openai/mock", endpoint=server.base_url, max_retries=2, backoff_seconds=0)
        request = ModelRequest(messages=[{"role": "user", "content": "hi"}], action_format="tool_calls")
        with pytest.raises(ModelError, match="gave up after 3 attempts") as raised:
            anyio.run(lambda: complete(config, request))
    assert not raised.value.permanent and server.requests == 3
    shown = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert [m.split(": attempt ")[1].split(" failed")[0] for m in shown] == ["1 of 3", "2 of 3"]
    assert all(m.startswith(f"openai/mock at {server.base_url}: attempt ") and "InternalServerError" in m for m in shown)


@pytest.mark.parametrize("fault", ["http500", "dead"])
def test_a_server_that_breaks_mid_run_ends_the_rollout_and_stops_the_run(fault, tmp_path, capsys, scenario_path):
    """The probe passes (the server's first answer), then every chat request fails: the rollout
    ends ERROR after the first call's retries and two more single tries, and the run stops at that
    ERROR (the endpoint fails its check again) with the resume line."""
    out = tmp_path / "run"
    with MockServer(latency=0.0, fault=fault, healthy=1) as server:
        argv = _argv(server.base_url, [scenario_path(s) for s in SCENARIOS], out)
        code = main(argv)
    captured = capsys.readouterr()
    assert code == 1
    rows = captured.out.strip().splitlines()
    assert len(rows) == 1 and rows[0].split()[1] == "ERROR"
    assert f"{MAX_FAILED_CALLS_IN_A_ROW} model calls in a row failed (openai/mock at {server.base_url}); the agent stops" in rows[0]
    # the first call: 1 + 4 retries; then 2 calls of one try each; then the endpoint's check (its test
    # request) — and maybe the next rollout's first call, sent while the check ran, before the run stopped
    assert server.requests - (1 + 5 + (MAX_FAILED_CALLS_IN_A_ROW - 1) + 1) in (0, 1)
    last = captured.err.strip().splitlines()[-1]
    assert last.startswith(f"orchestra: the model endpoint stopped answering (agent model openai/mock: endpoint {server.base_url}: ")
    assert last.endswith(f"1 of 3 rollout(s) finished, kept in {out / 'results.jsonl'}; resume with: orchestra {' '.join(argv)}")
    assert [r.status for r in read_results(out)] == ["ERROR"]
    # no verdict is stored either: ARE's judge may have passed what ran before the error
    [whole] = [json.loads(p.read_text()) for p in (out / "rollouts").glob("*.json")]
    assert whole["result"] is None or (whole["result"]["reward"] is None and whole["result"]["success"] is None)


def test_no_preflight_on_a_dead_port_stops_after_one_rollout(tmp_path, capsys, scenario_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    out = tmp_path / "run"
    argv = _argv(endpoint, [scenario_path(s) for s in SCENARIOS], out, "--no-preflight", "--json")
    code = main(argv)
    captured = capsys.readouterr()
    records = [json.loads(line) for line in captured.out.splitlines()]
    assert code == 1 and [r["status"] for r in records] == ["ERROR"]
    assert "3 model calls in a row failed" in records[0]["error"] and "Connection error" in records[0]["error"]
    assert "stopped answering (agent model openai/mock: endpoint" in captured.err and "nothing is listening (connection refused)" in captured.err
    assert captured.err.strip().splitlines()[-1].endswith(f"resume with: orchestra {' '.join(argv)}")


def test_parity_runs_keep_are_s_loop_on_failed_calls(tmp_path, capsys, scenario_path):
    """`--are-model-failures`: ARE's agent loops on failed calls to its budget; so does this one."""
    with MockServer(latency=0.0, fault="http500", healthy=1) as server:
        argv = _argv(
            server.base_url, [scenario_path("starter_search_lookup")], tmp_path / "run", "--are-model-failures", "--max-steps", "4", "--model-retries", "1"
        )
        main([*argv, "--json"])
    rec = json.loads(capsys.readouterr().out.splitlines()[0])
    assert rec["stop_reason"] == "step_budget" and rec["agents"][0]["model_errors"] == 4
    assert server.requests == 1 + 4 * 2  # every call with its retry: no single tries after a failure
