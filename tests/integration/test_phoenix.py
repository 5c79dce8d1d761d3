"""Orchestra's traces in a real backend: Arize Phoenix, started from its own venv (``.venv-phoenix``).

The spans go out over OTLP/HTTP, configured the way a user configures it (the standard
``OTEL_EXPORTER_OTLP_*`` variables), and come back through Phoenix's own REST API
(``GET /v1/projects/{project}/spans``), never from the exporter's memory. What is checked is the
tree Phoenix stores: workflow → main agent → ``<App>__expert_agent`` tool → app-agent → chat /
execute_tool, with token usage on the chat spans and simulated time on every span.

Each test writes to a project of its own (the ``x-project-name`` header Phoenix reads), so tests
that share the session's server never see each other's spans.
"""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from orchestra_dev.phoenix import PhoenixError, PhoenixServer

Span = dict[str, Any]


# --- what a team run's trace must look like, read back from Phoenix ------------------------------------


def _children(spans: list[Span], parent: Span) -> list[Span]:
    return [s for s in spans if s.get("parent_id") == parent["context"]["span_id"]]


def _one(spans: list[Span], prefix: str, where: str) -> list[Span]:
    found = [s for s in spans if str(s["name"]).startswith(prefix)]
    assert found, f"no span named {prefix!r}... {where}; spans there: {sorted(str(s['name']) for s in spans)}"
    return found


def check_team_trace(spans: list[Span]) -> dict[str, Any]:
    """Assert the team-run shape on one trace's spans; return the spans on the delegation path (for more checks)."""
    trace_ids = {s["context"]["trace_id"] for s in spans}
    assert len(trace_ids) == 1, f"expected one trace, got {len(trace_ids)}"
    ids = {s["context"]["span_id"] for s in spans}
    roots = [s for s in spans if not s.get("parent_id")]
    assert [r["name"] for r in roots] and len(roots) == 1, f"expected one root span, got {[r['name'] for r in roots]}"
    orphans = [s["name"] for s in spans if s.get("parent_id") and s["parent_id"] not in ids]
    assert not orphans, f"spans whose parent never reached Phoenix: {orphans}"

    workflow = roots[0]
    assert str(workflow["name"]).startswith("invoke_workflow "), workflow["name"]
    main_agent = _one(_children(spans, workflow), "invoke_agent ", "under the workflow span")[0]
    experts = [s for s in _children(spans, main_agent) if str(s["name"]).startswith("execute_tool ") and str(s["name"]).endswith("__expert_agent")]
    assert experts, f"no execute_tool <App>__expert_agent under the main agent: {[s['name'] for s in _children(spans, main_agent)]}"
    delegated = [(expert, agent) for expert in experts for agent in _children(spans, expert) if str(agent["name"]).startswith("invoke_agent ")]
    assert delegated, "no app-agent invoke_agent span under any <App>__expert_agent tool span"
    expert, app_agent = delegated[0]
    below = _children(spans, app_agent)
    chats = _one(below, "chat ", f"under the app-agent span {app_agent['name']!r}")
    tools = _one(below, "execute_tool ", f"under the app-agent span {app_agent['name']!r}")
    for chat in [s for s in spans if str(s["name"]).startswith("chat ")]:
        attrs = chat["attributes"]
        for key in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"):
            assert isinstance(attrs.get(key), int) and attrs[key] >= 0, f"{chat['name']}: {key}={attrs.get(key)!r}"
        assert attrs.get("gen_ai.operation.name") == "chat", chat["name"]
    for span in spans:
        attrs = span["attributes"]
        assert isinstance(attrs.get("orchestra.sim.start"), int | float), f"{span['name']}: no orchestra.sim.start in {sorted(attrs)}"
        assert isinstance(attrs.get("orchestra.sim.duration_s"), int | float), f"{span['name']}: no orchestra.sim.duration_s"
    return {"workflow": workflow, "main": main_agent, "expert": expert, "app_agent": app_agent, "chats": chats, "tools": tools}


def by_trace(spans: list[Span]) -> dict[str, list[Span]]:
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span["context"]["trace_id"], []).append(span)
    return traces


# --- the span producer ---------------------------------------------------------------------------------


