"""An agent that runs outside orchestra, played on orchestra's clock: the driver of an `agent`-mode session.

The agent (any framework, any process) calls its model through the session's proxy and the
scenario's tools through the session's MCP endpoint. This driver turns those two streams back into
what orchestra's own loop (`orchestra.agent`) does, so the world cannot tell the difference:

* **A model call** (the proxy) is an iteration's model call: the previous iteration is closed
  (its tool calls recorded, the `post_step` hook decides — `send_message_to_user` ends a turn,
  `wait_for_notification` pauses the run), notifications due now are shown (the `pre_step` hook:
  ARE's texts, as a user message inserted before the call and kept at that place on the agent's
  later calls, since the agent's own history never holds them), the upstream model is called
  through the `model_call` hook and the response accepted through `model_response` — the clock is
  charged from the call's token usage (the same `dt` as every agent), the turn recorded for training.
* **A tool call** (MCP) goes through the `tool_call` hook path, as a scaffold's: the clock,
  ARE's event log, noise, tracing and the judge see it as they see any agent's.
* **Turns.** After a turn ends, the next model call first idles (uncharged, as ARE's outer loop)
  until the user or the environment speaks; the user's new message is shown as a user message.
  Once the scenario is over, the proxy answers "The scenario has ended." without tool calls, so the
  agent's own loop stops.

The main agent's context (`AgentContext`, a `tool_calling` scaffold that only renders tool outputs)
holds the ledger, the trajectory and the per-agent state offline models keep (the oracle finds
what its last reply's calls returned in `agent.records`, as with orchestra's own loop).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from orchestra.agent import AgentContext
from orchestra.errors import OrchestraError
from orchestra.models import ModelError
from orchestra.rollout import Rollout
from orchestra.session import WAIT_TOOL
from orchestra.types import ModelRequest, ModelResponse, StepDecision, StepRecord, ToolCall, ToolOutcome

#: The proxy's answer once the scenario is over: no tool calls, so an agent's loop ends.
ENDED_TEXT = "The scenario has ended."


@dataclass
class _OpenStep:
    """The iteration in progress: the model call that opened it and the tool calls made since."""

    response: ModelResponse | None
    t_start: float
    t_model: float
    notes: list[str]
    prompt: Any
    calls: list[ToolCall] = field(default_factory=list)
    outcomes: list[ToolOutcome] = field(default_factory=list)


class OutsideAgent:
    """The main agent of `rollout`, played by an agent outside orchestra (see the module doc)."""

    def __init__(self, rollout: Rollout) -> None:
        if rollout.main is None:
            raise OrchestraError("an agent-mode session needs a main agent (a model for its proxy)")
        self.rollout = rollout
        self.agent: AgentContext = rollout.main
        self._step: _OpenStep | None = None
        self._run_open = False
        #: Messages orchestra showed the agent, with the position in its conversation they were shown at.
        self._shown: list[tuple[int, dict[str, Any]]] = []
        self._call_ids = itertools.count()
        #: The user's first message (the task), once the first run started.
        self.task: str | None = None

    # ------------------------------------------------------------------ runs and turns
    def start(self) -> str | None:
        """Idle until the user's first message; it is the task (None when the scenario ended first)."""
        self.task = self._begin_run()
        return self.task

    @property
    def done(self) -> bool:
        return self.rollout.session.done or self.agent.stop_reason is not None

    def _begin_run(self) -> str | None:
        """ARE's outer loop: idle, uncharged, until someone speaks; the user's messages are the run's task."""
        session = self.rollout.session
        if session.done or not session.idle_until_notification():
            return None
        users, stop = session.take_user_messages()
        if stop or session.done:
            return None
        task = "\n".join(n.text for n in users)
        self.agent.ledger.runs += 1
        self.rollout.trajectory.run_started(self.agent.name, run=self.agent.ledger.runs, t=session.elapsed, task=task)
        self._run_open = True
        return task

    def _close_step(self) -> None:
        """Close the open iteration: record it, let `post_step` decide (ARE's turn and pause rules)."""
        step, self._step = self._step, None
        if step is None:
            return
        agent = self.agent
        record = StepRecord(agent.steps, step.response, step.calls, step.outcomes)
        agent.rollout.trajectory.step(
            agent.name,
            index=agent.steps,
            run=agent.runs,
            t_start=step.t_start,
            t_model=step.t_model,
            t_end=agent.session.elapsed,
            notifications=step.notes,
            prompt=step.prompt,
            outputs=[(step.response, None)] if step.response is not None else [],
            acted_on=step.response,
            calls=step.calls,
            outcomes=step.outcomes,
        )
        agent.records.append(record)
        agent.ledger.steps += 1
        decision = agent.host.hook.post_step(agent=agent, step=record) or StepDecision.CONTINUE
        if decision == StepDecision.END_TURN:
            agent.ledger.turns += 1
            agent.session.end_turn()
            self._run_open = False
        elif decision == StepDecision.PAUSE:
            self._run_open = False
        elif decision == StepDecision.STOP:
            self._run_open = False

    # ------------------------------------------------------------------ the proxy's model call
    async def model_call(self, request: ModelRequest) -> ModelResponse | None:
        """One model call of the agent (its conversation in `request`); None once the scenario is over."""
        self._close_step()
        agent = self.agent
        session = agent.session
        messages = list(request.messages)
        if not self._run_open:
            task = self._begin_run()
            if task is None:
                return None
            self._shown.append((len(messages), {"role": "user", "content": task}))
        if session.done:
            return None
        t_start = session.elapsed
        injected = [m for msgs in agent.host.hook.pre_step(agent=agent) if msgs for m in msgs]
        for message in injected:
            self._shown.append((len(messages), message))
        request.messages = self._with_shown(messages)
        prompt = agent.rollout.trajectory.prompt(agent.name, request)
        try:
            response: ModelResponse = await agent.host.hook.model_call(agent=agent, request=request)
        except ModelError as exc:
            agent.ledger.model_errors += 1
            agent.ledger.last_model_error = str(exc)
            raise
        agent.host.hook.model_response(agent=agent, request=request, response=response)
        ledger = agent.ledger
        ledger.model_calls += 1
        ledger.prompt_tokens += response.usage.prompt_tokens
        ledger.completion_tokens += response.usage.completion_tokens
        ledger.reasoning_tokens += response.usage.reasoning_tokens
        ledger.cost_usd += response.cost_usd
        for i, call in enumerate(response.tool_calls):  # unique in the episode (agents refuse a reused id), and deterministic
            call.id = f"call_{ledger.model_calls}_{i}"
        notes = [m["content"] if isinstance(m.get("content"), str) else str(m.get("content")) for m in injected]
        self._step = _OpenStep(response=response, t_start=t_start, t_model=session.elapsed, notes=notes, prompt=prompt)
        return response

    def _with_shown(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The agent's conversation with what orchestra showed it put back where it was shown."""
        out: list[dict[str, Any]] = []
        shown = sorted(self._shown, key=lambda s: s[0])  # stable: shown in order at one place stay in order
        j = 0
        for i in range(len(messages) + 1):
            while j < len(shown) and shown[j][0] <= i:
                out.append(shown[j][1])
                j += 1
            if i < len(messages):
                out.append(messages[i])
        return out

    # ------------------------------------------------------------------ the MCP tool call
    async def tool_call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """One tool call of the agent, through the `tool_call` hook path (an error is an outcome, not raised)."""
        agent = self.agent
        session = agent.session
        if session.done:
            return ToolOutcome(name, arguments, ok=False, error="the scenario has ended: no more tool calls", sim_time=session.now)
        if name not in agent.tools:
            known = ", ".join(sorted(agent.tools)[:8])
            return ToolOutcome(name, arguments, ok=False, error=f"unknown tool {name!r} (tools: {known}, ...)", sim_time=session.now)
        if self._step is None:  # a call with no model call before it (the agent's model is not behind the proxy)
            if not self._run_open and self._begin_run() is None:
                return ToolOutcome(name, arguments, ok=False, error="the scenario has ended: no more tool calls", sim_time=session.now)
            self._step = _OpenStep(response=None, t_start=session.elapsed, t_model=session.elapsed, notes=[], prompt=None)
        call = ToolCall(name=name, arguments=dict(arguments), id=f"mcp_{next(self._call_ids)}")
        outcome: ToolOutcome = await agent.host.hook.tool_call(agent=agent, call=call)
        outcome.observation = agent.scaffold.render_output(outcome)
        self._step.calls.append(call)
        self._step.outcomes.append(outcome)
        if name == WAIT_TOOL or name.endswith("__send_message_to_user"):
            self._close_step()  # the run pauses / the turn ends now, as in ARE's loop, not at the agent's next call
        return outcome

    # ------------------------------------------------------------------ the end
    def close(self) -> None:
        """Record what is still open (the episode is about to be judged)."""
        self._close_step()
        if self.agent.stop_reason is None:
            self.agent.stop_reason = self.rollout.session.stop_reason if self.rollout.session.done else "finished"
