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

import json
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


# --- a real team run, traced by the tracing plugin -------------------------------------------------------

SCENARIO = "starter_execution_calendar"
EVENT = {
    "title": "Q4 roadmap review", "start_datetime": "2024-10-17 14:00:00", "end_datetime": "2024-10-17 15:00:00",
    "location": "Room 4B", "attendees": ["Priya Shah", "Marcus Lee"],
}  # fmt: skip
EMAIL = {
    "recipients": ["priya.shah@example.com", "marcus.lee@example.com"], "subject": "Q4 roadmap review scheduled",
    "content": "Booked for Thursday 14:00-15:00 in Room 4B.",
}  # fmt: skip
TASK = "Add 'Q4 roadmap review' on 2024-10-17 14:00-15:00 in Room 4B with Priya Shah and Marcus Lee."
MAIN_USAGE = {"prompt_tokens": 900, "completion_tokens": 40}
APP_USAGE = {"prompt_tokens": 1000, "completion_tokens": 100}


@pytest.fixture
def project(phoenix_server: PhoenixServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh Phoenix project, with the standard OTLP variables pointing at the session's server, as a user sets them."""
    name = f"orchestra-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix_server.otlp_endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"x-project-name={name}")
    for var in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_SDK_DISABLED"):
        monkeypatch.delenv(var, raising=False)
    yield name


def _team(tmp_path: Path) -> Any:
    """A team whose main agent delegates the calendar write to a Calendar app-agent (scripted models, offline)."""
    from helpers import write_script
    from orchestra.models import ModelConfig
    from orchestra.rollout import AgentConfig
    from orchestra.teams.config import AppAgentsConfig, AppAgentSettings, TeamConfig

    def react(name: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"text": f"Thought: ok\nAction:\n{json.dumps({'action': name, 'action_input': args})}<end_action>", "usage": MAIN_USAGE}

    def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"tool_calls": [{"name": name, "arguments": args}], "usage": APP_USAGE}

    main = write_script(tmp_path, [
        react("Calendar__expert_agent", {"task": TASK}),
        react("Emails__send_email", EMAIL),
        react("AgentUserInterface__send_message_to_user", {"content": "Done."}),
    ], name="main.json")  # fmt: skip
    calendar = write_script(tmp_path, [call("Calendar__add_calendar_event", EVENT), call("final_answer", {"answer": "Event created."})], name="calendar.json")
    model = lambda path: ModelConfig(model=f"orchestra/scripted:{path}", backoff_seconds=0.0, max_retries=0)  # noqa: E731
    return TeamConfig(
        name="calendar-team",
        main=AgentConfig(scaffold="react", model=model(main)),
        app_agents=AppAgentsConfig(apps=["Calendar"], defaults=AppAgentSettings(scaffold="tool_calling", model=model(calendar))),
    )


def _traced_team_runs(team: Any, judge_pool: Any, scenario: Path, runs: int) -> list[Any]:
    """`runs` rollouts of `team` at once, exported by `Tracing.otlp()` as configured by the OTEL_* variables."""
    from orchestra.host import Host
    from orchestra.rollout import RolloutSpec, execute_all
    from orchestra.session import SessionConfig
    from orchestra.tracing import Tracing

    specs = [(RolloutSpec(scenario=str(scenario), team=team, session=SessionConfig(), sample_index=i), None) for i in range(runs)]

    async def go() -> list[Any]:
        return [r async for r in execute_all(specs, host=Host.create(entry_points=False), judge_pool=judge_pool, concurrency=runs)]

    with Tracing.otlp():  # leaving the block flushes the batch exporter
        return anyio.run(go)


# 1 workflow, main agent, 3 main chats, 3 main tools (expert, email, message), app-agent, 2 app chats, 2 app tools
SPANS_PER_RUN = 13


