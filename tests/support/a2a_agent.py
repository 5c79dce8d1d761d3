"""A scripted A2A agent built on `a2a-sdk`'s server, run as its own process (the tests' remote agent).

    python tests/support/a2a_agent.py [--port 0] [--spans FILE] [--otlp URL]

prints `a2a agent: listening on http://127.0.0.1:PORT` when ready. It serves several agents, each
under its own path with its own card (`/NAME/.well-known/agent-card.json`):

* `/loop` — an ordinary tool-calling agent (`AgentExecutor.execute(context, event_queue)`): it reads
  `orchestra.mcp_url` and `orchestra.model_base_url` from the message metadata, lists the MCP tools,
  asks the model proxy what to do, runs each tool call over MCP, and answers with the model's last
  text. Its policy is the proxy's upstream: `orchestra/oracle` (the oracle's actions: right),
  `orchestra/scripted:FILE` (wrong). Its conversation is kept per A2A context (later turns);
* `/rest` — the `/loop` agent over A2A's HTTP+JSON (REST) binding only;
* `/work_then_hang` — the `/loop` agent's work in a task (submitted, working), then it never answers
  nor closes the task (until it is cancelled: A2A `CancelTask`);
* `/hang` — never answers;
* `/malformed` — answers the JSON-RPC POST with a body that is not A2A;
* `/drop` — drops the connection in the middle of its answer;
* `/grpc` — only a card, offering only the gRPC binding;
* `/badiface` — only a card, whose JSON-RPC interface URL is a port nobody listens on.

With `--spans FILE` the `/loop` agent traces with OpenTelemetry: one `a2a_agent` span per message, a
child of the W3C `traceparent` the request carried (its attributes: the `traceparent` header, the
message's `orchestra.session_id` and `orchestra.mcp_url`), and one `mcp_tool` span per tool call, appended
to FILE as JSON lines (with the `traceparent` header the HTTP request had). With `--otlp URL` the same
spans also go over OTLP/HTTP (protobuf) to `URL/v1/traces` as the service `a2a-test-agent`, each as
it ends; the standard `OTEL_EXPORTER_OTLP_HEADERS` (or `..._TRACES_HEADERS`) of its environment are
sent with them (a Phoenix project, an MLflow experiment). Either option, or both, turns tracing on.
"""

from __future__ import annotations

import argparse
import contextvars
import json
import sys
from typing import Any

import anyio
import httpx
import uvicorn
from a2a.helpers import get_message_text, new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
#: The `traceparent` header of the HTTP request being served (set by a middleware).
TRACEPARENT: contextvars.ContextVar[str | None] = contextvars.ContextVar("traceparent", default=None)


