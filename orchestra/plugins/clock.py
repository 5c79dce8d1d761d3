"""Built-in plugin: the token-metered clock charges every accepted model response and every tool call.

The charge for a model call happens when the agent loop accepts its response (`model_response`),
so the clock moves the same whether the built-in driver called the model or a driver outside the
loop did, and only for final responses: retries inside the model layer never reach the clock.
Each charge is also booked on the calling agent's ledger (`sim_seconds`: what this agent's own
calls cost — a sub-agent's time is on its own ledger; `tool_calls`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Generator

from orchestra.hookspecs import hookimpl
from orchestra.types import ModelRequest, ModelResponse, ToolCall, ToolOutcome
from orchestra.views import AgentView
from orchestra.wire import check_usage


@hookimpl
def model_response(agent: AgentView, request: ModelRequest, response: ModelResponse) -> None:
    check_usage(response.usage, f"{agent.name}'s model response: usage")  # a bad count is named, not a bare clock error
    agent.ledger.sim_seconds += agent.session.charge_model(response.usage.prompt_tokens, response.usage.completion_tokens)


@hookimpl(wrapper=True)
def tool_call(agent: AgentView, call: ToolCall) -> Generator[None, Awaitable[ToolOutcome], Awaitable[ToolOutcome]]:
    inner = yield

    async def charged() -> ToolOutcome:
        try:
            return await inner
        finally:
            agent.ledger.tool_calls += 1
            agent.ledger.sim_seconds += agent.session.charge_tool_calls(1)

    return charged()
