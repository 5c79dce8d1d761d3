"""One agent's loop inside a rollout, as a stepper that can be driven from outside.

`AgentStepper` owns the order of calls and ARE's loop semantics, nothing else; notifications,
termination, clock charging, the model and the tools are plugins (see `orchestra.hookspecs`).
It asks for model calls instead of making them:

    stepper = AgentStepper(agent)
    request = await stepper.next_request()       # runs the loop up to its next model call
    while request is not None:
        await stepper.apply(response_for(request))   # accept: charge the clock, act, decide
        request = await stepper.next_request()

so a trainer that owns the model call (verifiers' `MultiTurnEnv`) drives the same loop that
`run_agent` — a thin driver calling the `model_call` hook — drives. A model call that failed for
good is handed in with `await stepper.fail(exc)`.

The main agent's loop is ARE's default agent loop (`ARESimulationAgent.agent_loop` around
`BaseAgent.execute_agent_loop`, are/simulation/agents/default_agent/), on the simulated clock:

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
  scaffold's action (its tool calls, produced as it runs), then post-step. A model failure that
  survived the retries is shown to the model as ARE shows exceptions and costs the iteration.
* **A model that stopped answering.** ARE loops on failed calls until its 80 iterations are spent
  (minutes of retries per rollout against a dead server). Here the calls that follow a failed one
  are made without retries (the failed one spent the backoff), and `MAX_FAILED_CALLS_IN_A_ROW`
  failed calls in a row end the agent with a permanent `ModelError`: the rollout is an ERROR in
  seconds. `RolloutSpec.are_model_failures` (parity runs) keeps ARE's loop.

A sub-agent (`role="sub"`, started by `spawn` on the parent's session and clock) has one run: its
task, its own mailbox, its own tools (shaped by the `agent_tools` hook), until it returns through
the `final_answer` tool, spends its budget or the environment stops.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from orchestra.a2a.config import A2AConfig
from orchestra.are.agent_format import ARE_INVALID_FORMAT_RETRIES
from orchestra.config import DEFAULT_MAX_STEPS, DEFAULT_SUB_AGENT_MAX_STEPS, FINAL_ANSWER_TOOL
from orchestra.errors import OrchestraError
from orchestra.models import ModelConfig, ModelError, retries_at_most
from orchestra.session import SEND_TO_USER_TOOL, Session
from orchestra.types import AgentLedger, Delegation, ModelRequest, ModelResponse, StepDecision, StepRecord, ToolCall, ToolOutcome, ToolSpec
from orchestra.views import AgentView, HostView, RolloutView

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.scaffold import Action, Scaffold

MAIN = "main"

#: Failed model calls in a row (each after its retries, or the first one's) that end an agent: a
#: model that fails this often in a row is down or broken, and the rollout's verdict would not be its.
MAX_FAILED_CALLS_IN_A_ROW = 3

__all__ = [
    "DEFAULT_MAX_STEPS",
    "DEFAULT_SUB_AGENT_MAX_STEPS",
    "FINAL_ANSWER_TOOL",
    "MAX_FAILED_CALLS_IN_A_ROW",
    "AgentContext",
    "AgentStepper",
    "StepDecision",
    "StepRecord",
    "make_agent",
    "run_agent",
    "spawn",
]


@dataclass
class AgentContext:
    """Everything plugins may look at for one agent in one rollout (it implements `AgentView`)."""

    name: str
    rollout: RolloutView
    model: ModelConfig
    scaffold: Scaffold
    max_steps: int = DEFAULT_MAX_STEPS
    #: "main" (ARE's agent: talks to the user, receives ARE's notifications) or "sub".
    role: str = MAIN
    parent: str | None = None
    #: A sub-agent's task (what its parent asked); None for the main agent (its tasks are turns).
    task: str | None = None
    #: The ARE app an app-agent serves (Agent2Agent); None for the main agent and generic sub-agents.
    app: str | None = None
    #: The agent's own tool list (the `agent_tools` hook shaped it); default: its scaffold's.
    tools: dict[str, ToolSpec] = field(default_factory=dict)
    #: Unique per agent run (tracing's `gen_ai.agent.id`); never part of a record.
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: What this agent spent (steps, runs, turns, tokens, cost, tool calls, simulated seconds).
    ledger: AgentLedger = field(default_factory=lambda: AgentLedger(name=MAIN))
    records: list[StepRecord] = field(default_factory=list)
    #: Scratch space for plugins, keyed by plugin name (never shared between rollouts).
    state: dict[str, Any] = field(default_factory=dict)
    #: The loop's own: the step the current iteration produced (the post-step decision reads it).
    last_step: StepRecord | None = field(default=None, repr=False)
    #: Model calls that failed one after the other, up to now (0 after any call that answered).
    failed_calls_in_a_row: int = 0
    #: A remote A2A agent plays this agent (`orchestra.a2a`): its `A2AConfig`; None: orchestra's own loop.
    a2a: A2AConfig | None = None

    def __post_init__(self) -> None:
        self.ledger.name, self.ledger.role, self.ledger.parent, self.ledger.app = self.name, self.role, self.parent, self.app
        self.ledger.model = self.model.model
        if not self.tools and self.scaffold is not None:
            self.tools = dict(self.scaffold.tools)
        self.rollout.register_agent(self.ledger)
        if self.scaffold is not None:  # `make_agent` builds the scaffold after shaping the tools, then traces it once
            self.trace_start()

    def trace_start(self) -> None:
        """Put this agent (its identity and tool table) in the rollout's trajectory."""
        scaffold = self.ledger.scaffold or str(getattr(self.scaffold, "name", "") or "")
        self.rollout.trajectory.add_agent(
            name=self.name,
            role=self.role,
            parent=self.parent,
            app=self.app,
            task=self.task,
            model=self.model.model,
            scaffold=scaffold,
            tools=self.tools,
            are_tools=self.session.app_tool_names,
        )

    @property
    def session(self) -> Session:
        """The rollout's world (ARE's environment on the simulated clock), shared by all its agents."""
        return self.rollout.session

    @property
    def host(self) -> HostView:
        return self.rollout.host

    # Counters plugins and scaffolds read (ARE's names); the ledger holds them.
    @property
    def steps(self) -> int:
        """Iterations spent (ARE's `iterations`: never reset between turns; errors count too)."""
        return self.ledger.steps

    @property
    def runs(self) -> int:
        return self.ledger.runs

    @property
    def turns(self) -> int:
        return self.ledger.turns

    @property
    def prompt_tokens(self) -> int:
        return self.ledger.prompt_tokens

    @property
    def completion_tokens(self) -> int:
        return self.ledger.completion_tokens

    @property
    def reasoning_tokens(self) -> int:
        return self.ledger.reasoning_tokens

    @property
    def cost_usd(self) -> float:
        return self.ledger.cost_usd

    @property
    def stop_reason(self) -> str | None:
        return self.ledger.stop_reason

    @stop_reason.setter
    def stop_reason(self, value: str | None) -> None:
        self.ledger.stop_reason = value

    @property
    def is_main(self) -> bool:
        return self.role == MAIN

    @property
    def ends_on_failing_model(self) -> bool:
        """Whether failed calls in a row end this agent (`MAX_FAILED_CALLS_IN_A_ROW`): yes, unless
        the rollout keeps ARE's loop (`are_model_failures`, parity runs)."""
        spec = getattr(self.rollout, "spec", None)
        return not getattr(spec, "are_model_failures", False)


