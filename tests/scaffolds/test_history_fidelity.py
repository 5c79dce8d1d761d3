"""What the policy wrote stays written: the next request carries each completion of a native
tool-calling agent byte for byte — its content as sent (`""` stays `""`), its reasoning, each call's
arguments as its own text (compact JSON, non-ASCII), and a text-only reply followed by the error it
got — so a trainer's next prompt extends what the model sampled. (ARE's ReAct format rewrites the
output as ARE's own agent does — cut at `<end_action>`, `True` lowered: docs/rl.md.)"""

from __future__ import annotations

from typing import Any

import anyio

from orchestra.rl import EnvConfig, GaiaEnv

SCENARIO = "bundled/starter_search_lookup"


def _call(name: str, arguments: str, content: Any = "", **extra: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"id": "call_a", "type": "function", "function": {"name": name, "arguments": arguments}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        **extra,
    }


def _assistants(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m.get("role") == "assistant"]


def test_the_next_prompt_carries_the_completion_as_written() -> None:
    async def go() -> list[dict[str, Any]]:
        env = GaiaEnv(EnvConfig(max_turns=4))
        await env.reset(SCENARIO)
        compact = '{"query":"Wróblewska"}'
        obs, *_ = await env.step(_call("Contacts__search_contacts", compact, content="", reasoning_content="Look her up first."))
        env.close()
        assert obs is not None
        return obs.messages

    messages = anyio.run(go)
    [turn] = _assistants(messages)
    assert turn["content"] == ""  # not None
    assert turn["reasoning_content"] == "Look her up first."
    assert turn["tool_calls"][0]["function"]["arguments"] == '{"query":"Wróblewska"}'  # not re-serialized, not \\u-escaped


def test_a_text_only_reply_stays_in_the_history_followed_by_its_error() -> None:
    async def go() -> list[dict[str, Any]]:
        env = GaiaEnv(EnvConfig(max_turns=4))
        await env.reset(SCENARIO)
        obs, *_ = await env.step({"role": "assistant", "content": "Let me think about Tom Becker.", "usage": {"prompt_tokens": 10, "completion_tokens": 7}})
        env.close()
        assert obs is not None
        return obs.messages

    messages = anyio.run(go)
    [turn] = _assistants(messages)
    assert turn["content"] == "Let me think about Tom Becker." and "tool_calls" not in turn
    after = messages[messages.index(turn) + 1]
    assert after["role"] == "user" and after["content"].startswith("ERROR:")
    assert messages[-1] is after  # the error is in the very next prompt, not one turn later
