"""Each scaffold against a real model behind a real OpenAI-compatible server, through litellm/HTTP.

Asserts the plumbing — actions parsed from the model's constrained output, usage fed to the
clock, a verdict produced — never the score (a 0.5B model does not solve Gaia2 scenarios). The
scenario is a starter trimmed to three apps (`trimmed_scenario`): the plumbing is the same, the
prompt a third as long (a 6,000-token prompt costs the 0.5B model about 90 s of CPU per scaffold).
"""

from __future__ import annotations

import pytest

from orchestra.clock import ClockConfig
from orchestra.session import SessionConfig
from support.helpers import run_agent_on, trimmed_scenario


@pytest.mark.parametrize("scaffold", ["react", "tool_calling", "parallel_tools"])
def test_scaffold_runs_a_scenario_on_a_local_model(scaffold, local_server, judge_pool, tmp_path):
    clock = ClockConfig()
    result = run_agent_on(
        trimmed_scenario("starter_search_lookup", tmp_path),
        model=local_server.model,
        endpoint=local_server.api_base,
        scaffold=scaffold,
        judge_pool=judge_pool,
        max_steps=2,
        scaffold_options={"constrained": True, "constrained_format": "llama_cpp.server", "max_tokens": 200},
        session_config=SessionConfig(clock=clock),
    )
    assert result.error is None, result.error
    assert result.steps >= 1
    # the server reported usage, and the clock charged at least the formula's token part for it
    assert result.prompt_tokens > 1000 and result.completion_tokens > 0
    token_time = clock.model_seconds(result.prompt_tokens, result.completion_tokens)
    assert result.sim_seconds >= 1.0 + token_time - 1e-6
    # the constrained reply parsed into a real tool call that reached ARE (an AGENT event)
    agent_events = [e for e in result.event_log if e["type"] == "AGENT"]
    assert agent_events, "no action of the model reached the environment"
    assert isinstance(result.success, bool) and (result.success or result.rationale)
