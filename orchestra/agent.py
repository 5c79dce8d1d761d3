"""One agent's loop inside a rollout: pre-step → model → tools → post-step, all through hooks.

The loop owns no behaviour of its own beyond the order of calls; notifications, termination,
clock charging, the model and the tools are plugins (see `orchestra.hookspecs`). Between turns
(after the agent answered the user) it idles, uncharged, until the next user message — as ARE's
agent does — and it stops when a plugin says so, the session is done, or the step budget is spent.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from orchestra.model_types import ModelResponse, ToolCall
from orchestra.models import ModelConfig
from orchestra.session import Session, ToolOutcome

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.host import Host
    from orchestra.scaffold import Scaffold

#: ARE's default agent budget (`max_iterations=80`), counted over the whole scenario.
DEFAULT_MAX_STEPS = 80


class StepDecision(str, enum.Enum):
    STOP = "stop"
    END_TURN = "end_turn"
    PAUSE = "pause"
    CONTINUE = "continue"


@dataclass
class StepRecord:
    index: int
    response: ModelResponse
    calls: list[ToolCall]
    outcomes: list[ToolOutcome]
    format_error: str | None = None

    @property
    def last_tool(self) -> str | None:
        return self.calls[-1].name if self.calls else None


@dataclass
class AgentContext:
    """Everything plugins may look at for one agent in one rollout."""

    name: str
    session: Session
    model: ModelConfig
    scaffold: Scaffold
    host: Host
    max_steps: int = DEFAULT_MAX_STEPS
    rollout_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    awaiting_user: bool = True  # no task until the user writes (ARE: the first task arrives as a notification)
    stop_reason: str | None = None
    records: list[StepRecord] = field(default_factory=list)
    #: Scratch space for plugins, keyed by plugin name (never shared between rollouts).
    state: dict[str, Any] = field(default_factory=dict)


async def run_agent(agent: AgentContext) -> None:
    """Drive `agent` until it stops. A `ModelError` propagates: it ends this rollout, not the batch."""
    hook = agent.host.hook
    session = agent.session
    agent.scaffold.start(agent)
    while not session.done:
        if agent.awaiting_user and not session.idle_until_user_message():
            break
        injected = [m for msgs in hook.pre_step(agent=agent) if msgs for m in msgs]
        if injected:
            agent.scaffold.observe(injected)
            agent.awaiting_user = False
        if agent.awaiting_user:
            continue
        if agent.steps >= agent.max_steps:
            agent.stop_reason = "step_budget"
            break
        request = agent.scaffold.request(agent)
        response = await hook.model_call(agent=agent, request=request)
        agent.prompt_tokens += response.usage.prompt_tokens
        agent.completion_tokens += response.usage.completion_tokens
        agent.reasoning_tokens += response.usage.reasoning_tokens
        agent.cost_usd += response.cost_usd
        calls, format_error = agent.scaffold.parse(response)
        outcomes: list[ToolOutcome] = []
        for call in calls:
            if session.done:
                break
            if call.error is not None:
                outcomes.append(ToolOutcome(call.name, {}, ok=False, error=call.error, sim_time=session.now))
                continue
            outcomes.append(await hook.tool_call(agent=agent, call=call))
        agent.scaffold.record(agent, response, calls[: len(outcomes)], outcomes, format_error)
        step = StepRecord(agent.steps, response, calls[: len(outcomes)], outcomes, format_error)
        agent.records.append(step)
        agent.steps += 1
        decision = hook.post_step(agent=agent, step=step) or StepDecision.CONTINUE
        if decision == StepDecision.STOP:
            break
        if decision == StepDecision.END_TURN:
            agent.awaiting_user = True
    if agent.stop_reason is None:
        agent.stop_reason = session.stop_reason
