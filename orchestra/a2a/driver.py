"""An agent of the rollout played by a remote A2A agent: the main agent (the agent under test) or an app-agent.

The built-in `drivers` plugin runs `play(agent)` instead of orchestra's own loop when the agent's
settings carry `a2a:` (`AgentContext.a2a`). For the agent's run:

1. a loopback `orchestra serve` (`orchestra.a2a.loopback`) serves the agent as an agent-mode session
   (`OutsideAgent`): its tools over MCP, its model through the proxy, both on the simulated clock;
2. orchestra sends the task as an A2A message (`a2a-sdk`'s client), with the session's MCP endpoint
   and model base URL in the message metadata (`orchestra.a2a.metadata`), and waits for the answer;
3. the main agent: an answer given without `send_message_to_user` is sent to the user for the agent
   (it ends the turn); then orchestra idles, as ARE's outer loop, until the user writes again and
   sends that as the next message of the same A2A context — until the scenario ends. An app-agent:
   the answer is its final answer, the `<App>__expert_agent` tool's result.

**Steps and the budget.** A step is what the record counts (`OutsideAgent`): one model call
through the proxy and the tool calls that follow it, or — for an agent whose model is not behind
the proxy — a stretch of tool calls, each closed by a call to the user, a wait, or the A2A answer.
`max_steps` bounds them as it bounds orchestra's own loop: a step past it is refused (the proxy
answers "The scenario has ended.", a tool call an error), the agent's stop reason is `step_budget`,
the main agent's user is answered "Max iterations (N) reached. Stopping." through the real tool
(each later turn too, as ARE's loop does), and an app-agent's call fails as one that spent its budget.

**The end of the episode.** Once this agent's part of the episode is over — the scenario's turns
answered, its duration reached, the environment stopped, the budget spent, or an app-agent's
`final_answer` given — nothing the agent does can change the verdict, so orchestra waits only
`ENDED_GRACE_SECONDS` more for the A2A answer, then stops waiting, cancels the context's open A2A
tasks (`ListTasks`, `CancelTask`) and judges the rollout as usual; the ledger's `a2a.cancelled`
says so. Without that an agent that never closes its task would turn a finished episode into an
ERROR after `timeout_seconds`.

A remote agent that fails (`A2AError`: unreachable, no answer within `timeout_seconds`, malformed
A2A, a dropped connection) ends the main agent's rollout as an ERROR with that one line; for an
app-agent it is a failed expert call, as a failing model is. Either way the agent's ledger says
`stop_reason: a2a_error` with the line as `error`. The ledger's `a2a` says what the clock charged
from what: the agent's MCP tool calls, and its model calls through the proxy.
"""

from __future__ import annotations

import uuid
from typing import Any

import anyio

from orchestra.a2a.client import A2AError, RemoteAgent, trace_headers
from orchestra.a2a.config import A2AConfig
from orchestra.a2a.loopback import loopback
from orchestra.a2a.metadata import A2AMetadata
from orchestra.agent import FINAL_ANSWER_TOOL, AgentContext, answer_max_iterations
from orchestra.rollout import Rollout
from orchestra.serve.outside_agent import OutsideAgent
from orchestra.tracing import conversation_id
from orchestra.types import ModelRequest, ModelResponse, ToolOutcome

#: The user-facing tool the agent's plain answer is sent through when it did not call it itself.
ANSWER_TOOL = "AgentUserInterface__send_message_to_user"
#: Wall seconds the agent still has to answer once its part of the episode is over (its own last
#: call usually ended it, and its answer is on the way) before orchestra cancels its A2A task.
ENDED_GRACE_SECONDS = 2.0
#: How often (wall seconds) orchestra looks whether the episode ended while a message is out: the
#: episode can end in any call the agent makes (MCP, the proxy), and the session's state sees them all.
WATCH_SECONDS = 0.05
#: The stop reason of an agent whose step budget is spent (as orchestra's own loop says it).
STEP_BUDGET = "step_budget"


