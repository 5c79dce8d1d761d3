"""A team on a real local model: the oracle leads, the small local model serves as the app-agents.

The main agent is `orchestra/oracle`: it delegates the scenario's Calendar actions to the Calendar
app-agent with a task text; the app-agent is the 0.5B model behind llama.cpp's server (constrained
decoding). Asserts the plumbing only — the task reached the local model, which was called and
metered on its own ledger, the delegation was recorded, a verdict came out — never the score.
"""

from __future__ import annotations

from typing import Any

import anyio

from orchestra.hookspecs import hookimpl
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.plugins.offline_models import CALLS_MARKER
from orchestra.rollout import AgentConfig, RolloutSpec, execute
from orchestra.teams.config import AppAgentsConfig, AppAgentSettings, TeamConfig


class Prompts:
    """The messages each sub-agent's model calls carried (what the local model was shown)."""

    def __init__(self) -> None:
        self.seen: dict[str, list[list[dict[str, Any]]]] = {}

    @hookimpl(wrapper=True)
    def model_call(self, agent: Any, request: Any) -> Any:
        if agent.role == "sub":
            self.seen.setdefault(agent.name, []).append([dict(m) for m in request.messages])
        return (yield)


def test_an_oracle_main_agent_with_local_app_agents_runs_end_to_end(local_server, judge_pool, scenario_path):
    # tool_calling app-agents, as in orchestra/teams/shipped/heterogeneous.yaml; one scaffold only: a run costs 1-4 min on 2 cores
    app_scaffold = "tool_calling"
    local = ModelConfig(model=local_server.model, endpoint=local_server.api_base, max_tokens=200, backoff_seconds=0.0)
    team = TeamConfig(
        name="oracle-leads-local",
        main=AgentConfig(scaffold="tool_calling", model=ModelConfig(model="orchestra/oracle")),
        app_agents=AppAgentsConfig(
            apps=["Calendar"],
            defaults=AppAgentSettings(
                scaffold=app_scaffold,
                model=local,
                max_steps=2,
                scaffold_options={"constrained": True, "constrained_format": "llama_cpp.server", "max_tokens": 200},
            ),
        ),
    )
    prompts = Prompts()
    spec = RolloutSpec(scenario=str(scenario_path("starter_execution_calendar")), team=team)
    record = anyio.run(lambda: execute(spec, host=Host.create([prompts]), judge_pool=judge_pool))

    assert record.error is None, record.error
    result = record.result
    assert result is not None and isinstance(result.success, bool) and (result.success or result.rationale)
    # the main agent delegated the Calendar action with the oracle's task text ...
    assert [d.app for d in result.delegations] == ["Calendar"]
    delegation = result.delegations[0]
    assert delegation.caller == "main" and CALLS_MARKER in delegation.task and "Calendar__add_calendar_event" in delegation.task
    # ... which reached the local model as the app-agent's task
    app_agent = next(a for a in result.agents if a.app == "Calendar")
    assert app_agent.role == "sub" and app_agent.model == local_server.model and app_agent.scaffold == app_scaffold
    first_prompt = prompts.seen[app_agent.name][0]
    assert any(CALLS_MARKER in str(m.get("content")) for m in first_prompt)
    # the local model was really called and metered on the app-agent's own ledger
    assert app_agent.model_calls >= 1 and app_agent.prompt_tokens > 500 and app_agent.completion_tokens > 0
    assert app_agent.sim_seconds > 0 and delegation.steps == app_agent.steps >= 1
    assert delegation.prompt_tokens == app_agent.prompt_tokens
    # the main agent (the oracle) answered the user: the rollout went on after the delegation
    assert any(e["tool"] == "AgentUserInterface__send_message_to_user" for e in result.event_log)
