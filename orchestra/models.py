"""Model calls through litellm: any provider, any OpenAI-compatible server, by model string.

* Async (`litellm.acompletion`), so many rollouts share one event loop.
* Usage (prompt, completion, reasoning tokens) comes from the response; when a provider returns
  none, tokens are counted locally with litellm's bundled tokenizer (works offline), and the
  response says so (`Usage.counted_locally`).
* Transient failures (timeouts, rate limits, 5xx, connection errors) are retried with exponential
  backoff in *wall-clock* time; retries never reach the simulated clock, which is charged once, by
  a plugin, from the final response. A permanent failure raises `ModelError`, which ends that
  rollout with a clear error — not the batch.
"""

from __future__ import annotations

import logging
import os
import re
import uuid
from collections.abc import Mapping
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


async def complete(
    config: ModelConfig, request: ModelRequest, *, metadata: dict[str, Any] | None = None, providers: Mapping[str, Any] | None = None
) -> ModelResponse:
    """One model call with retries; returns the parsed response or raises `ModelError`.

    `providers` (a host's `models`: what plugins registered through `register_models`) are made
    known to litellm first — here, at the first model call, so building a host imports no litellm.
    """
    litellm = import_litellm()
    register_providers(providers or {})
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
    temperature = request.temperature if request.temperature is not None else config.temperature
    if temperature is not None:
        kwargs["temperature"] = temperature
    max_tokens = request.max_tokens or config.max_tokens
    if max_tokens:
        kwargs["max_tokens"] = max_tokens
    if request.tools:
        kwargs["tools"] = request.tools
        if request.tool_choice is not None:
            kwargs["tool_choice"] = request.tool_choice
        if request.parallel_tool_calls is not None:
            kwargs["parallel_tool_calls"] = request.parallel_tool_calls
    if request.stop:
        kwargs["stop"] = request.stop
    if request.response_format is not None:
        kwargs["response_format"] = request.response_format
    kwargs["metadata"]["orchestra_action_format"] = request.action_format

    transient = _transient_errors(litellm)
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
            if attempt > config.max_retries:
                raise ModelError(f"{config.model}: gave up after {attempt} attempts: {type(exc).__name__}: {exc}", permanent=False) from exc
            wait = config.backoff_seconds * (2 ** (attempt - 1))
            log.info("%s: attempt %d of %d failed (%s); retrying in %.1f s", config.model, attempt, config.max_retries + 1, type(exc).__name__, wait)
            await anyio.sleep(wait)
        except Exception as exc:
            raise ModelError(f"{config.model}: {type(exc).__name__}: {exc}") from exc
    return _parse_response(raw, request, config, attempt)


def _expanded(config: ModelConfig) -> ModelConfig:
    """The config with its `${VAR}` references expanded, for this call only (never stored)."""
    fields = {"endpoint": config.endpoint, "api_key": config.api_key, "extra": config.extra}
    update = {k: expand_env(v, where=f"{config.model}: {k}") for k, v in fields.items() if v}
    return config.model_copy(update=update) if update != {k: v for k, v in fields.items() if v} else config


def _parse_response(raw: Any, request: ModelRequest, config: ModelConfig, attempts: int) -> ModelResponse:
    """litellm's response (an OpenAI chat completion) as orchestra's, with litellm's cost and our retries."""
    hidden = getattr(raw, "_hidden_params", None) or {}
    cost = float(hidden["response_cost"]) if hidden.get("response_cost") is not None else 0.0
    response = response_from_completion(raw, request, read_tool_calls=True, missing_id=lambda i: f"call_{uuid.uuid4().hex[:12]}")
    response.model = str(getattr(raw, "model", "") or config.model)
    response.cost_usd = cost
    response.attempts = attempts
    response.client = "litellm"
    return response
