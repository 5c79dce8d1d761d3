"""The OpenAI chat-completions wire format, both directions: a completion (a dict, an SDK object, a
litellm response) as orchestra's `ModelResponse`, and a `ModelResponse` as an assistant message.

One reading for every door a completion comes in by — litellm's responses (`orchestra.models`), a
trainer's completions (`orchestra.rl`), an OpenAI-compatible server's JSON — so a tool call, its
arguments and the token usage the clock is charged mean the same whichever way the model was called.
"""

from __future__ import annotations

import json
import math
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
    Anything else (None, a string, a number, a list, a dict with neither) is a `TypeError`, and so is
    a field of the wrong shape (`choices` empty or not a list, `content` neither text nor parts,
    `tool_calls` not a list); a token id or usage count that is not a non-negative integer is a
    `ValueError` — each naming the field: a trainer's bug must not silently spend one of the
    episode's turns, nor reach the clock.

    `read_tool_calls` (default: only for a `tool_calls` request) reads the message's tool calls;
    `missing_id(i)` names the i-th call when the server gave it no id."""
    if completion is None or isinstance(completion, str | bytes | int | float | list | tuple):
        raise TypeError(f"a completion is an assistant message or a chat completion (content / tool_calls / choices), got {type(completion).__name__}")
    data = _as_dict(completion)
    finish_reason = None
    tokens = None
    where = ""
    if "choices" in data:
        usage = usage if usage is not None else data.get("usage")
        choices = data["choices"]
        if not isinstance(choices, list | tuple) or not choices:
            raise TypeError(f"a chat completion's `choices` is a non-empty list, got {choices!r:.80}")
        choice = _as_dict(choices[0])
        finish_reason = choice.get("finish_reason")
        tokens = tokens_from_completion(data, choice)
        message = choice.get("message")
        if message is None or isinstance(message, str | bytes | int | float | list):
            raise TypeError(f"choices[0].message is an assistant message (content / tool_calls), got {type(message).__name__}")
        data = _as_dict(message)
        where = "choices[0].message."
    role = data.get("role")
    if role is not None and role != "assistant":
        raise TypeError(f"a completion is the model's answer: {where}role is 'assistant', got {role!r:.40}")
    if not {"content", "tool_calls"} & set(data):
        raise TypeError(f"a completion is an assistant message or a chat completion (content / tool_calls / choices), got one with keys {sorted(data)}")
    if usage is None:
        usage = data.get("usage")  # an assistant message carrying its completion's usage (`completion_message`)
    text = data.get("content")
    if isinstance(text, list):  # content parts: the text ones
        text = "".join(str(_as_dict(p).get("text") or "") for p in text)
    elif text is not None and not isinstance(text, str):  # a trainer's bug must not be shown to the agent as an empty reply
        raise TypeError(f"{where}content is a string, a list of content parts or null, got {type(text).__name__} {text!r:.80}")
    calls: list[ToolCall] = []
    if read_tool_calls if read_tool_calls is not None else request.action_format == "tool_calls":  # react and code read the text only
        raw_calls = data.get("tool_calls")
        if raw_calls is not None and not isinstance(raw_calls, list | tuple):  # a string or a dict would be iterated into nameless calls
            raise TypeError(f"{where}tool_calls is a list of tool calls, got {type(raw_calls).__name__} {raw_calls!r:.80}")
        for i, raw in enumerate(raw_calls or []):
            if raw is None or isinstance(raw, str | bytes | int | float | list):
                raise TypeError(f"{where}tool_calls[{i}] is a tool call ({{id, function: {{name, arguments}}}}), got {type(raw).__name__} {raw!r:.80}")
            tc = _as_dict(raw)
            fn = _as_dict(tc.get("function") or tc)  # OpenAI's nesting, or verifiers' flat {id, name, arguments}
            name = fn.get("name")
            if name is not None and not isinstance(name, str):
                raise TypeError(f"{where}tool_calls[{i}].function.name is the tool's name (a string), got {type(name).__name__} {name!r:.40}")
            calls.append(parse_tool_call(name or "", fn.get("arguments"), str(tc.get("id") or missing_id(i))))
    sent = _sent_usage(usage)  # checked even when the ids count: a bad count is a bug either way
    if tokens is not None:  # the clock is charged from the same tokens the trainer trains on
        counted = Usage(len(tokens.prompt_ids), len(tokens.completion_ids), sent.reasoning_tokens if sent is not None else 0)
    elif sent is not None and (sent.prompt_tokens or sent.completion_tokens):
        counted = sent
    else:
        counted = count_usage_locally(import_litellm(), request.messages, text, calls)
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
    Without both the prompt's and the completion's ids, None (a turn is never half-recorded: the
    training trace marks such a turn as one without ids). An empty `prompt_token_ids` counts as none
    (no prompt is empty). Ids that are not integers are a `ValueError` naming the field.

    Logprobs are kept as sent, even when their count is not the completion's or one is null (then
    NaN): the training trace drops them for that turn and says why (`orchestra.training`), instead
    of either failing the call or losing it silently."""
    prompt = _present(completion.get("prompt_token_ids"))
    prompt_field = "prompt_token_ids"
    if prompt is None:
        prompt, prompt_field = _present(choice.get("prompt_token_ids")), "choices[0].prompt_token_ids"
    ids = choice.get("token_ids")
    ids_field = "choices[0].token_ids"
    content = _as_dict(choice.get("logprobs") or {}).get("content") or []
    if not isinstance(content, list | tuple):
        raise TypeError(f"choices[0].logprobs.content is a list (one entry per token), got {type(content).__name__}")
    entries = [_as_dict(c) for c in content]
    logprobs = tuple(_logprob(e["logprob"], i) for i, e in enumerate(entries)) if entries and all("logprob" in e for e in entries) else None
    if ids is None and entries and all(str(e.get("token", "")).startswith("token_id:") for e in entries):
        ids = [str(e["token"]).removeprefix("token_id:") for e in entries]
        ids_field = "choices[0].logprobs.content[].token (token_id:N)"
    if prompt is None or ids is None:
        return None
    return Tokens(prompt_ids=_token_ids(prompt, prompt_field), completion_ids=_token_ids(ids, ids_field), logprobs=logprobs)


