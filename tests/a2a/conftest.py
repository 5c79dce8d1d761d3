"""The remote A2A agent (`tests/support/a2a_agent.py`), one process per test module."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from support.a2a_process import RemoteAgentProcess

pytest.importorskip("a2a", reason="the a2a extra (a2a-sdk) is not installed")

AGENT = Path(__file__).resolve().parents[1] / "support" / "a2a_agent.py"


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemoteAgentProcess]:
    spans = tmp_path_factory.mktemp("a2a-spans") / "spans.jsonl"
    proc = subprocess.Popen([sys.executable, str(AGENT), "--port", "0", "--spans", str(spans)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
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