def test_team_run_tree_in_phoenix(phoenix_server: PhoenixServer, project: str, tmp_path: Path, judge_pool: Any, scenario_path: Any) -> None:
    [record] = _traced_team_runs(_team(tmp_path), judge_pool, scenario_path(SCENARIO), runs=1)
    assert record.error is None and record.result is not None and record.result.success, record

    spans = phoenix_server.wait_for_spans(project, SPANS_PER_RUN)
    assert len(spans) == SPANS_PER_RUN, sorted(s["name"] for s in spans)
    path = check_team_trace(spans)
    assert path["workflow"]["name"] == "invoke_workflow calendar-team"
    assert path["main"]["name"] == "invoke_agent main"
    assert path["expert"]["name"] == "execute_tool Calendar__expert_agent"
    assert path["app_agent"]["attributes"]["gen_ai.agent.name"] == "Calendar"
    assert [s["name"] for s in path["tools"]] == ["execute_tool Calendar__add_calendar_event", "execute_tool final_answer"]
    for chat in path["chats"]:
        assert (chat["attributes"]["gen_ai.usage.input_tokens"], chat["attributes"]["gen_ai.usage.output_tokens"]) == (1000, 100)
    workflow = path["workflow"]["attributes"]
    assert workflow["orchestra.scenario.id"] == SCENARIO and workflow["orchestra.reward"] == 1.0
    # the app-agent ran inside the delegation, on the simulated clock
    expert, app = path["expert"]["attributes"], path["app_agent"]["attributes"]
    assert expert["orchestra.sim.start"] <= app["orchestra.sim.start"]
    assert app["orchestra.sim.start"] + app["orchestra.sim.duration_s"] <= expert["orchestra.sim.start"] + expert["orchestra.sim.duration_s"] + 1e-9
    assert app["orchestra.sim.duration_s"] == pytest.approx(record.result.delegations[0].duration)


def test_two_concurrent_rollouts_are_two_traces(phoenix_server: PhoenixServer, project: str, tmp_path: Path, judge_pool: Any, scenario_path: Any) -> None:
    records = _traced_team_runs(_team(tmp_path), judge_pool, scenario_path(SCENARIO), runs=2)
    assert all(r.error is None for r in records), [r.error for r in records]

    spans = phoenix_server.wait_for_spans(project, 2 * SPANS_PER_RUN)
    traces = by_trace(spans)
    assert len(traces) == 2 and all(len(t) == SPANS_PER_RUN for t in traces.values()), {k: len(v) for k, v in traces.items()}
    samples, conversations = set(), set()
    for trace in traces.values():
        check_team_trace(trace)
        conversation = {s["attributes"].get("gen_ai.conversation.id") for s in trace if s["name"].startswith("invoke_agent ")}
        assert len(conversation) == 1, conversation  # both agents of a trace belong to one rollout
        conversations |= conversation
        [workflow] = [s for s in trace if not s.get("parent_id")]
        samples.add(workflow["attributes"]["orchestra.sample_index"])
    assert samples == {0, 1} and len(conversations) == 2


def test_the_command_line_exports_to_phoenix_as_the_readme_says(phoenix_server: PhoenixServer, project: str, scenario_path: Any, capsys: Any) -> None:
    """`orchestra run ... --trace otlp` with only the OTEL_* variables set (the `project` fixture): an oracle rollout lands in Phoenix."""
    from orchestra.cli import main

    scenario = scenario_path("starter_time_deadline")
    assert main(["run", "--scaffold", "react", "--model", "orchestra/oracle", "--scenarios", str(scenario), "--json", "--trace", "otlp"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["status"] == "ok" and record["success"] is True, record

    # the workflow, the main agent, one chat span per model call and one execute_tool span per tool call
    spans = phoenix_server.wait_for_spans(project, 2 + record["steps"] + record["n_tool_calls"])
    assert len(spans) == 2 + record["steps"] + record["n_tool_calls"], sorted(s["name"] for s in spans)
    [workflow] = [s for s in spans if not s.get("parent_id")]
    assert workflow["name"] == f"invoke_workflow {record['policy']}"
    assert (workflow["attributes"]["orchestra.scenario.id"], workflow["attributes"]["orchestra.verdict"]) == ("starter_time_deadline", True)
    [main_agent] = _children(spans, workflow)
    assert main_agent["name"] == "invoke_agent main"
    below = [str(s["name"]).split(" ")[0] for s in _children(spans, main_agent)]
    assert (below.count("chat"), below.count("execute_tool")) == (record["steps"], record["n_tool_calls"])
    assert all(s["attributes"]["gen_ai.request.model"] == "oracle" for s in spans if str(s["name"]).startswith("chat "))
    # a single agent delegates nothing: the team check rejects this trace (it is not a check that always passes)
    with pytest.raises(AssertionError, match="no execute_tool <App>__expert_agent under the main agent"):
        check_team_trace(spans)


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
