"""The benchmarks' mock (`LeanMockServer`, on a bare asyncio server) answers as the tests' mock
(`MockServer`, aiohttp) does: the same rollouts give the same records against either."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from orchestra.rl import EnvConfig
from orchestra.rl.batches import rollouts
from orchestra_dev.mock_openai import LeanMockServer, MockServer
from support.helpers import scenario


def _records(server_class: type[MockServer], judge_pool: Any) -> list[tuple[Any, ...]]:
    specs = [EnvConfig(max_steps=3).spec(scenario(name), sample_index=i) for i, name in enumerate(("starter_search_lookup", "starter_execution_calendar"))]
    with server_class(0.0) as server:

        async def go() -> list[Any]:
            return [r async for r in rollouts(specs, server.base_url, model="mock", concurrency=1, judge_pool=judge_pool)]

        records = anyio.run(go) + anyio.run(go)  # the second batch: the fragments the lean mock parsed once
        listings = server.model_listings
    assert listings == 1  # the preflight's, once
    return [(r.scenario_id, r.result.event_log_sha256, r.result.prompt_tokens, r.result.completion_tokens, r.result.sim_seconds) for r in records if r.result]


def test_the_lean_mock_answers_as_the_mock(judge_pool: Any) -> None:
    assert _records(LeanMockServer, judge_pool) == _records(MockServer, judge_pool)


def test_the_lean_mock_has_no_faults() -> None:
    with pytest.raises(ValueError, match="no faults"):
        LeanMockServer(0.0, fault="dead")
