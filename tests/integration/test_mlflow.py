"""Orchestra's traces in a second real backend: an MLflow tracking server, started from its own venv (``.venv-mlflow``).

Two rollouts of the shipped offline team (``orchestra run --team oracle ... --concurrency 2 --trace otlp``)
go out over OTLP/HTTP to MLflow's ``/v1/traces``, configured only with the standard
``OTEL_EXPORTER_OTLP_*`` variables, and come back through MLflow's own Python client
(``mlflow.search_traces``, run by the MLflow venv): one trace per rollout, one conversation per
rollout (MLflow files ``gen_ai.conversation.id`` as the trace's session), the GenAI operations read as
MLflow's span types, and each delegation nested — the app-agent's ``invoke_agent`` under the main
agent's ``<App>__expert_agent`` ``execute_tool``.

Then a team whose Calendar app-agent is a remote A2A agent (``tests/support/a2a_agent.py``, its own
process, exporting its own spans to the same MLflow over OTLP): MLflow holds one trace for the rollout
with both sides in it, the remote agent's top span a child of the span orchestra sent the request
under (the app-agent's ``invoke_agent``, named in the W3C ``traceparent``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestra_dev.mlflow_server import MLflowServer

CALENDAR = "starter_execution_calendar"  # delegates to a Calendar and an Emails app-agent
GROUP_CHAT = "starter_execution_group_chat"  # ... and twice to a Messages app-agent


def export_to(monkeypatch: pytest.MonkeyPatch, server: MLflowServer, headers: str) -> None:
    """The standard OTLP variables, as a user sets them, pointing at `server` (`headers`: the experiment)."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", server.otlp_endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", headers)
    for var in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_SDK_DISABLED"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("OTEL_SEMCONV_STABILITY_OPT_IN", raising=False)


