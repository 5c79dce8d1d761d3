"""What the dev-only loopback servers share (`local_llm.LocalServer`: the small model's
OpenAI-compatible server; `phoenix.PhoenixServer`: the trace backend): a free port, a health check
that never goes through a proxy, the wait for start-up, the tail of the server's log for error
messages, and a stop that always ends the process."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

#: No proxies: a loopback request must never be routed through $http_proxy.
LOOPBACK_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port(host: str) -> int:
    """A port free on `host` now (another process may still take it before the server binds)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def answers_ok(url: str, timeout: float = 2.0) -> bool:
    """Whether `GET url` answers 200 (False while the server is not listening yet)."""
    try:
        with LOOPBACK_OPENER.open(url, timeout=timeout) as response:
            return int(response.status) == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


def log_tail(path: Path | None, limit: int) -> str:
    """The last `limit` bytes of a server's combined stdout/stderr log, for error messages."""
    if path is None:
        return "<not started>"
    try:
        data = path.read_bytes()
    except OSError:
        return "<no server output>"
    return data[-limit:].decode("utf-8", errors="replace").strip() or "<no server output>"


def stop_process(process: subprocess.Popen[bytes] | None, grace: float) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds; nothing for a process that already ended (or None)."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def wait_for_startup(process: subprocess.Popen[bytes], ready: Callable[[], bool], *, deadline: float, interval: float) -> int | None:
    """Poll a starting server: None once `ready()` holds, the exit code if the process ended first;
    `TimeoutError` past `deadline` (a `time.monotonic()` value). The caller words the error."""
    while True:
        code = process.poll()
        if code is not None:
            return code
        if ready():
            return None
        if time.monotonic() > deadline:
            raise TimeoutError
        time.sleep(interval)
