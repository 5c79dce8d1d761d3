"""Built-in plugin: when an agent stops — ARE's Gaia2 termination rules.

* the environment stopped (judge rejected a turn, duration over) or every turn is done: stop;
* the last tool was `AgentUserInterface__send_message_to_user`: end of turn (idle until the user
  writes again);
* the last tool was `SystemApp__wait_for_notification`: pause (the wait already idled; go on);
* the step budget is spent: stop.
"""

from __future__ import annotations

from typing import Any

from orchestra.agent import StepDecision
from orchestra.hookspecs import hookimpl
from orchestra.session import SEND_TO_USER_TOOL, WAIT_TOOL


@hookimpl(trylast=True)
def post_step(agent: Any, step: Any) -> StepDecision | None:
    if agent.session.done:
        return StepDecision.STOP
    executed = [c.name for c, o in zip(step.calls, step.outcomes) if o.ok]
    if SEND_TO_USER_TOOL in executed:
        return StepDecision.END_TURN
    if agent.steps >= agent.max_steps:
        agent.stop_reason = "step_budget"
        return StepDecision.STOP
    if executed and executed[-1] == WAIT_TOOL:
        return StepDecision.PAUSE
    return None