@pytest.fixture
def project(phoenix_server: PhoenixServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh Phoenix project, with the standard OTLP variables pointing at the session's server."""
    name = f"orchestra-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix_server.otlp_endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"x-project-name={name}")
    for var in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_SDK_DISABLED"):
        monkeypatch.delenv(var, raising=False)
    yield name


def _provider() -> Any:
    """An SDK provider whose OTLP/HTTP exporter reads the endpoint and headers from the environment."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "orchestra"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


async def _hand_made_team_run(tracer: Any, team: str, run: int) -> None:
    """A team run's span tree of the shape the tracing plugin emits (GenAI conventions), made by hand."""
    from opentelemetry.trace import SpanKind

    clock = {"t": 1_000.0 * run}

    def sim(seconds: float) -> dict[str, float]:
        start = clock["t"]
        clock["t"] += seconds
        return {"orchestra.sim.start": start, "orchestra.sim.duration_s": seconds}

    def chat(model: str) -> None:
        with tracer.start_as_current_span(f"chat {model}", kind=SpanKind.CLIENT) as span:
            span.set_attributes({
                "gen_ai.operation.name": "chat", "gen_ai.provider.name": "orchestra", "gen_ai.request.model": model,
                "gen_ai.response.model": model, "gen_ai.usage.input_tokens": 120 + run, "gen_ai.usage.output_tokens": 17,
                **sim(1.5),
            })  # fmt: skip

    with tracer.start_as_current_span(f"invoke_workflow {team}") as workflow:
        workflow.set_attributes({"gen_ai.operation.name": "invoke_workflow", "orchestra.run": run, **sim(0)})
        with tracer.start_as_current_span("invoke_agent main") as main:
            main.set_attributes({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "main", **sim(0)})
            chat("orchestra/oracle")
            await anyio.sleep(0)  # let a concurrent run interleave its spans
            with tracer.start_as_current_span("execute_tool Calendar__expert_agent") as expert:
                expert.set_attributes({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Calendar__expert_agent", **sim(0)})
                with tracer.start_as_current_span("invoke_agent Calendar") as app:
                    app.set_attributes({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Calendar", **sim(0)})
                    chat("orchestra/oracle")
                    await anyio.sleep(0)
                    with tracer.start_as_current_span("execute_tool Calendar__get_calendar_events_from_to") as tool:
                        tool.set_attributes({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Calendar__get_calendar_events_from_to", **sim(2)})
            chat("orchestra/oracle")


HAND_MADE_SPANS = 8  # workflow, main agent, 2 main chats, expert tool, app-agent, app chat, app tool


def test_team_run_tree_in_phoenix(phoenix_server: PhoenixServer, project: str) -> None:
    provider = _provider()
    anyio.run(_hand_made_team_run, provider.get_tracer("orchestra"), "demo-team", 0)
    provider.shutdown()  # flushes the batch processor

    spans = phoenix_server.wait_for_spans(project, HAND_MADE_SPANS)
    path = check_team_trace(spans)
    assert path["app_agent"]["name"] == "invoke_agent Calendar"
    assert path["chats"][0]["attributes"]["gen_ai.usage.input_tokens"] == 120


def test_two_concurrent_rollouts_are_two_traces(phoenix_server: PhoenixServer, project: str) -> None:
    provider = _provider()
    tracer = provider.get_tracer("orchestra")

    async def both() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_hand_made_team_run, tracer, "demo-team", 1)
            tg.start_soon(_hand_made_team_run, tracer, "demo-team", 2)

    anyio.run(both)
    provider.shutdown()

    traces = by_trace(phoenix_server.wait_for_spans(project, 2 * HAND_MADE_SPANS))
    assert len(traces) == 2, f"expected two traces, got {len(traces)}"
    runs = set()
    for spans in traces.values():
        path = check_team_trace(spans)
        runs.add(path["workflow"]["attributes"]["orchestra.run"])
        # every span of a trace came from the same run: its usage carries the run index
        assert {s["attributes"]["gen_ai.usage.input_tokens"] for s in path["chats"]} == {120 + path["workflow"]["attributes"]["orchestra.run"]}
    assert runs == {1, 2}


# --- the server's start-up errors, on a stand-in executable (no Phoenix needed) ------------------------


def _fake_phoenix(tmp_path: Path, script: str) -> Path:
    path = tmp_path / "phoenix"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_server_that_exits_fails_with_its_output(tmp_path: Path) -> None:
    server = PhoenixServer(executable=_fake_phoenix(tmp_path, "echo 'migration failed: database is locked'\nexit 3\n"))
    with pytest.raises(PhoenixError, match=r"(?s)exited with code 3 .*migration failed: database is locked"):
        server.start()
    assert server.log_tail == "<not started>"  # stopped and cleaned up


def test_a_server_that_never_answers_is_stopped_after_the_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    server = PhoenixServer(executable=_fake_phoenix(tmp_path, f"echo $$ > {pid_file}; echo starting; exec sleep 60\n"), startup_timeout=1.5)
    with pytest.raises(PhoenixError, match=r"(?s)did not answer GET http://127\.0\.0\.1:\d+/healthz within 2 s.*starting"):
        server.start()
    with pytest.raises(ProcessLookupError):  # terminated and reaped, not left running
        os.kill(int(pid_file.read_text()), 0)
