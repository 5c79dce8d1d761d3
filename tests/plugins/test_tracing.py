"""The tracing plugin: the span tree of a rollout with a delegation, GenAI attributes, simulated
time, content opt-in, error status, and one trace per rollout at concurrency 8."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from orchestra.hookspecs import hookimpl
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.rollout import AgentConfig, RolloutRecord, RolloutSpec, execute
from orchestra.runs.runner import execute_all
from orchestra.scenario_files import read_scenario_file
from orchestra.tracing import CAPTURE_CONTENT_ENV, Tracing, TracingError, active
from support.contacts_expert import EXPERT, USAGE, ContactsExpert
from support.helpers import REPO, STARTER, write_script

TASK = "Find Elena Rossi's email address."


def _react(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"text": f"Thought: ok\nAction:\n{json.dumps({'action': name, 'action_input': args})}<end_action>", "usage": USAGE}


def _main_script(tmp_path: Any) -> str:
    return write_script(
        tmp_path,
        [
            _react(EXPERT, {"task": TASK}),
            _react("Emails__send_email", {"recipients": ["elena.rossi@example.com"], "subject": "Design review Friday", "content": "11:00 Friday?"}),
            _react("AgentUserInterface__send_message_to_user", {"content": "Sent."}),
            _react("AgentUserInterface__send_message_to_user", {"content": "She answered."}),
        ],
        name="main.json",
    )


def _sub_script(tmp_path: Any, *, bad_call: bool = False) -> str:
    first = {"name": "Contacts__get_contact", "arguments": {"no_such_argument": 1}} if bad_call else {"name": "Contacts__get_contacts", "arguments": {}}
    return write_script(
        tmp_path,
        [
            {"tool_calls": [{**first, "id": "call_1"}], "usage": USAGE},
            {"tool_calls": [{"name": "final_answer", "arguments": {"answer": "elena.rossi@example.com"}, "id": "call_2"}], "usage": USAGE},
        ],
        name="sub.json",
    )


def _run_team(
    path: Any, tmp_path: Any, judge_pool: Any, tracing: Tracing | None, *, sub_model: str | None = None, bad_call: bool = False, sub_max_steps: int = 50
) -> RolloutRecord:
    host = Host.create(
        [ContactsExpert(sub_model or f"orchestra/scripted:{_sub_script(tmp_path, bad_call=bad_call)}", name="Contacts_agent", max_steps=sub_max_steps)],
        entry_points=False,
    )
    spec = RolloutSpec(scenario=str(path), agent=AgentConfig(scaffold="react", model=ModelConfig(model=f"orchestra/scripted:{_main_script(tmp_path)}")))

    async def go() -> RolloutRecord:
        return await execute(spec, host=host, judge_pool=judge_pool)

    if tracing is None:
        return anyio.run(go)
    with tracing:
        return anyio.run(go)


def _by_name(spans: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for s in spans:
        out.setdefault(s.name, []).append(s)
    return out


@pytest.fixture
def email_scenario(env_turn_scenarios):
    return next(p for p in env_turn_scenarios if p.stem == "test_env_turn_email")


def test_a_delegation_is_one_trace_workflow_agent_tool_subagent(email_scenario, tmp_path, judge_pool, monkeypatch):
    monkeypatch.delenv(CAPTURE_CONTENT_ENV, raising=False)
    exporter = InMemorySpanExporter()
    record = _run_team(email_scenario, tmp_path, judge_pool, Tracing(exporter))
    assert record.error is None and record.result is not None and record.result.turns_completed == 2
    spans = exporter.get_finished_spans()
    named = _by_name(spans)
    ids = {s.context.span_id: s for s in spans}

    # One trace; its root is the workflow, which has no parent.
    assert len({s.context.trace_id for s in spans}) == 1
    (workflow,) = named["invoke_workflow react:orchestra/scripted:" + str(tmp_path / "main.json")]
    assert workflow.parent is None and workflow.kind == SpanKind.INTERNAL
    (main,) = named["invoke_agent main"]
    (expert_call,) = named[f"execute_tool {EXPERT}"]
    (sub,) = named["invoke_agent Contacts_agent"]
    assert main.parent.span_id == workflow.context.span_id
    assert expert_call.parent.span_id == main.context.span_id
    assert sub.parent.span_id == expert_call.context.span_id  # the app-agent nests under the delegating call
    assert {ids[s.parent.span_id].name for s in named["chat scripted:" + str(tmp_path / "sub.json")]} == {"invoke_agent Contacts_agent"}
    assert ids[named["execute_tool Contacts__get_contacts"][0].parent.span_id] is sub
    assert ids[named["execute_tool final_answer"][0].parent.span_id] is sub
    main_chats = named["chat scripted:" + str(tmp_path / "main.json")]
    assert len(main_chats) == 4 and all(ids[c.parent.span_id] is main for c in main_chats)
    assert all(c.kind == SpanKind.CLIENT for c in main_chats)
    assert {ids[s.parent.span_id].name for s in named["execute_tool AgentUserInterface__send_message_to_user"]} == {"invoke_agent main"}

    # GenAI attributes.
    wa = workflow.attributes
    assert wa["gen_ai.operation.name"] == "invoke_workflow" and wa["orchestra.scenario.id"] == "test_env_turn_email"
    # semconv-genai v0.1.0: the root is an internal agent span with operation invoke_workflow, named by gen_ai.agent.name
    assert wa["gen_ai.agent.name"] == "react:orchestra/scripted:" + str(tmp_path / "main.json") and "gen_ai.workflow.name" not in wa
    result = record.result
    assert wa["orchestra.sample_index"] == 0 and wa["orchestra.verdict"] is result.success and wa["orchestra.reward"] == result.reward
    (evaluation,) = [e for e in workflow.events if e.name == "gen_ai.evaluation.result"]
    assert dict(evaluation.attributes) == {
        "gen_ai.evaluation.name": "scripted",
        "gen_ai.evaluation.score.value": result.reward,
        "gen_ai.evaluation.score.label": "pass" if result.success else "fail",
    }
    conversation = wa["gen_ai.conversation.id"]
    assert all(s.attributes["gen_ai.conversation.id"] == conversation for s in spans)
    assert (main.attributes["gen_ai.agent.name"], sub.attributes["gen_ai.agent.name"]) == ("main", "Contacts_agent")
    assert "gen_ai.agent.id" not in main.attributes  # v0.1.0: no gen_ai.agent.id on internal agent spans
    assert main.attributes["orchestra.agent.id"] != sub.attributes["orchestra.agent.id"]
    assert sub.attributes["orchestra.agent.parent"] == "main" and sub.attributes["orchestra.agent.role"] == "sub"
    assert sub.attributes["gen_ai.usage.input_tokens"] == 2000 and sub.attributes["gen_ai.usage.output_tokens"] == 200
    chat = main_chats[0].attributes
    assert chat["gen_ai.operation.name"] == "chat" and chat["gen_ai.provider.name"] == "orchestra"
    assert chat["gen_ai.usage.input_tokens"] == 1000 and chat["gen_ai.usage.output_tokens"] == 100
    assert chat["orchestra.model.attempts"] == 1 and chat["gen_ai.response.model"]
    sub_call = named["execute_tool Contacts__get_contacts"][0].attributes
    assert sub_call["gen_ai.tool.name"] == "Contacts__get_contacts" and sub_call["gen_ai.tool.call.id"]
    assert sub_call["gen_ai.tool.type"] == "function" and sub_call["orchestra.agent.name"] == "Contacts_agent"

    # Simulated time on every span: a chat costs its clock charge; a delegation its sub-agent's run plus the call's own charge.
    assert all("orchestra.sim.start" in s.attributes and "orchestra.sim.duration_s" in s.attributes for s in spans)
    assert chat["orchestra.sim.duration_s"] == pytest.approx(2.2)
    sub_seconds = {a.name: a for a in record.result.agents}["Contacts_agent"].sim_seconds
    assert sub.attributes["orchestra.sim.duration_s"] == pytest.approx(sub_seconds)
    assert expert_call.attributes["orchestra.sim.duration_s"] == pytest.approx(sub_seconds + 2.0)
    assert sub.attributes["orchestra.sim.start"] == pytest.approx(expert_call.attributes["orchestra.sim.start"])
    assert wa["orchestra.sim.duration_s"] == pytest.approx(record.result.sim_seconds)

    # Runs (turns) and the environment's notification are events on the main agent's span.
    runs = [e for e in main.events if e.name == "orchestra.run.start"]
    assert [e.attributes["orchestra.run.index"] for e in runs] == [1, 2]
    notes = [e for e in main.events if e.name == "orchestra.notification"]
    assert [e.attributes["orchestra.notification.kind"] for e in notes] == ["environment"]
    assert notes[0].attributes["orchestra.sim.time"] >= runs[1].attributes["orchestra.sim.time"]

    # No content by default: no messages, arguments, results or notification texts.
    content_keys = {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "orchestra.content"}
    assert not any(content_keys & set(s.attributes) for s in spans)
    assert not any(content_keys & set(e.attributes) for s in spans for e in s.events)
    assert "elena.rossi" not in json.dumps([s.to_json() for s in spans])


def test_content_is_recorded_only_when_the_user_opts_in(email_scenario, tmp_path, judge_pool, monkeypatch):
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "true")
    exporter = InMemorySpanExporter()
    _run_team(email_scenario, tmp_path, judge_pool, Tracing(exporter))
    named = _by_name(exporter.get_finished_spans())
    (expert_call,) = named[f"execute_tool {EXPERT}"]
    assert json.loads(expert_call.attributes["gen_ai.tool.call.arguments"]) == {"task": TASK}
    assert expert_call.attributes["gen_ai.tool.call.result"] == "elena.rossi@example.com"
    first_chat = named["chat scripted:" + str(tmp_path / "main.json")][0].attributes
    messages = json.loads(first_chat["gen_ai.input.messages"])
    assert messages[0]["role"] == "system" and messages[0]["parts"][0]["type"] == "text"
    output = json.loads(first_chat["gen_ai.output.messages"])
    assert output[0]["role"] == "assistant" and EXPERT in output[0]["parts"][0]["content"]
    (sub,) = named["invoke_agent Contacts_agent"]
    assert [e.attributes["orchestra.content"] for e in sub.events if e.name == "orchestra.run.start"] == [TASK]
    (main,) = named["invoke_agent main"]
    (note,) = [e for e in main.events if e.name == "orchestra.notification"]
    assert "elena.rossi@example.com" in note.attributes["orchestra.content"]

    # The explicit argument wins over the environment variable.
    exporter = InMemorySpanExporter()
    _run_team(email_scenario, tmp_path, judge_pool, Tracing(exporter, content=False))
    assert not any("gen_ai.tool.call.arguments" in s.attributes for s in exporter.get_finished_spans())


def test_a_failed_tool_and_a_failed_model_are_error_spans(email_scenario, tmp_path, judge_pool, monkeypatch):
    monkeypatch.delenv(CAPTURE_CONTENT_ENV, raising=False)
    exporter = InMemorySpanExporter()
    _run_team(email_scenario, tmp_path, judge_pool, Tracing(exporter), bad_call=True)
    named = _by_name(exporter.get_finished_spans())
    (bad,) = named["execute_tool Contacts__get_contact"]
    assert bad.status.status_code == StatusCode.ERROR and bad.attributes["error.type"]
    assert "no_such_argument" not in (bad.status.description or "")  # the error text is content
    assert all(s.status.status_code == StatusCode.UNSET for s in named["execute_tool final_answer"])

    # The app-agent's model cannot be called: its chat span, its agent span and the delegating
    # tool call are errors; the rollout goes on and is judged.
    exporter = InMemorySpanExporter()
    record = _run_team(email_scenario, tmp_path, judge_pool, Tracing(exporter), sub_model="orchestra/scripted:/no/such/script.json")
    assert record.result is not None
    named = _by_name(exporter.get_finished_spans())
    (chat,) = named["chat scripted:/no/such/script.json"]
    assert chat.status.status_code == StatusCode.ERROR and chat.attributes["orchestra.model.permanent"] is True
    assert any(e.name == "exception" for e in chat.events)
    (sub,) = named["invoke_agent Contacts_agent"]
    (expert_call,) = named[f"execute_tool {EXPERT}"]
    assert sub.status.status_code == StatusCode.ERROR and expert_call.status.status_code == StatusCode.ERROR
    (workflow,) = [s for s in exporter.get_finished_spans() if s.parent is None]
    assert workflow.status.status_code == StatusCode.UNSET and "orchestra.verdict" in workflow.attributes

    # The app-agent spends its one-step budget without answering: no exception anywhere, but the
    # delegation failed, and its span says why
    exporter = InMemorySpanExporter()
    record = _run_team(email_scenario, tmp_path, judge_pool, Tracing(exporter), sub_max_steps=1)
    assert record.result is not None and not record.result.delegations[0].ok
    named = _by_name(exporter.get_finished_spans())
    (sub,) = named["invoke_agent Contacts_agent"]
    assert sub.status.status_code == StatusCode.ERROR and sub.attributes["error.type"] == "step_budget"
    assert named[f"execute_tool {EXPERT}"][0].status.status_code == StatusCode.ERROR
    assert named["invoke_agent main"][0].status.status_code == StatusCode.UNSET  # the main agent has no answer to give


class Interleave:
    """Yields to the event loop around every model call, so concurrent rollouts really interleave."""

    def __init__(self) -> None:
        self.order: list[str] = []

    @hookimpl(wrapper=True)
    def model_call(self, agent: Any, request: Any) -> Any:
        inner = yield

        async def yielding() -> Any:
            self.order.append(agent.session.scenario_id)
            await anyio.sleep(0.001)
            return await inner

        return yielding()


def test_concurrent_rollouts_never_mix_spans(judge_pool):
    exporter = InMemorySpanExporter()
    interleave = Interleave()
    host = Host.create([interleave], entry_points=False)
    files = [read_scenario_file(p) for p in STARTER]
    agent = AgentConfig(scaffold="tool_calling", model=ModelConfig(model="orchestra/oracle"))
    # 8 rollouts: the 7 starters plus a second sample of the first
    specs = [(RolloutSpec(scenario=str(f.path), agent=agent), f) for f in files]
    specs.append((RolloutSpec(scenario=str(files[0].path), agent=agent, sample_index=1), files[0]))
    assert len(specs) == 8

    async def go() -> list[RolloutRecord]:
        return [r async for r in execute_all(specs, host=host, judge_pool=judge_pool, concurrency=8)]

    with Tracing(exporter):
        records = anyio.run(go)
    assert all(r.error is None and r.result is not None and r.result.success for r in records)
    switches = sum(1 for a, b in zip(interleave.order, interleave.order[1:]) if a != b)
    assert switches > len(specs)  # the rollouts' model calls really interleaved

    spans = exporter.get_finished_spans()
    workflows = [s for s in spans if s.name.startswith("invoke_workflow ")]
    assert len(workflows) == 8 and all(w.parent is None for w in workflows)
    assert len({w.context.trace_id for w in workflows}) == 8  # a trace per rollout
    assert sorted((w.attributes["orchestra.scenario.id"], w.attributes["orchestra.sample_index"]) for w in workflows) == sorted(
        (r.scenario_id, r.sample_index) for r in records
    )
    by_id = {s.context.span_id: s for s in spans}
    workflow_of_trace = {w.context.trace_id: w for w in workflows}
    for s in spans:
        root = s
        while root.parent is not None:
            parent = by_id[root.parent.span_id]
            assert parent.context.trace_id == s.context.trace_id  # never parented across rollouts
            root = parent
        assert root is workflow_of_trace[s.context.trace_id]
        assert s.attributes["gen_ai.conversation.id"] == root.attributes["gen_ai.conversation.id"]
    assert len({w.attributes["gen_ai.conversation.id"] for w in workflows}) == 8
    # every rollout's chat spans belong to its own trace: the scenario's calls and tokens match its record
    for w in workflows:
        chats = [s for s in spans if s.context.trace_id == w.context.trace_id and s.name.startswith("chat ")]
        record = next(r for r in records if (r.scenario_id, r.sample_index) == (w.attributes["orchestra.scenario.id"], w.attributes["orchestra.sample_index"]))
        assert sum(c.attributes["gen_ai.usage.input_tokens"] for c in chats) == record.result.prompt_tokens
    assert active() is None  # the block ended: tracing is off again


def test_a_rollout_span_is_a_new_trace_even_inside_a_callers_span(scenario_path, judge_pool):
    from opentelemetry.sdk.trace import TracerProvider

    caller = TracerProvider().get_tracer("caller")
    exporter = InMemorySpanExporter()
    spec = RolloutSpec(scenario=str(scenario_path("starter_execution_calendar")))  # the oracle policy: a workflow span alone
    with Tracing(exporter), caller.start_as_current_span("caller's span") as outer:
        record = anyio.run(lambda: execute(spec, judge_pool=judge_pool))
    (workflow,) = exporter.get_finished_spans()
    assert record.result is not None and workflow.name == "invoke_workflow oracle"
    assert workflow.parent is None and workflow.context.trace_id != outer.get_span_context().trace_id


class ReasoningModel:
    """Stands in for a provider that reports reasoning tokens (inside the tracing wrapper: trylast)."""

    @hookimpl(wrapper=True, trylast=True)
    def model_call(self, agent: Any, request: Any) -> Any:
        inner = yield

        async def with_reasoning() -> Any:
            response = await inner
            return dataclasses.replace(response, usage=dataclasses.replace(response.usage, reasoning_tokens=7))

        return with_reasoning()


def test_reasoning_tokens_use_the_conventions_attribute(scenario_path, judge_pool):
    exporter = InMemorySpanExporter()
    host = Host.create([ReasoningModel()], entry_points=False)
    spec = RolloutSpec(
        scenario=str(scenario_path("starter_search_lookup")), agent=AgentConfig(scaffold="tool_calling", model=ModelConfig(model="orchestra/oracle"))
    )
    with Tracing(exporter):
        record = anyio.run(lambda: execute(spec, host=host, judge_pool=judge_pool))
    assert record.result is not None
    chats = [s for s in exporter.get_finished_spans() if s.name.startswith("chat ")]
    assert chats and all(c.attributes["gen_ai.usage.reasoning.output_tokens"] == 7 for c in chats)
    assert not [k for c in chats for k in c.attributes if "reasoning" in k and k != "gen_ai.usage.reasoning.output_tokens"]


def test_trace_ids_do_not_follow_the_seeded_global_random_state():
    """ARE seeds `random` globally when imported (`random.seed(33)`): with the SDK's default id
    generator every `orchestra run` started with the same trace and span ids, so two runs sent to
    one backend, or appended to one JSONL file, merged into one trace."""
    import random

    saved = random.getstate()
    ids: list[set[int]] = []
    try:
        for _ in range(2):
            random.seed(33)  # what importing ARE does in every new process
            exporter = InMemorySpanExporter()
            with Tracing(exporter) as tracing, tracing.tracer.start_as_current_span("workflow"):
                with tracing.tracer.start_as_current_span("agent"):
                    pass
            spans = exporter.get_finished_spans()
            ids.append({s.context.trace_id for s in spans} | {s.context.span_id for s in spans})
    finally:
        random.setstate(saved)
    assert len(ids[0]) == len(ids[1]) == 3 and not ids[0] & ids[1]


def test_disabled_tracing_imports_nothing_of_opentelemetry():
    code = (
        "import sys\n"
        "from orchestra.rollout import AgentConfig, RolloutSpec, execute_sync\n"
        "from orchestra.models import ModelConfig\n"
        f"spec = RolloutSpec(scenario={str(REPO / 'scenarios/execution/validation/starter_execution_calendar.json')!r},"
        " agent=AgentConfig(scaffold='tool_calling', model=ModelConfig(model='orchestra/oracle')))\n"
        "record = execute_sync(spec)\n"
        "print(record.result.success, sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**_offline_env()}).stdout
    assert out.strip() == "True []"


def _offline_env() -> dict[str, str]:
    import os

    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "ORCHESTRA_PLUGINS": ""}


def test_bad_trace_destinations_are_clear_errors(tmp_path):
    with pytest.raises(TracingError, match="unknown trace destination 'zipkin'"):
        Tracing.from_spec("zipkin")
    with pytest.raises(TracingError, match="jsonl:PATH"):
        Tracing.from_spec("jsonl")
    with pytest.raises(TracingError, match="protocol 'http/json'"):
        Tracing.otlp(protocol="http/json")  # type: ignore[arg-type]
    (tmp_path / "a_file").write_text("")
    with pytest.raises(TracingError, match="cannot write the trace file"):
        Tracing.from_spec(f"jsonl:{tmp_path / 'a_file' / 'trace.jsonl'}")


def test_an_otlp_http_endpoint_without_a_scheme_is_a_clear_error(monkeypatch):
    """Else the SDK fails only when it exports, after the run ("No connection adapters were found"), losing every span."""
    for var in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318")
    with pytest.raises(TracingError, match=r"OTEL_EXPORTER_OTLP_ENDPOINT='localhost:4318' is not an http:// or https:// URL.*http://localhost:4318"):
        Tracing.from_spec("otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "collector:4318/v1/traces")  # the traces variable wins, as in the SDK
    with pytest.raises(TracingError, match="OTEL_EXPORTER_OTLP_TRACES_ENDPOINT='collector:4318/v1/traces'"):
        Tracing.otlp()
    with pytest.raises(TracingError, match="endpoint='127.0.0.1:6006/v1/traces'"):
        Tracing.otlp(endpoint="127.0.0.1:6006/v1/traces")
    Tracing.otlp(endpoint="https://collector.example:4318/v1/traces").shutdown()  # a URL is fine
    Tracing.otlp(protocol="grpc").shutdown()  # gRPC takes host:port without a scheme


def test_tracing_with_the_sdk_disabled_is_a_clear_error(monkeypatch, tmp_path):
    """OTEL_SDK_DISABLED=true makes the SDK record nothing: `--trace jsonl:PATH` wrote an empty file, silently."""
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    kept = tmp_path / "earlier.jsonl"
    kept.write_text("an earlier run's spans\n")
    with pytest.raises(TracingError, match="OTEL_SDK_DISABLED=true disables the OpenTelemetry SDK"):
        Tracing.from_spec(f"jsonl:{kept}")
    assert kept.read_text() == "an earlier run's spans\n"  # not truncated
    with pytest.raises(TracingError, match="OTEL_SDK_DISABLED"):
        Tracing(InMemorySpanExporter())
    monkeypatch.setenv("OTEL_SDK_DISABLED", "false")
    Tracing(InMemorySpanExporter()).shutdown()


def test_a_real_team_traces_main_agent_expert_call_and_app_agent(tmp_path, judge_pool, scenario_path, monkeypatch):
    """The built-in Agent2Agent plugin (a TeamConfig with a Calendar app-agent), scripted models."""
    from orchestra.session import SessionConfig
    from orchestra.teams.config import AppAgentsConfig, AppAgentSettings, TeamConfig

    monkeypatch.delenv(CAPTURE_CONTENT_ENV, raising=False)
    event = {
        "title": "Q4 roadmap review",
        "start_datetime": "2024-10-17 14:00:00",
        "end_datetime": "2024-10-17 15:00:00",
        "location": "Room 4B",
        "attendees": ["Priya Shah", "Marcus Lee"],
    }
    email = {
        "recipients": ["priya.shah@example.com", "marcus.lee@example.com"],
        "subject": "Q4 roadmap review scheduled",
        "content": "Booked for Thursday 14:00-15:00 in Room 4B.",
    }
    main_model = "orchestra/scripted:" + write_script(
        tmp_path,
        [
            _react("Calendar__expert_agent", {"task": "Add 'Q4 roadmap review' on 2024-10-17 14:00-15:00 in Room 4B with Priya Shah and Marcus Lee."}),
            _react("Emails__send_email", email),
            _react("AgentUserInterface__send_message_to_user", {"content": "Done."}),
        ],
        name="main.json",
    )
    app_model = "orchestra/scripted:" + write_script(
        tmp_path,
        [
            {"tool_calls": [{"name": "Calendar__add_calendar_event", "arguments": event}], "usage": USAGE},
            {"tool_calls": [{"name": "final_answer", "arguments": {"answer": "Event created."}}], "usage": USAGE},
        ],
        name="calendar.json",
    )
    team = TeamConfig(
        name="calendar-team",
        main=AgentConfig(scaffold="react", model=ModelConfig(model=main_model, max_retries=0)),
        app_agents=AppAgentsConfig(apps=["Calendar"], defaults=AppAgentSettings(scaffold="tool_calling", model=ModelConfig(model=app_model, max_retries=0))),
    )
    spec = RolloutSpec(scenario=str(scenario_path("starter_execution_calendar")), team=team, session=SessionConfig())
    exporter = InMemorySpanExporter()
    with Tracing(exporter):
        record = anyio.run(lambda: execute(spec, host=Host.create(entry_points=False), judge_pool=judge_pool))
    assert record.result is not None and record.result.success, record.error

    spans = exporter.get_finished_spans()
    named = _by_name(spans)
    ids = {s.context.span_id: s for s in spans}
    (workflow,) = named["invoke_workflow calendar-team"]
    assert workflow.parent is None and workflow.attributes["orchestra.team"] == "calendar-team"
    assert workflow.attributes["orchestra.policy"] == "team:calendar-team" and workflow.attributes["orchestra.verdict"] is True
    (main,) = named["invoke_agent main"]
    (expert,) = named["execute_tool Calendar__expert_agent"]
    (app_agent,) = named["invoke_agent Calendar"]
    assert ids[main.parent.span_id] is workflow and ids[expert.parent.span_id] is main and ids[app_agent.parent.span_id] is expert
    assert app_agent.attributes["orchestra.agent.app"] == "Calendar" and "orchestra.agent.app" not in main.attributes
    children = sorted(s.name for s in spans if s.parent is not None and ids[s.parent.span_id] is app_agent)
    assert children == ["chat scripted:" + str(tmp_path / "calendar.json")] * 2 + ["execute_tool Calendar__add_calendar_event", "execute_tool final_answer"]
    [delegation] = record.result.delegations
    assert app_agent.attributes["orchestra.sim.duration_s"] == pytest.approx(delegation.duration)
    assert app_agent.attributes["gen_ai.usage.input_tokens"] == delegation.prompt_tokens
