"""A rollout's full trajectory, as data: what every agent was asked, answered and did (`Trajectory`).

`orchestra run --out DIR` and `orchestra replay --out DIR` keep it in each rollout's record,
`DIR/rollouts/NAME.json` (`RolloutRecord.trajectory`); `DIR/results.jsonl` leaves it out, so it
stays small enough to stream and resume (docs/trajectories.md). `orchestra show DIR/NAME` prints
it as a transcript.

What it holds, per agent (the main agent, then each sub-agent / app-agent in start order, with
the delegation it ran for): its tool table (each tool as the model saw it and as ARE's event log
and judge key it), its runs (the task that started each), and its steps — each iteration's
notifications, prompt, every model output (rejected ones too), the thought, the tool calls with
their arguments, simulated time, observation or error (unknown tools and bad arguments marked),
the format error or model error. Rollout-wide: which agent made each event of the event log
(`event_agents`), the tool-name table (`tool_names`), the stop reason.

Prompts are stored once: a request names an earlier request whose first `prefix` messages it
starts with (`PromptRef.base`), and holds only the messages after them; `Trajectory.prompt(id)`
gives the whole list back. A conversation of N steps costs N new messages, not N².

Everything in it comes from the simulated world and the model's outputs — no wall-clock time, no
process-dependent ids — so a rerun of the same spec writes the same bytes. Recording it reads the
loop's data and never changes the loop: event logs, hashes and rewards are the same with or without.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from orchestra.types import AgentLedger, Delegation, ModelRequest, ModelResponse, ToolCall, ToolOutcome, ToolSpec

__all__ = [
    "AgentTrajectory",
    "ModelOutput",
    "PromptRef",
    "RunStart",
    "Step",
    "ToolCallEntry",
    "ToolName",
    "Trajectory",
    "TrajectoryRecorder",
    "event_name",
    "thought_of",
]

#: The schema's version (bumped on an incompatible change).
TRAJECTORY_VERSION = 1

#: ARE's class and method of an app's expert tool (Agent2Agent), as its event log names it.
_EXPERT_CLASS, _EXPERT_METHOD = "AppAgent", "expert_agent"

#: Why a tool call did not reach its tool: the model named a tool it does not have, its arguments
#: could not be used, or the scaffold refused the call (a second call where one per step is allowed).
CallProblem = Literal["unknown_tool", "bad_arguments", "refused"]


class ToolName(BaseModel):
    """One tool of an agent: the name the model sees and the name ARE's event log and judge use.
    Frozen: the rollouts of a scenario share their tool tables (`_tool_table`)."""

    model_config = ConfigDict(frozen=True)

    #: As the model saw it and writes it (`<App instance>__<method>`: `Chats__send_message`, `Messages__expert_agent`).
    name: str
    #: As ARE's event log, the judge and its rationale key it (`<App class>__<method>`:
    #: `MessagingAppV2__send_message`, `AppAgent__expert_agent`); None for a tool ARE never logs
    #: (a plugin's tool, a sub-agent's `final_answer`).
    event_name: str | None
    #: The app instance (`Chats`) and its ARE class (`MessagingAppV2`), the method.
    app: str
    app_class: str
    method: str


class PromptRef(BaseModel):
    """One model request's messages, stored as a reference to an earlier request plus what is new."""

    #: This request's number in the rollout (0, 1, ... over all agents, in the order they were made).
    id: int
    #: An earlier request (its `id`) whose first `prefix` messages this one starts with; None: no shared prefix.
    base: int | None = None
    prefix: int = 0
    #: The messages after that prefix (all of them when `base` is None; none for an identical prompt).
    messages: list[dict[str, Any]] = Field(default_factory=list)
    #: What else was asked of the server: stop sequences, temperature, max_tokens, tool choice, the
    #: number of tool schemas sent (`tools`), `response_format`'s type (constrained decoding).
    options: dict[str, Any] = Field(default_factory=dict)


class RawToolCall(BaseModel):
    """A native tool call as the model wrote it (tool-calling models)."""

    name: str
    arguments: Any = None
    id: str = ""
    error: str | None = None