class RemoteOutside(OutsideAgent):
    """`OutsideAgent` for any agent of the rollout: the main agent's runs are the user's turns; a
    sub-agent (an app-agent) has one run, its task. It also keeps the step budget (see the module doc)."""

    def __init__(self, rollout: Rollout, agent: AgentContext) -> None:
        super().__init__(rollout)
        self.agent = agent

    def _begin_run(self) -> str | None:
        agent = self.agent
        if agent.role == "main":
            return super()._begin_run()
        if agent.ledger.runs or self.rollout.session.done:
            return None
        agent.ledger.runs += 1
        self.rollout.trajectory.run_started(agent.name, run=1, t=agent.session.elapsed, task=agent.task or "")
        self._run_open = True
        return agent.task

    # ------------------------------------------------------------------ the budget
    @property
    def budget_spent(self) -> bool:
        return self.agent.stop_reason == STEP_BUDGET

    def _may_open_step(self) -> bool:
        """Whether the agent may begin one more step (`max_steps` over the record's `steps`); the
        first refusal marks it `step_budget`."""
        agent = self.agent
        if agent.stop_reason is None and agent.steps >= agent.max_steps:
            agent.stop_reason = STEP_BUDGET
        return not self.budget_spent

    async def model_call(self, request: ModelRequest) -> ModelResponse | None:
        self._close_step()  # the step it ends counts before the budget is looked at
        if not self._may_open_step():
            return None  # the proxy answers "The scenario has ended.": the agent's loop stops
        return await super().model_call(request)

    async def tool_call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        session = self.rollout.session
        if self._step is None and not session.done and not self._may_open_step():
            return ToolOutcome(name, arguments, ok=False, error=f"the step budget ({self.agent.max_steps}) is spent: no more tool calls", sim_time=session.now)
        outcome = await super().tool_call(name, arguments)
        if name == FINAL_ANSWER_TOOL and self.agent.role != "main" and self.agent.ledger.answer is not None:
            self._close_step()  # an app-agent's run ends at its final answer (the proxy then answers ENDED_TEXT)
        return outcome

    async def end_turns_at_budget(self) -> None:
        """ARE's loop once the budget is spent: the open run, then each later one (the user writes
        again), is answered "Max iterations (N) reached. Stopping." through the real tool, ending
        its turn, until the scenario ends."""
        self._close_step()
        session = self.rollout.session
        while not session.done:
            if not self._run_open and self._begin_run() is None:
                return
            await answer_max_iterations(self.agent)
            self.agent.ledger.turns += 1
            session.end_turn()
            self._run_open = False

    # ------------------------------------------------------------------ runs and the end
    def _close_step(self) -> None:
        super()._close_step()
        if self.agent.role != "main" and self.agent.ledger.answer is not None:
            self._run_open = False  # the `post_step` hook said RETURN: the task is answered

    @property
    def run_open(self) -> bool:
        return self._run_open

    def close_step(self) -> None:
        self._close_step()

    @property
    def over(self) -> bool:
        """This agent's part of the episode is over: nothing it does now changes the verdict or its answer."""
        if self.rollout.session.done or self.budget_spent:
            return True
        return self.agent.role != "main" and self.agent.ledger.answer is not None

    def why_over(self) -> str:
        if self.budget_spent:
            return f"its step budget ({self.agent.max_steps}) was spent"
        if self.rollout.session.done:
            return f"the episode ended ({self.rollout.session.stop_reason})"
        return f"it had given its {FINAL_ANSWER_TOOL}"


