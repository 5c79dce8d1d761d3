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

A remote agent that fails (`A2AError`: unreachable, no answer within `timeout_seconds`, malformed
A2A, a dropped connection) ends the main agent's rollout as an ERROR with that one line; for an
app-agent it is a failed expert call, as a failing model is. The ledger's `a2a` says what the clock
charged from what: the agent's MCP tool calls, and its model calls through the proxy.
"""

from __future__ import annotations

import uuid
from typing import Any

from orchestra.a2a.client import A2AError, RemoteAgent, trace_headers
from orchestra.a2a.config import A2AConfig
from orchestra.a2a.loopback import loopback
from orchestra.a2a.metadata import A2AMetadata
from orchestra.agent import FINAL_ANSWER_TOOL, AgentContext
from orchestra.rollout import Rollout
from orchestra.serve.outside_agent import OutsideAgent

#: The user-facing tool the agent's plain answer is sent through when it did not call it itself.
ANSWER_TOOL = "AgentUserInterface__send_message_to_user"


class RemoteOutside(OutsideAgent):
    """`OutsideAgent` for any agent of the rollout: the main agent's runs are the user's turns; a
    sub-agent (an app-agent) has one run, its task."""

    def __init__(self, rollout: Rollout, agent: AgentContext) -> None:
        super().__init__(rollout)
        self.agent = agent
        #: Tool calls made since the current message was sent (an answer without any may still be a turn).
        self.turn_calls: list[str] = []

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

    async def tool_call(self, name: str, arguments: dict[str, Any]) -> Any:
        self.turn_calls.append(name)
        outcome = await super().tool_call(name, arguments)
        if name == FINAL_ANSWER_TOOL and self.agent.role != "main" and self.agent.ledger.answer is not None:
            self._close_step()  # an app-agent's run ends at its final answer (the proxy then answers ENDED_TEXT)
        return outcome

    def _close_step(self) -> None:
        super()._close_step()
        if self.agent.role != "main" and self.agent.ledger.answer is not None:
            self._run_open = False  # the `post_step` hook said RETURN: the task is answered

    @property
    def run_open(self) -> bool:
        return self._run_open

    def close_step(self) -> None:
        self._close_step()


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
    session_id = f"a2a-{agent.name}-{sample}".replace("#", "-")
    # one A2A context per agent run (its later turns share it); unique, so a rerun starts a fresh conversation
    context_id = f"orchestra-{session.scenario_id}-{sample}-{agent.name}-{uuid.uuid4().hex[:12]}"
    try:
        async with loopback(rollout) as lb:
            served = lb.adopt(session_id, rollout, outside)
            mcp_url, model_base_url = lb.urls(session_id)
            async with RemoteAgent(config, who) as remote:
                text = outside.start() if main else outside._begin_run()
                turn = 0
                while text is not None:
                    turn += 1
                    outside.turn_calls.clear()
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
                    answer = await remote.send(text, metadata, context_id=context_id, message_id=f"{context_id}-{turn}")
                    async with served.lock:  # after any call of the agent still in flight
                        text = await _after_answer(outside, answer, main)
    except A2AError as exc:
        if main:
            raise
        agent.ledger.error = str(exc)
        agent.stop_reason = "a2a_error"
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


async def _after_answer(outside: RemoteOutside, answer: str, main: bool) -> str | None:
    """The agent answered a message: close its open step; the next message's text, or None (its run is over)."""
    outside.close_step()
    agent = outside.agent
    session = agent.session
    if not main:
        if agent.ledger.answer is None:
            agent.ledger.answer = answer
        return None
    if session.done:
        return None
    if outside.run_open:
        if not answer.strip():
            return None  # no answer and no message to the user: the agent has given up
        if ANSWER_TOOL in agent.tools:
            await outside.tool_call(ANSWER_TOOL, {"content": answer})  # ends the turn (ARE's rule)
        outside.close_step()
    if session.done:
        return None
    return outside._begin_run()  # idle, uncharged, until the user writes again (None: the scenario is over)