class ModelOutput(BaseModel):
    """One model output of a step (ARE asks again, inside the step, for an unusable one)."""

    text: str | None = None
    tool_calls: list[RawToolCall] = Field(default_factory=list)
    model: str = ""
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    #: Transport attempts it took (transient failures retried; only the last is charged).
    attempts: int = 1
    #: Why this output was asked again (ARE's invalid-format retry), as the model was told; None: kept.
    rejected: str | None = None
    #: Produced by the scaffold, not the model (ARE's forced-retry output): not charged, no tokens.
    forced: bool = False
    #: The client that called the model: `openai` (straight to an OpenAI-compatible server), `litellm`,
    #: or "" (no client: a trainer's completion applied through the step API, a forced output).
    client: str = ""


class ToolCallEntry(BaseModel):
    """One tool call of a step, and what came back."""

    #: The call's id (the model's, for native tool calls; the scaffold's otherwise).
    id: str = ""
    #: As the model wrote it.
    name: str
    #: As ARE's event log and the judge key it (None: not an ARE tool, or an unknown tool).
    event_name: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    #: Simulated seconds since the scenario started, when the call ran.
    t: float = 0.0
    ok: bool = False
    #: The output as the model was shown it (ok calls).
    observation: str | None = None
    #: Why it failed, as the tool or the scaffold said it (failed calls).
    error: str | None = None
    #: The call never reached a tool: `unknown_tool` (a name the agent does not have), `bad_arguments`,
    #: or `refused` (the scaffold's rule, e.g. one call per step). An unknown tool that went to the
    #: session (native tool calls) is `unknown_tool` too.
    problem: CallProblem | None = None
    #: The sub-agent this call started (a delegation: `<App>__expert_agent`, `spawn`); its steps are
    #: that agent's in `Trajectory.agents`.
    delegate: str | None = None
    #: The index in the record's event log of the event this call logged (None: it logged none).
    event: int | None = None


class Step(BaseModel):
    """One iteration of an agent (ARE's step): notifications, one prompt, its outputs, the action."""

    #: The agent's iteration number (ARE's `iterations`, from 0; the max-iterations answer has the next one).
    index: int
    #: Which run of the agent (1 = the first task; a main agent's turn or resumption after a wait).
    run: int
    #: Simulated seconds since the scenario started: the step began, the accepted output arrived
    #: (the model's simulated generation time charged), the step ended (its tool calls done).
    t_start: float
    t_model: float
    t_end: float
    #: Notifications the pre-step put before the model call, as the model saw them.
    notifications: list[str] = Field(default_factory=list)
    #: The prompt (None for a call the loop made on the agent's behalf: the max-iterations answer).
    prompt: PromptRef | None = None
    #: Every output of the step, in order: the rejected ones (`rejected` set), then the one acted on.
    outputs: list[ModelOutput] = Field(default_factory=list)
    #: The reasoning of the output acted on (the text before `Action:` / `Code:`, or beside native tool calls).
    thought: str | None = None
    tool_calls: list[ToolCallEntry] = Field(default_factory=list)
    #: The output acted on could not be parsed into an action (as the model was told), or the
    #: invalid-format retries ran out.
    format_error: str | None = None
    #: The model call failed for good (after its retries): the error as the model was shown it.
    model_error: str | None = None
    #: Set for a step the loop made on the agent's behalf (ARE's "Max iterations (N) reached" answer).
    auto: str | None = None


class RunStart(BaseModel):
    """A run of an agent began: the main agent's turn (the user messages that started it, joined;
    empty when only the environment spoke) or a sub-agent's task."""

    run: int
    t: float
    task: str


class AgentTrajectory(BaseModel):
    """Everything one agent did in the rollout."""

    name: str
    #: "main" or "sub".
    role: str
    #: The agent that started it (a sub-agent); the delegation is the parent's tool call whose `delegate` is this name.
    parent: str | None = None
    #: The ARE app an app-agent serves (Agent2Agent).
    app: str | None = None
    #: A sub-agent's task, as it received it.
    task: str | None = None
    model: str = ""
    scaffold: str = ""
    stop_reason: str | None = None
    error: str | None = None
    #: The agent's tools: the name the model sees → the name the event log and judge use.
    tools: list[ToolName] = Field(default_factory=list)
    runs: list[RunStart] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)