def _present(ids: Any) -> Any:
    """`ids` unless it is missing or an empty list (a server that sent no prompt ids)."""
    return None if ids is None or (isinstance(ids, list | tuple) and not ids) else ids


def _token_ids(ids: Any, field: str) -> tuple[int, ...]:
    """`ids` as token ids, or a `ValueError` naming `field` and the first entry that is no token id."""
    if not isinstance(ids, list | tuple):
        raise TypeError(f"{field} is a list of token ids, got {type(ids).__name__} {ids!r:.80}")
    out = []
    for i, x in enumerate(ids):
        if isinstance(x, bool):
            raise ValueError(f"{field}[{i}] is a token id (a non-negative integer), got {x!r}")
        try:
            value = int(x)
        except (TypeError, ValueError):
            raise ValueError(f"{field}[{i}] is a token id (a non-negative integer), got {x!r:.40}") from None
        if value < 0 or (isinstance(x, float) and x != value):
            raise ValueError(f"{field}[{i}] is a token id (a non-negative integer), got {x!r:.40}")
        out.append(value)
    return tuple(out)


def _logprob(value: Any, i: int) -> float:
    """One token's logprob; a null one is NaN (the trace drops that turn's logprobs and says so)."""
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"choices[0].logprobs.content[{i}].logprob is a number, got {value!r:.40}")
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"choices[0].logprobs.content[{i}].logprob is a number, got {value!r:.40}") from None


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
    if u.get("reasoning_tokens") is not None:
        return _count(u["reasoning_tokens"], "usage.reasoning_tokens")
    return _count(_as_dict(u.get("completion_tokens_details") or {}).get("reasoning_tokens"), "usage.completion_tokens_details.reasoning_tokens")


def check_usage(usage: Usage, where: str = "usage") -> None:
    """A `ValueError` naming the count when `usage` cannot charge the clock (a negative or non-integer
    count): raised before a turn is applied, so a trainer's bug spends nothing."""
    for name in ("prompt_tokens", "completion_tokens", "reasoning_tokens"):
        _count(getattr(usage, name), f"{where}.{name}")


def _count(value: Any, field: str) -> int:
    """A token count as sent (None = 0), or a `ValueError` naming `field`: the clock is charged from it."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or value != int(value):
        raise ValueError(f"{field} is a non-negative integer token count, got {value!r:.40}")
    return int(value)


def _sent_usage(usage: Mapping[str, Any] | Usage | Any) -> Usage | None:
    """The usage a completion came with, its counts checked (`ValueError` naming a bad one), or None."""
    if usage is None:
        return None
    if isinstance(usage, Usage):
        check_usage(usage)
        return usage
    u = _as_dict(usage) if not isinstance(usage, Mapping) else dict(usage)
    if not u and hasattr(usage, "prompt_tokens"):
        u = {k: getattr(usage, k, 0) for k in ("prompt_tokens", "completion_tokens", "reasoning_tokens")}
    return Usage(_count(u.get("prompt_tokens"), "usage.prompt_tokens"), _count(u.get("completion_tokens"), "usage.completion_tokens"), _reasoning_tokens(u))


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
