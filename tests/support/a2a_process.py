"""The remote A2A test agent's process as the tests see it (no a2a-sdk import here)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

AGENT = Path(__file__).resolve().parent / "a2a_agent.py"


class RemoteAgentProcess:
    """The agent process: its base URL (agents at URL/loop, /hang, /malformed, /drop) and its spans file."""

    def __init__(self, url: str, spans: Path) -> None:
        self.url = url
        self.spans = spans

    def __getitem__(self, name: str) -> str:
        return f"{self.url}/{name}"


@contextmanager
def remote_agent(spans: Path, *, otlp: str | None = None, env: Mapping[str, str] | None = None) -> Iterator[RemoteAgentProcess]:
    """`tests/support/a2a_agent.py` on a free loopback port, its spans to `spans` (and to `otlp`, an OTLP/HTTP
    endpoint, when given; `env` over this process's environment), until the block ends; a test fails when it
    never comes up."""
    command = [sys.executable, str(AGENT), "--port", "0", "--spans", str(spans)]
    if otlp is not None:
        command += ["--otlp", otlp]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, **(env or {})})
    assert proc.stdout is not None
    lines: list[str] = []
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:  # keeps draining the pipe, so the agent never blocks on it
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            match = re.search(r"listening on (http://\S+)", line)
            if match and not found:
                found.append(match.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    ready.wait(60)
    if not found:
        proc.kill()
        pytest.fail("the A2A test agent printed no URL:\n" + "".join(lines[-40:]))
    deadline = time.monotonic() + 30
    while True:  # listening: its card answers
        try:
            if httpx.get(f"{found[0]}/loop/.well-known/agent-card.json", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the A2A test agent never answered:\n" + "".join(lines[-40:]))
        time.sleep(0.05)
    try:
        yield RemoteAgentProcess(found[0], spans)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