class AgentStepper:
    """The agent loop as a coroutine that yields model requests and receives model responses."""

    def __init__(self, agent: AgentContext) -> None:
        self.agent = agent
        self._loop: AsyncGenerator[ModelRequest, ModelResponse] = _loop(agent)
        self._pending: ModelRequest | None = None
        self._started = False
        #: Whether `next_request()` handed out the pending request and no response was applied yet:
        #: a second `apply()` for one request would otherwise answer the next one, unseen.
        self._handed_out = False
        self.finished = False

    async def next_request(self) -> ModelRequest | None:
        """The model request the loop waits for, running the loop up to it; None once the agent is done."""
        if self.finished:
            return None
        if self._pending is None and not self._started:
            self._started = True
            await self._advance(self._loop.__anext__())
        self._handed_out = self._pending is not None
        return self._pending

    async def apply(self, response: ModelResponse) -> None:
        """Accept `response` for the pending request: the clock is charged (`model_response` hook),
        the scaffold's action runs, termination is decided, and the loop runs to its next request."""
        self.check_answer("apply", response)
        self._handed_out = False
        await self._advance(self._loop.asend(response))

    async def fail(self, exc: ModelError) -> None:
        """The pending model call failed after its retries: shown to the model (ARE) or, when
        permanent, raised here and the agent is finished."""
        self.check_answer("fail", exc)
        self._handed_out = False
        await self._advance(self._loop.athrow(exc))

    def check_answer(self, what: str, answer: object) -> None:
        """Raise `OrchestraError`, changing nothing, unless `answer` may answer the pending request
        now: `apply` takes a `ModelResponse`, `fail` a `ModelError`, exactly one per request handed
        out. Checked before the loop sees the answer, so the agent lives on after a misuse."""
        self._check_pending(what)
        wanted = ModelResponse if what == "apply" else ModelError
        if not isinstance(answer, wanted):
            raise OrchestraError(f"agent {self.agent.name!r}: {what}() takes an {wanted.__module__}.{wanted.__name__}, got {type(answer).__name__}")

    def _check_pending(self, what: str) -> None:
        if self.finished:
            raise OrchestraError(f"agent {self.agent.name!r}: {what}() after the agent finished (next_request() returned None)")
        if self._pending is None or not self._handed_out:
            raise OrchestraError(
                f"agent {self.agent.name!r}: {what}() without a request to answer: call next_request() first (each request takes exactly one apply() or fail())"
            )

    async def _advance(self, step: Any) -> None:
        try:
            self._pending = await step
        except StopAsyncIteration:
            self._pending, self.finished = None, True
        except BaseException:
            self._pending, self.finished = None, True
            raise

    async def aclose(self) -> None:
        await self._loop.aclose()
        self.finished = True


