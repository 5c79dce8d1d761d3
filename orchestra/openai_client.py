"""Model calls straight to an OpenAI-compatible server: one HTTP request per call, no litellm.

The hot path of RL and of large batches against a local inference server (vLLM, SGLang, llama.cpp,
TRL's `vllm-serve`): the request body is the chat-completions API's, built from the scaffold's
`ModelRequest`, and the reply is read by `orchestra.wire` — text, tool calls, usage, and the
**token ids and logprobs** the server sent, which a trainer needs exactly as sampled.

Which models take this path (`takes_openai_path`; the response says which path it took):

* a model string `openai/<name>` or `hosted_vllm/<name>` **with an `endpoint`**: this client;
* everything else — hosted providers, orchestra's offline models, plugins' providers — goes
  through litellm (`orchestra.models.complete`), as does every model when
  `ORCHESTRA_MODEL_CLIENT=litellm` is set (a fallback, and the baseline the benchmarks compare with).

Token ids are asked for with the keys of `ModelConfig.extra` (`orchestra.rl` sets them for the
trainer's endpoint: `logprobs`, and vLLM's `return_token_ids`); they are read from the reply in the
shapes servers send them (`orchestra.wire.tokens_from_completion`). The bytes travel over
`orchestra.http1` (a minimal HTTP/1.1 client) to a plain-`http://` server no proxy applies to, and
over httpx otherwise (TLS, proxies). Retries follow
`orchestra.models.complete`: timeouts, 429, 5xx and connection errors are retried with backoff in
wall-clock time (never on the simulated clock); a reply that is not a chat completion is a
permanent error at once — a broken server fails its rollout in seconds, not after 80 steps of retries.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import ssl
import threading
import weakref
from collections import OrderedDict
from typing import Any

import anyio
import httpx

from orchestra import http1
from orchestra.models import ModelConfig, ModelError, expand_env, retries_for, sampling_fields
from orchestra.types import ModelRequest, ModelResponse
from orchestra.wire import response_from_completion

log = logging.getLogger(__name__)

#: The providers whose models are an OpenAI-compatible server's when an endpoint is given.
OPENAI_PREFIXES = ("openai/", "hosted_vllm/")
#: `litellm`: every model through litellm; `httpx`: the rule above, with every call over httpx (no
#: `orchestra.http1`: the baseline its benchmark compares with); anything else (or unset): the rule above.
CLIENT_ENV = "ORCHESTRA_MODEL_CLIENT"
#: What asks an OpenAI-compatible server for each call's token ids and logprobs (vLLM's names;
#: `ModelConfig.extra` keys, sent with the request): `orchestra run --token-ids`, `orchestra.rl.rollouts`.
TOKEN_REQUEST: dict[str, Any] = {"logprobs": True, "return_token_ids": True}
#: HTTP statuses worth a retry (the server or its queue, not the request).
TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


def takes_openai_path(config: ModelConfig) -> bool:
    """Whether `config`'s calls go straight to its endpoint (see the module's rule)."""
    if os.environ.get(CLIENT_ENV) == "litellm" or not config.endpoint:
        return False
    return config.model.startswith(OPENAI_PREFIXES)


def request_body(config: ModelConfig, request: ModelRequest) -> dict[str, Any]:
    """The chat-completions body of one call: what litellm would send for `openai/<name>`."""
    body: dict[str, Any] = {"model": config.model.split("/", 1)[1], "messages": request.messages, **sampling_fields(config, request)}
    body.update(config.extra)
    return body


def encoded_body(config: ModelConfig, request: ModelRequest) -> bytes:
    """`request_body` as the bytes sent: `json.dumps(body, ensure_ascii=False)`, byte for byte, with
    the `tools` list's JSON reused from the agent's previous call (`_tools_json`): a scaffold hands
    every call of an agent the same list, tens of kB of schemas that were half of each encoding."""
    body = request_body(config, request)
    parts = []
    for key, value in body.items():
        if key == "tools" and isinstance(value, list) and value:
            text = _tools_json(value)
        elif key == "messages" and isinstance(value, list):
            text = "[" + ", ".join(_message_json(m) for m in value) + "]"
        else:
            text = json.dumps(value, ensure_ascii=False)
        parts.append(f"{json.dumps(key, ensure_ascii=False)}: {text}")
    return ("{" + ", ".join(parts) + "}").encode()


#: Messages encoded before, by id: (the message, its items, its JSON). Kept alive while cached, so
#: no other object takes one of their ids.
_messages_encoded: OrderedDict[int, tuple[dict[str, Any], tuple[tuple[str, str], ...], str]] = OrderedDict()
_MESSAGES_ENCODED_MAX = 1024


def _message_json(message: Any) -> str:
    """`json.dumps(message, ensure_ascii=False)`, reused for a long message of string values only (a
    system prompt: tens of kB, in every call of the agent) while it is the same dict with the same keys
    and the very same value objects — a changed value is another string object, so a message changed
    in place is encoded anew. Any other message is encoded each time."""
    if type(message) is not dict or not all(type(v) is str for v in message.values()):
        return json.dumps(message, ensure_ascii=False)
    items = tuple(message.items())
    if sum(len(v) for _, v in items) < 2048:  # short: encoding it is cheaper than keeping it
        return json.dumps(message, ensure_ascii=False)
    key = id(message)
    with _encoded_lock:
        entry = _messages_encoded.get(key)
        if entry is not None and entry[0] is message and len(entry[1]) == len(items) and all(a[0] == b[0] and a[1] is b[1] for a, b in zip(entry[1], items)):
            _messages_encoded.move_to_end(key)
            return entry[2]
    text = json.dumps(message, ensure_ascii=False)
    with _encoded_lock:
        _messages_encoded[key] = (message, items, text)
        while len(_messages_encoded) > _MESSAGES_ENCODED_MAX:
            _messages_encoded.popitem(last=False)
    return text


_encoded_lock = threading.Lock()


#: The `tools` lists encoded last, keyed by the ids of their entries: (the entries, their JSON). The
#: entries are kept alive, so no other object can take one of their ids while the key is cached.
_tools_encoded: OrderedDict[tuple[int, ...], tuple[tuple[Any, ...], str]] = OrderedDict()
_TOOLS_ENCODED_MAX = 64


def _tools_json(tools: list[Any]) -> str:
    """`json.dumps(tools, ensure_ascii=False)`, reused while `tools` holds the same entries in the same
    order. A scaffold copies its list per request, but its entries are `orchestra.tool_schemas.openai_tool`'s
    dicts, one per tool for the whole process and never changed in place (that function's contract):
    so every call of every rollout of a scenario encodes its tools once per process, not once per call."""
    key = tuple(map(id, tools))
    entry = _tools_encoded.get(key)
    if entry is not None:
        _tools_encoded.move_to_end(key)
        return entry[1]
    text = json.dumps(tools, ensure_ascii=False)
    _tools_encoded[key] = (tuple(tools), text)
    while len(_tools_encoded) > _TOOLS_ENCODED_MAX:
        _tools_encoded.popitem(last=False)
    return text


#: One connection pool per event loop and endpoint (an `httpx.AsyncClient` belongs to the loop it
#: was made on; a process may run several loops, one after the other or in threads).
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str | None], httpx.AsyncClient | http1.Client]] = weakref.WeakKeyDictionary()


def _client(endpoint: str, api_key: str | None) -> httpx.AsyncClient | http1.Client:
    """The running loop's connection pool for `endpoint`: `orchestra.http1`'s for a plain-http server
    no proxy applies to (the common case of a local inference server, and the cheapest), else httpx's."""
    loop = asyncio.get_running_loop()
    pools = _clients.setdefault(loop, {})
    key = (endpoint, api_key)
    client = pools.get(key)
    if client is None or client.is_closed:
        headers = {"Authorization": f"Bearer {api_key or 'none'}", "Content-Type": "application/json"}
        base = endpoint.rstrip("/")
        if http1.usable_for(base) and os.environ.get(CLIENT_ENV) != "httpx":
            client = pools[key] = http1.Client(base, headers)
        else:
            limits = httpx.Limits(max_connections=None, max_keepalive_connections=256)
            client = pools[key] = httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=None, verify=_ssl_context())
    return client


