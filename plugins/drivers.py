"""Built-in plugin: what runs an agent and a rollout when no other plugin takes over.

Both hooks are `firstresult` with these implementations last, so a plugin can replace a driver
(return its own awaitable) or, more usually, wrap one (`@hookimpl(wrapper=True)`): tracing opens
its `invoke_workflow` span around `rollout` and its `invoke_agent` span around `agent_run`.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from orchestra.hookspecs import hookimpl
from orchestra.types import AgentView


@hookimpl(trylast=True)
def agent_run(agent: AgentView) -> Awaitable[None]:
    from orchestra.agent import drive

    return drive(agent)  # type: ignore[arg-type]  # the host only ever passes AgentContext


@hookimpl(trylast=True)
def rollout(spec: Any, scenario_file: Any, host: Any, judge_pool: Any) -> Awaitable[Any]:
    from orchestra.rollout import run_spec

    return run_spec(spec, host=host, judge_pool=judge_pool, scenario_file=scenario_file)
