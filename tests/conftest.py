"""Test-wide set-up: offline by construction, one judge pool for the whole run.

Any attempt to open a network connection to a non-loopback address fails the test that made it:
orchestra must work offline (no litellm cost-map fetch, no HF hub).
"""

from __future__ import annotations

import os
import socket
from pathlib import PurePosixPath
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def _uses_the_local_model(test_file: str) -> bool:
    """The files whose tests need the local model server (`local_server`): in tests/integration/,
    `local` in the name (checked at collection: `pytest_collection_modifyitems`)."""
    path = PurePosixPath(test_file)
    return path.parent.name == "integration" and "local" in path.name


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile` (what `dev.py test` runs), with every local-model file in one unit: one
    llama.cpp server, on one worker. With a server per worker, two servers of 2 threads each on the
    2 cores spin against each other (llama.cpp busy-waits), and each holds ~5 GB: those tests ran
    2-3x slower. Other `--dist` modes are xdist's own."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FilesWithOneLocalModelUnit(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            test_file = nodeid.split("::", 1)[0]
            return "local-model-files" if _uses_the_local_model(test_file) else test_file

    return FilesWithOneLocalModelUnit(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that needs the local model server lives where the scheduler looks for it."""
    strays = sorted(
        {item.nodeid.split("::", 1)[0] for item in items if "local_server" in getattr(item, "fixturenames", ())}
        - {item.nodeid.split("::", 1)[0] for item in items if _uses_the_local_model(item.nodeid.split("::", 1)[0])}
    )
    if strays:
        raise pytest.UsageError(f"tests using `local_server` must be in tests/integration/*local*.py (one xdist unit): {strays}")


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
    from support.helpers import scenario

    return scenario


@pytest.fixture(scope="session")
def env_turn_scenarios(tmp_path_factory):
    """Scenarios whose later turns start with an ENV event, exported into a temporary folder."""
    from support.env_turn_scenarios import write_env_turn_scenarios

    return write_env_turn_scenarios(tmp_path_factory.mktemp("env_turn_scenarios"))