async def run_agent(agent: AgentContext) -> None:
    """Drive `agent` until it stops, through the `agent_run` hook (which plugins wrap).

    A permanent `ModelError` propagates: it ends this rollout (or, for a sub-agent, its `spawn`)."""
    await agent.host.hook.agent_run(agent=agent)


async def drive(agent: AgentContext) -> None:
    """The built-in driver: each request goes to the `model_call` hook (retries, wrappers, caches)."""
    stepper = AgentStepper(agent)
    request = await stepper.next_request()
    while request is not None:
        try:
            # after a failed call, no retries: that one waited out the backoff (see the module doc)
            with retries_at_most(0 if agent.failed_calls_in_a_row and agent.ends_on_failing_model else None):
                response = await agent.host.hook.model_call(agent=agent, request=request)
        except ModelError as exc:
            await stepper.fail(exc)
        else:
            await stepper.apply(response)
        request = await stepper.next_request()


# ------------------------------------------------------------------------------------ the loop


async def _loop(agent: AgentContext) -> AsyncGenerator[ModelRequest, ModelResponse]:
    """The whole agent as one coroutine: each `yield request` is a model call it needs answered."""
    session = agent.session
    agent.scaffold.start(agent)
    while not session.done:
        if agent.is_main:
            if not session.idle_until_notification():
                break
            users, stop = session.take_user_messages()
            if stop or session.done:
                break
            task = "\n".join(n.text for n in users)
        elif agent.runs:
            break  # a sub-agent has exactly one run: its task
        else:
            task = agent.task or ""
        agent.ledger.runs += 1
        agent.rollout.trajectory.run_started(agent.name, run=agent.ledger.runs, t=session.elapsed, task=task)
        agent.scaffold.new_task(agent, task)
        # One run (ARE's `execute_agent_loop`), until its termination condition holds.
        while True:
            if session.done:
                decision = StepDecision.STOP
                break
            if agent.steps >= agent.max_steps:
                if agent.is_main:
                    await answer_max_iterations(agent)
                    decision = StepDecision.END_TURN
                else:
                    agent.stop_reason, decision = "step_budget", StepDecision.STOP
                break
            # Relay the iteration's model requests out and the responses (or failures) in.
            iteration = _iteration(agent)
            try:
                request = await iteration.__anext__()
                while True:
                    try:
                        response = yield request
                    except ModelError as exc:
                        request = await iteration.athrow(exc)
                    else:
                        request = await iteration.asend(response)
            except StopAsyncIteration:
                pass
            step, agent.last_step = agent.last_step, None
            assert step is not None, "an iteration ends with its step recorded"
            decision = _after_step(agent, step)
            if decision != StepDecision.CONTINUE:
                break
        if decision == StepDecision.END_TURN and agent.is_main:
            agent.ledger.turns += 1
            session.end_turn()
        elif decision in (StepDecision.STOP, StepDecision.RETURN) or not agent.is_main:
            break
    if agent.stop_reason is None:
        agent.stop_reason = "returned" if agent.ledger.answer is not None else session.stop_reason


