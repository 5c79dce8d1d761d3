"""The ASGI app of `orchestra serve`: the session API, the model proxy, MCP and OpenEnv's routes.

Routes (docs/serve.md has bodies and examples):

* sessions — `POST /sessions`, `POST /sessions/group`, `GET|DELETE /sessions/{id}`,
  `POST /sessions/{id}/step`, `POST /sessions/{id}/finish`, `GET /tasks`;
* the model proxy — `POST /sessions/{id}/v1/chat/completions` (and `/v1/chat/completions` with
  the `X-Orchestra-Session` header), `GET /sessions/{id}/v1/models`;
* MCP — `POST /sessions/{id}/mcp` (streamable HTTP);
* A2A — an agent-mode session's app-agents, one A2A agent each: `GET /sessions/{id}/a2a`,
  `GET /sessions/{id}/a2a/{App}/.well-known/agent-card.json`, `POST /sessions/{id}/a2a/{App}`
  (JSON-RPC; `orchestra.serve.a2a_agents`, the `a2a` extra);
* OpenEnv — `POST /reset`, `POST /step`, `GET /state`, `GET /health`, `GET /metadata`,
  `GET /schema`, `GET /openapi.json`, `POST /mcp`, the task API, and `WS /ws` (its client's transport).

Every error is `{"error": "<one line>"}` with a status that says whose fault it is (400 the body,
401 the key, 404 the id, 409 the episode's state, 429 the cap, 502 the upstream model). A request
that fails leaves its session as it was; a client that goes away mid-request does not cut a
session's update in half (each runs shielded from cancellation, one at a time per session).
"""

from __future__ import annotations

import contextvars
import json
import secrets
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.types import Receive, Scope, Send

from orchestra.host import Host
from orchestra.rl.env import Observation
from orchestra.serve import openenv
from orchestra.serve.a2a_agents import CARD_PATH, A2AAgents, agent_urls
from orchestra.serve.errors import HTTPError, error_response, http_status
from orchestra.serve.mcp_tools import MCPEndpoint
from orchestra.serve.outside_agent import ENDED_TEXT
from orchestra.serve.sessions import ServedSession, SessionRequest, SessionTable
from orchestra.serve.wire import chat_request, completion_chunks, completion_json, json_body, parse

SESSION_HEADER = "x-orchestra-session"
#: Routes that need no API key: they describe the server and reach no session (`openenv validate` reads them, and cannot send a key).
OPEN_ROUTES = frozenset({"/health", "/metadata", "/schema", "/openapi.json", "/mcp", "/list_environments"})

#: The base URL the current request reached the server by (its Host header): what a session hands out
#: for its MCP endpoint and model proxy, so a client off this machine gets URLs it can use.
_REQUEST_BASE: contextvars.ContextVar[str | None] = contextvars.ContextVar("orchestra_serve_request_base", default=None)

#: Seconds of the current request spent in the episode itself (loading, stepping, judging, the
#: upstream model): answered as `Server-Timing: episode;dur=MS`, so a client (and benchmarks/) can
#: tell the server's own overhead from the episode's work.
_EPISODE_SECONDS: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar("orchestra_serve_episode_seconds", default=None)


