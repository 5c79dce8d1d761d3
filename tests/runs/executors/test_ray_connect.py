"""`--ray-address` with nothing listening: one line and exit 2 at once (Ray itself retried the
head for minutes, printing only its own log lines). No Ray needed: the check is a TCP connect."""

from __future__ import annotations

import socket

import anyio
import pytest

from orchestra.cli import main
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.runs.executors.ray import RayExecutor, check_reachable
from support.helpers import REPO


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_run_with_an_unreachable_ray_address_fails_in_one_line(tmp_path, capsys):
    address = f"127.0.0.1:{_closed_port()}"
    scenario = REPO / "scenarios" / "search" / "validation" / "starter_search_lookup.json"
    argv = [
        "run",
        "--team",
        str(REPO / "orchestra" / "teams" / "shipped" / "oracle.yaml"),
        "--scenarios",
        str(scenario),
        "--executor",
        "ray",
        "--ray-address",
        address,
    ]
    code = main([*argv, "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.strip().splitlines() == [
        f"orchestra: error: --ray-address {address}: cannot join the Ray cluster: Connection refused (is the head node up, is its GCS port open?)"
    ]


def test_the_executor_checks_the_address_before_importing_ray():
    """The API path (`RayExecutor` used directly, as `orchestra.rl` does) fails the same way."""
    address = f"127.0.0.1:{_closed_port()}"

    async def first() -> None:
        async for _ in RayExecutor(1, address, connect_timeout=2.0).run([object()], host=Host.create(), judge_pool=None, concurrency=1):  # type: ignore[list-item]
            pass

    with pytest.raises(OrchestraError, match=r"cannot join the Ray cluster: Connection refused"):
        anyio.run(first)


@pytest.mark.parametrize("address", ["6379", "host:", ":6379", "host:port"])
def test_a_malformed_address_is_named(address):
    with pytest.raises(OrchestraError, match=rf"--ray-address {address}: cannot join the Ray cluster: expected host:port"):
        check_reachable(address, 1.0)


@pytest.mark.parametrize("address", ["auto", "ray://127.0.0.1:1"])
def test_auto_and_ray_client_addresses_are_left_to_ray(address):
    check_reachable(address, 1.0)
