"""Model calls through litellm: any provider, any OpenAI-compatible server, by model string.

* Async (`litellm.acompletion`), so many rollouts share one event loop.
* Usage (prompt, completion, reasoning tokens) comes from the response; when a provider returns
  none, tokens are counted locally with litellm's bundled tokenizer (works offline), and the
  response says so (`Usage.counted_locally`).
* Transient failures (timeouts, rate limits, 5xx, connection errors) are retried with exponential
  backoff in *wall-clock* time; retries never reach the simulated clock, which is charged once, by
  a plugin, from the final response. Each retry is logged as a warning when it happens (a run
  shows it on stderr), never silently. A permanent failure raises `ModelError`, which ends that
  rollout with a clear error — not the batch.
* A reply the server gave but nobody can read — a body that is not JSON, JSON without `choices`
  (litellm wraps both as an HTTP 500 of its own) — is permanent: the same server answers the same
  way on every retry, so retrying only hides a broken endpoint behind minutes of silence.
* `retries_at_most(n)` caps the retries of the calls made inside it (this task only: a context
  variable): the agent loop makes the calls that follow a failed one without retries, so a model
  that died costs one backoff, not one per step (`orchestra.agent`).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import re
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field

from orchestra.errors import OrchestraError
from orchestra.litellm_setup import import_litellm, register_providers
from orchestra.types import ModelRequest, ModelResponse
from orchestra.wire import response_from_completion

log = logging.getLogger(__name__)


class ModelError(OrchestraError):
    """A model call failed: permanently (bad model name, auth, bad request: `permanent=True`, the
    rollout ends with this error) or it ran out of retries on transient failures (the agent loop
    shows it to the model and goes on, as ARE's agent logs model exceptions and loops)."""

    def __init__(self, message: str, *, permanent: bool = True) -> None:
        super().__init__(message)
        self.permanent = permanent


#: A secret by reference: `${OPENAI_API_KEY}` in any string of a `ModelConfig` (a team file's
#: `api_key`, `endpoint`, `extra` values). The config keeps the reference — so records, `--json`
#: and `--out` show it, never the value — and `complete` expands it just before the call.
ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def env_refs(text: str) -> list[str]:
    """The variable names `text` refers to (`"${A}-${B}"` → `["A", "B"]`)."""
    return ENV_REF.findall(text)


def expand_env(value: Any, *, where: str) -> Any:
    """`value` with every `${VAR}` replaced by the variable's value, recursively through dicts and
    lists; an unset variable is a permanent `ModelError` naming it and `where` it was used."""
    if isinstance(value, str):

        def sub(match: re.Match[str]) -> str:
            var = match.group(1)
            if var not in os.environ:
                raise ModelError(f"{where}: environment variable {var} is not set")
            return os.environ[var]

        return ENV_REF.sub(sub, value)
    if isinstance(value, dict):
        return {k: expand_env(v, where=where) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_env(v, where=where) for v in value]
    return value


def mask_secrets(data: Any, key: str | None = None) -> Any:
    """`data` (dumped config: dicts and lists) with every literal `api_key` value masked as `***`;
    `${VAR}` references are kept, so what is written can be run again where the variable is set."""
    if isinstance(data, dict):
        return {k: mask_secrets(v, str(k)) for k, v in data.items()}
    if isinstance(data, list):
        return [mask_secrets(v) for v in data]
    if key == "api_key" and isinstance(data, str) and ENV_REF.fullmatch(data) is None:
        return "***"
    return data


class ModelConfig(BaseModel):
    """Which model an agent talks to and how. `model` is any litellm model string."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(..., description='litellm model string, e.g. "openai/gpt-4o-mini", "orchestra/oracle"')
    endpoint: str | None = Field(None, description="api_base for OpenAI-compatible servers (vLLM, llama.cpp, Ollama)")
    api_key: str | None = None
    temperature: float | None = Field(None, description="sent only when set (ARE's agent sends none)")
    max_tokens: int | None = None
    max_retries: int = Field(4, ge=0)
    backoff_seconds: float = Field(1.0, ge=0)
    timeout_seconds: float = Field(600.0, gt=0)
    extra: dict[str, Any] = Field(default_factory=dict, description="extra keyword arguments for litellm.acompletion")
    tokenizer: str | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="RL: a Hugging Face tokenizer folder of the model (tokenizer.json, chat template): a server that sends "
        "no token ids gets its turns counted with it, marked `retokenized` (`orchestra.tokenization`)",
    )


class ModelSetupError(ValueError):
    """A model provider that cannot answer at all (an offline model's missing or exhausted script,
    an unknown offline model): raised inside a provider, it ends the rollout whatever wrapper
    litellm puts around it — retrying or looping on it would only repeat it."""


def _setup_error(exc: BaseException) -> ModelSetupError | None:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, ModelSetupError):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


def _transient_errors(litellm: Any) -> tuple[type[BaseException], ...]:
    names = ("Timeout", "RateLimitError", "InternalServerError", "ServiceUnavailableError", "APIConnectionError", "BadGatewayError")
    return tuple(getattr(litellm, n) for n in names if hasattr(litellm, n))


#: What litellm says when the server answered but the reply cannot be used (it raises them as an HTTP
#: 500 of its own, `InternalServerError`, whatever the server's status was): its conversion of the
#: body (`convert_dict_to_response.py`, `llms/openai/openai.py`).
MALFORMED_MARKERS = (
    "provider returned a response with no 'choices'",
    "provider returned 'choices' that is not a list",
    "Empty or invalid response from LLM endpoint",
    "Invalid response object",
)


def malformed_reply(exc: BaseException) -> str | None:
    """Why `exc` (a failed call, with its causes) is a reply the server gave that cannot be read —
    its body is not JSON, it has no `choices` — or None when it is anything else (a connection, a
    timeout, an HTTP error status: those may pass)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, json.JSONDecodeError):
            return f"the body is not JSON ({cur.msg} at character {cur.pos})"
        text = str(cur)
        for marker in MALFORMED_MARKERS:
            at = text.find(marker)
            if at >= 0:
                return text[at:].splitlines()[0][:200]
        cur = cur.__cause__ or cur.__context__
    return None


