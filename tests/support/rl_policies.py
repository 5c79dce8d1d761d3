"""Policies for the RL-environment tests (not a test module): the oracle's actions as completions,
a wrong policy, the oracle with some writes left out, and a recorded trajectory played back."""

from __future__ import annotations

import json
from typing import Any

from orchestra.rl import Episode
from orchestra.types import ToolCall
from orchestra.wire import completion_message

ANSWER = "AgentUserInterface__send_message_to_user"
#: Big enough that the clock's share of the model calls matters (a Time scenario's window is ~35 s).
HEAVY_USAGE = {"prompt_tokens": 1000, "completion_tokens": 400}


async def oracle_completion(episode: Episode, *, usage: dict[str, int] | None = None) -> dict[str, Any]:
    """The offline oracle's answer to the episode's pending request, as an OpenAI-style message
    (the oracle is asked through the host's `model_call` hook with the rollout's main agent)."""
    rollout = episode.rollout
    assert rollout.main is not None and episode.request is not None
    response = await rollout.host.hook.model_call(agent=rollout.main, request=episode.request)
    message = completion_message(response)
    if usage is not None:
        message["usage"] = dict(usage)
    return message


def tool_message(name: str, arguments: dict[str, Any], call_id: str = "call_0") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}],
    }


def action_message(episode: Episode, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One tool call as the episode's scaffold reads it: a native tool call, a ReAct action, or a code block."""
    kind = episode.request.action_format if episode.request is not None else "tool_calls"
    if kind == "react":
        return {"role": "assistant", "content": f"Thought: act.\nAction:\n{json.dumps({'action': name, 'action_input': arguments})}<end_action>"}
    if kind == "code":
        args = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
        return {"role": "assistant", "content": f"Thought: act.\nCode:\n```py\nprint({name}({args}))\n```<end_action>"}
    return tool_message(name, arguments)


def wrong_completion(episode: Episode) -> dict[str, Any]:
    """A policy that is wrong everywhere: one junk email first (an extra write fails the judge's
    count check, even where the oracle only answers), then "Done." to the user without the work —
    in the episode's scaffold's format (native tool calls, ReAct text or a code block)."""
    rollout = episode.rollout
    tools = sorted(rollout.main.tools) if rollout.main is not None else []
    junk = next((t for t in tools if t.endswith("__send_email")), None)
    if episode.turns == 0 and junk is not None:
        return action_message(episode, junk, {"recipients": ["nobody@example.invalid"], "subject": "x", "content": "x"})
    return action_message(episode, ANSWER, {"content": "Done."})


async def oracle_without(episode: Episode, skipped: frozenset[int], counter: list[int]) -> dict[str, Any]:
    """The oracle, except that its k-th write (k in `skipped`, counting writes in order) becomes a
    harmless read (the current time): the same trajectory with those correct writes missing."""
    message = await oracle_completion(episode)
    rollout = episode.rollout
    assert rollout.main is not None
    calls = message.get("tool_calls") or []
    if len(calls) == 1:
        name = calls[0]["function"]["name"]
        spec = rollout.main.tools.get(name)
        if spec is not None and spec.writes and name != ANSWER:
            k = counter[0]
            counter[0] += 1
            if k in skipped:
                return tool_message("SystemApp__get_current_time", {})
    return message


def as_tool_calls(message: dict[str, Any]) -> list[ToolCall]:
    return [ToolCall(name=c["function"]["name"], arguments=json.loads(c["function"]["arguments"]), id=c["id"]) for c in message.get("tool_calls") or []]
