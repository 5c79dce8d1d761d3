"""A fixed-latency OpenAI-compatible chat server on loopback (dev-only: benchmarks and tests).

`POST /v1/chat/completions` answers `latency` seconds after the request came (an asyncio sleep: many
requests overlap, as on a real server; the time the mock took to read it included), then answers one tool call: the first of the request's tools whose name ends with
one of `prefer` (a read, so an episode goes on until `max_turns`), else the first tool; with no
tools, the text `answer`. Usage is reported (`prompt_tokens` ~ characters of `render_chat` / 4, 20 completion
tokens) unless `usage=False`. `GET /v1/models` lists one model. Run it in a thread with
`MockServer(...)` as a context manager.

With `token_ids=True` it answers as vLLM does with `return_token_ids` and `logprobs`: the prompt's
token ids (`prompt_token_ids`), the completion's (`choices[0].token_ids`) and a logprob per
completion token, from a byte-level "tokenizer" over a prefix-preserving chat rendering
(`render_chat`: each message `<|role|>` + its content and tool calls + `<|end|>`), so a scaffold
that only appends to its history gets prompts that extend the previous prompt and completion.
`ids_in_logprobs=True` spells the completion's ids in the logprobs instead (`token_id:N`, vLLM's
`return_tokens_as_token_ids`). The last request's ids are kept (`last_prompt_ids`, `last_completion_ids`).

A broken server, for the tests of what a run does with one: `fault` makes every chat reply (from
the `healthy`-th request on; 0: all of them) `invalid_json` (HTTP 200, a body that is not JSON),
`http500` (an OpenAI-style error object), `no_choices` (JSON without `choices`) or `dead` (the
connection is closed without an answer, as a server that crashed); `die()` stops the server
mid-run (nothing listens on its port any more). `requests` counts chat requests, `model_listings`
the `GET /models` calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from aiohttp import web

READS = ("__get_contacts", "__get_current_time", "__list_emails")

Fault = Literal["invalid_json", "http500", "no_choices", "dead"]


def render_message(message: dict[str, Any]) -> str:
    """One message of the mock's chat template (the arguments as the model wrote them)."""
    calls = "".join(f"<call>{c['function']['name']}{c['function']['arguments']}</call>" for c in message.get("tool_calls") or [])
    return f"<|{message.get('role')}|>{message.get('content') or ''}{calls}<|end|>"


def render_chat(messages: list[dict[str, Any]]) -> str:
    """The prompt: every message, then the assistant's turn opening."""
    return "".join(render_message(m) for m in messages) + "<|assistant|>"


def byte_ids(text: str) -> list[int]:
    return list(text.encode("utf-8"))


