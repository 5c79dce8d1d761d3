"""Traces on the OpenTelemetry GenAI semantic conventions, semconv-genai v0.1.0 (docs/tracing.md).

A shipped team (`orchestra run --team oracle`: an oracle main agent delegating to oracle
app-agents) runs in process with an in-memory exporter; every span is checked for the attributes
v0.1.0 requires of it, the tree for one trace and one conversation per rollout with each
delegation nested under the expert tool call that made it, and `OTEL_SEMCONV_STABILITY_OPT_IN=
gen_ai_legacy` for the names orchestra emitted before. `orchestra serve`'s episodes: one root span
per episode, every call of the session (proxy `chat`, MCP `execute_tool`, `/step`) under it, MCP
calls with the MCP conventions' attributes. And the W3C trace-context helpers.
"""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from starlette.testclient import TestClient

from orchestra.host import Host
from orchestra.serve.app import ServeConfig, Server
from orchestra.spec import RolloutSpec
from orchestra.tracing import SEMCONV_OPT_IN_ENV, Tracing, conversation_id, extract_trace_context, inject_trace_context

CALENDAR = "starter_execution_calendar"  # the main agent delegates to a Calendar and an Emails app-agent
#: The operations orchestra's spans name (`format_error`: a custom one, for an output that is no action).
OPERATIONS = {"invoke_workflow", "invoke_agent", "chat", "execute_tool", "format_error"}


def run_team(scenario: str) -> tuple[dict[str, Any], list[ReadableSpan]]:
    """`orchestra run --team oracle --scenarios FILE --json` in process, traced into memory: the record and the spans."""
    from orchestra.cli import main

    exporter = InMemorySpanExporter()
    out = io.StringIO()
    with Tracing(exporter), contextlib.redirect_stdout(out):
        code = main(["run", "--team", "oracle", "--scenarios", scenario, "--json"])
    [record] = [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]
    assert code == 0 and record["status"] == "PASS", record
    return record, list(exporter.get_finished_spans())


def parent_of(spans: list[ReadableSpan], span: ReadableSpan) -> ReadableSpan | None:
    if span.parent is None:
        return None
    return next(s for s in spans if s.context.span_id == span.parent.span_id)


def check_v010(spans: list[ReadableSpan], record: dict[str, Any]) -> str:
    """The v0.1.0 MUST attributes on every span, one trace and one conversation, delegations nested; the conversation id."""
    assert len({s.context.trace_id for s in spans}) == 1, "one trace per rollout"
    [root] = [s for s in spans if s.parent is None]
    conversation = root.attributes["gen_ai.conversation.id"]
    for span in spans:
        attrs = span.attributes
        where = f"{span.name}: {dict(attrs)}"
        assert attrs.get("gen_ai.operation.name") in OPERATIONS, where  # Required on every GenAI span
        assert attrs.get("gen_ai.conversation.id") == conversation, where  # one conversation per rollout, on every span
        assert isinstance(attrs.get("orchestra.sim.start"), float | int) and isinstance(attrs.get("orchestra.sim.duration_s"), float | int), where
        assert "gen_ai.workflow.name" not in attrs and "gen_ai.agent.id" not in attrs, where  # gone in v0.1.0 (internal spans)
        operation = attrs["gen_ai.operation.name"]
        if operation in ("invoke_workflow", "invoke_agent"):  # the internal invoke_agent span: an agent's name
            assert span.kind == SpanKind.INTERNAL and attrs.get("gen_ai.agent.name"), where
            assert span.name == f"{operation} {attrs['gen_ai.agent.name']}", where
        if operation == "invoke_agent" or operation == "chat":
            assert attrs.get("gen_ai.provider.name") and attrs.get("gen_ai.request.model"), where
        if operation == "chat":
            assert span.kind == SpanKind.CLIENT and span.name == f"chat {attrs['gen_ai.request.model']}", where
        if operation == "execute_tool":
            assert attrs.get("gen_ai.tool.name") and span.name == f"execute_tool {attrs['gen_ai.tool.name']}", where
    # the root: the team, an internal invoke_agent span whose operation is invoke_workflow
    assert root.name == "invoke_workflow oracle" and root.attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert root.attributes["gen_ai.agent.name"] == "oracle" and root.attributes["orchestra.verdict"] is True
    # delegations: each app-agent's invoke_agent under the main agent's <App>__expert_agent execute_tool
    [main] = [s for s in spans if s.name == "invoke_agent main"]
    assert parent_of(spans, main) is root
    for delegation in record["delegations"]:
        [app_agent] = [s for s in spans if s.name == f"invoke_agent {delegation['callee']}"]
        expert = parent_of(spans, app_agent)
        assert expert is not None and expert.name == f"execute_tool {delegation['tool']}" and parent_of(spans, expert) is main
    assert len(spans) == 1 + sum(1 + a["model_calls"] + a["tool_calls"] for a in record["agents"])
    return str(conversation)


