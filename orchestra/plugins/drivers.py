"""Built-in plugin: what runs an agent and a rollout when no other plugin takes over.

Both hooks are `firstresult` with these implementations last, so a plugin can replace a driver
(return its own awaitable) or, more usually, wrap one (`@hookimpl(wrapper=True)`): tracing opens
its `invoke_workflow` span around `rollout` and its `invoke_agent` span around `agent_run`.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from orchestra.hookspecs import hookimpl
from orchestra.views import AgentView, RolloutView

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.record import RolloutRecord


@hookimpl(trylast=True)
def agent_run(agent: AgentView) -> Awaitable[None]:
    from orchestra.agent import AgentContext, drive

    assert isinstance(agent, AgentContext)  # the loop only ever passes its own agents
    if agent.a2a is not None:  # a remote A2A agent plays it (docs/agent2agent.md)
        from orchestra.a2a.driver import play

        return play(agent)
    return drive(agent)


@hookimpl(trylast=True)
def rollout(rollout: RolloutView) -> Awaitable[RolloutRecord]:
    from orchestra.rollout import Rollout

    assert isinstance(rollout, Rollout)  # `execute` only ever passes its own rollouts
    return rollout.run()
