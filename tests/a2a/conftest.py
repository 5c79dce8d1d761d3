"""The remote A2A agent (`tests/support/a2a_agent.py`), one process per test module."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from support.a2a_process import RemoteAgentProcess
from support.processes import listening_url

pytest.importorskip("a2a", reason="the a2a extra (a2a-sdk) is not installed")

AGENT = Path(__file__).resolve().parents[1] / "support" / "a2a_agent.py"


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemoteAgentProcess]:
    spans = tmp_path_factory.mktemp("a2a-spans") / "spans.jsonl"
    proc = subprocess.Popen([sys.executable, str(AGENT), "--port", "0", "--spans", str(spans)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
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
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
