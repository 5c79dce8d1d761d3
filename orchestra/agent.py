"""One agent's loop inside a rollout: pre-step → model → tools → post-step, all through hooks.

The loop owns the order of calls and ARE's loop semantics, nothing else; notifications,
termination, clock charging, the model and the tools are plugins (see `orchestra.hookspecs`).
It is ARE's default agent loop (`ARESimulationAgent.agent_loop` around `BaseAgent.execute_agent_loop`,
are/simulation/agents/default_agent/), on the simulated clock:

* **Outer loop (turns).** Idle, uncharged, until a user message *or* an environment notification
  is due; pop the user messages (they become the task, joined by newlines; empty when only the
  environment spoke — environment notifications stay queued for the pre-step) and *run* the agent.
  A run ends TERMINATED (last logged call `send_message_to_user`: a finished turn — turns are
  finished runs), PAUSED (`wait_for_notification`: idle for the next notification, then a new
  run) or on a stop. The rollout ends after `nb_turns` finished runs or when the environment stops.
* **Inner loop (iterations).** Before each iteration: the environment stopped → stop; the
  iteration budget (`max_steps`, ARE's `max_iterations=80`, never reset between turns) spent →
  answer the user "Max iterations (N) reached. Stopping." through the real AgentUserInterface tool
  (a real event: it ends the turn and fires the turn judge) and end the run. An iteration is:
  pre-step, one model call — an output the scaffold finds unusable as a whole (ARE: neither
  `Thought:` nor `Action:`) is asked again, up to 10 times, inside the same iteration — then the
  tool calls, then post-step. A model failure that survived the retries is shown to the model as
  ARE shows exceptions and costs the iteration, as in ARE.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from orchestra.are.agent_format import ARE_INVALID_FORMAT_RETRIES
from orchestra.types import ModelResponse, ToolCall
from orchestra.models import ModelConfig, ModelError
from orchestra.session import SEND_TO_USER_TOOL, Session, ToolOutcome

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
    response: ModelResponse | None
    calls: list[ToolCall]
    outcomes: list[ToolOutcome]
    format_error: str | None = None
    #: Outputs asked again inside this iteration (ARE's invalid-format retries), with the reason.
    retries: list[tuple[ModelResponse, str]] = field(default_factory=list)
    #: The model call failed for good: the error as the model was shown it.
    model_error: str | None = None

    @property
    def last_tool(self) -> str | None:
        """The last call ARE would have logged (a call is logged before it runs, failed or not)."""
        logged = [c.name for c in self.calls if c.logged]
        return logged[-1] if logged else None


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
    #: Iterations spent (ARE's `iterations`: never reset between turns; errors count too).
    steps: int = 0
    #: Runs of the agent (ARE's `react_agent.run` calls) and finished turns.
    runs: int = 0
    turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    stop_reason: str | None = None
    records: list[StepRecord] = field(default_factory=list)
    #: Scratch space for plugins, keyed by plugin name (never shared between rollouts).
    state: dict[str, Any] = field(default_factory=dict)


async def run_agent(agent: AgentContext) -> None:
    """Drive `agent` until it stops. A permanent `ModelError` propagates: it ends this rollout, not the batch."""
    session = agent.session
    agent.scaffold.start(agent)
    while not session.done:
        if not session.idle_until_notification():
            break
        users, stop = session.take_user_messages()
        if stop or session.done:
            break
        agent.runs += 1
        agent.scaffold.new_task(agent, "\n".join(n.text for n in users))
        decision = await _run(agent)
        if decision == StepDecision.END_TURN:
            agent.turns += 1
            session.end_turn()
        elif decision == StepDecision.STOP:
            break
    if agent.stop_reason is None:
        agent.stop_reason = session.stop_reason


async def _run(agent: AgentContext) -> StepDecision:
    """One run of the agent (ARE's `execute_agent_loop`), until its termination condition holds."""
    hook = agent.host.hook
    session = agent.session
    while True:
        if session.done:
            return StepDecision.STOP
        if agent.steps >= agent.max_steps:
            await _answer_max_iterations(agent)
            return StepDecision.END_TURN
        step = await _iteration(agent)
        agent.records.append(step)
        agent.steps += 1
        decision = hook.post_step(agent=agent, step=step) or StepDecision.CONTINUE
        if decision != StepDecision.CONTINUE:
            return decision


async def _iteration(agent: AgentContext) -> StepRecord:
    hook = agent.host.hook
    session = agent.session
    scaffold = agent.scaffold
    injected = [m for msgs in hook.pre_step(agent=agent) if msgs for m in msgs]
    if injected:
        scaffold.observe(injected)
    request = scaffold.request(agent)  # built once: retries resend the same prompt, as ARE does
    retries: list[tuple[ModelResponse, str]] = []
    response: ModelResponse | None = None
    exhausted = False
    try:
        attempts = 0
        while True:
            response = scaffold.forced_response(request) or await hook.model_call(agent=agent, request=request)
            _account(agent, response)
            attempts += 1
            if attempts > ARE_INVALID_FORMAT_RETRIES:
                exhausted = True
                break
            problem = scaffold.retry_problem(response)
            if problem is None:
                break
            retries.append((response, problem))
            scaffold.record_retry(agent, response, problem)
    except ModelError as exc:
        if exc.permanent:
            raise
        text = scaffold.model_error_text(exc)
        scaffold.record_model_error(agent, text)
        return StepRecord(agent.steps, response, [], [], retries=retries, model_error=text)
    assert response is not None
    if exhausted:
        calls, format_error = [], scaffold.exhausted_error(response, attempts)
    else:
        calls, format_error = scaffold.parse(response)
    outcomes: list[ToolOutcome] = []
    for call in calls:
        if session.done:
            break
        if call.error is not None:
            outcome = ToolOutcome(call.name, call.arguments, ok=False, error=call.error, sim_time=session.now)
        else:
            outcome = await hook.tool_call(agent=agent, call=call)
        outcome.observation = scaffold.render_output(outcome)  # now: later events may mutate the objects
        outcomes.append(outcome)
    done_calls = calls[: len(outcomes)]
    scaffold.record(agent, response, done_calls, outcomes, format_error)
    return StepRecord(agent.steps, response, done_calls, outcomes, format_error, retries=retries)


async def _answer_max_iterations(agent: AgentContext) -> None:
    """ARE's Gaia2 termination at the budget: tell the user through the real tool, end the turn."""
    call = ToolCall(name=SEND_TO_USER_TOOL, arguments={"content": f"Max iterations ({agent.max_steps}) reached. Stopping."}, id="max-iterations")
    outcome = await agent.host.hook.tool_call(agent=agent, call=call)
    outcome.observation = agent.scaffold.render_output(outcome)
    agent.scaffold.record_auto_call(agent, call, outcome)
    agent.stop_reason = "step_budget"


def _account(agent: AgentContext, response: ModelResponse) -> None:
    agent.prompt_tokens += response.usage.prompt_tokens
    agent.completion_tokens += response.usage.completion_tokens
    agent.reasoning_tokens += response.usage.reasoning_tokens
    agent.cost_usd += response.cost_usd