def _after_step(agent: AgentContext, step: StepRecord) -> StepDecision:
    agent.records.append(step)
    agent.ledger.steps += 1
    decision: StepDecision | None = agent.host.hook.post_step(agent=agent, step=step)
    return decision or StepDecision.CONTINUE


async def _iteration(agent: AgentContext) -> AsyncGenerator[ModelRequest, ModelResponse]:
    """One iteration. Yields each model request and receives its response (a failed call is
    thrown in at the `yield`). The finished `StepRecord` is left in `state["_step"]`."""
    hook = agent.host.hook
    scaffold = agent.scaffold
    session = agent.session
    t_start = session.elapsed
    injected = [m for msgs in hook.pre_step(agent=agent) if msgs for m in msgs]
    if injected:
        scaffold.observe(injected)
    request = scaffold.request(agent)  # retries resend it, as ARE does, unless the scaffold rebuilds it (`retry_request`)
    trajectory = agent.rollout.trajectory
    # What the trajectory keeps of this step (read only: recording never changes the loop).
    prompt = trajectory.prompt(agent.name, request)
    notes = [m["content"] if isinstance(m.get("content"), str) else str(m.get("content")) for m in injected]

    def trace(t_model: float, outputs: list[tuple[ModelResponse, str | None]], acted_on: ModelResponse | None, **what: Any) -> None:
        trajectory.step(
            agent.name,
            index=agent.steps,
            run=agent.runs,
            t_start=t_start,
            t_model=t_model,
            t_end=session.elapsed,
            notifications=notes,
            prompt=prompt,
            outputs=outputs,
            acted_on=acted_on,
            **what,
        )

    retries: list[tuple[ModelResponse, str]] = []
    response: ModelResponse | None = None
    exhausted = False
    attempts = 0
    try:
        while True:
            forced = scaffold.forced_response(request)
            if forced is not None:
                response = forced
            else:
                response = yield request
                agent.failed_calls_in_a_row = 0
                hook.model_response(agent=agent, request=request, response=response)
            _account(agent, response, charged=forced is None)
            attempts += 1
            if attempts > ARE_INVALID_FORMAT_RETRIES:
                exhausted = True
                break
            problem = scaffold.retry_problem(response)
            if problem is None:
                break
            retries.append((response, problem))
            scaffold.record_retry(agent, response, problem)
            request = scaffold.retry_request(agent, request)
    except ModelError as exc:
        if exc.permanent:  # the rollout (or this sub-agent) ends here; the trajectory keeps the step so far
            trace(session.elapsed, [*retries], None, calls=[], outcomes=[], model_error=f"{type(exc).__name__}: {exc} (permanent: the agent stops)")
            raise
        agent.ledger.model_errors += 1
        agent.ledger.last_model_error = str(exc)
        agent.failed_calls_in_a_row += 1
        if agent.failed_calls_in_a_row >= MAX_FAILED_CALLS_IN_A_ROW and agent.ends_on_failing_model:
            where = f" ({agent.model.model} at {agent.model.endpoint})" if agent.model.endpoint else f" ({agent.model.model})"
            ended = ModelError(f"{agent.failed_calls_in_a_row} model calls in a row failed{where}; the agent stops; the last: {exc}")
            trace(session.elapsed, [*retries], None, calls=[], outcomes=[], model_error=f"{ended} (permanent: the agent stops)")
            raise ended from exc
        text = scaffold.model_error_text(exc)
        scaffold.record_model_error(agent, text)
        agent.last_step = StepRecord(agent.steps, response, [], [], retries=retries, model_error=text)
        trace(session.elapsed, [*retries], None, calls=[], outcomes=[], model_error=text)
        return
    assert response is not None
    t_model = session.elapsed
    calls: list[ToolCall]
    outcomes: list[ToolOutcome]
    format_error: str | None
    if exhausted:
        calls, outcomes, format_error = [], [], scaffold.exhausted_error(response, attempts)
    else:
        calls, outcomes, format_error = await _act(agent, scaffold.action(agent, response))
    scaffold.record(agent, response, calls, outcomes, format_error)
    agent.last_step = StepRecord(agent.steps, response, calls, outcomes, format_error, retries=retries)
    trace(t_model, [*retries, (response, None)], response, calls=calls, outcomes=outcomes, format_error=format_error)


