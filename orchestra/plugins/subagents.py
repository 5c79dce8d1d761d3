"""Built-in plugin: sub-agents get a way to return, and only the tools a sub-agent should have.

A sub-agent (`role="sub"`, started by `orchestra.agent.spawn`) does not talk to the user and does
not idle for ARE's notifications (those belong to the main agent), so its tool list loses
`AgentUserInterface__send_message_to_user` and `SystemApp__wait_for_notification` and gains
`final_answer(answer)`: calling it records the answer (what the parent gets back as the tool
outcome), and the termination plugin ends the sub-agent's run on it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from orchestra.config import FINAL_ANSWER_TOOL
from orchestra.hookspecs import hookimpl
from orchestra.session import SEND_TO_USER_TOOL, WAIT_TOOL
from orchestra.types import ToolArg, ToolCall, ToolOutcome, ToolSpec
from orchestra.views import AgentView

FINAL_ANSWER_SPEC = ToolSpec(
    name=FINAL_ANSWER_TOOL,
    app_name="orchestra",
    app_class="SubAgent",
    method="final_answer",
    description="Return your final answer to the agent that gave you this task; your work ends here.",
    args=(ToolArg(name="answer", type_hint=str, type_text="str", description="the answer to your task", required=True),),
    return_type="str",
    writes=False,
)


@hookimpl
def agent_tools(agent: AgentView, tools: dict[str, ToolSpec]) -> None:
    if agent.role == "main":
        return
    tools.pop(SEND_TO_USER_TOOL, None)
    tools.pop(WAIT_TOOL, None)
    tools[FINAL_ANSWER_TOOL] = FINAL_ANSWER_SPEC


@hookimpl(tryfirst=True)
def tool_call(agent: AgentView, call: ToolCall) -> Awaitable[ToolOutcome] | None:
    if call.name != FINAL_ANSWER_TOOL or agent.role == "main":
        return None

    async def answer() -> ToolOutcome:
        value: Any = call.arguments.get("answer")
        if value is None:
            return ToolOutcome(call.name, call.arguments, ok=False, error="final_answer needs an `answer` argument.", sim_time=agent.session.now)
        agent.ledger.answer = value if isinstance(value, str) else str(value)
        return ToolOutcome(call.name, call.arguments, ok=True, output=agent.ledger.answer, sim_time=agent.session.now)

    return answer()
