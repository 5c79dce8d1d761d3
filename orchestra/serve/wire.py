"""What travels over HTTP: request bodies read with named errors, and OpenAI chat completions both ways.

Every bad body is an `HTTPError` whose message names the route and the field (a JSON parse error
its line and column); the session it was meant for is untouched.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from orchestra.serve.errors import HTTPError
from orchestra.types import ModelRequest, ModelResponse


def validation_text(exc: ValidationError, where: str) -> str:
    problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" + _got(e) for e in exc.errors())
    return f"{where}: {problems}"


def _got(error: Any) -> str:
    if error.get("type") == "missing":
        return ""
    return f" (got {json.dumps(error.get('input'), default=str)[:80]})"


async def json_body(request: Request, *, empty: Any = None) -> Any:
    """The request's JSON body (`empty` when there is none); a parse error names line and column."""
    where = f"{request.method} {request.url.path}"
    raw = await request.body()
    if not raw.strip():
        if empty is not None:
            return empty
        raise HTTPError(400, f"{where}: the body is empty; send a JSON object")
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        detail = f"{exc.msg} at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise HTTPError(400, f"{where}: the body is not JSON: {detail}") from None


def parse(model: type[BaseModel], data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise HTTPError(400, f"{where}: the body is a JSON object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise HTTPError(400, validation_text(exc, where)) from None


# ------------------------------------------------------------------ OpenAI chat completions

_SAMPLING = ("tools", "tool_choice", "parallel_tool_calls", "stop", "response_format", "temperature", "max_tokens")


def chat_request(body: Any, where: str) -> ModelRequest:
    """An OpenAI `/chat/completions` body as a `ModelRequest` (native tool calls)."""
    if not isinstance(body, dict):
        raise HTTPError(400, f"{where}: the body is a JSON object (an OpenAI chat completion request), got {type(body).__name__}")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
        raise HTTPError(400, f"{where}: `messages` is a non-empty list of objects with a `role`")
    tools = body.get("tools")
    if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools)):
        raise HTTPError(400, f"{where}: `tools` is a list of objects")
    stop = body.get("stop")
    if isinstance(stop, str):
        stop = [stop]
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    return ModelRequest(
        messages=[dict(m) for m in messages],
        action_format="tool_calls",
        tools=tools or None,
        tool_choice=body.get("tool_choice") if tools else None,
        parallel_tool_calls=body.get("parallel_tool_calls") if tools else None,
        stop=stop,
        response_format=body.get("response_format"),
        temperature=body.get("temperature"),
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
    )


def completion_json(response: ModelResponse | None, *, completion_id: str, model: str, ended_text: str = "") -> dict[str, Any]:
    """orchestra's `ModelResponse` as an OpenAI `chat.completion` (deterministic: `created` is 0).
    None (the scenario is over): an assistant message `ended_text`, no tool calls."""
    if response is None:
        message: dict[str, Any] = {"role": "assistant", "content": ended_text}
        usage: dict[str, Any] = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        return _completion(completion_id, model, message, "stop", usage, None)
    message = {"role": "assistant", "content": response.text}
    if response.reasoning is not None:
        message["reasoning_content"] = response.reasoning
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": c.id or f"call_{i}", "type": "function", "function": {"name": c.name, "arguments": c.arguments_text()}}
            for i, c in enumerate(response.tool_calls)
        ]
    u = response.usage
    usage = {"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens, "total_tokens": u.prompt_tokens + u.completion_tokens}
    if u.reasoning_tokens:
        usage["completion_tokens_details"] = {"reasoning_tokens": u.reasoning_tokens}
    finish = response.finish_reason or ("tool_calls" if response.tool_calls else "stop")
    out = _completion(completion_id, model, message, finish, usage, response)
    return out


def _completion(completion_id: str, model: str, message: dict[str, Any], finish: str, usage: dict[str, Any], response: ModelResponse | None) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
    out: dict[str, Any] = {"id": completion_id, "object": "chat.completion", "created": 0, "model": model, "choices": [choice], "usage": usage}
    tokens = response.tokens if response is not None else None
    if tokens is not None and not tokens.retokenized:  # the upstream's own ids (vLLM's fields), passed through
        out["prompt_token_ids"] = list(tokens.prompt_ids)
        choice["token_ids"] = list(tokens.completion_ids)
        if tokens.logprobs is not None:
            choice["logprobs"] = {"content": [{"token": f"token_id:{t}", "logprob": lp} for t, lp in zip(tokens.completion_ids, tokens.logprobs)]}
    return out


def completion_chunks(completion: dict[str, Any]) -> list[dict[str, Any]]:
    """A whole completion as `stream: true` chunks (one delta with everything, then the finish)."""
    choice = completion["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(message["tool_calls"])]
    base = {"id": completion["id"], "object": "chat.completion.chunk", "created": 0, "model": completion["model"]}
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}], "usage": completion["usage"]},
    ]
