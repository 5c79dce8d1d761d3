"""OpenEnv's routes over the served sessions, in OpenEnv's (0.10) shapes.

OpenEnv's own client (`openenv.GenericEnvClient`) speaks only the WebSocket `/ws`: one connection
is one episode — `{"type": "reset", "data": {...}}` opens a step-mode session (the data are
`POST /sessions`'s fields, or `split` + `index` from the task API), `{"type": "step", "data":
{"completion": ...}}` steps it, `{"type": "state"}` reads it; a socket closed before the end closes
its session unjudged. The HTTP `POST /reset` / `POST /step` / `GET /state` are stateful here (OpenEnv's
own server makes a fresh env per HTTP call): `/reset` answers the session id (in `metadata` and the
observation), `/step` and `/state` take it as `session_id` (or `episode_id`).

Observations: `{"observation": {"session_id", "scenario_id", "messages", "tools", ...,
"metadata"}, "reward", "done", "metadata": info}` — `reward` is the judge's on the step that ends
the episode (0.0 before it), `metadata` the episode's info (verdict, rationale, simulated seconds).
`openenv validate URL` reads `/openapi.json`, `/health`, `/metadata`, `/schema` and `POST /mcp`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.websockets import WebSocket, WebSocketDisconnect

from orchestra import __version__
from orchestra.serve.errors import HTTPError, TooManySessions, error_response, http_status
from orchestra.serve.wire import json_body

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.serve.sessions import ServedSession

#: The app's `Server` (orchestra.serve.app), which builds these routes: typed loosely, the app imports this module.
Server = Any

ENV_NAME = "orchestra"
DESCRIPTION = (
    "Gaia2 scenarios (Meta's ARE) as RL episodes on a deterministic token-metered clock: reset to a scenario, step with the "
    "policy's completions (OpenAI assistant messages), get ARE's judge's verdict as the reward."
)
SPLITS = ("bundled",)


def task_list(source: str = "bundled") -> list[dict[str, Any]]:
    """The scenarios of a source as tasks: id (what `reset` takes), index, scenario id, capabilities."""
    from orchestra.scenario_files import resolve
    from orchestra.scenario_info import describe

    tasks = []
    for i, file in enumerate(resolve([source])):
        info = describe(file)
        tasks.append({"id": f"{source}/{info.scenario_id}", "index": i, "scenario_id": info.scenario_id, "capabilities": list(info.capabilities)})
    return tasks


def _task(split: str, index: Any) -> dict[str, Any]:
    if split not in SPLITS:
        raise HTTPError(400, f"unknown split {split!r}; the splits are {', '.join(SPLITS)}")
    tasks = task_list(split)
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(tasks):
        raise HTTPError(400, f"task index {index!r}: split {split!r} has tasks 0..{len(tasks) - 1}")
    return tasks[index]


def session_fields(data: dict[str, Any]) -> dict[str, Any]:
    """A reset's data as `POST /sessions` fields: `split` + `index` name a task; `episode_id` is OpenEnv's, dropped."""
    fields = {k: v for k, v in data.items() if k not in ("episode_id", "split", "index")}
    if "scenario" not in fields and ("split" in data or "index" in data):
        fields["scenario"] = _task(str(data.get("split", "bundled")), data.get("index"))["id"]
    if "scenario" not in fields:  # a generic loop's bare reset(): the bundled task `seed` picks (task 0 without one)
        tasks = task_list("bundled")
        seed = data.get("seed")
        fields["scenario"] = tasks[(seed if isinstance(seed, int) and not isinstance(seed, bool) else 0) % len(tasks)]["id"]
    fields.setdefault("mode", "step")
    if fields["mode"] != "step":
        raise HTTPError(400, "reset: OpenEnv's episodes are step-mode sessions (mode 'step'); agent mode is POST /sessions")
    return fields


def observation(server: Server, served: ServedSession, result: dict[str, Any] | None = None) -> dict[str, Any]:
    """An OpenEnv reset/step answer for `served` (`result`: a step's native answer)."""
    if result is None:
        view = server.session_view(served)
        obs = view.get("observation") or {}
        reward: float | None = None if not served.done else served.reward()
        info = served.info()
    else:
        obs = result["observation"] or {}
        reward, info = result["reward"], result["info"]
    info = {**info, "session_id": served.id}
    body = {
        "observation": {**obs, "session_id": served.id, "scenario_id": info.get("scenario_id"), "done": served.done, "reward": reward, "metadata": info},
        "reward": reward,
        "done": served.done,
        "metadata": info,
    }
    return json.loads(json.dumps(body, default=str))


def state(served: ServedSession) -> dict[str, Any]:
    info = served.info()
    main = served.rollout.main
    turns = served.episode.turns if served.episode is not None else (main.ledger.model_calls if main is not None else 0)
    return {
        "episode_id": served.id,
        "step_count": int(turns or 0),
        "scenario_id": info.get("scenario_id"),
        "done": served.done,
        "sim_seconds": info.get("sim_seconds"),
        "reward": served.reward() if served.done else None,
    }


# ------------------------------------------------------------------ schemas
ACTION_SCHEMA = {
    "title": "Action",
    "type": "object",
    "properties": {
        "completion": {
            "type": "object",
            "description": "the policy's answer: an OpenAI assistant message, or a whole chat.completion (its usage moves the clock)",
        },
        "metadata": {"type": "object"},
    },
    "required": ["completion"],
}
OBSERVATION_SCHEMA = {
    "title": "Observation",
    "type": "object",
    "properties": {
        "session_id": {"type": "string"},
        "scenario_id": {"type": "string"},
        "messages": {"type": "array", "items": {"type": "object"}, "description": "the policy's next request, OpenAI-style"},
        "tools": {"type": ["array", "null"], "items": {"type": "object"}},
        "tool_choice": {},
        "parallel_tool_calls": {"type": ["boolean", "null"]},
        "stop": {"type": ["array", "null"]},
        "response_format": {"type": ["object", "null"]},
        "action_format": {"type": "string", "enum": ["tool_calls", "react", "code"]},
        "done": {"type": "boolean"},
        "reward": {"type": ["number", "null"]},
        "metadata": {"type": "object", "description": "the episode's info: verdict, rationale, simulated seconds, ledgers"},
    },
}
STATE_SCHEMA = {
    "title": "State",
    "type": "object",
    "properties": {
        "episode_id": {"type": ["string", "null"]},
        "step_count": {"type": "integer", "minimum": 0},
        "scenario_id": {"type": ["string", "null"]},
        "done": {"type": "boolean"},
        "sim_seconds": {"type": ["number", "null"]},
        "reward": {"type": ["number", "null"]},
    },
}


def openapi(server: Server) -> dict[str, Any]:
    """A small OpenAPI document of the routes (what `openenv validate` reads)."""
    paths: dict[str, Any] = {}
    for route in server.app.routes:
        path = getattr(route, "path", None)
        methods = sorted(m.lower() for m in (getattr(route, "methods", None) or ()) if m != "HEAD")
        if path is None or not methods:
            continue
        entry = paths.setdefault(path, {})
        for method in methods:
            entry[method] = {"responses": {"200": {"description": "OK"}}}
    return {"openapi": "3.1.0", "info": {"title": "orchestra serve", "version": __version__, "description": DESCRIPTION}, "paths": paths}


# ------------------------------------------------------------------ HTTP routes
def routes(server: Server) -> list[BaseRoute]:
    async def guarded(handler: Any, request: Request) -> Response:
        try:
            result = await handler(request)
            return result if isinstance(result, Response) else JSONResponse(result)
        except Exception as exc:
            status, message = http_status(exc)
            return error_response(status, message)

    def r(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            return await guarded(handler, request)

        return endpoint

    async def reset(request: Request) -> dict[str, Any]:
        data = await json_body(request, empty={})
        if not isinstance(data, dict):
            raise HTTPError(400, "POST /reset: the body is a JSON object")
        served = await server.open_session(session_fields(data), "POST /reset")
        return observation(server, served)

    def _session_of(data: dict[str, Any], where: str) -> ServedSession:
        session_id = data.get("session_id") or data.get("episode_id")
        if not isinstance(session_id, str):
            raise HTTPError(400, f"{where}: name the episode: `session_id` (the one /reset answered, in `metadata.session_id`)")
        return server.table.get(session_id)

    async def step(request: Request) -> dict[str, Any]:
        data = await json_body(request)
        if not isinstance(data, dict):
            raise HTTPError(400, "POST /step: the body is a JSON object")
        served = _session_of(data, "POST /step")
        action = data.get("action")
        if not isinstance(action, dict) or "completion" not in action:
            raise HTTPError(400, 'POST /step: `action` is {"completion": <assistant message or chat.completion>}')
        return observation(server, served, await server.step_session(served, action["completion"]))

    async def get_state(request: Request) -> dict[str, Any]:
        return state(_session_of(dict(request.query_params), "GET /state"))

    async def health(request: Request) -> dict[str, Any]:
        table = server.table
        return {"status": "healthy", "sessions_open": len(table.sessions), "max_sessions": table.max_sessions, **table.counts}

    async def metadata(request: Request) -> dict[str, Any]:
        return {"name": ENV_NAME, "description": DESCRIPTION, "readme_content": None, "version": __version__, "author": "orchestra", "documentation_url": None}

    async def schema(request: Request) -> dict[str, Any]:
        return {"action": ACTION_SCHEMA, "observation": OBSERVATION_SCHEMA, "state": STATE_SCHEMA}

    async def openapi_json(request: Request) -> dict[str, Any]:
        return openapi(server)

    async def mcp_root(request: Request) -> Response:
        """OpenEnv's `/mcp` probe: a JSON-RPC envelope (tools live per session at /sessions/{id}/mcp)."""
        try:
            data = json.loads(await request.body() or b"null")
        except ValueError:
            return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        rid = data.get("id") if isinstance(data, dict) else None
        method = data.get("method") if isinstance(data, dict) else None
        if method == "tools/list":
            return JSONResponse({"jsonrpc": "2.0", "id": rid, "result": {"tools": []}})
        message = "Invalid request: each session serves its scenario's tools at /sessions/{id}/mcp (POST /sessions with mode 'agent')"
        return JSONResponse({"jsonrpc": "2.0", "id": rid, "error": {"code": -32600, "message": message, "data": None}})

    async def list_environments(request: Request) -> Response:
        return JSONResponse([ENV_NAME])

    def _env(request: Request) -> None:
        name = request.path_params["env"]
        if name.lower() != ENV_NAME:
            raise HTTPError(404, f"unknown environment {name!r}; this server is {ENV_NAME!r}")

    async def splits(request: Request) -> Response:
        _env(request)
        return JSONResponse([{"name": s, "type": "test"} for s in SPLITS])

    async def _split(request: Request) -> tuple[str, dict[str, Any]]:
        _env(request)
        data = await json_body(request, empty={})
        split = data.get("split", "bundled") if isinstance(data, dict) else "bundled"
        if split not in SPLITS:
            raise HTTPError(400, f"unknown split {split!r}; the splits are {', '.join(SPLITS)}")
        return split, data

    async def tasks(request: Request) -> dict[str, Any]:
        split, _ = await _split(request)
        return {"tasks": task_list(split), "env_name": ENV_NAME}

    async def num_tasks(request: Request) -> dict[str, Any]:
        split, _ = await _split(request)
        return {"num_tasks": len(task_list(split))}

    async def one_task(request: Request) -> dict[str, Any]:
        split, data = await _split(request)
        return {"task": _task(split, data.get("index"))}

    async def task_range(request: Request) -> dict[str, Any]:
        split, data = await _split(request)
        return {"tasks": task_list(split)[slice(data.get("start"), data.get("stop"))]}

    return [
        Route("/reset", r(reset), methods=["POST"]),
        Route("/step", r(step), methods=["POST"]),
        Route("/state", r(get_state), methods=["GET"]),
        Route("/health", r(health), methods=["GET"]),
        Route("/metadata", r(metadata), methods=["GET"]),
        Route("/schema", r(schema), methods=["GET"]),
        Route("/openapi.json", r(openapi_json), methods=["GET"]),
        Route("/mcp", mcp_root, methods=["POST"]),
        Route("/list_environments", r(list_environments), methods=["GET"]),
        Route("/{env}/splits", r(splits), methods=["GET"]),
        Route("/{env}/tasks", r(tasks), methods=["POST"]),
        Route("/{env}/num_tasks", r(num_tasks), methods=["POST"]),
        Route("/{env}/task", r(one_task), methods=["POST"]),
        Route("/{env}/task_range", r(task_range), methods=["POST"]),
    ]


# ------------------------------------------------------------------ the WebSocket (OpenEnv's client)
def websocket(server: Server) -> Any:
    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        served: ServedSession | None = None

        async def error(message: str, code: str) -> None:
            await ws.send_json({"type": "error", "data": {"message": message, "code": code}})

        try:
            while True:
                try:
                    text = await ws.receive_text()
                except WebSocketDisconnect:
                    break
                try:
                    message = json.loads(text)
                except ValueError as exc:
                    await error(f"not JSON: {exc}", "INVALID_JSON")
                    continue
                kind = message.get("type") if isinstance(message, dict) else None
                data = message.get("data") if isinstance(message, dict) else None
                try:
                    if kind == "close":
                        break
                    if kind == "reset":  # the new episode first: a reset that fails leaves the current one as it was
                        fields = session_fields(data if isinstance(data, dict) else {})
                        try:
                            fresh = await server.open_session(fields, "ws reset")
                        except TooManySessions:  # at the cap, this socket's own episode makes room (as a reset would)
                            if served is None or served.done or served.id not in server.table.sessions:
                                raise
                            server.table.delete(served.id)
                            served = None
                            fresh = await server.open_session(fields, "ws reset")
                        if served is not None and not served.done and served.id in server.table.sessions:
                            server.table.delete(served.id)
                        served = fresh
                        await ws.send_json({"type": "observation", "data": observation(server, served)})
                    elif kind == "step":
                        if served is None:
                            raise HTTPError(409, "step before reset")
                        if not isinstance(data, dict) or "completion" not in data:
                            raise HTTPError(400, 'step: data is {"completion": <assistant message or chat.completion>}')
                        result = await server.step_session(served, data["completion"])
                        await ws.send_json({"type": "observation", "data": observation(server, served, result)})
                    elif kind == "state":
                        body = state(served) if served is not None else {"episode_id": None, "step_count": 0}
                        await ws.send_json({"type": "state", "data": body})
                    elif kind == "mcp":
                        rid = data.get("id") if isinstance(data, dict) else None
                        await ws.send_json(
                            {
                                "type": "mcp",
                                "data": {
                                    "jsonrpc": "2.0",
                                    "id": rid,
                                    "error": {"code": -32601, "message": "MCP tools are served per agent-mode session at /sessions/{id}/mcp"},
                                },
                            }
                        )
                    else:
                        await error(f"unknown message type {kind!r}; the types are reset, step, state, close", "UNKNOWN_TYPE")
                except WebSocketDisconnect:
                    raise
                except Exception as exc:
                    status, text_ = http_status(exc)
                    code = "CAPACITY_REACHED" if status == 429 else "VALIDATION_ERROR" if status == 400 else "EXECUTION_ERROR"
                    await error(text_, code)
        except WebSocketDisconnect:
            pass
        finally:
            if served is not None and not served.done and served.id in server.table.sessions:
                server.table.delete(served.id)

    return endpoint
