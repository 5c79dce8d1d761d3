"""The remote A2A agent (`tests/support/a2a_agent.py`), one process per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.a2a_process import RemoteAgentProcess, remote_agent

pytest.importorskip("a2a", reason="the a2a extra (a2a-sdk) is not installed")


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemoteAgentProcess]:
    with remote_agent(tmp_path_factory.mktemp("a2a-spans") / "spans.jsonl") as process:
        yield process