@pytest.fixture
def exported_to_mlflow(mlflow_tracking_server: MLflowServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[MLflowServer]:
    export_to(monkeypatch, mlflow_tracking_server, mlflow_tracking_server.otlp_headers)
    yield mlflow_tracking_server


def test_team_rollouts_in_mlflow_are_one_trace_and_one_conversation_each(
    exported_to_mlflow: MLflowServer, capsys: pytest.CaptureFixture[str], scenario_path: Any
) -> None:
    from orchestra.cli import main

    sources = [str(scenario_path(name)) for name in (CALENDAR, GROUP_CHAT)]
    code = main(["run", "--team", "oracle", "--scenarios", *sources, "--concurrency", "2", "--json", "--trace", "otlp"])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert code == 0 and [r["status"] for r in records] == ["PASS", "PASS"], records
    expected = {r["scenario_id"]: 1 + sum(1 + a["model_calls"] + a["tool_calls"] for a in r["agents"]) for r in records}

    traces = exported_to_mlflow.wait_for_traces(2, sum(expected.values()))
    assert len(traces) == 2, [t["trace_id"] for t in traces]
    conversations = set()
    for trace in traces:
        spans = trace["spans"]
        [root] = [s for s in spans if not s["parent_id"]]
        record = next(r for r in records if r["scenario_id"] == root["attributes"]["orchestra.scenario.id"])
        assert len(spans) == expected[record["scenario_id"]], sorted(s["name"] for s in spans)
        assert root["name"] == "invoke_workflow oracle" and root["attributes"]["gen_ai.operation.name"] == "invoke_workflow"
        assert root["attributes"]["gen_ai.agent.name"] == "oracle"
        # one conversation per rollout: on every span, and MLflow's session of the trace
        conversation = root["attributes"]["gen_ai.conversation.id"]
        assert {s["attributes"]["gen_ai.conversation.id"] for s in spans} == {conversation}
        assert trace["metadata"].get("mlflow.trace.session") == conversation
        conversations.add(conversation)
        # MLflow read the GenAI operations: agents, model calls, tools
        types = {s["attributes"]["gen_ai.operation.name"]: s["span_type"] for s in spans if s["parent_id"]}
        assert types == {"invoke_agent": "AGENT", "chat": "CHAT_MODEL", "execute_tool": "TOOL"}, types
        # delegations nested: the app-agent under the main agent's expert tool call
        by_id = {s["span_id"]: s for s in spans}
        [main_agent] = [s for s in spans if s["name"] == "invoke_agent main"]
        assert main_agent["parent_id"] == root["span_id"]
        for delegation in record["delegations"]:
            nested = [
                s
                for s in spans
                if s["name"] == f"invoke_agent {delegation['callee']}"
                and by_id[s["parent_id"]]["name"] == f"execute_tool {delegation['tool']}"
                and by_id[s["parent_id"]]["parent_id"] == main_agent["span_id"]
            ]
            assert len(nested) == 1, (delegation, sorted(s["name"] for s in spans))
    assert len(conversations) == 2


def test_a_remote_a2a_app_agent_s_spans_are_in_the_rollout_s_trace_under_its_delegation(
    mlflow_tracking_server: MLflowServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], scenario_path: Any, tmp_path: Path
) -> None:
    pytest.importorskip("a2a", reason="the a2a extra (a2a-sdk) is not installed")
    from orchestra.cli import main
    from support.a2a_process import remote_agent

    server = mlflow_tracking_server
    experiment = server.create_experiment(f"a2a-{uuid.uuid4().hex[:8]}")  # this test's traces only
    headers = f"x-mlflow-experiment-id={experiment}"
    export_to(monkeypatch, server, headers)
    spans_file = tmp_path / "remote-spans.jsonl"
    with remote_agent(spans_file, otlp=server.otlp_endpoint, env={"OTEL_EXPORTER_OTLP_HEADERS": headers}) as remote:
        team = tmp_path / "team.yaml"
        team.write_text(
            f"name: a2a-calendar\nmain:\n  model: orchestra/oracle\napp_agents:\n  apps: all\n  overrides:\n    Calendar: {{a2a: '{remote['loop']}'}}\n"
        )
        code = main(["run", "--team", str(team), "--scenarios", str(scenario_path(CALENDAR)), "--json", "--trace", "otlp"])
        [record] = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
        assert code == 0 and record["status"] == "PASS", record
        theirs = [json.loads(line) for line in spans_file.read_text().splitlines()]  # what the remote agent exported
    calendar = next(a for a in record["agents"] if a["name"] == "Calendar")
    assert calendar["a2a"]["url"] == remote["loop"] and calendar["tool_calls"] >= 1, calendar
    ours_expected = 1 + sum(1 + a["model_calls"] + a["tool_calls"] for a in record["agents"])
    assert [s["name"] for s in theirs].count("a2a_agent") == 1 and len(theirs) == 1 + calendar["tool_calls"], theirs

    [trace] = server.wait_for_traces(1, ours_expected + len(theirs), experiment=experiment)
    spans = trace["spans"]
    by_id = {s["span_id"]: s for s in spans}
    remote_ids = {s["span_id"] for s in theirs}
    ours = [s for s in spans if s["span_id"] not in remote_ids]
    remotes = [s for s in spans if s["span_id"] in remote_ids]
    # one trace, both sides in it, every span's parent there too
    assert len(ours) == ours_expected and len(remotes) == len(theirs), sorted(s["name"] for s in spans)
    assert {s["trace_id"] for s in theirs} == {trace["trace_id"].removeprefix("tr-")}
    [root] = [s for s in spans if not s["parent_id"]]
    assert root["name"] == "invoke_workflow a2a-calendar" and root["span_id"] not in remote_ids
    assert all(s["parent_id"] in by_id for s in spans if s["parent_id"]), sorted(s["name"] for s in spans if s["parent_id"] not in by_id)
    # one conversation: every orchestra span carries the rollout's id, and MLflow files the trace under it
    # (the remote's spans do not: it is not told the id)
    conversation = root["attributes"]["gen_ai.conversation.id"]
    assert {s["attributes"].get("gen_ai.conversation.id") for s in ours} == {conversation}
    assert trace["metadata"].get("mlflow.trace.session") == conversation
    # the delegation nested: the Calendar app-agent under the main agent's Calendar__expert_agent tool call ...
    [main_agent] = [s for s in ours if s["name"] == "invoke_agent main"]
    [app_agent] = [s for s in ours if s["name"] == "invoke_agent Calendar"]
    expert = by_id[app_agent["parent_id"]]
    assert expert["name"] == "execute_tool Calendar__expert_agent" and expert["parent_id"] == main_agent["span_id"]
    # ... and the remote agent under the app-agent: its top span a child of the invoke_agent span the traceparent names,
    # its MCP tool calls under that; orchestra's side of those calls (served MCP tools, proxied model calls) beside it
    [top] = [s for s in remotes if s["name"] == "a2a_agent"]
    assert top["parent_id"] == app_agent["span_id"], by_id[top["parent_id"]]["name"]
    assert top["attributes"]["header_traceparent"].startswith(f"00-{trace['trace_id'].removeprefix('tr-')}-{app_agent['span_id']}-")
    tools = [s for s in remotes if s["name"] == "mcp_tool"]
    assert len(tools) == calendar["tool_calls"] and all(s["parent_id"] == top["span_id"] for s in tools)
    served = [s for s in ours if s["parent_id"] == app_agent["span_id"]]
    assert sorted(s["attributes"]["gen_ai.operation.name"] for s in served) == sorted(
        ["chat"] * calendar["model_calls"] + ["execute_tool"] * calendar["tool_calls"]
    )
