"""`orchestra.http1`, the minimal HTTP/1.1 client of the lean model path: the framings servers use,
kept-alive connections, and what a broken or vanished server gives."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import anyio
import pytest

from orchestra import http1

Handler = Callable[[bytes], bytes | None]  # request bytes -> answer bytes (None: close without answering)


@contextmanager
def raw_server(handler: Handler, *, close_after: bool = False) -> Iterator[tuple[str, list[int]]]:
    """A loopback server answering each request with `handler`'s bytes; yields its URL and the
    number of connections it accepted (a list, to read it live)."""
    accepted = [0]
    ready = threading.Event()
    port: list[int] = []
    loop = asyncio.new_event_loop()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted[0] += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")), 0)
                body = await reader.readexactly(length)
                answer = handler(head + body)
                if answer is None:
                    break
                writer.write(answer)
                await writer.drain()
                if close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    def run() -> None:
        async def main() -> None:
            server = await asyncio.start_server(serve, "127.0.0.1", 0)
            port.append(server.sockets[0].getsockname()[1])
            ready.set()
            async with server:
                await server.serve_forever()

        try:
            loop.run_until_complete(main())
        except RuntimeError:
            pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield f"http://127.0.0.1:{port[0]}/v1", accepted
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def ok(body: bytes, *, extra: str = "") -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


def post_all(url: str, bodies: list[bytes]) -> list[http1.Reply]:
    async def go() -> list[http1.Reply]:
        client = http1.Client(url, {"Authorization": "Bearer none"})
        return [await client.post("/chat/completions", b) for b in bodies]

    return anyio.run(go)


def test_it_sends_one_post_with_the_path_headers_and_body_and_reuses_the_connection() -> None:
    seen: list[bytes] = []

    def echo(request: bytes) -> bytes:
        seen.append(request)
        return ok(request.split(b"\r\n\r\n", 1)[1])

    big = b'{"x": "' + b"y" * 100_000 + b'"}'
    with raw_server(echo) as (url, accepted):
        replies = post_all(url, [b"{}", big, b'{"z": 1}'])
    assert [r.status_code for r in replies] == [200, 200, 200]
    assert [r.content for r in replies] == [b"{}", big, b'{"z": 1}']
    assert accepted[0] == 1  # kept alive
    head = seen[0].split(b"\r\n\r\n")[0].decode()
    assert head.startswith("POST /v1/chat/completions HTTP/1.1\r\n")
    assert "Host: 127.0.0.1:" in head and "Authorization: Bearer none" in head and "Content-Length: 2" in head


def test_a_chunked_answer_is_read_whole() -> None:
    def chunked(_: bytes) -> bytes:
        return b"HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n"

    with raw_server(chunked) as (url, _):
        (reply,) = post_all(url, [b"{}"])
    assert (reply.status_code, reply.text) == (500, "hello world")


def test_connection_close_opens_a_new_connection_for_the_next_request() -> None:
    with raw_server(lambda _: ok(b"{}", extra="Connection: close\r\n"), close_after=True) as (url, accepted):
        replies = post_all(url, [b"{}", b"{}"])
    assert [r.status_code for r in replies] == [200, 200] and accepted[0] == 2


def test_a_kept_alive_connection_the_server_dropped_is_replaced_without_an_error() -> None:
    # the server answers, then closes each connection without saying so (no `Connection: close`)
    with raw_server(lambda _: ok(b"{}"), close_after=True) as (url, accepted):

        async def go() -> list[int]:
            client = http1.Client(url, {})
            first = await client.post("/x", b"{}")
            await anyio.sleep(0.05)  # the close reaches this side
            second = await client.post("/x", b"{}")
            return [first.status_code, second.status_code]

        assert anyio.run(go) == [200, 200]
        assert accepted[0] == 2


def test_nothing_listening_is_a_connect_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(http1.ConnectError):
        post_all(f"http://127.0.0.1:{port}/v1", [b"{}"])


@pytest.mark.parametrize(
    "answer",
    [None, b"SSH-2.0-OpenSSH\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"],
    ids=["closed-without-answer", "not-http", "body-cut-short"],
)
def test_a_broken_answer_is_a_transport_error(answer: bytes | None) -> None:
    def handler(_: bytes) -> bytes | None:
        return answer

    with raw_server(handler, close_after=True) as (url, _), pytest.raises(http1.TransportError):
        post_all(url, [b"{}"])


def test_a_request_cancelled_mid_answer_does_not_leave_its_connection_in_the_pool() -> None:
    release = threading.Event()

    def slow(_: bytes) -> bytes:
        release.wait(5)
        return ok(b"{}")

    with raw_server(slow) as (url, accepted):

        async def go() -> int:
            client = http1.Client(url, {})
            with anyio.move_on_after(0.1):
                await client.post("/x", b"{}")
            release.set()
            return (await client.post("/x", b"{}")).status_code

        assert anyio.run(go) == 200
        assert accepted[0] == 2  # the cancelled exchange's connection was closed, not reused


def test_only_plain_http_without_a_proxy_takes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert http1.usable_for("http://127.0.0.1:8000/v1")
    assert not http1.usable_for("https://api.example.com/v1")
    monkeypatch.setenv("http_proxy", "http://proxy:3128")
    assert not http1.usable_for("http://10.0.0.5:8000/v1")
    monkeypatch.setenv("no_proxy", "10.0.0.5")
    assert http1.usable_for("http://10.0.0.5:8000/v1")