def test_a_team_rollout_has_the_v010_attributes_on_every_span_and_the_legacy_names_on_opt_in(scenario_path, monkeypatch):
    monkeypatch.delenv(SEMCONV_OPT_IN_ENV, raising=False)
    record, spans = run_team(str(scenario_path(CALENDAR)))
    assert [d["tool"] for d in record["delegations"]] == ["Calendar__expert_agent", "Emails__expert_agent"]
    conversation = check_v010(spans, record)
    assert conversation.startswith("orchestra-") and len(conversation) == len("orchestra-") + 32

    # the check is not one that always passes: a v1.41-style root is rejected
    monkeypatch.setenv(SEMCONV_OPT_IN_ENV, "http,gen_ai_legacy")  # a comma-separated list, as the SDKs read it
    legacy_record, legacy = run_team(str(scenario_path(CALENDAR)))
    with pytest.raises(AssertionError):
        check_v010(legacy, legacy_record)
    [root] = [s for s in legacy if s.parent is None]
    assert root.name == "invoke_workflow oracle" and root.attributes["gen_ai.workflow.name"] == "oracle" and "gen_ai.agent.name" not in root.attributes
    agents = [s for s in legacy if s.name.startswith("invoke_agent ")]
    assert agents and all(a.attributes["gen_ai.agent.id"] for a in agents) and not any("orchestra.agent.id" in a.attributes for a in agents)
    # the conversation id is the rollout's, not the run's: the same in both runs (and modes); the traces differ
    assert {s.attributes["gen_ai.conversation.id"] for s in legacy} == {conversation}
    assert root.context.trace_id != spans[0].context.trace_id


def test_the_conversation_id_comes_from_the_spec_alone():
    spec = RolloutSpec(scenario="scenarios/x.json")
    assert conversation_id(spec) == conversation_id(RolloutSpec(scenario="scenarios/x.json"))
    assert conversation_id(spec) != conversation_id(spec.model_copy(update={"sample_index": 1}))
    assert conversation_id(spec) != conversation_id(RolloutSpec(scenario="scenarios/y.json"))


# --- orchestra serve: one root span per episode ---------------------------------------------------------

MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def test_a_served_team_episode_is_one_trace_under_one_root(monkeypatch):
    """Step mode: each request (the proxy's chat, /step's actions and the delegations they run) nests under the episode's root."""
    monkeypatch.delenv(SEMCONV_OPT_IN_ENV, raising=False)
    exporter = InMemorySpanExporter()
    with Tracing(exporter):
        server = Server(ServeConfig(max_sessions=2), host=Host.create())
        with TestClient(server.app) as c:
            s = c.post("/sessions", json={"scenario": f"bundled/{CALENDAR}", "model": "orchestra/oracle", "team": "oracle"}).json()
            sid, observation = s["session_id"], s["observation"]
            for _ in range(40):
                completion = c.post(f"/sessions/{sid}/v1/chat/completions", json={"messages": observation["messages"], "tools": observation["tools"]})
                step = c.post(f"/sessions/{sid}/step", json={"completion": completion.json()}).json()
                if step["done"]:
                    break
                observation = step["observation"]
            assert step["done"] and step["reward"] == 1.0
    spans = list(exporter.get_finished_spans())
    assert len({s.context.trace_id for s in spans}) == 1
    [root] = [s for s in spans if s.parent is None]
    assert root.name == "invoke_workflow oracle" and root.attributes["orchestra.serve.session_id"] == sid
    assert root.attributes["orchestra.verdict"] is True and root.attributes["gen_ai.agent.name"] == "oracle"
    assert {s.attributes["gen_ai.conversation.id"] for s in spans} == {root.attributes["gen_ai.conversation.id"]}
    chats = [s for s in spans if s.name.startswith("chat ") and parent_of(spans, s) is root]
    assert len(chats) >= 3  # the proxy's calls (the outside policy's model): straight under the root
    [expert] = [s for s in spans if s.name == "execute_tool Calendar__expert_agent"]
    [app_agent] = [s for s in spans if s.name == "invoke_agent Calendar"]
    assert parent_of(spans, expert) is root and parent_of(spans, app_agent) is expert


def test_served_mcp_calls_carry_the_mcp_attributes_and_a_closed_episode_ends_its_root(monkeypatch):
    monkeypatch.delenv(SEMCONV_OPT_IN_ENV, raising=False)
    exporter = InMemorySpanExporter()
    with Tracing(exporter):
        server = Server(ServeConfig(max_sessions=2), host=Host.create())
        with TestClient(server.app) as c:
            s = c.post("/sessions", json={"scenario": f"bundled/{CALENDAR}", "model": "orchestra/oracle", "mode": "agent"}).json()
            sid = s["session_id"]
            call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "Calendar__add_calendar_event", "arguments": {"title": 5}}}
            r = c.post(f"/sessions/{sid}/mcp", headers={**MCP_HEADERS, "mcp-protocol-version": "2025-06-18"}, json=call)
            assert r.status_code == 200 and r.json()["result"]["isError"] is True
            assert c.delete(f"/sessions/{sid}").status_code in (200, 204)  # closed unjudged
    spans = list(exporter.get_finished_spans())
    [root] = [s for s in spans if s.parent is None]
    assert "orchestra.verdict" not in root.attributes and root.attributes["orchestra.serve.session_id"] == sid
    [tool] = [s for s in spans if s.name == "execute_tool Calendar__add_calendar_event"]
    assert parent_of(spans, tool) is root and tool.context.trace_id == root.context.trace_id
    attrs = tool.attributes
    assert (attrs["gen_ai.operation.name"], attrs["gen_ai.tool.name"], attrs["mcp.method.name"]) == (
        "execute_tool",
        "Calendar__add_calendar_event",
        "tools/call",
    )
    assert (attrs["mcp.session.id"], attrs["jsonrpc.request.id"], attrs["mcp.protocol.version"]) == (sid, "7", "2025-06-18")
    assert attrs["error.type"] == "tool_error" and attrs["gen_ai.conversation.id"] == root.attributes["gen_ai.conversation.id"]


# --- W3C trace context, for calls that leave the process (A2A) -----------------------------------------


def test_trace_context_is_injected_only_when_tracing_is_on_and_round_trips():
    carrier: dict[str, str] = {}
    inject_trace_context(carrier)
    assert carrier == {} and extract_trace_context({"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"}) is None
    from opentelemetry import trace

    exporter = InMemorySpanExporter()
    with Tracing(exporter) as tracing, tracing.tracer.start_as_current_span("execute_tool Calendar__expert_agent") as span:
        inject_trace_context(carrier)
        ctx = span.get_span_context()
        assert carrier["traceparent"].startswith(f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-0")  # sampled (and random-id: 03)
        remote = trace.get_current_span(extract_trace_context({"TraceParent": carrier["traceparent"]})).get_span_context()
        assert (remote.trace_id, remote.span_id, remote.is_remote) == (ctx.trace_id, ctx.span_id, True)
        assert extract_trace_context({}) is None