_ssl_lock = threading.Lock()
_ssl: ssl.SSLContext | None = None


def _ssl_context() -> ssl.SSLContext:
    """httpx's default TLS context (`verify=True`, the environment's `SSL_CERT_FILE`/`SSL_CERT_DIR`),
    made once per process: loading the CA bundle costs ~40 ms of CPU, which every event loop's
    client paid again (a trainer runs one loop per batch)."""
    global _ssl
    with _ssl_lock:
        if _ssl is None:
            _ssl = httpx.create_ssl_context()
        return _ssl


async def complete_openai(config: ModelConfig, request: ModelRequest) -> ModelResponse:
    """One call to `config.endpoint`'s `/chat/completions`, with retries; the parsed reply or `ModelError`."""
    expanded = {k: expand_env(v, where=f"{config.model}: {k}") for k, v in (("endpoint", config.endpoint), ("api_key", config.api_key))}
    endpoint, api_key = str(expanded["endpoint"]), expanded["api_key"]
    body = encoded_body(config, request)
    client = _client(endpoint, api_key)
    retries = retries_for(config)
    attempt = 0
    while True:
        attempt += 1
        try:
            with anyio.fail_after(config.timeout_seconds):
                reply = await client.post("/chat/completions", content=body)
            if reply.status_code in TRANSIENT_STATUS:
                raise _Transient(f"HTTP {reply.status_code}: {reply.text[:200]}")
            if reply.status_code >= 400:
                raise ModelError(f"{config.model} at {endpoint}: HTTP {reply.status_code}: {reply.text[:300]}")
            break
        except (_Transient, TimeoutError, httpx.TransportError, http1.TransportError) as exc:
            why = str(exc) if isinstance(exc, _Transient) else f"{type(exc).__name__}: {exc}"
            if isinstance(exc, (httpx.ConnectError, http1.ConnectError)):  # nothing listens: say so in the words litellm's path uses
                why = f"Connection error ({why})"
            if attempt > retries:
                # the cause the agent is shown (as ARE's agent shows an exception) says what kind of failure it was
                cause: BaseException = ConnectionError(f"Connection error: {exc}") if isinstance(exc, (httpx.ConnectError, http1.ConnectError)) else exc
                raise ModelError(
                    f"{config.model} at {endpoint}: gave up after {attempt} attempt{'s' if attempt != 1 else ''}: {why}", permanent=False
                ) from cause
            wait = config.backoff_seconds * (2 ** (attempt - 1))
            log.warning("%s at %s: attempt %d of %d failed (%s); retrying in %.1f s", config.model, endpoint, attempt, retries + 1, why[:160], wait)
            await anyio.sleep(wait)
    try:
        data = json.loads(reply.content)
        if not isinstance(data, dict) or not data.get("choices"):
            raise ValueError(f"no `choices` in the reply: {reply.text[:200]!r}")
        response = response_from_completion(data, request, read_tool_calls=True)
    except (ValueError, TypeError, KeyError, IndexError) as exc:  # a reply that is not a chat completion: the server is broken, not busy
        raise ModelError(f"{config.model} at {endpoint}: the reply is not a chat completion ({exc})") from None
    response.model = str(data.get("model") or config.model)
    response.attempts = attempt
    response.client = "openai"
    if response.tokens is None and config.tokenizer:
        from orchestra.tokenization import retokenized

        response = retokenized(response, request, config.tokenizer)
    return response


class _Transient(Exception):
    """A reply worth a retry (see `TRANSIENT_STATUS`)."""
