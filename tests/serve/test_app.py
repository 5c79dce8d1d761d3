"""`orchestra serve` in process: both session modes, the proxy, MCP, OpenEnv's routes, limits and bad input.

The server's episodes are orchestra's own: a step-mode episode played with the oracle through the
proxy has the same event log, verdict, simulated time and tokens as `orchestra run`'s rollout of
the same spec; an agent-mode episode (a minimal outside agent: the proxy and MCP over HTTP) is
judged by ARE's judge like any other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.testclient import TestClient

from orchestra.host import Host
from orchestra.rl.selection import one_scenario
from orchestra.rollout import execute
from orchestra.serve.app import ServeConfig, Server
from orchestra.serve.sessions import SessionRequest

CALENDAR = "bundled/starter_execution_calendar"
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture
def client(tmp_path: Path) -> Any:
    server = Server(ServeConfig(out=str(tmp_path / "out"), max_sessions=4), host=Host.create())
    with TestClient(server.app) as c:
        c.server = server  # type: ignore[attr-defined]
        yield c


def play_step(c: TestClient, scenario: str, **fields: Any) -> dict[str, Any]:
    """A step-mode episode where the session's own model answers each request (through the proxy)."""
    s = c.post("/sessions", json={"scenario": scenario, "model": "orchestra/oracle", **fields}).json()
    sid, observation = s["session_id"], s["observation"]
    while True:
        completion = c.post(f"/sessions/{sid}/v1/chat/completions", json={"messages": observation["messages"], "tools": observation["tools"]})
        assert completion.status_code == 200, completion.text
        step = c.post(f"/sessions/{sid}/step", json={"completion": completion.json()}).json()
        if step["done"]:
            return {"session_id": sid, **step}
        observation = step["observation"]


