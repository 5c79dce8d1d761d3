"""The `code` scaffold against the real local model (plumbing only: a 0.5B model does not solve
Gaia2): its reply is parsed as ARE's code format, a block runs in the wasm sandbox or the format
error goes back, usage moves the clock, a verdict comes out. On a starter trimmed to three apps
(`trimmed_scenario`), so the prompt is short enough for a CPU."""

from __future__ import annotations

from orchestra.clock import ClockConfig
from orchestra.session import SessionConfig
from support.helpers import run_agent_on, trimmed_scenario


def test_code_scaffold_runs_a_scenario_on_a_local_model(local_server, judge_pool, tmp_path):
    clock = ClockConfig()
    result = run_agent_on(
        trimmed_scenario("starter_search_lookup", tmp_path),
        model=local_server.model,
        endpoint=local_server.api_base,
        scaffold="code",
        judge_pool=judge_pool,
        max_steps=1,
        scaffold_options={"max_tokens": 200, "sandbox": "wasm"},
        session_config=SessionConfig(clock=clock),
    )
    assert result.error is None, result.error
    assert result.steps >= 1
    assert result.prompt_tokens > 1000 and result.completion_tokens > 0
    assert result.sim_seconds >= 1.0 + clock.model_seconds(result.prompt_tokens, result.completion_tokens) - 1e-6
    assert result.agents[0].scaffold == "code" and 1 <= result.agents[0].model_calls <= 11  # format retries included
    assert isinstance(result.success, bool) and (result.success or result.rationale)
