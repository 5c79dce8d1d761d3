"""The remote A2A test agent's process as the tests see it (no a2a-sdk import here)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from support.processes import listening_url, stop

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
    url = listening_url(proc, proc.stdout, what="the A2A test agent", timeout=60)
    deadline = time.monotonic() + 30
    while True:  # listening: its card answers
        try:
            if httpx.get(f"{url}/loop/.well-known/agent-card.json", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the A2A test agent never answered its card")
        time.sleep(0.05)
    try:
        yield RemoteAgentProcess(url, spans)
    finally:
        stop(proc, sig=signal.SIGTERM, timeout=10)