async def _act(agent: AgentContext, action: Action) -> tuple[list[ToolCall], list[ToolOutcome], str | None]:
    """Run a scaffold's action: each tool call it produces is executed (through the `tool_call`
    hook) and its outcome sent back, until the action ends or the environment stops."""
    session = agent.session
    calls: list[ToolCall] = []
    outcomes: list[ToolOutcome] = []
    run = action.run()
    try:
        call = next(run)
        while True:
            if session.done:
                break
            if call.error is not None:
                outcome = ToolOutcome(call.name, call.arguments, ok=False, error=call.error, sim_time=session.now)
            else:
                outcome = await agent.host.hook.tool_call(agent=agent, call=call)
            outcome.observation = agent.scaffold.render_output(outcome)  # now: later events may mutate the objects
            calls.append(call)
            outcomes.append(outcome)
            call = run.send(outcome)
    except StopIteration:
        pass
    finally:
        run.close()
    return calls, outcomes, action.format_error


async def answer_max_iterations(agent: AgentContext) -> None:
    """ARE's Gaia2 termination at the budget: tell the user through the real tool (the caller ends
    the turn). Also the A2A driver's, for a remote agent that spent its budget (`orchestra.a2a.driver`)."""
    call = ToolCall(name=SEND_TO_USER_TOOL, arguments={"content": f"Max iterations ({agent.max_steps}) reached. Stopping."}, id="max-iterations")
    t_start = agent.session.elapsed
    outcome = await agent.host.hook.tool_call(agent=agent, call=call)
    outcome.observation = agent.scaffold.render_output(outcome)
    agent.scaffold.record_auto_call(agent, call, outcome)
    agent.rollout.trajectory.step(
        agent.name,
        index=agent.steps,
        run=agent.runs,
        t_start=t_start,
        t_model=t_start,
        t_end=agent.session.elapsed,
        notifications=[],
        prompt=None,
        outputs=[],
        acted_on=None,
        calls=[call],
        outcomes=[outcome],
        auto=f"the step budget ({agent.max_steps}) is spent: ARE's loop answers the user for the agent",
    )
    agent.stop_reason = "step_budget"


def _account(agent: AgentContext, response: ModelResponse, *, charged: bool) -> None:
    ledger = agent.ledger
    ledger.model_calls += int(charged)
    ledger.prompt_tokens += response.usage.prompt_tokens
    ledger.completion_tokens += response.usage.completion_tokens
    ledger.reasoning_tokens += response.usage.reasoning_tokens
    ledger.cost_usd += response.cost_usd


# ------------------------------------------------------------------------------ making agents


def make_agent(
    rollout: RolloutView,
    *,
    model: ModelConfig,
    scaffold: str,
    scaffold_options: dict[str, Any] | None = None,
    name: str = MAIN,
    role: str = MAIN,
    parent: str | None = None,
    task: str | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    tools: dict[str, ToolSpec] | None = None,
    app: str | None = None,
    a2a: A2AConfig | None = None,
) -> AgentContext:
    """An agent in `rollout`: its tools (default: the session's ARE tools plus plugin-registered
    tools) shaped by the `agent_tools` hook, then its scaffold built over them."""
    from orchestra.scaffold import ScaffoldOptions

    host = rollout.host
    factory = host.scaffold(scaffold)
    base = dict(tools) if tools is not None else {**rollout.session.tools, **{n: spec for n, (spec, _) in host.tools.items()}}
    agent = AgentContext(
        name=name,
        rollout=rollout,
        model=model,
        scaffold=None,  # type: ignore[arg-type]  # built below
        max_steps=max_steps,
        role=role,
        parent=parent,
        task=task,
        tools=base,
        app=app,
        a2a=a2a,
    )
    agent.ledger.scaffold = "a2a" if a2a is not None else scaffold  # a remote agent runs its own loop, not a scaffold
    host.hook.agent_tools(agent=agent, tools=agent.tools)
    agent.scaffold = factory(dict(agent.tools), ScaffoldOptions(**(scaffold_options or {})))
    agent.trace_start()  # again: its tools are shaped now
    return agent


