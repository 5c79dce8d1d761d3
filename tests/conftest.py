"""Test-wide set-up: offline by construction, one judge pool for the whole run.

Any attempt to open a network connection to a non-loopback address fails the test that made it:
orchestra must work offline (no litellm cost-map fetch, no HF hub).
"""

from __future__ import annotations

import os
import socket

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and (host.startswith("127.") or host in ("localhost", "::1")) or self.family == socket.AF_UNIX:
            return real_connect(self, address)  # type: ignore[arg-type]
        raise AssertionError(f"test tried to reach the network: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(scope="session")
def judge_pool():
    from orchestra.are.judge_pool import JudgePool

    return JudgePool()


@pytest.fixture(scope="session")
def scenario_path():
    from helpers import scenario

    return scenario


@pytest.fixture(scope="session")
def env_turn_scenarios(tmp_path_factory):
    """Scenarios whose later turns start with an ENV event, exported into a temporary folder."""
    from env_turn_scenarios import write_env_turn_scenarios

    return write_env_turn_scenarios(tmp_path_factory.mktemp("env_turn_scenarios"))
