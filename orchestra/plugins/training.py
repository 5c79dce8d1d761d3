"""Built-in plugin: every model call of a trainable agent goes into the rollout's training trace
(one that came without token ids is kept as a turn marked `token_ids_missing`, never dropped).

Trainable: the main agent (what the policy plays) and the app-agents a team file marks
`trainable: true`; frozen agents and generic sub-agents are in no trace. Recorded when the loop
accepts the response (`model_response`), before the clock charges it (`tryfirst`), so each turn
carries the simulated time at the call and the seconds the call cost (`orchestra.training`).
"""

from __future__ import annotations

from orchestra.hookspecs import hookimpl
from orchestra.types import ModelRequest, ModelResponse
from orchestra.views import AgentView
from orchestra.wire import check_usage


@hookimpl(tryfirst=True)
def model_response(agent: AgentView, request: ModelRequest, response: ModelResponse) -> None:
    if not trainable(agent):
        return
    session = agent.session
    check_usage(response.usage, f"{agent.name}'s model response: usage")  # named, not the clock's bare error
    dt = session.config.clock.model_seconds(response.usage.prompt_tokens, response.usage.completion_tokens)
    agent.rollout.training.add(agent=agent.name, role=agent.role, app=agent.app, model=agent.model.model, response=response, sim_time=session.elapsed, dt=dt)


def trainable(agent: AgentView) -> bool:
    """The main agent, and an app-agent its team marks `trainable: true`."""
    if agent.is_main:
        return True
    team = agent.rollout.team
    return agent.app is not None and team is not None and team.trainable(agent.app)