async def spawn(
    parent: AgentView,
    task: str,
    *,
    name: str | None = None,
    call: ToolCall | None = None,
    model: ModelConfig | None = None,
    scaffold: str | None = None,
    scaffold_options: dict[str, Any] | None = None,
    tools: dict[str, ToolSpec] | None = None,
    max_steps: int = DEFAULT_SUB_AGENT_MAX_STEPS,
    app: str | None = None,
    sent: str | None = None,
    a2a: A2AConfig | None = None,
) -> ToolOutcome:
    """Run a sub-agent on `parent`'s session and clock until it returns; its answer is the outcome.

    The child gets its own mailbox (nothing of ARE's notifications: they stay queued for the main
    agent), its own tool list (default: the parent's tools, shaped by `agent_tools` for a
    sub-agent — the built-in `subagents` plugin adds `final_answer` and removes the user-facing
    and waiting tools) and its own ledger. Its model calls and tool calls move the shared clock
    while the parent waits for the outcome. A child that fails — its model fails for good, it
    spends its budget without answering, the environment stops — comes back as a failed outcome
    (`ok=False`, `error` says why); the rollout goes on and is judged as usual.

    Every spawn is recorded on the rollout as a `Delegation` (caller, callee, the task text `sent`
    — what the caller wrote, when `task` wraps it — answer or error, simulated start and duration,
    the callee's steps and tokens); `app` marks an app-agent (Agent2Agent) and its app.
    """
    rollout = parent.rollout
    session = rollout.session
    base = name or f"{parent.name}.sub"
    unique, n = base, 1
    while unique in rollout.agents:
        n += 1
        unique = f"{base}#{n}"
    child = make_agent(
        rollout,
        model=model or parent.model,
        scaffold=scaffold or parent.ledger.scaffold or "tool_calling",
        scaffold_options=scaffold_options,
        name=unique,
        role="sub",
        parent=parent.name,
        task=task,
        max_steps=max_steps,
        tools=tools if tools is not None else dict(parent.tools),
        app=app,
        a2a=a2a,
    )
    label = call.name if call is not None else "spawn"
    arguments = call.arguments if call is not None else {"task": task}
    started, elapsed = session.now, session.elapsed
    try:
        await run_agent(child)
    except ModelError as exc:
        child.ledger.error = f"{type(exc).__name__}: {exc}"
        child.stop_reason = "model_error"
    ledger = child.ledger
    if ledger.answer is not None and ledger.error is None:
        outcome = ToolOutcome(label, arguments, ok=True, output=ledger.answer, sim_time=started)
    else:
        if ledger.error is not None:
            why = ledger.error
        elif ledger.stop_reason == "step_budget":
            why = f"it spent its {child.max_steps}-step budget without calling {FINAL_ANSWER_TOOL}"
            # A model that fails on every call (a local server that died) spends the budget on errors;
            # say so, and where, or the caller only sees a budget problem.
            last_error = child.records[-1].model_error if child.records else None
            if last_error is not None:
                where = f" ({child.model.model} at {child.model.endpoint})" if child.model.endpoint else f" ({child.model.model})"
                why += f"; its last model call{where} failed: {last_error}"
        else:
            why = f"it stopped without a final answer ({ledger.stop_reason})"
        outcome = ToolOutcome(label, arguments, ok=False, error=f"sub-agent {child.name!r} failed: {why}", sim_time=started)
    rollout.record_delegation(
        Delegation(
            caller=parent.name,
            callee=child.name,
            tool=label,
            task=sent if sent is not None else task,
            ok=outcome.ok,
            answer=outcome.output if outcome.ok else None,
            error=outcome.error,
            app=app,
            start=round(elapsed, 6),
            duration=round(session.now - started, 6),
            steps=ledger.steps,
            prompt_tokens=ledger.prompt_tokens,
            completion_tokens=ledger.completion_tokens,
        )
    )
    return outcome
