"""Scripted policies, served to both agents as a litellm provider so each sees the same "server".

A *policy* plays the model: given the messages of one request it returns the reply text. It is a
list of replies (played in order) or a callable `policy(messages) -> str`. Both ARE's default agent
(through ARE's own `LiteLLMEngine`) and orchestra's scaffolds (through `orchestra.models.complete`)
call litellm, so the policy is registered once as a litellm `CustomLLM` provider named
`orchestra-parity`: every request — its messages and the sampling parameters the client sent — is
recorded at the same layer on both sides, and each side applies its own client-side processing
(ARE's engine lowercases `True`/`False` and cuts at stop sequences after the "server" answered).

Each run gets its own `PolicyChannel` (a fresh policy instance and its capture), addressed by a
unique model name, so two runs in one process never share state.
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestra.errors import OrchestraError
from orchestra.litellm_setup import LazyProvider

PROVIDER = "orchestra-parity"
#: Request parameters worth comparing between the two clients (what a server would act on).
REQUEST_PARAMS = ("temperature", "top_p", "max_tokens", "max_completion_tokens", "stop", "response_format", "tools", "tool_choice", "seed")

Messages = list[dict[str, Any]]
Policy = Callable[[Messages], str]
PolicyFactory = Callable[[], Policy]


class PolicyError(OrchestraError):
    """A policy file or object cannot be used (wrong format, missing function, ran out of replies)."""


class PolicyExhausted(PolicyError):
    """A list policy was asked for more replies than it holds."""


class ListPolicy:
    """Replies played back in order; running past the end raises `PolicyExhausted`."""

    def __init__(self, replies: Sequence[str]) -> None:
        self.replies = list(replies)
        self.pos = 0

    def __call__(self, messages: Messages) -> str:
        if self.pos >= len(self.replies):
            raise PolicyExhausted(f"the policy's {len(self.replies)} replies are used up (request {self.pos + 1})")
        reply = self.replies[self.pos]
        self.pos += 1
        return reply


def as_factory(policy: Sequence[str] | Policy | PolicyFactory, *, is_factory: bool = False) -> PolicyFactory:
    """A factory giving each run a fresh policy: lists restart at reply 1; callables are shared
    unless `is_factory` says the callable builds a policy (use that for stateful policies)."""
    if isinstance(policy, (list, tuple)):
        replies = [_reply_text(r, f"policy[{i}]") for i, r in enumerate(policy)]
        return lambda: ListPolicy(replies)
    if not callable(policy):
        raise PolicyError(f"a policy is a list of replies or a callable policy(messages) -> str, got {type(policy).__name__}")
    if is_factory:
        return policy  # type: ignore[return-value]
    return lambda: policy  # type: ignore[return-value]


def _reply_text(entry: Any, where: str) -> str:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict) and isinstance(entry.get("text"), str):
        return entry["text"]
    raise PolicyError(f'{where}: each reply is a string or an object {{"text": "..."}}, got {json.dumps(entry)[:80]}')


def load_policy_file(path: str | Path) -> PolicyFactory:
    """A policy from a file: `.json`/`.jsonl`/`.yaml`/`.yml` (a list of replies) or `.py`.

    A Python file defines `make_policy()` (returns a fresh `policy(messages) -> str` for each run;
    use it when the policy keeps state) or `policy(messages) -> str` itself. The file is loaded
    anew for every run, so module-level state never leaks from one agent's run into the other's.
    """
    p = Path(path)
    if not p.is_file():
        raise PolicyError(f"policy file {p} not found")
    import yaml

    suffix = p.suffix.lower()
    if suffix == ".py":
        return _python_policy(p)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise PolicyError(f"{p}: not UTF-8 text: {exc}") from None
    try:
        if suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        elif suffix == ".jsonl":
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        elif suffix == ".json":
            data = json.loads(text)
        else:
            raise PolicyError(f"{p}: unknown policy file type {suffix!r}; use .json, .jsonl, .yaml, .yml or .py")
    except (ValueError, yaml.YAMLError) as exc:  # json.JSONDecodeError is a ValueError; YAMLError is not
        if isinstance(exc, PolicyError):
            raise
        raise PolicyError(f"{p}: not valid {suffix[1:].upper()}: {exc}") from None
    if not isinstance(data, list) or not data:
        raise PolicyError(f'{p}: a policy file holds a non-empty list of replies (strings or {{"text": ...}} objects)')
    replies = [_reply_text(entry, f"{p}[{i}]") for i, entry in enumerate(data)]
    return lambda: ListPolicy(replies)


_module_counter = itertools.count()


def _python_policy(path: Path) -> PolicyFactory:
    def load() -> Any:
        name = f"_orchestra_policy_{next(_module_counter)}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise PolicyError(f"{path}: cannot be imported as a Python module")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise PolicyError(f"{path}: importing it failed: {type(exc).__name__}: {exc}") from exc
        return module

    module = load()  # fail early, with a clear error, on a broken file
    if callable(getattr(module, "make_policy", None)):
        return lambda: load().make_policy()
    if callable(getattr(module, "policy", None)):
        return lambda: load().policy
    raise PolicyError(f"{path}: defines neither make_policy() nor policy(messages) -> str")


# ------------------------------------------------------------------------------------------------
# The channel: one run's policy and what it was asked
# ------------------------------------------------------------------------------------------------


@dataclass
class ModelRequestRecord:
    """One request as the "server" received it, and the reply it gave (None if the policy failed)."""

    messages: Messages
    params: dict[str, Any]
    reply: str | None
    error: str | None = None


@dataclass
class PolicyChannel:
    """A fresh policy plus the record of every request made to it during one run."""

    policy: Policy
    model: str
    requests: list[ModelRequestRecord] = field(default_factory=list)

    def answer(self, messages: Messages, params: dict[str, Any]) -> str:
        plain = [_plain_message(m) for m in messages]
        record = ModelRequestRecord(messages=plain, params=params, reply=None)
        self.requests.append(record)
        try:
            reply = self.policy(copy.deepcopy(plain))
        except Exception as exc:
            record.error = f"{type(exc).__name__}: {exc}"
            raise
        if not isinstance(reply, str):
            record.error = f"the policy returned {type(reply).__name__}, not str"
            raise PolicyError(record.error)
        record.reply = reply
        return reply


def _plain_message(message: Any) -> dict[str, Any]:
    m = dict(message)
    out: dict[str, Any] = {"role": str(m.get("role")), "content": m.get("content")}
    for key in ("tool_calls", "tool_call_id", "name"):
        if m.get(key) is not None:
            out[key] = m[key]
    return out


_channels: dict[str, PolicyChannel] = {}
_channels_lock = threading.Lock()
_channel_counter = itertools.count(1)


def open_channel(factory: PolicyFactory, label: str) -> PolicyChannel:
    """Register a fresh policy under a unique model name of the `orchestra-parity` provider."""
    ensure_provider()
    channel = PolicyChannel(policy=factory(), model=f"{label}-{next(_channel_counter)}")
    with _channels_lock:
        _channels[channel.model] = channel
    return channel


def close_channel(channel: PolicyChannel) -> None:
    with _channels_lock:
        _channels.pop(channel.model, None)


def _answer(litellm: Any, kw: dict[str, Any]) -> Any:
    """Route one request to its run's channel (by the model name)."""
    model = str(kw["model"]).removeprefix(f"{PROVIDER}/")
    with _channels_lock:
        channel = _channels.get(model)
    if channel is None:
        raise PolicyError(f"{PROVIDER}/{model}: no policy is registered under this name")
    optional = kw.get("optional_params") or {}
    params = {k: optional[k] for k in REQUEST_PARAMS if optional.get(k) is not None}
    text = channel.answer(kw["messages"], params)
    return _fill(kw["model_response"], model, text)


#: The process-wide litellm `CustomLLM` that routes each request to its run's channel.
provider_handler = LazyProvider(_answer)


def ensure_provider() -> None:
    """Make litellm route `orchestra-parity/*` to the policy handler (idempotent)."""
    from orchestra.litellm_setup import register_providers

    register_providers({PROVIDER: provider_handler})


def _fill(response: Any, model: str, text: str) -> Any:
    from litellm.types.utils import Choices, Message, Usage

    response.choices = [Choices(index=0, finish_reason="stop", message=Message(role="assistant", content=text))]
    response.model = f"{PROVIDER}/{model}"
    # One completion token per reply: the parity clock charges a fixed time per model call.
    response.usage = Usage(prompt_tokens=0, completion_tokens=1, total_tokens=1)
    return response
