"""Built-in plugin: the agent's model is called through litellm (`orchestra.models.complete`)."""

from __future__ import annotations

from collections.abc import Awaitable

from orchestra.hookspecs import hookimpl
from orchestra.models import complete
from orchestra.types import ModelRequest, ModelResponse
from orchestra.views import AgentView


@hookimpl(trylast=True)
def model_call(agent: AgentView, request: ModelRequest) -> Awaitable[ModelResponse]:
    return complete(agent.model, request, metadata={"orchestra_rollout": agent.rollout_id})
