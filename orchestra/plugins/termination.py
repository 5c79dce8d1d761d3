"""Built-in plugin: when an agent's run ends — ARE's Gaia2 termination rules, plus sub-agents' return.

ARE's `get_gaia2_termination_step` keys on the last *logged* tool call (ARE logs a call before it
runs it, so a call that then fails counts):

* `AgentUserInterface__send_message_to_user` → end of turn (ARE: TERMINATED, a finished run);
* `SystemApp__wait_for_notification` → pause (ARE: PAUSED; the agent runs again on the next
  user message or notification);
* the environment stopped (judge rejected a turn, duration over) → stop.

A sub-agent's run ends (`RETURN`) once its `final_answer` call succeeded. The iteration budget is
the agent loop's (`orchestra.agent`): checked before each iteration.
"""

from __future__ import annotations

from orchestra.config import FINAL_ANSWER_TOOL
from orchestra.hookspecs import hookimpl
from orchestra.session import SEND_TO_USER_TOOL, WAIT_TOOL
from orchestra.types import StepDecision, StepRecord
from orchestra.views import AgentView


@hookimpl(trylast=True)
def post_step(agent: AgentView, step: StepRecord) -> StepDecision | None:
    last = (step.last_tool or "").strip()
    if not agent.is_main:
        if agent.ledger.answer is not None and last == FINAL_ANSWER_TOOL:
            return StepDecision.RETURN
        return StepDecision.STOP if agent.session.done else None
    if last == SEND_TO_USER_TOOL:
        return StepDecision.END_TURN
    if last == WAIT_TOOL:
        return StepDecision.PAUSE
    if agent.session.done:
        return StepDecision.STOP
    return None
