"""A minimal HTTP/1.1 client for plain-`http://` model servers: one POST, keep-alive, nothing else.

Why it exists: against a local inference server (vLLM, SGLang, llama.cpp, TRL's `vllm-serve`, a
mock on loopback) the model call is orchestra's largest CPU cost per rollout, and most of it was
httpx's machinery around the bytes — its request and response models, httpcore's pool bookkeeping,
anyio's stream wrappers — about 0.3 ms of CPU per call for a request that is one `write` and one
read. This client writes the request head and body and reads the status, the headers and a body
framed by `Content-Length` or chunked encoding, on asyncio streams kept alive per event loop and
server; that is all a chat-completions call needs.

What it does not do, and who does it instead (`orchestra.openai_client.transport_for` decides):
TLS (`https://` endpoints), proxies (an `http_proxy` that applies to the host), compression (it
never asks for any), redirects, HTTP/2 — those calls go through httpx as before.

Failures raise `TransportError` (`ConnectError` when nothing listens), which the model client
retries like httpx's transport errors. A kept-alive connection the server closed while it was idle
is found before it is used (its stream is at EOF or closing) and, when the server closed it just as
the request was written, the request is sent once more on a fresh connection — only when not a
byte of an answer had arrived, so a request the server processed is never sent twice by this
layer.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from dataclasses import dataclass, field
from urllib.parse import urlsplit

#: The longest status line plus headers read from a server (a chat-completions answer has a few hundred bytes of them).
MAX_HEAD = 64 * 1024
#: Idle connections kept per server and event loop.
MAX_IDLE = 256


class TransportError(Exception):
    """The connection failed: refused, reset, closed mid-answer, or an answer that is not HTTP/1.1."""


class ConnectError(TransportError):
    """Nothing accepted the connection."""


@dataclass
class Reply:
    """One HTTP answer: status and body (headers are not kept: nothing downstream reads them)."""

    status_code: int
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


@dataclass
class _Server:
    host: str
    port: int
    idle: deque[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = field(default_factory=deque)


class Client:
    """POSTs to one `http://host:port/prefix` server from one event loop, over kept-alive connections."""

    def __init__(self, base_url: str, headers: dict[str, str]) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"not a plain http:// URL: {base_url!r}")
        self._server = _Server(parts.hostname, parts.port or 80)
        self._prefix = parts.path.rstrip("/")
        host = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
        if ":" in parts.hostname:  # an IPv6 literal goes back in brackets
            host = f"[{parts.hostname}]" if parts.port is None else f"[{parts.hostname}]:{parts.port}"
        self._head = "".join(f"{k}: {v}\r\n" for k, v in {"Host": host, **headers}.items())
        self.is_closed = False

    async def post(self, path: str, content: bytes) -> Reply:
        head = f"POST {self._prefix}{path} HTTP/1.1\r\n{self._head}Content-Length: {len(content)}\r\n\r\n".encode("latin-1")
        reused = self._idle_connection()
        if reused is not None:
            try:
                return await self._exchange(reused, head, content, reused=True)
            except _NothingReceived:
                pass  # the server closed the kept-alive connection as we wrote: once more, on a new one
        try:
            reader, writer = await asyncio.open_connection(self._server.host, self._server.port)
        except OSError as exc:
            raise ConnectError(f"{type(exc).__name__}: {exc}") from exc
        try:
            return await self._exchange((reader, writer), head, content, reused=False)
        except _NothingReceived as exc:
            raise TransportError(str(exc)) from exc

    def _idle_connection(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        idle = self._server.idle
        while idle:
            reader, writer = idle.pop()
            if not writer.is_closing() and not reader.at_eof() and not reader._buffer:  # type: ignore[attr-defined]
                return reader, writer
            writer.close()
        return None

    async def _exchange(self, conn: tuple[asyncio.StreamReader, asyncio.StreamWriter], head: bytes, content: bytes, *, reused: bool) -> Reply:
        reader, writer = conn
        done = False
        try:
            try:
                writer.write(head + content if len(content) < 4096 else head)
                if len(content) >= 4096:
                    writer.write(content)
                await writer.drain()
                raw = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError as exc:
                if not exc.partial:
                    raise _NothingReceived("the server closed the connection without an answer") from exc
                raise TransportError("the server closed the connection in the middle of the answer's head") from exc
            except (ConnectionError, OSError) as exc:
                raise _NothingReceived(f"{type(exc).__name__}: {exc}") from exc
            except asyncio.LimitOverrunError as exc:
                raise TransportError("the answer's head is too long") from exc
            status, length, chunked, close = _parse_head(raw)
            try:
                if chunked:
                    body = await _read_chunked(reader)
                elif length is not None:
                    body = await reader.readexactly(length)
                else:
                    body, close = await reader.read(), True
            except (asyncio.IncompleteReadError, ConnectionError, OSError) as exc:
                raise TransportError(f"the connection broke in the middle of the answer's body ({type(exc).__name__})") from exc
            done = not close
            return Reply(status, body)
        finally:
            if done and len(self._server.idle) < MAX_IDLE:
                self._server.idle.append(conn)
            else:  # an error, a cancellation (a timeout) mid-exchange, or the server's `Connection: close`
                writer.close()

    def close(self) -> None:
        self.is_closed = True
        while self._server.idle:
            self._server.idle.pop()[1].close()


class _NothingReceived(TransportError):
    """Not a byte of an answer came back: safe to send again on a fresh connection."""


def _parse_head(raw: bytes) -> tuple[int, int | None, bool, bool]:
    """(status, Content-Length or None, chunked, whether the server closes the connection)."""
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise TransportError(f"not an HTTP/1.1 answer: {lines[0][:80]!r}")
    length: int | None = None
    chunked = False
    close = parts[0] == "HTTP/1.0"
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            continue
        name, value = name.strip().lower(), value.strip()
        if name == "content-length":
            if not value.isdigit():
                raise TransportError(f"a Content-Length that is not a number: {value[:40]!r}")
            length = int(value)
        elif name == "transfer-encoding":
            chunked = "chunked" in value.lower()
        elif name == "connection":
            lowered = value.lower()
            close = "close" in lowered or (close and "keep-alive" not in lowered)
    return int(parts[1]), length, chunked, close


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        line = await reader.readuntil(b"\r\n")
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise TransportError(f"a chunk size that is not hexadecimal: {line[:40]!r}") from None
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers, then the blank line
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


#: One `Client` per event loop and (base URL, headers) — streams belong to the loop they were opened on.
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, tuple[tuple[str, str], ...]], Client]] = weakref.WeakKeyDictionary()


def client(base_url: str, headers: dict[str, str]) -> Client:
    """The running loop's `Client` for `base_url` with `headers`."""
    pools = _clients.setdefault(asyncio.get_running_loop(), {})
    key = (base_url, tuple(sorted(headers.items())))
    found = pools.get(key)
    if found is None or found.is_closed:
        found = pools[key] = Client(base_url, headers)
    return found


def usable_for(base_url: str) -> bool:
    """Whether this client can carry calls to `base_url`: plain http, and no proxy applies to its host."""
    parts = urlsplit(base_url)
    if parts.scheme != "http" or not parts.hostname:
        return False
    import urllib.request

    proxies = urllib.request.getproxies()
    if "http" not in proxies and "all" not in proxies:
        return True
    return bool(urllib.request.proxy_bypass(parts.hostname))


__all__ = ["Client", "ConnectError", "Reply", "TransportError", "client", "usable_for"]