_retry_cap: contextvars.ContextVar[int | None] = contextvars.ContextVar("orchestra_model_retry_cap", default=None)


@contextlib.contextmanager
def retries_at_most(n: int | None) -> Iterator[None]:
    """Calls made inside retry at most `n` times (None: as their config says), in this task only."""
    token = _retry_cap.set(n)
    try:
        yield
    finally:
        _retry_cap.reset(token)


def retries_for(config: ModelConfig) -> int:
    """How many times a call made now may be retried: `config.max_retries`, or fewer inside `retries_at_most`."""
    cap = _retry_cap.get()
    return config.max_retries if cap is None else min(cap, config.max_retries)


def sampling_fields(config: ModelConfig, request: ModelRequest) -> dict[str, Any]:
    """The chat-completions fields of one call beyond the model and its messages — temperature,
    max_tokens, tools (with tool_choice and parallel_tool_calls), stop, response_format — each only
    when set (the request's value first, then the config's): what litellm is passed and what the
    lean OpenAI client (`orchestra.openai_client`) sends."""
    fields: dict[str, Any] = {}
    temperature = request.temperature if request.temperature is not None else config.temperature
    if temperature is not None:
        fields["temperature"] = temperature
    max_tokens = request.max_tokens or config.max_tokens
    if max_tokens:
        fields["max_tokens"] = max_tokens
    if request.tools:
        fields["tools"] = request.tools
        if request.tool_choice is not None:
            fields["tool_choice"] = request.tool_choice
        if request.parallel_tool_calls is not None:
            fields["parallel_tool_calls"] = request.parallel_tool_calls
    if request.stop:
        fields["stop"] = request.stop
    if request.response_format is not None:
        fields["response_format"] = request.response_format
    return fields


