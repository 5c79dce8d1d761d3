"""`orchestra serve` exposes an agent-mode session's app-agents as A2A agents (`orchestra.serve.a2a_agents`).

An outside orchestrator, written here with a2a-sdk's *client* (`ClientFactory`, `A2ACardResolver`),
plays the main agent of a team session (`"team": "oracle"`): its decisions come from the session's
model proxy (`orchestra/oracle`, the main agent's oracle, which writes each delegation's task text
with the calls after `=== CALLS (JSON, in order) ===`), it sends every `<App>__expert_agent` call
to that app's A2A agent and every other call (`send_message_to_user`, `wait_for_notification`) to
the session's MCP tools, then asks `/finish` for ARE's verdict.

Asserted:
* each replaced app has an agent card (name, ARE's expert docstring, one skill per tool of the app,
  the JSON-RPC URL), listed at `GET /sessions/{id}/a2a` and in the session's `a2a_agents`;
* the orchestrator PASSes three bundled multi-app scenarios (one of them two turns), delegating
  to 2-3 different app-agents each; every A2A delegation is a delegation of the record;
* an orchestrator with no model at all (the reference actions in order, each replaced app's one
  worded by `delegation_task` and sent to its agent, the rest over MCP) PASSes two of them, the
  session's proxy never called;
* the same episode with the expert calls made over MCP instead has the same event-log hash (an
  A2A delegation logs exactly as the expert tool does), and so does a rerun over a real socket
  (`orchestra serve --port 0` in a subprocess);
* a delegation sent to the wrong app's agent FAILs the scenario; an app-agent that fails (its
  budget spent without `final_answer`) ends the A2A task FAILED with the expert tool's error;
* an unknown app or session, a step-mode or team-less session, a malformed body, a message with
  no text and a delegation after the end are JSON-RPC errors with one clear line.

Skipped without a2a-sdk (the `a2a` extra), except under CI (`CI=true`), where it must be installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from starlette.testclient import TestClient

from orchestra.host import Host
from orchestra.serve.a2a_agents import CARD_PATH
from orchestra.serve.app import ServeConfig, Server
from orchestra.teams.config import EXPERT_TOOL_SUFFIX
from support.processes import listening_url, stop

try:
    import a2a.client  # noqa: F401
    import sse_starlette  # noqa: F401
except ImportError as exc:  # pragma: no cover - the extra is installed in CI
    if os.environ.get("CI") == "true":
        raise
    pytest.skip(f"a2a-sdk[http-server] is not installed (the `a2a` extra): {exc}", allow_module_level=True)

CALENDAR = "bundled/starter_execution_calendar"  # Calendar, then Emails
#: Multi-app scenarios the orchestrator plays (the oracle team replaces every app but the user's).
PASSING = [
    CALENDAR,
    "bundled/univ_03_exec_cab_dinner",  # Calendar, Cabs, Messages
    "bundled/univ_02_mt_exec_dinner_move",  # two turns: Calendar, then Calendar and Messages
]
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
A2A_HEADERS = {"A2A-Version": "1.0"}
SESSION = {"model": "orchestra/oracle", "mode": "agent", "team": "oracle"}


async def play(http: httpx.AsyncClient, scenario: str, *, via: str = "a2a", misroute: dict[str, str] | None = None, streaming: bool = False) -> dict[str, Any]:
    """One episode played by the outside orchestrator: its decisions from the session's model proxy,
    delegations through A2A (`via="a2a"`, to `misroute.get(app, app)`'s agent; `streaming`: as
    `SendStreamingMessage`, SSE) or the MCP expert tool (`via="mcp"`)."""
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.helpers import get_artifact_text, get_message_text, new_text_message
    from a2a.types import Role, SendMessageRequest, TaskState

    created = await http.post("/sessions", json={"scenario": scenario, **SESSION})
    assert created.status_code == 200, created.text
    s = created.json()
    sid = s["session_id"]
    factory = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming))
    cards = {app: await A2ACardResolver(http, url).get_agent_card() for app, url in s["a2a_agents"].items()}
    clients = {app: factory.create(card) for app, card in cards.items()}

    async def mcp(method: str, params: dict[str, Any]) -> dict[str, Any]:
        r = await http.post(f"/sessions/{sid}/mcp", headers=MCP_HEADERS, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        assert r.status_code == 200, r.text
        return r.json()["result"]

    tools = (await mcp("tools/list", {}))["tools"]
    schemas = [{"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t["inputSchema"]}} for t in tools]
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You orchestrate app experts."}, {"role": "user", "content": s["task"]}]
    delegated: list[tuple[str, str, int]] = []  # (app asked, app whose agent got it, task state)
    for _ in range(80):
        reply = await http.post(f"/sessions/{sid}/v1/chat/completions", json={"messages": messages, "tools": schemas})
        message = reply.json()["choices"][0]["message"]
        messages.append(message)
        if not message.get("tool_calls"):
            break
        for call in message["tool_calls"]:
            name, arguments = call["function"]["name"], json.loads(call["function"]["arguments"])
            if name.endswith(EXPERT_TOOL_SUFFIX) and via == "a2a":
                app = name.removesuffix(EXPERT_TOOL_SUFFIX)
                target = (misroute or {}).get(app, app)
                request = SendMessageRequest(message=new_text_message(arguments["task"], role=Role.ROLE_USER))
                task = None
                async for event in clients[target].send_message(request):
                    if event.HasField("task"):  # streaming: the task, then its status and artifact updates
                        task = event.task
                    elif event.HasField("artifact_update") and task is not None:
                        task.artifacts.append(event.artifact_update.artifact)
                    elif event.HasField("status_update") and task is not None:
                        task.status.CopyFrom(event.status_update.status)
                assert task is not None
                delegated.append((app, target, task.status.state))
                if task.status.state == TaskState.TASK_STATE_COMPLETED:
                    text = get_artifact_text(task.artifacts[0])
                else:
                    text = get_message_text(task.status.message)
            else:
                result = await mcp("tools/call", {"name": name, "arguments": arguments})
                text = result["content"][0]["text"]
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
    finished = (await http.post(f"/sessions/{sid}/finish")).json()
    result = finished["record"]["result"]
    return {
        "scenario": scenario,
        "session": s,
        "cards": cards,
        "success": finished["success"],
        "reward": finished["reward"],
        "event_log_sha256": result["event_log_sha256"],
        "delegations": result["delegations"],
        "delegated": delegated,
    }


async def _in_process(plays: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    server = Server(ServeConfig(max_sessions=4), host=Host.create())
    async with server.app.router.lifespan_context(server.app):
        transport = httpx.ASGITransport(app=server.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver", timeout=300) as http:
            return [await play(http, scenario, **options) for scenario, options in plays]


@pytest.fixture(scope="module")
def played() -> dict[str, dict[str, Any]]:
    """Every in-process episode of the module, on one server: the oracle orchestrator on each
    scenario over A2A, the calendar scenario over MCP, and a misrouted delegation."""
    plays: list[tuple[str, dict[str, Any]]] = [(s, {}) for s in PASSING]
    plays += [(CALENDAR, {"via": "mcp"}), (CALENDAR, {"misroute": {"Calendar": "Emails"}})]
    results = anyio.run(_in_process, plays)
    keyed = {s: r for (s, _), r in zip(plays[: len(PASSING)], results)}
    keyed["mcp"], keyed["wrong"] = results[len(PASSING)], results[len(PASSING) + 1]
    return keyed


def test_each_app_agent_has_an_agent_card(played: dict[str, dict[str, Any]]) -> None:
    from orchestra.are.agent2agent import expert_tool_spec

    r = played[CALENDAR]
    agents = r["session"]["a2a_agents"]
    assert set(agents) == {"Calendar", "Emails", "Messages", "Contacts"}
    first_line = expert_tool_spec("Calendar").description.strip().splitlines()[0]
    for app, card in r["cards"].items():
        assert card.name == f"{app} expert"
        assert first_line in card.description and "starter_execution_calendar" in card.description
        assert [i.url for i in card.supported_interfaces] == [agents[app]] and card.supported_interfaces[0].protocol_binding == "JSONRPC"
        assert card.skills and all(skill.id.startswith(f"{app}__") for skill in card.skills), [s.id for s in card.skills]
    assert "Calendar__add_calendar_event" in {s.id for s in r["cards"]["Calendar"].skills}


@pytest.mark.parametrize("scenario", PASSING)
def test_an_outside_orchestrator_delegating_over_a2a_passes(played: dict[str, dict[str, Any]], scenario: str) -> None:
    r = played[scenario]
    assert r["success"] is True and r["reward"] == 1.0, r
    apps = [app for app, _, _ in r["delegated"]]
    assert len(set(apps)) >= 2, f"a multi-app scenario delegates to several app-agents: {apps}"
    assert all(state == 3 for _, _, state in r["delegated"]), r["delegated"]  # TASK_STATE_COMPLETED
    # every A2A delegation is the main agent's expert call in the record: the app-agent, its app, in order
    assert [(d["caller"], d["app"]) for d in r["delegations"]] == [("main", app) for app in apps]


def test_an_a2a_delegation_logs_as_the_expert_tool_does(played: dict[str, dict[str, Any]]) -> None:
    over_a2a, over_mcp = played[CALENDAR], played["mcp"]
    assert over_mcp["success"] is True and not over_mcp["delegated"]
    assert over_a2a["event_log_sha256"] == over_mcp["event_log_sha256"]
    strip = ("duration", "t_start", "sim_start")
    same = [{k: v for k, v in d.items() if k not in strip} for d in over_a2a["delegations"]]
    assert same == [{k: v for k, v in d.items() if k not in strip} for d in over_mcp["delegations"]]


def test_a_wrong_delegation_fails(played: dict[str, dict[str, Any]]) -> None:
    r = played["wrong"]
    assert ("Calendar", "Emails", 3) in r["delegated"], r["delegated"]  # Emails' agent ran, and could not add the event
    assert r["success"] is False and r["reward"] == 0.0


async def play_scripted(http: httpx.AsyncClient, server: Server, scenario: str) -> dict[str, Any]:
    """An orchestrator with no model at all: it plays the scenario's reference actions in order (read
    from the in-process session's oracle plan), sending each action of a replaced app to that app's
    agent as the main oracle words a task (`delegation_task`), the others to MCP. The session's
    model proxy is never called."""
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.helpers import new_text_message
    from a2a.types import Role, SendMessageRequest, TaskState

    from orchestra.oracle.replay import build_plan, resolve_args
    from orchestra.plugins.offline_models import delegation_task

    s = (await http.post("/sessions", json={"scenario": scenario, **SESSION})).json()
    sid = s["session_id"]
    factory = ClientFactory(ClientConfig(httpx_client=http, streaming=False))
    clients = {app: factory.create(await A2ACardResolver(http, url).get_agent_card()) for app, url in s["a2a_agents"].items()}
    session = server.table.get(sid).rollout.session
    states = []
    for action in build_plan(session).actions:
        app = session.tools[action.tool].app_name
        call = {"tool": action.tool, "arguments": resolve_args(action, {})}
        if app in clients:
            request = SendMessageRequest(message=new_text_message(delegation_task([call]), role=Role.ROLE_USER))
            async for event in clients[app].send_message(request):
                states.append((app, event.task.status.state == TaskState.TASK_STATE_COMPLETED))
        else:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": call["tool"], "arguments": call["arguments"]}}
            r = await http.post(f"/sessions/{sid}/mcp", headers=MCP_HEADERS, json=body)
            assert not r.json()["result"]["isError"], r.text
    finished = (await http.post(f"/sessions/{sid}/finish")).json()
    main = next(a for a in finished["record"]["result"]["agents"] if a["role"] == "main")
    return {
        "success": finished["success"],
        "delegated": states,
        "main_model_calls": main["model_calls"],
        "delegations": finished["record"]["result"]["delegations"],
    }


@pytest.mark.parametrize("scenario", PASSING[:2])
def test_a_scripted_orchestrator_without_a_model_passes(scenario: str) -> None:
    async def run() -> dict[str, Any]:
        server = Server(ServeConfig(max_sessions=1), host=Host.create())
        async with server.app.router.lifespan_context(server.app):
            transport = httpx.ASGITransport(app=server.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver", timeout=120) as http:
                return await play_scripted(http, server, scenario)

    r = anyio.run(run)
    assert r["success"] is True, r
    assert len({app for app, _ in r["delegated"]}) >= 2 and all(ok for _, ok in r["delegated"]), r["delegated"]
    assert r["main_model_calls"] == 0 and len(r["delegations"]) == len(r["delegated"])


def test_errors_are_one_clear_json_rpc_line() -> None:
    async def probe() -> None:
        server = Server(ServeConfig(max_sessions=4), host=Host.create())
        async with server.app.router.lifespan_context(server.app):
            transport = httpx.ASGITransport(app=server.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver", timeout=120) as http:
                await _errors(http)

    anyio.run(probe)


async def _errors(http: httpx.AsyncClient) -> None:
    from a2a.client import ClientConfig, create_client
    from a2a.helpers import new_text_message
    from a2a.types import GetTaskRequest, Role, SendMessageRequest, TaskState
    from a2a.utils.errors import A2AError

    async def rpc(path: str, body: Any) -> dict[str, Any]:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        r = await http.post(path, content=content, headers={**A2A_HEADERS, "content-type": "application/json"})
        assert r.status_code == 200, r.text
        error = r.json()["error"]
        assert "\n" not in error["message"], error
        return error

    def send(text: str, rid: int = 1) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": rid, "method": "SendMessage", "params": {"message": {"role": "ROLE_USER", "messageId": "m", "parts": [{"text": text}]}}}

    s = (await http.post("/sessions", json={"scenario": CALENDAR, **SESSION})).json()
    sid = s["session_id"]
    url = f"/sessions/{sid}/a2a"

    e = await rpc(f"{url}/Shopping", send("hello"))
    assert e["code"] == -32600 and e["message"] == f"session {sid} has no app-agent 'Shopping' (its app-agents: Emails, Messages, Calendar, Contacts)"
    card = await http.get(f"{url}/Shopping/.well-known/agent-card.json")
    assert card.status_code == 404 and "no app-agent 'Shopping'" in card.json()["error"]
    e = await rpc("/sessions/nope/a2a/Calendar", send("hello"))
    assert e["code"] == -32600 and e["message"].startswith("no session 'nope'")
    assert (await rpc(f"{url}/Calendar", b"{not json"))["code"] == -32700
    assert (await rpc(f"{url}/Calendar", {"id": 3}))["code"] == -32600
    assert (await rpc(f"{url}/Calendar", {"jsonrpc": "2.0", "id": 4, "method": "SendMessage", "params": {}}))["code"] == -32602
    assert (await rpc(f"{url}/Calendar", {"jsonrpc": "2.0", "id": 5, "method": "Delegate", "params": {}}))["code"] == -32601
    e = await rpc(f"{url}/Calendar", send("   "))
    assert e == {"code": -32602, "message": "the message to Calendar's agent has no text: send the task as a text part"}

    client = await create_client(f"http://testserver{url}/Calendar", client_config=ClientConfig(httpx_client=http, streaming=False))
    # A task the app-agent cannot read is no protocol error: the agent answers that it could not do it.
    task = None
    async for event in client.send_message(SendMessageRequest(message=new_text_message("please add the event", role=Role.ROLE_USER))):
        task = event.task
    assert task is not None and "I could not do this task" in task.artifacts[0].parts[0].text

    await http.post(f"/sessions/{sid}/finish")
    assert (await client.get_task(GetTaskRequest(id=task.id))).status.state == TaskState.TASK_STATE_COMPLETED  # its tasks stay readable
    assert (await http.get(f"{url}/Calendar/.well-known/agent-card.json")).json()["name"] == "Calendar expert"  # and its cards
    # a2a-sdk's client raises the error with its line
    with pytest.raises(A2AError, match=rf"session {sid}: the episode has ended: no more delegations"):
        async for _ in client.send_message(SendMessageRequest(message=new_text_message("again", role=Role.ROLE_USER))):
            pass

    step = (await http.post("/sessions", json={"scenario": CALENDAR, "model": "orchestra/oracle", "team": "oracle"})).json()
    assert "a2a_agents" not in step
    e = await rpc(f"/sessions/{step['session_id']}/a2a/Calendar", send("hello"))
    assert e["message"].startswith(f"session {step['session_id']} is a step-mode session: A2A app-agents are served for agent-mode sessions")
    alone = (await http.post("/sessions", json={"scenario": CALENDAR, "model": "orchestra/oracle", "mode": "agent"})).json()
    assert "a2a_agents" not in alone
    listing = await http.get(f"/sessions/{alone['session_id']}/a2a")
    assert listing.status_code == 404 and "has no app-agents" in listing.json()["error"]
    for sid_ in (step["session_id"], alone["session_id"]):
        await http.delete(f"/sessions/{sid_}")


def test_an_app_agent_that_fails_ends_the_task_failed(tmp_path: Path) -> None:
    """A Calendar app-agent with a one-step budget makes its call and has no step left for
    final_answer: the delegation fails, as the expert tool's would, and the A2A task ends FAILED."""
    from orchestra.plugins.offline_models import delegation_task

    team = tmp_path / "tight.yaml"
    team.write_text("name: tight\nmain: {scaffold: react, model: orchestra/oracle}\napp_agents:\n  apps: all\n  overrides:\n    Calendar: {max_steps: 1}\n")
    task = delegation_task([{"tool": "Calendar__get_calendar_event", "arguments": {"event_id": "nope"}}])

    async def run() -> tuple[Any, dict[str, Any]]:
        from a2a.client import ClientConfig, create_client
        from a2a.helpers import new_text_message
        from a2a.types import Role, SendMessageRequest

        server = Server(ServeConfig(max_sessions=1), host=Host.create())
        async with server.app.router.lifespan_context(server.app):
            transport = httpx.ASGITransport(app=server.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver", timeout=120) as http:
                s = (await http.post("/sessions", json={"scenario": CALENDAR, **SESSION, "team": str(team)})).json()
                client = await create_client(s["a2a_agents"]["Calendar"], client_config=ClientConfig(httpx_client=http, streaming=False))
                result = None
                async for event in client.send_message(SendMessageRequest(message=new_text_message(task, role=Role.ROLE_USER))):
                    result = event.task
                return result, (await http.post(f"/sessions/{s['session_id']}/finish")).json()

    result, finished = anyio.run(run)
    from a2a.types import TaskState

    assert result is not None and result.status.state == TaskState.TASK_STATE_FAILED and not result.artifacts
    text = result.status.message.parts[0].text
    assert text == "ERROR: sub-agent 'Calendar' failed: it spent its 1-step budget without calling final_answer", text
    (delegation,) = finished["record"]["result"]["delegations"]
    assert delegation["app"] == "Calendar" and delegation["error"] == text.removeprefix("ERROR: ")


def test_a_remote_a2a_app_agent_says_so_on_its_card_and_an_a2a_main_agent_is_refused(tmp_path: Path) -> None:
    """The card of an app-agent the team hands to a remote A2A agent names that agent (nothing of
    orchestra's scaffold runs for it); a team whose main agent is a remote A2A agent is refused,
    since a served session's main agent is the client's or the outside agent's."""
    remote = tmp_path / "remote.yaml"
    remote.write_text("name: remote\nmain: {model: orchestra/oracle}\napp_agents:\n  apps: all\n  overrides:\n    Calendar: {a2a: 'http://127.0.0.1:9/cal'}\n")
    a2a_main = tmp_path / "a2a_main.yaml"
    a2a_main.write_text("name: a2a_main\nmain: {a2a: 'http://127.0.0.1:9/main'}\n")

    async def run() -> tuple[dict[str, Any], dict[str, Any], httpx.Response]:
        server = Server(ServeConfig(max_sessions=2), host=Host.create())
        async with server.app.router.lifespan_context(server.app):
            transport = httpx.ASGITransport(app=server.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver", timeout=120) as http:
                s = (await http.post("/sessions", json={"scenario": CALENDAR, **SESSION, "team": str(remote)})).json()
                cards = {app: (await http.get(f"{url}{CARD_PATH}")).json() for app, url in s["a2a_agents"].items() if app in ("Calendar", "Emails")}
                refused = await http.post("/sessions", json={"scenario": CALENDAR, **SESSION, "team": str(a2a_main)})
                await http.delete(f"/sessions/{s['session_id']}")
                return cards["Calendar"], cards["Emails"], refused

    calendar, emails, refused = anyio.run(run)
    assert "Delegates to the remote A2A agent at http://127.0.0.1:9/cal" in calendar["description"] and "tool_calling" not in calendar["description"]
    assert "Runs orchestra's app-agent (tool_calling, orchestra/oracle)" in emails["description"]
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert "\n" not in error and error.startswith(
        f"POST /sessions: team {str(a2a_main)!r} has a remote A2A main agent (main: {{a2a: http://127.0.0.1:9/main}})"
    ), error


def test_without_a2a_sdk_the_routes_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "a2a.server.routes", None)  # `import a2a.server.routes` raises ImportError
    server = Server(ServeConfig(max_sessions=1), host=Host.create())
    client = TestClient(server.app)
    card = client.get("/sessions/s1/a2a/Calendar/.well-known/agent-card.json")
    assert card.status_code == 501 and "the `a2a` extra" in card.json()["error"] and "pip install 'orchestra-agents[a2a]'" in card.json()["error"]
    error = client.post("/sessions/s1/a2a/Calendar", json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}}).json()["error"]
    assert error["code"] == -32603 and "the `a2a` extra" in error["message"]