class Trajectory(BaseModel):
    """A rollout's trajectory (see the module doc)."""

    version: int = TRAJECTORY_VERSION
    #: Why the rollout ended (the main agent's reason: `all_turns_completed`, `step_budget`, `model_error`, ...).
    stop_reason: str | None = None
    #: The main agent first, then sub-agents in start order (empty for the oracle policy).
    agents: list[AgentTrajectory] = Field(default_factory=list)
    #: Which agent made each event of the record's event log (same length and order; None for an
    #: event no agent made: the environment's, the user's, a condition check). An app's nested call
    #: (logged as an agent event of its own) is the agent's whose call made it.
    event_agents: list[str | None] = Field(default_factory=list)
    #: Every tool name the rollout's agents saw that ARE logs, → its event-log / judge name.
    tool_names: dict[str, str] = Field(default_factory=dict)

    def agent(self, name: str) -> AgentTrajectory | None:
        return next((a for a in self.agents if a.name == name), None)

    def prompt(self, request: int) -> list[dict[str, Any]]:
        """The full message list of request `request` (its base's prefix, recursively, then its own)."""
        refs = {s.prompt.id: s.prompt for a in self.agents for s in a.steps if s.prompt is not None}
        ref = refs.get(request)
        if ref is None:
            raise KeyError(f"no request {request} in this trajectory")
        chain: list[PromptRef] = []
        while ref is not None:
            chain.append(ref)
            ref = refs.get(ref.base) if ref.base is not None else None
        out: list[dict[str, Any]] = []
        for link in reversed(chain):  # oldest first: keep the prefix this link shares, add its own
            out = out[: link.prefix] + list(link.messages)
        return out


# ------------------------------------------------------------------------------------ helpers


def _tool_table(tools: dict[str, ToolSpec], are_tools: Collection[str]) -> tuple[ToolName, ...]:
    """An agent's tool table: the same specs (objects: frozen, shared by the rollouts of a scenario)
    with the same ARE tools give the same table, built once per process (44 models per agent per
    rollout were a fifth of a rollout's start)."""
    key = tuple((name, id(spec), spec.name in are_tools) for name, spec in tools.items())
    with _tables_lock:
        found = _tables.get(key)
        if found is not None:
            _tables.move_to_end(key)
            return found[1]
    # built without validation: every field is a `ToolSpec`'s string (a frozen dataclass)
    table = tuple(
        ToolName.model_construct(name=s.name, event_name=event_name(s, are_tools), app=s.app_name, app_class=s.app_class, method=s.method)
        for s in tools.values()
    )
    with _tables_lock:
        _tables[key] = (tuple(tools.values()), table)  # the specs kept alive: no other object takes their ids
        while len(_tables) > 256:
            _tables.popitem(last=False)
    return table


_tables: OrderedDict[tuple[tuple[str, int, bool], ...], tuple[tuple[ToolSpec, ...], tuple[ToolName, ...]]] = OrderedDict()
_tables_lock = threading.Lock()


def event_name(spec: ToolSpec, are_tools: Collection[str]) -> str | None:
    """The name ARE's event log gives a call of `spec` (`<App class>__<method>`), or None when
    ARE never logs it (not one of the scenario's app tools, nor an app's expert tool)."""
    if spec.name in are_tools or (spec.app_class == _EXPERT_CLASS and spec.method == _EXPERT_METHOD):
        return f"{spec.app_class}__{spec.method}"
    return None


_THOUGHT_ENDS = ("Action:", "Code:", "```", "<end_action>")


def thought_of(response: ModelResponse) -> str | None:
    """The reasoning in an output: after `Thought:` up to the action (`Action:`, `Code:`, a code
    fence); for a native tool call, the text beside it. None when there is none."""
    text = response.text or ""
    start = text.find("Thought:")
    if start >= 0:
        text = text[start + len("Thought:") :]
    elif not response.tool_calls and not any(marker in text for marker in _THOUGHT_ENDS):
        return None  # a bare text reply is the output itself, not a thought
    cut = min((i for i in (text.find(m) for m in _THOUGHT_ENDS) if i >= 0), default=len(text))
    thought = text[:cut].strip()
    return thought or None


def _options(request: ModelRequest) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("stop", "temperature", "max_tokens", "tool_choice", "parallel_tool_calls"):
        value = getattr(request, key)
        if value is not None:
            out[key] = value
    if request.tools:
        out["tools"] = len(request.tools)
    if request.response_format is not None:
        out["response_format"] = request.response_format.get("type", "custom") if isinstance(request.response_format, dict) else "custom"
    return out


