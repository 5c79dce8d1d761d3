"""Orchestra's traces in a second real backend: an MLflow tracking server, started from its own venv (``.venv-mlflow``).

Two rollouts of the shipped offline team (``orchestra run --team oracle ... --concurrency 2 --trace otlp``)
go out over OTLP/HTTP to MLflow's ``/v1/traces``, configured only with the standard
``OTEL_EXPORTER_OTLP_*`` variables, and come back through MLflow's own Python client
(``mlflow.search_traces``, run by the MLflow venv): one trace per rollout, one conversation per
rollout (MLflow files ``gen_ai.conversation.id`` as the trace's session), the GenAI operations read as
MLflow's span types, and each delegation nested — the app-agent's ``invoke_agent`` under the main
agent's ``<App>__expert_agent`` ``execute_tool``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from orchestra_dev.mlflow_server import MLflowServer

CALENDAR = "starter_execution_calendar"  # delegates to a Calendar and an Emails app-agent
GROUP_CHAT = "starter_execution_group_chat"  # ... and twice to a Messages app-agent


@pytest.fixture
def exported_to_mlflow(mlflow_tracking_server: MLflowServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[MLflowServer]:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", mlflow_tracking_server.otlp_endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", mlflow_tracking_server.otlp_headers)
    for var in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_SDK_DISABLED"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("OTEL_SEMCONV_STABILITY_OPT_IN", raising=False)
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
