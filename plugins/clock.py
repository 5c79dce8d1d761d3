"""Built-in plugin: the token-metered clock charges every model call and every tool call.

Wrappers, so the charge happens around whatever answers the call (a real model, the oracle, a
cache) and only for the final response: retries inside the model layer never reach the clock.
"""

from __future__ import annotations

from typing import Any

from orchestra.hookspecs import hookimpl


@hookimpl(wrapper=True)
def model_call(agent: Any, request: Any) -> Any:
    inner = yield

    async def charged() -> Any:
        response = await inner
        agent.session.charge_model(response.usage.prompt_tokens, response.usage.completion_tokens)
        return response

    return charged()


@hookimpl(wrapper=True)
def tool_call(agent: Any, call: Any) -> Any:
    inner = yield

    async def charged() -> Any:
        try:
            return await inner
        finally:
            agent.session.charge_tool_calls(1)

    return charged()
