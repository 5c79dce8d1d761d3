"""Built-in plugin: tool calls go to the scenario's ARE apps (after delegation had its say).

Order for one call: a plugin-registered tool of that name runs it; else the `delegate` hook
may claim it (Agent2Agent); else the session executes the ARE app tool — if it is in the calling
agent's own tool list (the `agent_tools` hook may have removed it from this agent). The clock plugin charges
the call around all of this.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable

from orchestra.hookspecs import hookimpl
from orchestra.types import ToolCall, ToolOutcome
from orchestra.views import AgentView


@hookimpl(trylast=True)
def tool_call(agent: AgentView, call: ToolCall) -> Awaitable[ToolOutcome]:
    async def run() -> ToolOutcome:
        extra = agent.host.tools.get(call.name)
        if extra is not None:
            _, fn = extra
            t = agent.session.now
            try:
                return ToolOutcome(call.name, call.arguments, ok=True, output=fn(**call.arguments), sim_time=t)
            except Exception as exc:
                return ToolOutcome(call.name, call.arguments, ok=False, error=f"{type(exc).__name__}: {exc}", sim_time=t, exception=exc)
        delegated = agent.host.hook.delegate(agent=agent, call=call)
        if delegated is not None:
            if not inspect.isawaitable(delegated):  # a plugin's bug: say which hook and what it returned
                raise TypeError(
                    f"a `delegate` implementation returned {type(delegated).__name__} for {call.name!r}; it must return an "
                    "awaitable of a ToolOutcome (an `async def` coroutine, e.g. `orchestra.agent.spawn(...)`) or None"
                )
            return await delegated
        if call.name not in agent.tools and call.name in agent.session.tools:
            return ToolOutcome(
                call.name,
                call.arguments,
                ok=False,
                sim_time=agent.session.now,
                error=f"Unknown tool {call.name!r}. Available tools: {', '.join(sorted(agent.tools))}.",
            )
        return agent.session.execute_tool(call.name, call.arguments, agent=agent.name)

    return run()