def mcp(c: TestClient, sid: str, method: str, params: dict[str, Any], rid: int = 1) -> dict[str, Any]:
    r = c.post(f"/sessions/{sid}/mcp", headers=MCP_HEADERS, json={"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    assert r.status_code == 200, r.text
    return r.json()


def play_agent(c: TestClient, scenario: str, model: str = "orchestra/oracle") -> dict[str, Any]:
    """A minimal outside agent: its model through the session's proxy, its tools over MCP."""
    s = c.post("/sessions", json={"scenario": scenario, "model": model, "mode": "agent"}).json()
    sid = s["session_id"]
    tools = mcp(c, sid, "tools/list", {})["result"]["tools"]
    schemas = [{"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t["inputSchema"]}} for t in tools]
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You help the user."}, {"role": "user", "content": s["task"]}]
    for i in range(80):
        message = c.post(f"/sessions/{sid}/v1/chat/completions", json={"messages": messages, "tools": schemas}).json()["choices"][0]["message"]
        messages.append(message)
        if not message.get("tool_calls"):
            break
        for call in message["tool_calls"]:
            result = mcp(c, sid, "tools/call", {"name": call["function"]["name"], "arguments": json.loads(call["function"]["arguments"])}, rid=10 + i)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result["result"]["content"][0]["text"]})
    return {"session_id": sid, "last": messages[-1], **c.post(f"/sessions/{sid}/finish").json()}


def test_step_mode_matches_orchestra_run(client: TestClient) -> None:
    served = play_step(client, CALENDAR, seed=3)
    file = one_scenario(CALENDAR)
    spec = SessionRequest(scenario=CALENDAR, model="orchestra/oracle", seed=3).spec(file)
    record = anyio.run(lambda: execute(spec, file=file))
    assert record.result is not None and served["reward"] == record.result.reward == 1.0
    info = served["info"]
    assert info["event_log_sha256"] == record.result.event_log_sha256
    assert info["sim_seconds"] == record.result.sim_seconds
    assert [a["prompt_tokens"] for a in info["ledgers"]] == [a.prompt_tokens for a in record.result.agents]
    # --out: the finished episode is on disk, in the run-folder format
    out = Path(client.server.config.out)  # type: ignore[attr-defined]
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["result"]["event_log_sha256"] == record.result.event_log_sha256
    assert (out / "rollouts" / f"starter_execution_calendar.{served['session_id']}.json").is_file()


def test_agent_mode_oracle_passes_and_a_wrong_policy_fails(client: TestClient, tmp_path: Path) -> None:
    good = play_agent(client, CALENDAR)
    assert good["success"] is True and good["reward"] == 1.0
    assert good["last"]["content"] == "The scenario has ended."
    script = tmp_path / "wrong.json"
    script.write_text(
        json.dumps([{"tool_calls": [{"name": "AgentUserInterface__send_message_to_user", "arguments": {"content": "I could not do it."}}]}, {"text": "Done."}])
    )
    bad = play_agent(client, CALENDAR, model=f"orchestra/scripted:{script}")
    assert bad["success"] is False and bad["reward"] == 0.0
    again = play_agent(client, CALENDAR)
    assert again["info"]["event_log_sha256"] == good["info"]["event_log_sha256"]


def test_mcp_tools_carry_schemas_and_a_wrong_argument_is_a_tool_error(client: TestClient) -> None:
    s = client.post("/sessions", json={"scenario": CALENDAR, "model": "orchestra/oracle", "mode": "agent"}).json()
    tools = {t["name"]: t for t in mcp(client, s["session_id"], "tools/list", {})["result"]["tools"]}
    add = tools["Calendar__add_calendar_event"]
    assert add["description"] and "title" in add["inputSchema"]["properties"]
    assert "SystemApp__wait_for_notification" in tools and "AgentUserInterface__send_message_to_user" in tools
    result = mcp(client, s["session_id"], "tools/call", {"name": "Calendar__add_calendar_event", "arguments": {"title": 5, "bogus": 1}})["result"]
    assert result["isError"] is True and "bogus" in result["content"][0]["text"]
    unknown = mcp(client, s["session_id"], "tools/call", {"name": "Nope__x", "arguments": {}})["result"]
    assert unknown["isError"] is True and "unknown tool 'Nope__x'" in unknown["content"][0]["text"]


def test_bad_requests_are_named_and_leave_the_session_as_it_was(client: TestClient) -> None:
    c = client
    r = c.post("/sessions", content=b"{bad")
    assert r.status_code == 400 and "line 1 column 2" in r.json()["error"]
    r = c.post("/sessions", json={"scenario": CALENDAR, "mode": "walk"})
    assert r.status_code == 400 and "mode" in r.json()["error"]
    r = c.post("/sessions", json={"scenario": "bundled/no_such_scenario"})
    assert r.status_code == 400 and "no_such_scenario" in r.json()["error"]
    assert c.get("/sessions/s-nope").status_code == 404
    assert c.post("/sessions/s-nope/step", json={"completion": {}}).status_code == 404
    s = c.post("/sessions", json={"scenario": CALENDAR}).json()
    sid = s["session_id"]
    r = c.post(f"/sessions/{sid}/step", json={"completion": "not a message"})
    assert r.status_code == 400 and sid in r.json()["error"]
    r = c.post(f"/sessions/{sid}/step", json={"completion": {"role": "assistant", "content": None, "tool_calls": "nope"}})
    assert r.status_code == 400 and "tool_calls" in r.json()["error"]
    assert c.get(f"/sessions/{sid}").json()["info"]["turns_completed"] == 0  # nothing was spent
    r = c.post(f"/sessions/{sid}/v1/chat/completions", json={"messages": []})
    assert r.status_code == 400 and "messages" in r.json()["error"]
    r = c.post(f"/sessions/{sid}/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 409 and "no model of its own" in r.json()["error"]
    r = c.post(f"/sessions/{sid}/mcp", headers=MCP_HEADERS, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert r.status_code == 409 and "step-mode" in r.json()["error"]
    finished = c.post(f"/sessions/{sid}/finish").json()
    assert finished["done"] is True and finished["reward"] == 0.0
    r = c.post(f"/sessions/{sid}/step", json={"completion": {"role": "assistant", "content": "hi"}})
    assert r.status_code == 409 and "ended" in r.json()["error"]


def test_a_dead_upstream_is_a_502_and_the_session_goes_on(client: TestClient) -> None:
    s = client.post("/sessions", json={"scenario": CALENDAR, "model": "openai/x", "endpoint": "http://127.0.0.1:9/v1", "mode": "agent"}).json()
    sid = s["session_id"]
    body = {"messages": [{"role": "user", "content": s["task"]}], "max_tokens": 5}
    r = client.post(f"/sessions/{sid}/v1/chat/completions", json=body)
    assert r.status_code == 502 and "model failed" in r.json()["error"]
    assert client.get(f"/sessions/{sid}").status_code == 200
    result = mcp(
        client,
        sid,
        "tools/call",
        {"name": "Calendar__get_calendar_events_from_to", "arguments": {"start_datetime": "2024-10-15 00:00:00", "end_datetime": "2024-10-16 00:00:00"}},
    )
    assert result["result"]["isError"] is False


def test_the_cap_refuses_with_429_and_delete_frees_a_place(client: TestClient) -> None:
    ids = [client.post("/sessions", json={"scenario": CALENDAR}).json()["session_id"] for _ in range(4)]
    r = client.post("/sessions", json={"scenario": CALENDAR})
    assert r.status_code == 429 and "4 of 4" in r.json()["error"]
    assert client.delete(f"/sessions/{ids[0]}").status_code == 200
    assert client.post("/sessions", json={"scenario": CALENDAR}).status_code == 200


def test_idle_sessions_are_closed_unjudged(client: TestClient) -> None:
    table = client.server.table  # type: ignore[attr-defined]
    sid = client.post("/sessions", json={"scenario": CALENDAR}).json()["session_id"]
    import time

    assert table.expire_idle(now=time.monotonic() + table.idle_timeout + 1) == [sid]
    assert client.get(f"/sessions/{sid}").status_code == 404
    assert not (Path(client.server.config.out) / "results.jsonl").exists()  # type: ignore[attr-defined]


def test_group_members_start_from_one_state(client: TestClient) -> None:
    members = client.post("/sessions/group", json={"scenario": CALENDAR, "n": 3, "seed": 0}).json()["sessions"]
    hashes = {client.get(f"/sessions/{m['session_id']}").json()["info"]["initial_state_sha256"] for m in members}
    assert len(members) == 3 and len(hashes) == 1


def test_openenv_http_routes_and_websocket(client: TestClient) -> None:
    c = client
    assert c.get("/health").json()["status"] == "healthy"
    meta = c.get("/metadata").json()
    assert isinstance(meta["name"], str) and isinstance(meta["description"], str)
    schema = c.get("/schema").json()
    assert all(isinstance(schema[k], dict) for k in ("action", "observation", "state"))
    paths = c.get("/openapi.json").json()["paths"]
    assert {"/reset", "/step", "/state"} <= set(paths)
    assert c.post("/mcp", json={}).json()["jsonrpc"] == "2.0"
    tasks = c.post("/orchestra/tasks", json={"split": "bundled"}).json()["tasks"]
    index = next(t["index"] for t in tasks if t["scenario_id"] == "starter_execution_calendar")
    reset = c.post("/reset", json={"split": "bundled", "index": index}).json()
    assert set(reset) == {"observation", "reward", "done", "metadata"} and reset["done"] is False
    sid = reset["metadata"]["session_id"]
    step = c.post("/step", json={"action": {"completion": {"role": "assistant", "content": "I give up."}}, "session_id": sid}).json()
    assert step["done"] is False and step["reward"] == 0.0
    assert c.get("/state", params={"session_id": sid}).json()["step_count"] == 1
    with c.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"scenario": CALENDAR, "model": "orchestra/oracle"}})
        obs = ws.receive_json()
        assert obs["type"] == "observation" and obs["data"]["done"] is False
        ws.send_json({"type": "step", "data": {"nope": 1}})
        assert ws.receive_json()["data"]["code"] == "VALIDATION_ERROR"
        ws.send_json({"type": "state"})
        assert ws.receive_json()["data"]["step_count"] == 0


def test_api_key(tmp_path: Path) -> None:
    with TestClient(Server(ServeConfig(api_key="k3y")).app) as c:
        assert c.get("/health").status_code == 200
        assert c.post("/sessions", json={"scenario": CALENDAR}).status_code == 401
        assert c.get("/tasks", headers={"Authorization": "Bearer k3y"}).status_code == 200


def test_a_team_session_delegates_to_the_teams_app_agents(client: TestClient) -> None:
    served = play_step(client, CALENDAR, team="oracle")
    assert served["reward"] == 1.0
    names = [a["name"] for a in served["info"]["ledgers"]]
    assert names[0] == "main" and len(names) > 1  # the team's app-agents ran


def test_review_fixes(client: TestClient, tmp_path: Path) -> None:
    c = client
    # a completion that is no model answer
    sid = c.post("/sessions", json={"scenario": CALENDAR}).json()["session_id"]
    r = c.post(f"/sessions/{sid}/step", json={"completion": {"role": "user", "content": "hi"}})
    assert r.status_code == 400 and "'assistant'" in r.json()["error"]
    # the model is checked at create
    r = c.post("/sessions", json={"scenario": CALENDAR, "mode": "agent", "model": "orchestra/scripted:/nonexistent.json"})
    assert r.status_code == 400 and "nonexistent.json" in r.json()["error"]
    r = c.post("/sessions", json={"scenario": CALENDAR, "mode": "agent", "model": "nosuchprovider/x"})
    assert r.status_code == 400 and "\n" not in r.json()["error"]
    # JSON 404 / 405; judge as a mode; the URLs follow the Host header
    assert c.get("/nope").json()["error"].startswith("GET /nope: no such route")
    assert c.get("/sessions").status_code == 405
    s = c.post(
        "/sessions", json={"scenario": CALENDAR, "mode": "agent", "model": "orchestra/oracle", "judge": "strict"}, headers={"host": "gpu-box:9000"}
    ).json()
    assert s["mcp_url"].startswith("http://gpu-box:9000/sessions/")
    with c.websocket_connect("/ws") as ws:  # a failed reset leaves the socket's episode as it was
        ws.send_json({"type": "reset", "data": {"scenario": CALENDAR}})
        first = ws.receive_json()["data"]["metadata"]["session_id"]
        ws.send_json({"type": "reset", "data": {"scenario": "bundled/typo"}})
        assert ws.receive_json()["type"] == "error"
        ws.send_json({"type": "state"})
        assert ws.receive_json()["data"]["episode_id"] == first
        ws.send_json({"type": "reset", "data": {"scenario": CALENDAR}})
        assert ws.receive_json()["data"]["metadata"]["session_id"] != first
    assert c.get(f"/sessions/{first}").status_code == 404  # replaced: closed unjudged


def test_wrong_keys_and_scenario_files_off_loopback(tmp_path: Path) -> None:
    with TestClient(Server(ServeConfig(api_key="k3y", allow_scenario_files=False)).app) as c:
        assert c.post("/sessions", json={"scenario": CALENDAR}, headers={"Authorization": "Bearer nope"}).json()["error"] == "wrong API key"
        assert "Bearer KEY" in c.post("/sessions", json={"scenario": CALENDAR}, headers={"Authorization": "k3y"}).json()["error"]
        assert c.get("/openapi.json").status_code == 200
        r = c.post("/sessions", json={"scenario": "/etc/passwd"}, headers={"X-API-Key": "k3y"})
        assert r.status_code == 400 and "--allow-scenario-files" in r.json()["error"]