def _output(response: ModelResponse, *, rejected: str | None = None) -> ModelOutput:
    forced = response.model == "are-force-retry"
    return ModelOutput(
        text=response.text,
        tool_calls=[RawToolCall(name=c.name, arguments=c.arguments, id=c.id, error=c.error) for c in response.tool_calls],
        model=response.model,
        finish_reason=response.finish_reason,
        prompt_tokens=response.usage.prompt_tokens,
        completion_tokens=response.usage.completion_tokens,
        reasoning_tokens=response.usage.reasoning_tokens,
        cost_usd=response.cost_usd,
        attempts=response.attempts,
        rejected=rejected,
        forced=forced,
        client=response.client,
    )


def _round(t: float) -> float:
    return round(t, 6)


# ----------------------------------------------------------------------------------- recording


class TrajectoryRecorder:
    """Collects a rollout's trajectory as its agents run (the agent loop calls it); `build()` at the end.

    Owned by the rollout (`Rollout.trajectory`); one per rollout, never shared."""

    def __init__(self) -> None:
        self._agents: dict[str, AgentTrajectory] = {}
        self._ids: dict[str, str | None] = {}
        self._last_prompt: dict[str, tuple[int, list[dict[str, Any]]]] = {}
        self._requests = 0
        self._start_time: float | None = None

    def set_start_time(self, start_time: float) -> None:
        """The scenario's simulated start (epoch seconds): tool-call times are kept relative to it."""
        self._start_time = start_time

    def elapsed(self, epoch: float) -> float:
        return _round(epoch - (self._start_time or 0.0))

    def add_agent(
        self,
        *,
        name: str,
        role: str,
        parent: str | None,
        app: str | None,
        task: str | None,
        model: str,
        scaffold: str,
        tools: dict[str, ToolSpec],
        are_tools: Collection[str],
    ) -> None:
        """An agent starts: its identity and its tool table (told again, the table is replaced)."""
        table = list(_tool_table(tools, are_tools))
        before = self._agents.get(name)
        entry = AgentTrajectory(name=name, role=role, parent=parent, app=app, task=task, model=model, scaffold=scaffold, tools=table)
        if before is not None:  # told again (its tools shaped since): what it did so far stays
            entry.runs, entry.steps = before.runs, before.steps
        self._agents[name] = entry

    def run_started(self, agent: str, *, run: int, t: float, task: str) -> None:
        if agent in self._agents:
            self._agents[agent].runs.append(RunStart(run=run, t=_round(t), task=task))

    def prompt(self, agent: str, request: ModelRequest) -> PromptRef:
        """Number `request` and store its messages as a reference to the agent's previous prompt
        plus the new ones (called when the request is built, before the history grows)."""
        messages = list(request.messages)
        ref = PromptRef(id=self._requests, options=_options(request))
        self._requests += 1
        last = self._last_prompt.get(agent)
        if last is not None:
            base_id, base = last
            n = 0
            for a, b in zip(base, messages, strict=False):
                if a != b:
                    break
                n += 1
            if n:
                ref.base, ref.prefix = base_id, n
        ref.messages = [dict(m) for m in messages[ref.prefix :]]
        self._last_prompt[agent] = (ref.id, messages)
        return ref

    def tool_call(self, agent: str, call: ToolCall, outcome: ToolOutcome) -> ToolCallEntry:
        tools = {t.name: t for t in self._agents[agent].tools} if agent in self._agents else {}
        known = tools.get(call.name)
        problem: CallProblem | None = None
        if call.error is not None:
            problem = "unknown_tool" if known is None else ("refused" if not call.logged else "bad_arguments")
        elif known is None and not outcome.ok:
            problem = "unknown_tool"
        return ToolCallEntry(
            id=call.id,
            name=call.name,
            event_name=known.event_name if known is not None else None,
            arguments=dict(call.arguments) if isinstance(call.arguments, dict) else {},
            t=self.elapsed(outcome.sim_time),
            ok=outcome.ok,
            observation=outcome.observation if outcome.ok else None,
            error=None if outcome.ok else (call.error or outcome.error),
            problem=problem,
        )

    def step(
        self,
        agent: str,
        *,
        index: int,
        run: int,
        t_start: float,
        t_model: float,
        t_end: float,
        notifications: Sequence[str],
        prompt: PromptRef | None,
        outputs: Iterable[tuple[ModelResponse, str | None]],
        acted_on: ModelResponse | None,
        calls: Sequence[ToolCall],
        outcomes: Sequence[ToolOutcome],
        format_error: str | None = None,
        model_error: str | None = None,
        auto: str | None = None,
    ) -> None:
        """One finished iteration of `agent` (or a call the loop made for it: `auto`)."""
        if agent not in self._agents:
            return
        self._agents[agent].steps.append(
            Step(
                index=index,
                run=run,
                t_start=_round(t_start),
                t_model=_round(t_model),
                t_end=_round(t_end),
                notifications=list(notifications),
                prompt=prompt,
                outputs=[_output(r, rejected=why) for r, why in outputs],
                thought=thought_of(acted_on) if acted_on is not None else None,
                tool_calls=[self.tool_call(agent, c, o) for c, o in zip(calls, outcomes, strict=False)],
                format_error=format_error,
                model_error=model_error,
                auto=auto,
            )
        )

    def build(
        self,
        *,
        ledgers: Iterable[AgentLedger],
        delegations: Sequence[Delegation],
        event_log: Sequence[dict[str, Any]],
        stop_reason: str | None,
        oracle: str | None = None,
    ) -> Trajectory:
        """The trajectory: agents with their ledgers' stop reasons, delegations linked to the calls
        that made them, each event of `event_log` attributed to the agent that made it (`oracle`:
        every agent event is that policy's)."""
        by_name = {ledger.name: ledger for ledger in ledgers}
        agents = [_detached(a) for a in self._agents.values()]
        for a in agents:
            ledger = by_name.get(a.name)
            if ledger is not None:
                a.stop_reason, a.error = ledger.stop_reason, ledger.error
        _link_delegations(agents, delegations)
        event_agents = _attribute_events(agents, event_log, oracle)
        names = {t.name: t.event_name for a in agents for t in a.tools if t.event_name is not None}
        return Trajectory(stop_reason=stop_reason, agents=agents, event_agents=event_agents, tool_names=dict(sorted(names.items())))