class MockServer:
    def __init__(
        self,
        latency: float = 0.05,
        *,
        prefer: tuple[str, ...] = READS,
        usage: bool = True,
        answer: str = "ok",
        token_ids: bool = False,
        ids_in_logprobs: bool = False,
        once: bool = False,
        fault: Fault | None = None,
        healthy: int = 0,
    ) -> None:
        self.latency, self.prefer, self.usage, self.answer = latency, prefer, usage, answer
        self.token_ids, self.ids_in_logprobs = token_ids, ids_in_logprobs
        self.fault, self.healthy = fault, healthy
        #: Prefer a tool this conversation has not called yet (a main agent delegating to each app-agent in turn).
        self.once = once
        self.last_prompt_ids: list[int] = []
        self.last_completion_ids: list[int] = []
        self.last_logprobs: list[float] = []
        self.requests = 0
        self.model_listings = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._stopped = False
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if tools:
            called = {c["function"]["name"] for m in body.get("messages") or [] for c in m.get("tool_calls") or []} if self.once else set()
            name = next((t for p in self.prefer for t in tools if t.endswith(p) and t not in called), None)
            name = name or next((t for p in self.prefer for t in tools if t.endswith(p)), tools[0])
            args = {"offset": 0} if name.endswith("__get_contacts") else {"task": "Do what the user asked."} if name.endswith("__expert_agent") else {}
            # the id depends on the conversation only (its length), never on other requests: concurrent
            # rollouts get the records sequential ones get
            message["tool_calls"] = [
                {"id": f"call_{len(body.get('messages') or [])}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            ]
        else:
            message["content"] = self.answer
        out: dict[str, Any] = {
            "id": f"mock-{self.requests}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "mock"),
            "choices": [{"index": 0, "finish_reason": "tool_calls" if tools else "stop", "message": message}],
        }
        if self.token_ids:
            prompt_ids = byte_ids(render_chat(body.get("messages") or []))
            # the completion, as the template renders the assistant's message (without the role tag it opens with)
            completion_ids = byte_ids(render_message(message)[len("<|assistant|>") :])
            logprobs = [-((i * 7919) % 97) / 100 for i in range(len(completion_ids))]
            self.last_prompt_ids, self.last_completion_ids, self.last_logprobs = prompt_ids, completion_ids, logprobs
            out["prompt_token_ids"] = prompt_ids
            tokens = [f"token_id:{i}" for i in completion_ids] if self.ids_in_logprobs else [chr(i) for i in completion_ids]
            out["choices"][0]["logprobs"] = {"content": [{"token": tok, "logprob": lp} for tok, lp in zip(tokens, logprobs)]}
            if not self.ids_in_logprobs:
                out["choices"][0]["token_ids"] = completion_ids
            out["usage"] = {"prompt_tokens": len(prompt_ids), "completion_tokens": len(completion_ids), "total_tokens": len(prompt_ids) + len(completion_ids)}
        elif self.usage:
            # ~4 characters a token of the chat template's rendering, as a real server counts the
            # prompt it renders (a key sent as null and a key left out render alike)
            prompt = len(render_chat(body.get("messages") or [])) // 4
            out["usage"] = {"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20}
        return out

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        # `latency` from the request's arrival: however long reading a burst of requests took, each
        # is answered `latency` after it came (the mock's own CPU is not the model's latency)
        due = asyncio.get_running_loop().time() + self.latency
        body = await request.json()
        self.requests += 1
        await asyncio.sleep(max(0.0, due - asyncio.get_running_loop().time()))
        if self.fault is not None and self.requests > self.healthy:
            return await self._broken(request, body)
        return web.json_response(self.reply(body))

    async def _broken(self, request: web.Request, body: dict[str, Any]) -> web.StreamResponse:
        if self.fault == "invalid_json":
            return web.Response(status=200, text="<html>upstream hiccup</html>", content_type="application/json")
        if self.fault == "http500":
            error = {"error": {"message": "internal error", "type": "server_error", "code": 500}}
            return web.json_response(error, status=500)
        if self.fault == "no_choices":
            return web.json_response({"id": f"mock-{self.requests}", "object": "chat.completion", "model": body.get("model", "mock")})
        transport = request.transport  # "dead": drop the connection without a byte of answer
        if transport is not None:
            transport.close()
        raise asyncio.CancelledError

    async def _models(self, request: web.Request) -> web.Response:
        self.model_listings += 1
        return web.json_response({"object": "list", "data": [{"id": "mock", "object": "model"}]})

    def _serve(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, access_log=None)
        loop.run_until_complete(self._runner.setup())
        loop.run_until_complete(web.TCPSite(self._runner, "127.0.0.1", self.port).start())
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(self._runner.cleanup())
        loop.close()

    def __enter__(self) -> MockServer:
        self._thread = threading.Thread(target=self._serve, name="mock-openai", daemon=True)
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the mock OpenAI server did not start")
        return self

    def die(self) -> None:
        """Stop serving now: the port refuses connections from here on (a server that crashed)."""
        if self._stopped:
            return
        self._stopped = True
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)

    def __exit__(self, *exc: object) -> None:
        self.die()


class LeanMockServer(MockServer):
    """`MockServer`'s replies on a bare asyncio server, for benchmarks: the same answers (`reply`), at
    a fraction of the CPU. On the project's 2-core machines the mock shares the cores with what it
    measures: aiohttp and a `json.loads` of each 50 kB request were ~0.5 ms of CPU per call, a
    quarter of the environment's own per step, taken from the same two cores and added to each
    call's latency under load. Here a request is read with a few `bytes` operations, and the parts
    every request of a scenario repeats — the `tools` list, a long system message, as orchestra's
    client encodes them — are parsed once (`_parse`). No faults (`fault` is refused); keep-alive
    HTTP/1.1, `Content-Length` bodies only (what model clients send)."""

    def __init__(self, latency: float = 0.05, **options: Any) -> None:
        if options.get("fault") is not None:
            raise ValueError("LeanMockServer has no faults: use MockServer")
        super().__init__(latency, **options)
        #: Encoded fragments seen before (a `tools` list, a long message) -> their placeholder and value.
        self._fragments: dict[bytes, tuple[str, Any]] = {}
        self._by_placeholder: dict[str, Any] = {}

    def _parse(self, raw: bytes) -> dict[str, Any]:
        """`json.loads(raw)`, with the fragments seen before swapped for short placeholders first."""
        for fragment, (placeholder, _) in self._fragments.items():
            if fragment in raw:
                raw = raw.replace(fragment, json.dumps(placeholder).encode())
        body: dict[str, Any] = json.loads(raw)
        fresh: list[Any] = []
        tools = body.get("tools")
        if isinstance(tools, str) and tools in self._by_placeholder:
            body["tools"] = self._by_placeholder[tools]
        elif isinstance(tools, list) and tools:
            fresh.append(tools)
        messages = body.get("messages")
        if isinstance(messages, list):
            for i, m in enumerate(messages):
                if isinstance(m, str) and m in self._by_placeholder:
                    messages[i] = self._by_placeholder[m]
                elif isinstance(m, dict) and len(str(m.get("content") or "")) > 4096:
                    fresh.append(m)
        for value in fresh:  # as orchestra's client encodes them: found again next time
            fragment = json.dumps(value, ensure_ascii=False).encode()
            if fragment not in self._fragments and len(self._fragments) < 64:
                placeholder = f"\u0000mock-fragment-{len(self._fragments)}"
                self._fragments[fragment] = (placeholder, value)
                self._by_placeholder[placeholder] = value
        return body

    def _serve(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        mock = self

        class Protocol(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                self.transport: Any = transport
                self.buffer = bytearray()
                self.busy = False
                self.queue: list[tuple[str, str, bytes, float]] = []

            def data_received(self, data: bytes) -> None:
                self.buffer += data
                while True:
                    end = self.buffer.find(b"\r\n\r\n")
                    if end < 0:
                        return
                    lines = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
                    method, path = lines[0].split(" ")[:2]
                    length = next((int(v) for k, _, v in (line.partition(":") for line in lines[1:]) if k.strip().lower() == "content-length"), 0)
                    if len(self.buffer) < end + 4 + length:
                        return
                    body = bytes(self.buffer[end + 4 : end + 4 + length])
                    del self.buffer[: end + 4 + length]
                    self.queue.append((method, path, body, loop.time()))
                    if not self.busy:
                        self.busy = True
                        loop.create_task(self.answer_all())

            async def answer_all(self) -> None:  # one request at a time per connection, in order
                while self.queue:
                    method, path, raw, arrived = self.queue.pop(0)
                    status, out = 404, b'{"error": "not found"}'
                    if method == "GET" and path.endswith("/models"):
                        mock.model_listings += 1
                        status, out = 200, json.dumps({"object": "list", "data": [{"id": "mock", "object": "model"}]}).encode()
                    elif method == "POST" and path.endswith("/chat/completions"):
                        body = mock._parse(raw)
                        mock.requests += 1
                        await asyncio.sleep(max(0.0, arrived + mock.latency - loop.time()))
                        status, out = 200, json.dumps(mock.reply(body)).encode()
                    if self.transport.is_closing():
                        return
                    reason = "OK" if status == 200 else "Not Found"
                    self.transport.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(out)}\r\n\r\n".encode() + out)
                self.busy = False

        server = loop.run_until_complete(loop.create_server(Protocol, "127.0.0.1", self.port))
        self._ready.set()
        loop.run_forever()
        server.close()
        loop.run_until_complete(server.wait_closed())
        loop.close()


@contextlib.contextmanager
def mock_in_child(latency: float, **options: Any) -> Iterator[str]:
    """A `LeanMockServer` in a child process (its base URL): for benchmarks that measure the calling
    process's CPU, which a mock in a thread of that process would share (its JSON parsing and HTTP
    work are not the environment's)."""
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[2]);"
        "from orchestra_dev.mock_openai import LeanMockServer\n"
        "with LeanMockServer(latency=float(sys.argv[1]), **json.loads(sys.argv[3])) as s:\n"
        "    print(s.base_url, flush=True)\n"
        "    sys.stdin.read()\n"
    )
    here = str(Path(__file__).resolve().parent.parent)
    proc = subprocess.Popen([sys.executable, "-c", code, str(latency), here, json.dumps(options)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    try:
        url = proc.stdout.readline().strip()
        if not url:
            raise RuntimeError("the mock OpenAI server's process did not start")
        yield url
    finally:
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
