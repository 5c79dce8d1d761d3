"""Built-in plugin: the agent's model is called through litellm (`orchestra.models.complete`).

The host's model providers (`register_models`) go with the call: litellm learns of them at the
first model call, not when the host is built.
"""

from __future__ import annotations

from collections.abc import Awaitable

from orchestra import models
from orchestra.hookspecs import hookimpl
from orchestra.types import ModelRequest, ModelResponse
from orchestra.views import AgentView


@hookimpl(trylast=True)
def model_call(agent: AgentView, request: ModelRequest) -> Awaitable[ModelResponse]:
    return models.complete(agent.model, request, metadata={"orchestra_agent_run": agent.run_id}, providers=agent.host.models)
