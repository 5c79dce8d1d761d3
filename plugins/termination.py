"""Built-in plugin: when an agent's run ends — ARE's Gaia2 termination rules.

ARE's `get_gaia2_termination_step` keys on the last *logged* tool call (ARE logs a call before it
runs it, so a call that then fails counts):

* `AgentUserInterface__send_message_to_user` → end of turn (ARE: TERMINATED, a finished run);
* `SystemApp__wait_for_notification` → pause (ARE: PAUSED; the agent runs again on the next
  user message or notification);
* the environment stopped (judge rejected a turn, duration over) → stop.

The iteration budget is the agent loop's (`orchestra.agent`): checked before each iteration, it
answers the user through the real tool, as ARE's termination step does.
"""

from __future__ import annotations

from typing import Any

from orchestra.agent import StepDecision
from orchestra.hookspecs import hookimpl
from orchestra.session import SEND_TO_USER_TOOL, WAIT_TOOL


@hookimpl(trylast=True)
def post_step(agent: Any, step: Any) -> StepDecision | None:
    last = (step.last_tool or "").strip()
    if last == SEND_TO_USER_TOOL:
        return StepDecision.END_TURN
    if last == WAIT_TOOL:
        return StepDecision.PAUSE
    if agent.session.done:
        return StepDecision.STOP
    return None