def card(base: str, name: str, binding: str = "JSONRPC", url: str | None = None) -> AgentCard:
    return AgentCard(
        name=f"orchestra test agent: {name}",
        description="a scripted A2A agent for orchestra's tests",
        version="1.0.0",
        supported_interfaces=[AgentInterface(url=url or f"{base}/{name}/", protocol_binding=binding, protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=[AgentSkill(id="gaia2", name="gaia2", description="plays a Gaia2 scenario through MCP", tags=["gaia2"])],
    )


def _mcp(http: httpx.AsyncClient, url: str, method: str, params: dict[str, Any]) -> Any:
    return http.post(url, headers=MCP_HEADERS, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params})


def _rpc_result(response: httpx.Response) -> dict[str, Any]:
    response.raise_for_status()
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:"):
                return dict(json.loads(line[5:])["result"])
        raise RuntimeError("no JSON-RPC response in the MCP stream")
    data = response.json()
    if "error" in data:
        raise RuntimeError(f"MCP error: {data['error']}")
    return dict(data["result"])


#: The remote agent's OpenTelemetry service name (its spans' `service.name` in a backend).
SERVICE_NAME = "a2a-test-agent"


class Tracer:
    """OpenTelemetry spans of the loop agent, to a JSON-lines file (--spans) and/or an OTLP/HTTP endpoint (--otlp)."""

    def __init__(self, path: str | None, otlp: str | None = None) -> None:
        self.path = path
        self.tracer: Any = None
        if path is None and otlp is None:
            return
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

        provider = TracerProvider(resource=Resource.create({"service.name": SERVICE_NAME}))
        if otlp is not None:  # each span as it ends, so a backend holds it by the time the A2A answer is back
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{otlp.rstrip('/')}/v1/traces")))
        if path is None:
            self.tracer = provider.get_tracer(SERVICE_NAME)
            return

        out = path

        class ToFile(SpanExporter):
            def export(self, spans: Any) -> SpanExportResult:
                with open(out, "a") as f:
                    for s in spans:
                        parent = s.parent
                        f.write(
                            json.dumps(
                                {
                                    "name": s.name,
                                    "trace_id": f"{s.context.trace_id:032x}",
                                    "span_id": f"{s.context.span_id:016x}",
                                    "parent_span_id": f"{parent.span_id:016x}" if parent is not None else None,
                                    "attributes": dict(s.attributes or {}),
                                }
                            )
                            + "\n"
                        )
                return SpanExportResult.SUCCESS

        provider.add_span_processor(SimpleSpanProcessor(ToFile()))
        self.tracer = provider.get_tracer(SERVICE_NAME)

    def span(self, name: str, traceparent: str | None = None, **attributes: Any) -> Any:
        import contextlib

        if self.tracer is None:
            return contextlib.nullcontext()
        context = None
        if traceparent:
            from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

            context = TraceContextTextMapPropagator().extract({"traceparent": traceparent})
        return self.tracer.start_as_current_span(name, context=context, attributes=attributes)


class LoopAgent(AgentExecutor):
    """The tool-calling loop: the proxy's model decides, MCP acts."""

    def __init__(self, tracer: Tracer) -> None:
        self.histories: dict[str, list[dict[str, Any]]] = {}
        self.tracer = tracer

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        meta = MessageToDict(message.metadata)
        answer = await self._traced(context, meta)
        await event_queue.enqueue_event(new_text_message(answer, context_id=context.context_id))

    async def _traced(self, context: RequestContext, meta: dict[str, Any]) -> str:
        assert context.message is not None
        header = TRACEPARENT.get()
        attributes = {"header_traceparent": header or "", "session_id": meta.get("orchestra.session_id", ""), "mcp_url": meta.get("orchestra.mcp_url", "")}
        with self.tracer.span("a2a_agent", header or meta.get("orchestra.traceparent"), **attributes):
            return await self._run(context.context_id or "", get_message_text(context.message), meta)

    async def _run(self, context_id: str, text: str, meta: dict[str, Any]) -> str:
        mcp_url, base = meta["orchestra.mcp_url"], meta["orchestra.model_base_url"]
        async with httpx.AsyncClient(timeout=120) as http:
            listed = _rpc_result(await _mcp(http, mcp_url, "tools/list", {}))
            tools = [
                {"type": "function", "function": {"name": t["name"], "description": t.get("description", ""), "parameters": t["inputSchema"]}}
                for t in listed["tools"]
            ]
            history = self.histories.setdefault(context_id, [{"role": "system", "content": "You are a helpful assistant with tools."}])
            history.append({"role": "user", "content": text})
            answer = ""
            for _ in range(200):
                reply = await http.post(f"{base}/chat/completions", json={"model": "any", "messages": history, "tools": tools})
                reply.raise_for_status()
                choice = reply.json()["choices"][0]["message"]
                history.append({k: v for k, v in choice.items() if k in ("role", "content", "tool_calls")})
                calls = choice.get("tool_calls") or []
                answer = choice.get("content") or answer
                if not calls:
                    return answer
                for call in calls:
                    name, arguments = call["function"]["name"], json.loads(call["function"]["arguments"] or "{}")
                    with self.tracer.span("mcp_tool", None, tool=name):
                        result = _rpc_result(await _mcp(http, mcp_url, "tools/call", {"name": name, "arguments": arguments}))
                    content = "\n".join(c.get("text", "") for c in result.get("content", []))
                    history.append({"role": "tool", "tool_call_id": call["id"], "content": content})
            return answer

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


class WorkThenHang(LoopAgent):
    """The loop agent's work inside a task (submitted, working), then it hangs: it never answers nor
    closes its task, until a `CancelTask` cancels it (the task store then says CANCELED)."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        task = context.current_task or new_task_from_user_message(message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        answer = await self._traced(context, MessageToDict(message.metadata))
        await updater.add_artifact([new_text_part(answer)], name="answer")  # done, but the task is never completed
        await anyio.sleep_forever()


class HangAgent(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await anyio.sleep_forever()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


async def malformed(request: Request) -> Response:
    await request.body()
    return Response('{"jsonrpc": "2.0", "id": 1, "result": {"not": "an A2A reply"', media_type="application/json")


async def drop(scope: Any, receive: Any, send: Any) -> None:
    """An ASGI app that starts an answer and dies: the client sees the connection drop."""
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json"), (b"content-length", b"1000")]})
    await send({"type": "http.response.body", "body": b'{"jsonrpc": "2.0", ', "more_body": True})
    raise RuntimeError("the test agent drops the connection")


class _Raw:
    """A raw ASGI callable as a route's endpoint (starlette treats functions as request handlers)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


class _Traceparent:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        token = TRACEPARENT.set(headers[b"traceparent"].decode() if b"traceparent" in headers else None)
        try:
            await self.app(scope, receive, send)
        finally:
            TRACEPARENT.reset(token)


def app(base: str, spans: str | None, otlp: str | None = None) -> Starlette:
    routes: list[Any] = []
    tracer = Tracer(spans, otlp)
    loop = LoopAgent(tracer)
    for name, executor in (("loop", loop), ("hang", HangAgent()), ("work_then_hang", WorkThenHang(tracer))):
        c = card(base, name)
        handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=c)
        routes.append(Mount(f"/{name}", routes=[*create_agent_card_routes(c), *create_jsonrpc_routes(handler, "/")]))
    rest = card(base, "rest", binding="HTTP+JSON", url=f"{base}/rest")
    handler = DefaultRequestHandler(agent_executor=loop, task_store=InMemoryTaskStore(), agent_card=rest)
    routes.append(Mount("/rest", routes=[*create_agent_card_routes(rest), *create_rest_routes(handler)]))
    for name, endpoint in (("malformed", malformed), ("drop", _Raw(drop))):
        c = card(base, name)
        routes.append(Mount(f"/{name}", routes=[*create_agent_card_routes(c), Route("/", endpoint, methods=["POST"])]))
    for name, c in (("grpc", card(base, "grpc", binding="GRPC", url="127.0.0.1:9")), ("badiface", card(base, "badiface", url="http://127.0.0.1:9/rpc"))):
        routes.append(Mount(f"/{name}", routes=create_agent_card_routes(c)))  # cards only: nothing answers behind them
    starlette = Starlette(routes=routes)
    starlette.add_middleware(_Traceparent)
    return starlette


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--spans", help="append the loop agent's spans to this file as JSON lines")
    parser.add_argument("--otlp", help="export the loop agent's spans over OTLP/HTTP to this endpoint (URL/v1/traces)")
    args = parser.parse_args()
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    # a hanging agent keeps its request open: stop waiting for it 1 s after SIGTERM (the tests stop the process)
    server = uvicorn.Server(uvicorn.Config(app(base, args.spans, args.otlp), log_level="error", timeout_graceful_shutdown=1))
    print(f"a2a agent: listening on {base}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