async def play(agent: AgentContext) -> None:
    """Run `agent` (its `a2a` set) through its remote A2A agent to the end (see the module doc)."""
    config = agent.a2a
    assert isinstance(config, A2AConfig)
    rollout = agent.rollout
    assert isinstance(rollout, Rollout)
    main = agent.role == "main"
    who = "the agent under test" if main else f"the {agent.app or agent.name} app-agent"
    outside = RemoteOutside(rollout, agent)
    session = rollout.session
    clock = rollout.spec.session.clock
    charge: dict[str, Any] = {"url": config.url, "messages": 0}
    agent.ledger.a2a = charge
    sample = rollout.spec.sample_index
    # one per rollout and agent, derived from the spec as the trace's conversation id is: the same rollout run again has the same id
    session_id = f"a2a-{agent.name}-{conversation_id(rollout.spec).removeprefix('orchestra-')}".replace("#", "-")
    # one A2A context per agent run (its later turns share it); unique, so a rerun starts a fresh conversation
    context_id = f"orchestra-{session.scenario_id}-{sample}-{agent.name}-{uuid.uuid4().hex[:12]}"
    try:
        async with loopback(rollout, listen_host=config.listen_host, advertise_host=config.advertise_host) as lb:
            served = lb.adopt(session_id, rollout, outside)
            mcp_url, model_base_url = lb.urls(session_id)
            async with RemoteAgent(config, who, timeout_hint=_timeout_hint(rollout, agent)) as remote:
                text = outside.start() if main else outside._begin_run()
                turn = 0
                while text is not None:
                    turn += 1
                    metadata = A2AMetadata(
                        mcp_url=mcp_url,
                        model_base_url=model_base_url,
                        session_id=session_id,
                        scenario_id=session.scenario_id,
                        role="main" if main else "app_agent",
                        app=agent.app,
                        turn=turn,
                        sim_time=round(session.elapsed, 6),
                        traceparent=trace_headers().get("traceparent"),
                    )
                    charge["messages"] = turn
                    answer = await _ask(remote, outside, text, metadata, context_id=context_id, message_id=f"{context_id}-{turn}")
                    if answer is None:  # over, and no answer within the grace: stop waiting
                        why = outside.why_over()
                        cancelled = await remote.cancel(context_id)
                        charge["cancelled"] = (
                            f"orchestra cancelled the A2A task of message {turn}: {why} and the agent had not answered "
                            f"{ENDED_GRACE_SECONDS:g} s later ({cancelled})"
                        )
                    async with served.lock:  # after any call of the agent still in flight
                        text = await _after_answer(outside, answer, main)
    except A2AError as exc:
        agent.ledger.error = str(exc)
        agent.stop_reason = "a2a_error"
        if main:
            raise
    finally:
        outside.close()
        tool_seconds = agent.ledger.tool_calls * clock.tool_call_seconds * clock.time_scale
        charge.update(
            tool_calls=agent.ledger.tool_calls,
            tool_call_sim_seconds=round(tool_seconds, 6),
            proxy_model_calls=agent.ledger.model_calls,
            proxy_prompt_tokens=agent.ledger.prompt_tokens,
            proxy_completion_tokens=agent.ledger.completion_tokens,
            proxy_sim_seconds=round(max(0.0, agent.ledger.sim_seconds - tool_seconds), 6),
        )


async def _ask(remote: RemoteAgent, outside: RemoteOutside, text: str, metadata: A2AMetadata, *, context_id: str, message_id: str) -> str | None:
    """Send one message and wait for its answer; None when the agent's part of the episode is over
    (`outside.over`) and it still had not answered `ENDED_GRACE_SECONDS` later (the request is then
    abandoned: the caller cancels the task). An `A2AError` is raised as the client raised it."""
    got: list[str | A2AError] = []
    async with anyio.create_task_group() as tg:

        async def ask() -> None:
            try:
                got.append(await remote.send(text, metadata, context_id=context_id, message_id=message_id))
            except A2AError as exc:
                got.append(exc)
            tg.cancel_scope.cancel()

        tg.start_soon(ask)
        while not outside.over:
            await anyio.sleep(WATCH_SECONDS)
        await anyio.sleep(ENDED_GRACE_SECONDS)
        tg.cancel_scope.cancel()
    if not got:
        return None
    if isinstance(got[0], A2AError):
        raise got[0]
    return got[0]


async def _after_answer(outside: RemoteOutside, answer: str | None, main: bool) -> str | None:
    """The agent answered a message (None: orchestra stopped waiting): close its open step; the next
    message's text, or None (its run is over)."""
    outside.close_step()
    agent = outside.agent
    session = agent.session
    if not main:
        if agent.ledger.answer is None and answer is not None and not outside.budget_spent:
            agent.ledger.answer = answer
        return None
    if session.done:
        return None
    if outside.run_open and answer is not None and not outside.budget_spent:
        if not answer.strip():
            return None  # no answer and no message to the user: the agent has given up
        if ANSWER_TOOL in agent.tools:
            await outside.tool_call(ANSWER_TOOL, {"content": answer})  # ends the turn (ARE's rule); refused past the budget
        outside.close_step()
    if outside.budget_spent:
        await outside.end_turns_at_budget()
        return None
    if session.done:
        return None
    return outside._begin_run()  # idle, uncharged, until the user writes again (None: the scenario is over)


def _timeout_hint(rollout: Rollout, agent: AgentContext) -> str:
    """Where the agent's answer timeout is set, as its timeout error names it: `--a2a-timeout` for
    `orchestra run --agent`, the team file's field for a team's agent (`--team` takes no `--a2a-timeout`)."""
    team = rollout.team
    if team is None:
        return "--a2a-timeout, or the A2A config's timeout_seconds"
    if agent.role == "main":
        return "main.a2a.timeout_seconds in the team file"
    layer = "app_agents.defaults"
    if team.app_agents is not None and agent.app is not None:
        override = team.app_agents.overrides.get(agent.app)
        if override is not None and override.a2a is not None:
            layer = f"app_agents.overrides.{agent.app}"
    return f"{layer}.a2a.timeout_seconds in the team file"