def _detached(agent: AgentTrajectory) -> AgentTrajectory:
    """`agent` copied as far as `build` writes (the agent's stop reason and error, its tool calls'
    `delegate` and `event`): the recorder's entries stay as they were. The rest (tool table,
    prompts, outputs) is shared with the recorder, which never changes what it recorded — a deep
    copy of it was most of `build`'s cost."""
    steps = [step.model_copy(update={"tool_calls": [call.model_copy() for call in step.tool_calls]}) for step in agent.steps]
    return agent.model_copy(update={"steps": steps, "runs": list(agent.runs), "tools": list(agent.tools)})


def _link_delegations(agents: list[AgentTrajectory], delegations: Sequence[Delegation]) -> None:
    """Each delegation's callee goes on the caller's tool call that started it (same tool, same start)."""
    calls = {a.name: [c for s in a.steps for c in s.tool_calls] for a in agents}
    for d in sorted(delegations, key=lambda d: d.start):
        for call in calls.get(d.caller, []):
            if call.delegate is None and call.name == d.tool and abs(call.t - d.start) < 1e-6:
                call.delegate = d.callee
                break


def _attribute_events(agents: list[AgentTrajectory], event_log: Sequence[dict[str, Any]], oracle: str | None) -> list[str | None]:
    """Which agent made each event: an agent event matched to the first unmatched call with the
    same event-log name at the same simulated time; an agent event no call names (an app's nested
    call: `send_message` looks up the conversation ids) is the agent whose call ran at that time."""
    pending: list[tuple[str, ToolCallEntry]] = [
        (a.name, c) for a in agents for s in a.steps for c in s.tool_calls if c.event_name is not None and c.problem is None
    ]
    pending.sort(key=lambda item: item[1].t)
    every = [(a.name, c) for a in agents for s in a.steps for c in s.tool_calls if c.problem is None and c.delegate is None]
    out: list[str | None] = []
    for i, event in enumerate(event_log):
        if str(event.get("type", "")).upper() != "AGENT":
            out.append(None)
            continue
        if oracle is not None:
            out.append(oracle)
            continue
        t = float(event.get("t", 0.0))
        found = next((k for k, (_, c) in enumerate(pending) if c.event_name == event.get("tool") and abs(c.t - t) < 1e-6), None)
        if found is None:
            out.append(next((who for who, c in every if abs(c.t - t) < 1e-6), None))
            continue
        who, call = pending.pop(found)
        call.event = i
        out.append(who)
    return out