@pytest.fixture(scope="module")
def served_url() -> Iterator[str]:
    """`orchestra serve --port 0` in a subprocess; its URL, read from the line it prints when ready."""
    orchestra = Path(sys.executable).parent / "orchestra"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    repo = Path(__file__).resolve().parents[2]
    env["PYTHONPATH"] = os.pathsep.join([str(repo), *filter(None, [env.get("PYTHONPATH")])])  # this checkout's orchestra
    proc = subprocess.Popen([orchestra, "serve", "--port", "0"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    url = listening_url(proc, proc.stderr, what="orchestra serve")
    try:
        yield url
    finally:
        stop(proc)


@pytest.mark.slow
def test_a_rerun_over_a_real_socket_is_the_same_episode(played: dict[str, dict[str, Any]], served_url: str) -> None:
    """`orchestra serve` in its own process, the delegations streamed (SSE) this time."""

    async def over_http() -> dict[str, Any]:
        async with httpx.AsyncClient(base_url=served_url, timeout=300) as http:
            return await play(http, CALENDAR, streaming=True)

    r = anyio.run(over_http)
    assert r["success"] is True and all(url.startswith(served_url) for url in r["session"]["a2a_agents"].values())
    assert r["delegated"] and all(state == 3 for _, _, state in r["delegated"]), r["delegated"]  # TASK_STATE_COMPLETED, from the stream
    assert r["event_log_sha256"] == played[CALENDAR]["event_log_sha256"]
