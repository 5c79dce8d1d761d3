"""Servers the tests start as child processes (`orchestra serve`, the A2A test agent): wait for the
line that says where they listen, keep draining their output, stop them at the end."""

from __future__ import annotations

import re
import signal
import subprocess
import threading
from typing import IO

import pytest


def listening_url(proc: subprocess.Popen[str], pipe: IO[str] | None, *, what: str, timeout: float = 120) -> str:
    """The URL `proc` prints as `listening on http://...` on `pipe` (which is drained from then on,
    so the child never blocks on a full pipe); the test fails with the child's last lines if none
    comes within `timeout` seconds."""
    assert pipe is not None
    lines: list[str] = []
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        for line in pipe:
            lines.append(line)
            match = re.search(r"listening on (http://\S+)", line)
            if match and not found:
                found.append(match.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    ready.wait(timeout)
    if not found:
        proc.kill()
        pytest.fail(f"{what} printed no URL:\n" + "".join(lines[-40:]))
    return found[0]


def stop(proc: subprocess.Popen[str], *, sig: int = signal.SIGINT, timeout: float = 30) -> None:
    """Ask `proc` to stop with `sig`, kill it if it has not within `timeout` seconds."""
    proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
