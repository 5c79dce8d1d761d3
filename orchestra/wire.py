"""The OpenAI chat-completions wire format, both directions: a completion (a dict, an SDK object, a
litellm response) as orchestra's `ModelResponse`, and a `ModelResponse` as an assistant message.

One reading for every door a completion comes in by — litellm's responses (`orchestra.models`), a
trainer's completions (`orchestra.rl`), an OpenAI-compatible server's JSON — so a tool call, its
arguments and the token usage the clock is charged mean the same whichever way the model was called.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from orchestra.litellm_setup import import_litellm
from orchestra.types import ModelRequest, ModelResponse, Tokens, ToolCall, Usage


def parse_tool_call(name: str, args_raw: Any, call_id: str) -> ToolCall:
    """One OpenAI-style tool call (`arguments` a JSON text, or already a dict); a call whose
    arguments are not a JSON object keeps the reason in `error` (the agent is shown it)."""
    if isinstance(args_raw, dict):
        return ToolCall(name=name, arguments=args_raw, id=call_id)
    if args_raw in (None, ""):
        return ToolCall(name=name, arguments={}, id=call_id)
    try:
        args = json.loads(args_raw)
    except (json.JSONDecodeError, TypeError) as exc:
        reason = f"{exc.msg} at char {exc.pos}" if isinstance(exc, json.JSONDecodeError) else str(exc)
        raw = args_raw if isinstance(args_raw, str) else str(args_raw)
        return ToolCall(name=name, id=call_id, error=f"arguments are not valid JSON ({reason}): {raw[:200]!r}", raw_arguments=raw)
    if not isinstance(args, dict):
        return ToolCall(name=name, id=call_id, error=f"arguments must be a JSON object, got {type(args).__name__}", raw_arguments=str(args_raw))
    return ToolCall(name=name, arguments=args, id=call_id, raw_arguments=args_raw if isinstance(args_raw, str) else None)


def response_from_completion(
    completion: Mapping[str, Any] | Any,
    request: ModelRequest,
    usage: Mapping[str, Any] | Usage | None = None,
    *,
    read_tool_calls: bool | None = None,
    missing_id: Callable[[int], str] = lambda i: f"call_{i}",
) -> ModelResponse:
    """An OpenAI-style completion as orchestra's `ModelResponse` for `request`.

    `completion` is an assistant message (a dict, or any object with `content` / `tool_calls`
    attributes, e.g. openai's `ChatCompletionMessage`) or a whole chat completion (`choices`,
    `usage`). `usage` (or the completion's own) sets the tokens the clock is charged; without
    prompt and completion counts they are counted locally. A `react` request reads the text only.
    Anything else (None, a string, a number, a dict with neither) is a `TypeError`: a trainer's bug
    must not silently spend one of the episode's turns.

    `read_tool_calls` (default: only for a `tool_calls` request) reads the message's tool calls;
    `missing_id(i)` names the i-th call when the server gave it no id."""
    if completion is None or isinstance(completion, str | bytes | int | float):
        raise TypeError(f"a completion is an assistant message or a chat completion (content / tool_calls / choices), got {type(completion).__name__}")
    data = _as_dict(completion)
    finish_reason = None
    tokens = None
    if "choices" in data:
        usage = usage if usage is not None else data.get("usage")
        choice = _as_dict(data["choices"][0])
        finish_reason = choice.get("finish_reason")
        tokens = tokens_from_completion(data, choice)
        data = _as_dict(choice.get("message") or {})
    if not {"content", "tool_calls"} & set(data):
        raise TypeError(f"a completion is an assistant message or a chat completion (content / tool_calls / choices), got one with keys {sorted(data)}")
    if usage is None:
        usage = data.get("usage")  # an assistant message carrying its completion's usage (`completion_message`)
    text = data.get("content")
    if isinstance(text, list):  # content parts: the text ones
        text = "".join(str(_as_dict(p).get("text") or "") for p in text)
    text = text if isinstance(text, str) else None
    calls: list[ToolCall] = []
    if read_tool_calls if read_tool_calls is not None else request.action_format == "tool_calls":  # react and code read the text only
        for i, raw in enumerate(data.get("tool_calls") or []):
            tc = _as_dict(raw)
            fn = _as_dict(tc.get("function") or tc)  # OpenAI's nesting, or verifiers' flat {id, name, arguments}
            calls.append(parse_tool_call(str(fn.get("name") or ""), fn.get("arguments"), str(tc.get("id") or missing_id(i))))
    if tokens is not None:  # the clock is charged from the same tokens the trainer trains on
        counted = Usage(len(tokens.prompt_ids), len(tokens.completion_ids), _reasoning_tokens(usage))
    else:
        counted = _usage(usage, request, text, calls)
    reasoning = data.get("reasoning_content")
    return ModelResponse(
        text=text,
        tool_calls=calls,
        usage=counted,
        model=str(data.get("model") or ""),
        finish_reason=finish_reason,
        reasoning=reasoning if isinstance(reasoning, str) else None,
        tokens=tokens,
    )


def tokens_from_completion(completion: Mapping[str, Any], choice: Mapping[str, Any]) -> Tokens | None:
    """The token ids a server sent with a chat completion, in the shapes servers send them, or None.

    * vLLM (`return_token_ids: true`): `prompt_token_ids` on the completion, `token_ids` on the choice;
    * token ids spelled in the logprobs (vLLM's `return_tokens_as_token_ids: true`: each
      `logprobs.content[i].token` is `"token_id:123"`), with the prompt's ids from either place;
    * logprobs (`logprobs: true`): `logprobs.content[i].logprob`, one per completion token.
    Without both the prompt's and the completion's ids, None (a turn is never half-recorded)."""
    prompt = completion.get("prompt_token_ids") or choice.get("prompt_token_ids")
    ids = choice.get("token_ids")
    content = _as_dict(choice.get("logprobs") or {}).get("content") or []
    entries = [_as_dict(c) for c in content]
    logprobs = tuple(float(e["logprob"]) for e in entries) if entries and all("logprob" in e for e in entries) else None
    if ids is None and entries and all(str(e.get("token", "")).startswith("token_id:") for e in entries):
        ids = [int(str(e["token"]).removeprefix("token_id:")) for e in entries]
    if prompt is None or ids is None:
        return None
    if logprobs is not None and len(logprobs) != len(ids):
        logprobs = None  # a server that sent logprobs for another token count: not this sample's
    return Tokens(prompt_ids=tuple(int(i) for i in prompt), completion_ids=tuple(int(i) for i in ids), logprobs=logprobs)


#: The fields of the wire format read from an object that is not a mapping (an SDK's or litellm's response).
_FIELDS = (
    "choices",
    "message",
    "finish_reason",
    "model",
    "usage",
    "role",
    "content",
    "tool_calls",
    "function",
    "id",
    "name",
    "arguments",
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "completion_tokens_details",
    "prompt_token_ids",
    "token_ids",
    "logprobs",
    "token",
    "logprob",
    "reasoning_content",
)


def _as_dict(value: Any) -> dict[str, Any]:
    """A wire object as a dict: a mapping as it is, an object by its wire fields (no deep dump)."""
    if isinstance(value, Mapping):
        return dict(value)
    found = {k: getattr(value, k) for k in _FIELDS if hasattr(value, k)}
    if not found and hasattr(value, "model_dump"):
        return dict(value.model_dump())
    return found


def _reasoning_tokens(usage: Mapping[str, Any] | Usage | Any) -> int:
    if usage is None:
        return 0
    if isinstance(usage, Usage):
        return usage.reasoning_tokens
    u = _as_dict(usage)
    return int(u.get("reasoning_tokens") or _as_dict(u.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0)


def _usage(usage: Mapping[str, Any] | Usage | Any, request: ModelRequest, text: str | None, calls: list[ToolCall]) -> Usage:
    if isinstance(usage, Usage):
        if usage.prompt_tokens or usage.completion_tokens:
            return usage
    elif usage is not None:
        u = _as_dict(usage) if not isinstance(usage, Mapping) else dict(usage)
        if not u and hasattr(usage, "prompt_tokens"):
            u = {k: getattr(usage, k, 0) for k in ("prompt_tokens", "completion_tokens", "reasoning_tokens")}
        prompt, completion = int(u.get("prompt_tokens") or 0), int(u.get("completion_tokens") or 0)
        details = u.get("completion_tokens_details") or {}
        reasoning = int(u.get("reasoning_tokens") or _as_dict(details).get("reasoning_tokens") or 0)
        if prompt or completion:
            return Usage(prompt, completion, reasoning)
    return count_usage_locally(import_litellm(), request.messages, text, calls)


def completion_message(response: ModelResponse) -> dict[str, Any]:
    """orchestra's `ModelResponse` as an OpenAI-style assistant message, its usage under `usage`
    (what a server would have returned; `response_from_completion` reads it back)."""
    message: dict[str, Any] = {"role": "assistant", "content": response.text}
    if response.reasoning is not None:
        message["reasoning_content"] = response.reasoning
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": c.id or f"call_{i}", "type": "function", "function": {"name": c.name, "arguments": c.arguments_text()}}
            for i, c in enumerate(response.tool_calls)
        ]
    if not response.usage.counted_locally:
        message["usage"] = {
            "prompt_tokens": response.usage.prompt_tokens,
            "completion_tokens": response.usage.completion_tokens,
            "reasoning_tokens": response.usage.reasoning_tokens,
        }
    return message


def count_usage_locally(litellm: Any, messages: list[dict[str, Any]], text: str | None, calls: list[ToolCall]) -> Usage:
    """Token counts from litellm's bundled tokenizer (offline), for providers that report none."""
    prompt = int(litellm.token_counter(model="gpt-4o-mini", messages=messages))
    out = (text or "") + "".join(c.name + c.arguments_text() for c in calls)
    completion = int(litellm.token_counter(model="gpt-4o-mini", text=out)) if out else 0
    return Usage(prompt, completion, 0, counted_locally=True)
