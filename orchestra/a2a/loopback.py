"""A loopback `orchestra serve` for one remote agent's run: its MCP tools and model proxy, in process.

The rollout's own event loop serves it (uvicorn on a free port), so the remote agent's tool calls
and model calls land in the same `OutsideAgent` path an agent-mode session uses: the `tool_call`
and `model_call` hooks, the simulated clock, ARE's event log. One per agent run (the main agent's
whole rollout, or one delegated task), gone when it ends.

It listens on 127.0.0.1 by default, and the URLs the agent is given name 127.0.0.1: an agent on the
same machine (and network namespace) reaches them, one in a container or on another machine does
not. `A2AConfig.listen_host` (e.g. 0.0.0.0) and `advertise_host` (the name the agent reaches this
machine by) change that; whoever reaches the port can then call the session's tools and model.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio

from orchestra.a2a.config import DEFAULT_LISTEN_HOST
from orchestra.errors import OrchestraError
from orchestra.rollout import Rollout
from orchestra.serve.app import ServeConfig, Server
from orchestra.serve.outside_agent import OutsideAgent
from orchestra.serve.sessions import ServedSession, SessionRequest

#: Wall seconds the loopback server has to start listening.
START_SECONDS = 30.0


@dataclass
class Loopback:
    """The running server and its base URL as the agent is given it (`http://127.0.0.1:PORT` by default)."""

    server: Server
    base_url: str

    def adopt(self, session_id: str, rollout: Rollout, outside: OutsideAgent) -> ServedSession:
        """Serve `outside` (an agent of `rollout`) as the agent-mode session `session_id`."""
        request = SessionRequest(scenario=str(rollout.file.path), mode="agent", model=outside.agent.model.model)
        served = ServedSession(session_id, "agent", request, rollout, outside=outside)
        self.server.table.sessions[session_id] = served
        return served

    def urls(self, session_id: str) -> tuple[str, str]:
        """(MCP endpoint, model proxy base URL) of a session."""
        return f"{self.base_url}/sessions/{session_id}/mcp", f"{self.base_url}/sessions/{session_id}/v1"


@asynccontextmanager
async def loopback(rollout: Rollout, *, listen_host: str = DEFAULT_LISTEN_HOST, advertise_host: str | None = None) -> AsyncIterator[Loopback]:
    """A loopback server on this event loop for the enclosed block, listening on `listen_host`, its
    URLs naming `advertise_host` (default: `listen_host`). Its sessions are never judged through it:
    the rollout finishes itself."""
    import uvicorn

    server = Server(ServeConfig(port=0, idle_timeout=1e9), host=rollout.host)
    config = uvicorn.Config(server.app, host=listen_host, port=0, lifespan="off", log_level="warning", access_log=False, timeout_graceful_shutdown=2)
    uv = uvicorn.Server(config)
    failed: list[BaseException] = []
    error: Exception | None = None

    async def serve() -> None:
        try:
            # `_serve`, not `serve`: uvicorn's `serve` takes over SIGINT/SIGTERM, which belong to orchestra's batch
            await uv._serve()
        except BaseException as exc:  # noqa: BLE001 - reported below, with the URL
            failed.append(exc)
            raise

    async with server.mcp.running(), anyio.create_task_group() as tg:
        tg.start_soon(serve)
        with anyio.move_on_after(START_SECONDS):
            while not uv.started and not failed:
                await anyio.sleep(0.002)
        if not uv.started:
            uv.should_exit = True
            raise OrchestraError(f"the A2A loopback server did not start within {START_SECONDS:g} s ({failed[0] if failed else 'no error'})")
        port = uv.servers[0].sockets[0].getsockname()[1]
        host = advertise_host or listen_host
        try:
            yield Loopback(server, f"http://{f'[{host}]' if ':' in host else host}:{port}")
        except Exception as exc:  # raised past the task group, not wrapped in its ExceptionGroup
            error = exc
        finally:
            uv.should_exit = True
            uv.force_exit = True
    if error is not None:
        raise error
