"""Built-in plugin: the agent's model is called through litellm (`orchestra.models.complete`)."""

from __future__ import annotations

from typing import Any

from orchestra.hookspecs import hookimpl
from orchestra.models import complete


@hookimpl(trylast=True)
def model_call(agent: Any, request: Any) -> Any:
    return complete(agent.model, request, metadata={"orchestra_rollout": agent.rollout_id})
