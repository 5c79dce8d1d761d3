"""A session's tools over MCP (streamable HTTP, the mcp 1.x SDK): `POST /sessions/{id}/mcp`.

One MCP server serves every session: it reads the session id from the request's path, lists that
scenario's tools (the agent's own table — ARE's apps, `AgentUserInterface__send_message_to_user`,
`SystemApp__wait_for_notification` — with the JSON schemas and docstrings orchestra's scaffolds
show a model) and runs each call through the `OutsideAgent`, i.e. orchestra's `tool_call` hook path.
Stateless JSON responses: no MCP session to keep beside orchestra's own, and any client (an SDK,
`curl`) can call a tool with one POST.

Arguments are checked by orchestra (the same check and message a scaffold's call gets, naming the
argument), not by the SDK's generic validator; a failed call is a tool result with `isError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Receive, Scope, Send

from orchestra.serve.outside_agent import OutsideAgent
from orchestra.tool_schemas import openai_tool
from orchestra.tracing import mcp_call

SERVER_NAME = "orchestra"


def mcp_tools(outside: OutsideAgent) -> list[types.Tool]:
    """The agent's tools as MCP tools (name, description, input schema)."""
    tools = []
    for spec in outside.agent.tools.values():
        function = openai_tool(spec)["function"]
        tools.append(types.Tool(name=function["name"], description=function.get("description") or "", inputSchema=function["parameters"]))
    return tools


class MCPEndpoint:
    """The ASGI app behind `/sessions/{session_id}/mcp`; `lookup(session_id, request)` gives the
    session's `OutsideAgent` and a lock, or raises (the message becomes the MCP error)."""

    def __init__(self, lookup: Callable[[str], Any]) -> None:
        self.lookup = lookup
        server: Server[Any, Any] = Server(SERVER_NAME)
        self.server = server

        @server.list_tools()
        async def list_tools() -> list[types.Tool]:
            served = self._served()
            return mcp_tools(served.outside)

        @server.call_tool(validate_input=False)
        async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
            served = self._served()
            context = self.server.request_context
            version = context.request.headers.get("mcp-protocol-version") if context.request is not None else None
            async with served.lock:
                with mcp_call(session_id=served.id, request_id=context.request_id, protocol_version=version):  # the span's MCP attributes
                    outcome = await served.outside.tool_call(name, arguments or {})
            text = (outcome.observation or "") if outcome.ok else f"ERROR: {outcome.error}"  # as the tool_calling scaffold shows a model
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=not outcome.ok)

        self.manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True)

    def _served(self) -> Any:
        request = self.server.request_context.request
        session_id = request.path_params["session_id"] if request is not None else ""
        return self.lookup(session_id)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.manager.handle_request(scope, receive, send)
