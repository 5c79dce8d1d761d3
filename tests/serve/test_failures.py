"""What a real `orchestra serve` process does when things go wrong around a session: an upstream that
answers garbage, a client that disconnects mid-request or mid-episode. The server keeps serving the
other sessions, the session keeps its state, and nothing finished is lost.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from support.helpers import REPO

sys.path.insert(0, str(REPO / "devtools"))
from orchestra_dev.mock_openai import MockServer  # noqa: E402

CALENDAR = "bundled/starter_execution_calendar"


def load_bench() -> Any:
    spec = importlib.util.spec_from_file_location("bench_serve", REPO / "benchmarks" / "bench_serve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    out = tmp_path_factory.mktemp("served")
    with load_bench().serve("--out", str(out)) as url:
        yield url, out


def oracle_episode(c: httpx.Client, sid: str, observation: dict[str, Any]) -> dict[str, Any]:
    while True:
        completion = c.post(f"/sessions/{sid}/v1/chat/completions", json={"messages": observation["messages"], "tools": observation["tools"]}).json()
        step = c.post(f"/sessions/{sid}/step", json={"completion": completion}).json()
        if step["done"]:
            return step
        observation = step["observation"]


@pytest.mark.parametrize("fault", ["invalid_json", "no_choices", "dead"])
def test_an_upstream_that_answers_garbage_is_a_502_and_the_session_goes_on(server: Any, fault: str) -> None:
    url, _ = server
    with MockServer(fault=fault) as upstream, httpx.Client(base_url=url, timeout=120) as c:
        s = c.post("/sessions", json={"scenario": CALENDAR, "mode": "agent", "model": "openai/mock", "endpoint": upstream.base_url, "api_key": "x"}).json()
        r = c.post(f"/sessions/{s['session_id']}/v1/chat/completions", json={"messages": [{"role": "user", "content": s["task"]}]})
        assert r.status_code == 502, r.text
        assert "model failed" in r.json()["error"]
        assert c.get(f"/sessions/{s['session_id']}").json()["done"] is False
        assert c.post(f"/sessions/{s['session_id']}/finish").json()["done"] is True


def test_a_client_that_disconnects_mid_request_loses_nothing(server: Any) -> None:
    url, out = server
    with httpx.Client(base_url=url, timeout=120) as c:
        s = c.post("/sessions", json={"scenario": CALENDAR, "model": "orchestra/oracle"}).json()
        sid, observation = s["session_id"], s["observation"]
        completion = c.post(f"/sessions/{sid}/v1/chat/completions", json={"messages": observation["messages"], "tools": observation["tools"]}).json()
        # the client sends its step and hangs up without reading the answer (a raw socket: however fast the
        # server is, the answer finds the connection gone): the step is applied whole, or not at all
        hang_up_after_sending(url, f"/sessions/{sid}/step", {"completion": completion})
        calls = settled_model_calls(c, sid)
        assert calls in (0, 1)
        if calls == 0:
            c.post(f"/sessions/{sid}/step", json={"completion": completion})
        observation = c.get(f"/sessions/{sid}").json()["observation"]
        final = oracle_episode(c, sid, observation)
        assert final["reward"] == 1.0
    names = [json.loads(line)["scenario_id"] for line in (Path(out) / "results.jsonl").read_text().splitlines()]
    assert "starter_execution_calendar" in names


def hang_up_after_sending(url: str, path: str, body: dict[str, Any]) -> None:
    """POST `body` to `path` on one connection and close it before a byte of the answer is read."""
    where = urlsplit(url)
    assert where.hostname is not None and where.port is not None
    payload = json.dumps(body).encode()
    head = f"POST {path} HTTP/1.1\r\nHost: {where.netloc}\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
    with socket.create_connection((where.hostname, where.port), timeout=10) as sock:
        sock.sendall(head.encode() + payload)


def settled_model_calls(c: httpx.Client, sid: str, wait_s: float = 10.0) -> int:
    """The main agent's model calls once the abandoned step has been applied (or, after `wait_s`, was not)."""
    deadline = time.monotonic() + wait_s
    while True:
        calls = int(c.get(f"/sessions/{sid}").json()["info"]["ledgers"][0]["model_calls"])
        if calls or time.monotonic() > deadline:
            return calls
        time.sleep(0.05)


def test_a_websocket_dropped_mid_episode_closes_its_session_unjudged_and_others_go_on(server: Any) -> None:
    url, _ = server
    pytest.importorskip("websockets")
    from websockets.sync.client import connect

    with httpx.Client(base_url=url, timeout=120) as c:
        other = c.post("/sessions", json={"scenario": CALENDAR, "model": "orchestra/oracle"}).json()
        before = c.get("/health").json()
        with connect(url.replace("http", "ws") + "/ws") as ws:
            ws.send(json.dumps({"type": "reset", "data": {"scenario": CALENDAR}}))
            reset = json.loads(ws.recv())
            sid = reset["data"]["metadata"]["session_id"]
        # the socket is gone: its session is closed, unjudged, and nothing else changed
        for _ in range(50):
            if c.get(f"/sessions/{sid}").status_code == 404:
                break
            time.sleep(0.1)
        assert c.get(f"/sessions/{sid}").status_code == 404
        assert c.get("/health").json()["finished"] == before["finished"]
        assert oracle_episode(c, other["session_id"], other["observation"])["reward"] == 1.0
