"""orchestra.rl and are-gaia2 against an OpenAI-compatible server over HTTP (a loopback mock)."""

from __future__ import annotations

import socket

import anyio
import pytest

from orchestra.rl import EnvConfig
from orchestra.rl.batches import PASSED, rollouts
from orchestra.runs.preflight import PreflightError
from orchestra_dev.mock_openai import MockServer
from support.helpers import scenario


def test_batched_rollouts_run_against_an_openai_compatible_server(judge_pool):
    config = EnvConfig(max_steps=3)
    specs = [config.spec(scenario(name)) for name in ("starter_search_lookup", "starter_execution_calendar")]

    async def go(server: MockServer) -> list:
        return [r async for r in rollouts(specs, server.base_url, model="mock-policy", concurrency=2, judge_pool=judge_pool)]

    with MockServer(latency=0.0) as server:
        records = anyio.run(go, server)
    assert sorted(r.scenario_id for r in records) == ["starter_execution_calendar", "starter_search_lookup"]
    for record in records:
        assert record.result is not None and record.error is None, record.error
        main = record.result.agents[0]
        assert main.model == "openai/mock-policy" and main.steps == 3 and main.prompt_tokens > 0 and main.sim_seconds > 0
    calendar = next(r for r in records if r.scenario_id == "starter_execution_calendar")
    assert calendar.result is not None and calendar.result.reward == 0.0  # three reads, none of the writes: the judge says no
    assert server.requests == 1 + sum(r.result.model_calls for r in records)  # the preflight's one-token test request, then the agents'


def test_a_trainers_next_batch_is_not_preflighted_again(judge_pool):
    specs = [EnvConfig(max_steps=1).spec(scenario("starter_search_lookup"))]

    async def go(server: MockServer) -> list:
        return [r async for r in rollouts(specs, server.base_url, model="mock-policy-again", judge_pool=judge_pool)]

    with MockServer(latency=0.0) as server:
        first = anyio.run(go, server)
        after_first = server.requests
        second = anyio.run(go, server)
        assert server.requests - after_first == sum(r.result.model_calls for r in second if r.result)  # no test request this time
        assert after_first == 1 + sum(r.result.model_calls for r in first if r.result)
        PASSED.clear()  # forget: the next batch checks the endpoint again
        anyio.run(go, server)
        assert server.requests - after_first == 2 * sum(r.result.model_calls for r in second if r.result) + 1


def test_batched_rollouts_against_a_dead_endpoint_fail_at_once_in_one_line(judge_pool):
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    specs = [EnvConfig(max_steps=3).spec(scenario("starter_search_lookup"))]

    async def go() -> list:
        return [r async for r in rollouts(specs, dead, model="local", judge_pool=judge_pool)]

    with pytest.raises(PreflightError) as caught:
        anyio.run(go)
    message = str(caught.value)
    assert "\n" not in message and dead in message and "connection refused" in message and "openai/local" in message


def test_are_gaia2_over_http_with_verifiers_openai_client(monkeypatch):
    vf = pytest.importorskip("verifiers")
    monkeypatch.setenv("MOCK_API_KEY", "none")
    env = vf.load_environment("are-gaia2", source="bundled", capability="search", num_examples=1, max_turns=3)
    with MockServer(latency=0.0) as server:
        client = vf.ClientConfig(api_base_url=server.base_url, api_key_var="MOCK_API_KEY", max_retries=0)

        async def go() -> dict:
            return await env.evaluate(
                client, "mock-policy", num_examples=1, rollouts_per_example=1, state_columns=["orchestra"], on_progress=lambda *a, **k: None
            )

        out = anyio.run(go)["outputs"][0]
    info = out["orchestra"]
    assert out["metrics"]["num_turns"] == 3 and info["stop_reason"] == "max_turns" and server.requests == 3
    assert info["ledgers"][0]["steps"] == 3 and info["ledgers"][0]["prompt_tokens"] > 0 and out["reward"] == 0.0