async def complete(
    config: ModelConfig, request: ModelRequest, *, metadata: dict[str, Any] | None = None, providers: Mapping[str, Any] | None = None
) -> ModelResponse:
    """One model call with retries; returns the parsed response or raises `ModelError`.

    `providers` (a host's `models`: what plugins registered through `register_models`) are made
    known to litellm first — here, at the first model call, so building a host imports no litellm.
    """
    litellm = import_litellm()
    register_providers(providers or {})
    who = f"{config.model} at {config.endpoint}" if config.endpoint else config.model  # as written: `${VAR}` kept, never its value
    config = _expanded(config)
    kwargs: dict[str, Any] = {
        "model": config.model,
        "messages": request.messages,
        "timeout": config.timeout_seconds,
        "num_retries": 0,  # retries are ours, so we can keep them off the simulated clock
        "metadata": dict(metadata or {}),
        **config.extra,
    }
    if config.endpoint:
        kwargs["api_base"] = config.endpoint
        kwargs["api_key"] = config.api_key or "none"
    elif config.api_key:
        kwargs["api_key"] = config.api_key
    kwargs.update(sampling_fields(config, request))
    kwargs["metadata"]["orchestra_action_format"] = request.action_format

    transient = _transient_errors(litellm)
    retries = retries_for(config)
    attempt = 0
    while True:
        attempt += 1
        try:
            raw = await litellm.acompletion(**kwargs)
            break
        except transient as exc:
            setup = _setup_error(exc)
            if setup is not None:
                raise ModelError(f"{config.model}: {setup}") from exc
            malformed = malformed_reply(exc)
            if malformed is not None:
                raise ModelError(f"{who}: malformed reply, not retried: {malformed}") from exc
            if attempt > retries:
                raise ModelError(
                    f"{config.model}: gave up after {attempt} attempt{'s' if attempt != 1 else ''}: {type(exc).__name__}: {exc}", permanent=False
                ) from exc
            wait = config.backoff_seconds * (2 ** (attempt - 1))
            log.warning("%s: attempt %d of %d failed (%s); retrying in %.1f s", who, attempt, retries + 1, _one_line(f"{type(exc).__name__}: {exc}"), wait)
            await anyio.sleep(wait)
        except Exception as exc:
            raise ModelError(f"{config.model}: {type(exc).__name__}: {exc}") from exc
    return _parse_response(raw, request, config, attempt)


def _one_line(text: str, width: int = 160) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= width else line[: width - 3] + "..."


def _expanded(config: ModelConfig) -> ModelConfig:
    """The config with its `${VAR}` references expanded, for this call only (never stored)."""
    fields = {"endpoint": config.endpoint, "api_key": config.api_key, "extra": config.extra}
    update = {k: expand_env(v, where=f"{config.model}: {k}") for k, v in fields.items() if v}
    return config.model_copy(update=update) if update != {k: v for k, v in fields.items() if v} else config


def _parse_response(raw: Any, request: ModelRequest, config: ModelConfig, attempts: int) -> ModelResponse:
    """litellm's response (an OpenAI chat completion) as orchestra's, with litellm's cost and our retries."""
    hidden = getattr(raw, "_hidden_params", None) or {}
    cost = float(hidden["response_cost"]) if hidden.get("response_cost") is not None else 0.0
    if not getattr(raw, "choices", None):  # litellm lets an empty `choices` list through
        raise ModelError(f"{config.model}: malformed reply, not retried: an empty `choices` list")
    try:
        response = response_from_completion(raw, request, read_tool_calls=True, missing_id=lambda i: f"call_{uuid.uuid4().hex[:12]}")
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
        raise ModelError(f"{config.model}: malformed reply, not retried: {type(exc).__name__}: {exc}") from exc
    response.model = str(getattr(raw, "model", "") or config.model)
    response.cost_usd = cost
    response.attempts = attempts
    response.client = "litellm"
    return response