@contextmanager
def episode_work() -> Iterator[None]:
    """Count the enclosed time as the episode's work (see `_EPISODE_SECONDS`)."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        acc = _EPISODE_SECONDS.get()
        if acc is not None:
            acc[0] += time.perf_counter() - t0


def _timed(response: Response, acc: list[float]) -> Response:
    response.headers["server-timing"] = f"episode;dur={acc[0] * 1000:.3f}"
    return response


class ServeConfig(BaseModel):
    """How the server runs (`orchestra serve`'s options)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    max_sessions: int = Field(64, gt=0, description="open sessions at most; one more is refused with 429")
    idle_timeout: float = Field(600.0, gt=0, description="seconds: a session no request touched for this long is closed unjudged")
    out: str | None = Field(None, description="a folder: every finished episode's record (and training trace), as `orchestra run --out` writes them")
    api_key: str | None = Field(None, repr=False, description="required as `Authorization: Bearer KEY` on every route that reaches a session or a scenario")
    allow_scenario_files: bool = Field(True, description="sessions may name scenario files on the server (default off when bound beyond loopback)")


class GroupRequest(SessionRequest):
    n: int = Field(..., gt=0, le=1024, description="how many sessions of the scenario, from one loaded state")


class StepBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    completion: Any = Field(..., description="an OpenAI assistant message, or a whole chat.completion object (its usage moves the clock)")


class Server:
    """The app and what it holds: the host, the session table, the MCP endpoint."""

    def __init__(self, config: ServeConfig | None = None, *, host: Host | None = None) -> None:
        from pathlib import Path

        self.config = config or ServeConfig()
        self.host = host or Host.create()
        self.table = SessionTable(
            self.host,
            max_sessions=self.config.max_sessions,
            idle_timeout=self.config.idle_timeout,
            out=Path(self.config.out) if self.config.out else None,
            allow_files=self.config.allow_scenario_files,
        )
        #: The URL sessions hand out for their proxy and MCP endpoint (set from the bound socket).
        self.base_url = f"http://{self.config.host}:{self.config.port}"
        self._base_url_known = False
        self.mcp = MCPEndpoint(self._mcp_session)
        self.a2a = A2AAgents(self.table, lambda: _REQUEST_BASE.get() or self.base_url)
        self.app = Starlette(routes=self._routes(), lifespan=self._lifespan, exception_handlers={HTTPException: _json_http_error})
        self.app.add_middleware(_Guard, server=self)

    # ------------------------------------------------------------------ lifecycle
    @asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tg, self.mcp.running():
            tg.start_soon(self._reap)
            await anyio.to_thread.run_sync(_warm)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
                n = self.table.close_all()
                if n:
                    print(f"orchestra serve: closed {n} unfinished session(s) unjudged", file=sys.stderr)

    async def _reap(self) -> None:
        period = max(0.05, min(30.0, self.config.idle_timeout / 4))
        while True:
            await anyio.sleep(period)
            self.table.expire_idle()

    # ------------------------------------------------------------------ routes
    def _routes(self) -> list[BaseRoute]:
        r = self._json_route
        routes: list[BaseRoute] = [
            Route("/sessions", r(self.create), methods=["POST"]),
            Route("/sessions/group", r(self.create_group), methods=["POST"]),
            Route("/sessions/{session_id}", r(self.get_session), methods=["GET"]),
            Route("/sessions/{session_id}", r(self.delete_session), methods=["DELETE"]),
            Route("/sessions/{session_id}/step", r(self.step), methods=["POST"]),
            Route("/sessions/{session_id}/finish", r(self.finish), methods=["POST"]),
            Route("/sessions/{session_id}/v1/chat/completions", self.proxy, methods=["POST"]),
            Route("/sessions/{session_id}/v1/models", r(self.models), methods=["GET"]),
            Route("/v1/chat/completions", self.proxy, methods=["POST"]),
            Route("/sessions/{session_id}/mcp", _ASGI(self._mcp_app), methods=["GET", "POST", "DELETE"]),
            Route("/sessions/{session_id}/a2a", self.a2a.index, methods=["GET"]),
            Route("/sessions/{session_id}/a2a/{app}" + CARD_PATH, self.a2a.card, methods=["GET"]),
            Route("/sessions/{session_id}/a2a/{app}", self.a2a.rpc, methods=["POST"]),
            Route("/sessions/{session_id}/a2a/{app}/", self.a2a.rpc, methods=["POST"]),
            Route("/tasks", r(self.tasks), methods=["GET"]),
        ]
        routes += openenv.routes(self)
        routes.append(WebSocketRoute("/ws", openenv.websocket(self)))
        return routes

    def _json_route(self, handler: Callable[[Request], Awaitable[Any]]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            acc = [0.0]
            token = _EPISODE_SECONDS.set(acc)
            try:
                return _timed(JSONResponse(await handler(request)), acc)
            except Exception as exc:
                status, message = http_status(exc)
                return error_response(status, message)
            finally:
                _EPISODE_SECONDS.reset(token)

        return endpoint

    # ------------------------------------------------------------------ sessions
    def session_view(self, served: ServedSession) -> dict[str, Any]:
        base = _REQUEST_BASE.get() or self.base_url
        view: dict[str, Any] = {
            "session_id": served.id,
            "mode": served.mode,
            "scenario_id": served.record.scenario_id if served.record is not None else served.rollout.session.scenario_id,
            "done": served.done,
        }
        if served.mode == "step":
            view["observation"] = _observation(served.observation)
        else:
            view["task"] = served.outside.task if served.outside is not None else None
            view["mcp_url"] = f"{base}/sessions/{served.id}/mcp"
            agents = agent_urls(served, base)
            if agents:
                view["a2a_agents"] = agents
        view["model_base_url"] = f"{base}/sessions/{served.id}/v1"
        return view

    async def open_session(self, data: Any, where: str) -> ServedSession:
        request: SessionRequest = parse(SessionRequest, data, where)
        with episode_work():
            return await self.table.open(request)

    async def create(self, request: Request) -> dict[str, Any]:
        served = await self.open_session(await json_body(request), "POST /sessions")
        return self.session_view(served)

    async def create_group(self, request: Request) -> dict[str, Any]:
        body: GroupRequest = parse(GroupRequest, await json_body(request), "POST /sessions/group")
        fields = body.model_dump(exclude={"n"}, exclude_unset=True)
        with episode_work():
            members = await self.table.open_group(SessionRequest(**fields), body.n)
        return {"sessions": [self.session_view(m) for m in members]}

    async def get_session(self, request: Request) -> dict[str, Any]:
        served = self.table.get(request.path_params["session_id"])
        view = self.session_view(served)
        view["info"] = served.info()
        view["reward"] = served.reward()
        return view

    async def delete_session(self, request: Request) -> dict[str, Any]:
        session_id = request.path_params["session_id"]
        served = self.table.get(session_id)
        async with served.lock:
            self.table.delete(session_id)
        return {"session_id": session_id, "deleted": True}

    async def step(self, request: Request) -> dict[str, Any]:
        served = self.table.get(request.path_params["session_id"])
        body: StepBody = parse(StepBody, await json_body(request), f"POST /sessions/{served.id}/step")
        return await self.step_session(served, body.completion)

    async def step_session(self, served: ServedSession, completion: Any) -> dict[str, Any]:
        where = f"session {served.id}"
        if served.mode != "step" or served.episode is None:
            raise HTTPError(409, f"{where} is an agent-mode session: its agent acts through MCP and the model proxy, not /step")
        async with served.lock:
            if served.done:
                raise HTTPError(409, f"{where}: the episode has ended (reward {served.reward():g}); start a new session")
            with anyio.CancelScope(shield=True):
                try:
                    with episode_work():
                        observation, reward, done, info = await served.episode.step(completion)
                except (TypeError, ValueError) as exc:
                    raise HTTPError(400, f"{where}: step: {exc}") from None
                if done:
                    with episode_work():
                        self.table.finish(served)
                    info = served.info()
                    reward = served.reward()
        return {"observation": _observation(observation), "reward": reward, "done": done, "info": info}

    async def finish(self, request: Request) -> dict[str, Any]:
        served = self.table.get(request.path_params["session_id"])
        return await self.finish_session(served)

    async def finish_session(self, served: ServedSession) -> dict[str, Any]:
        async with served.lock:
            with anyio.CancelScope(shield=True), episode_work():
                record = self.table.finish(served)
        result = record.result
        return {
            "session_id": served.id,
            "done": True,
            "reward": served.reward(),
            "success": result.success if result is not None and record.error is None else None,
            "info": served.info(),
            "record": record.model_dump(mode="json", exclude={"trajectory"}),
        }

    async def tasks(self, request: Request) -> dict[str, Any]:
        source = request.query_params.get("source", "bundled")
        return {"source": source, "tasks": await anyio.to_thread.run_sync(lambda: openenv.task_list(source))}

    async def models(self, request: Request) -> dict[str, Any]:
        served = self.table.get(request.path_params["session_id"])
        model = served.rollout.main.model.model if served.rollout.main is not None else "policy"
        return {"object": "list", "data": [{"id": model, "object": "model", "created": 0, "owned_by": "orchestra"}]}

    # ------------------------------------------------------------------ the model proxy
    async def proxy(self, request: Request) -> Response:
        acc = [0.0]
        token = _EPISODE_SECONDS.set(acc)
        try:
            return await self._proxy(request, acc)
        finally:
            _EPISODE_SECONDS.reset(token)

    async def _proxy(self, request: Request, acc: list[float]) -> Response:
        try:
            session_id = request.path_params.get("session_id") or request.headers.get(SESSION_HEADER)
            if not session_id:
                raise HTTPError(400, "POST /v1/chat/completions: name the session: the X-Orchestra-Session header, or POST /sessions/ID/v1/chat/completions")
            served = self.table.get(session_id)
            where = f"POST /sessions/{served.id}/v1/chat/completions"
            body = await json_body(request)
            model_request = chat_request(body, where)
            completion = await self.complete(served, model_request)
        except Exception as exc:
            status, message = http_status(exc)
            return error_response(status, message)
        if isinstance(body, dict) and body.get("stream"):
            chunks = completion_chunks(completion)

            async def stream() -> AsyncIterator[bytes]:
                for chunk in chunks:
                    yield f"data: {json.dumps(chunk)}\n\n".encode()
                yield b"data: [DONE]\n\n"

            return _timed(StreamingResponse(stream(), media_type="text/event-stream"), acc)
        return _timed(JSONResponse(completion), acc)

    async def complete(self, served: ServedSession, model_request: Any) -> dict[str, Any]:
        main = served.rollout.main
        model = main.model.model if main is not None else "policy"
        async with served.lock:
            served.proxy_calls += 1
            completion_id = f"chatcmpl-{served.id}-{served.proxy_calls}"
            with anyio.CancelScope(shield=True):
                if served.mode == "agent":
                    assert served.outside is not None
                    with episode_work():
                        response = await served.outside.model_call(model_request) if not served.done else None
                    return completion_json(response, completion_id=completion_id, model=model, ended_text=ENDED_TEXT)
                episode = served.episode
                assert episode is not None and main is not None
                if episode.request is None:
                    raise HTTPError(409, f"session {served.id}: the episode has ended: no request to answer")
                if model == "policy":
                    raise HTTPError(409, f"session {served.id} has no model of its own (start it with `model`): the client's policy answers through /step")
                with episode_work():
                    response = await served.rollout.host.hook.model_call(agent=main, request=episode.request)
                return completion_json(response, completion_id=completion_id, model=model)
        raise AssertionError("unreachable")  # pragma: no cover  (mypy: the shielded block returns or raises)

    # ------------------------------------------------------------------ MCP
    def _mcp_session(self, session_id: str) -> ServedSession:
        served = self.table.get(session_id)
        if served.outside is None:
            raise HTTPError(409, f"session {session_id} is a step-mode session: its tools run through /step (start it with mode 'agent' to use MCP)")
        return served

    async def _mcp_app(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            self._mcp_session(scope["path_params"]["session_id"])
        except Exception as exc:
            status, message = http_status(exc)
            await error_response(status, message)(scope, receive, send)
            return
        await self.mcp(scope, receive, send)


async def _json_http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 / 405 (no such route, a wrong method) in the server's error shape."""
    assert isinstance(exc, HTTPException)
    what = "no such route" if exc.status_code == 404 else exc.detail
    return error_response(exc.status_code, f"{request.method} {request.url.path}: {what} (see GET /openapi.json)")


def _warm() -> None:
    """Import and load, once, before the first request, what the first step would otherwise load on
    the event loop (litellm and its local token counter: seconds, while every session waits)."""
    from orchestra.litellm_setup import import_litellm

    import_litellm().token_counter(model="gpt-4o-mini", text="warm")


def _observation(observation: Observation | None) -> dict[str, Any] | None:
    if observation is None:
        return None
    return {
        "messages": observation.messages,
        "tools": observation.tools,
        "tool_choice": observation.tool_choice,
        "parallel_tool_calls": observation.parallel_tool_calls,
        "stop": observation.stop,
        "response_format": observation.response_format,
        "action_format": observation.action_format,
    }


class _ASGI:
    """A raw ASGI callable as a route's endpoint (starlette treats functions and methods as request handlers)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


class _Guard:
    """API key (when set) on every route but /health; the base URL sessions hand out."""

    def __init__(self, app: Any, server: Server) -> None:
        self.app = app
        self.server = server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if not self.server._base_url_known:
            server = scope.get("server")
            if server:
                self.server.base_url = f"http://{server[0]}:{server[1]}"
            self.server._base_url_known = True
        key = self.server.config.api_key
        if key and scope.get("path", "").rstrip("/") not in OPEN_ROUTES:
            problem = _key_problem(headers, key)
            if problem is not None:
                if scope["type"] == "http":
                    await error_response(401, problem)(scope, receive, send)
                else:
                    await send({"type": "websocket.close", "code": 1008, "reason": problem[:120]})
                return
        host = headers.get("host")
        token = _REQUEST_BASE.set(f"http://{host}" if host and not host.startswith(("0.0.0.0", "[::]")) else None)
        try:
            await self.app(scope, receive, send)
        finally:
            _REQUEST_BASE.reset(token)


def _key_problem(headers: dict[str, str], key: str) -> str | None:
    """Why the request's key is not the server's (None: it is): missing, not a Bearer, or wrong."""
    authorization = headers.get("authorization", "")
    given = headers.get("x-api-key")
    if given is None and authorization:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return "the Authorization header is `Bearer KEY` (or send X-API-Key: KEY)"
        given = token.strip()
    if given is None:
        return "this server needs its API key: send `Authorization: Bearer KEY` (or X-API-Key: KEY)"
    if not secrets.compare_digest(given.encode(), key.encode()):
        return "wrong API key"
    return None
