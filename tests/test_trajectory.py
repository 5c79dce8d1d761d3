"""A rollout's trajectory (`orchestra.trajectory`): recorded for every agent, prompts by reference,
tool names both ways, events attributed, byte-identical on a rerun, the loop unchanged."""

from __future__ import annotations

import json

import anyio

from orchestra.cli import main
from orchestra.config import SessionConfig
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.record import RolloutRecord
from orchestra.rollout import AgentConfig, RolloutSpec, execute
from orchestra.trajectory import Trajectory, TrajectoryRecorder, thought_of
from orchestra.types import ModelRequest, ModelResponse, ToolCall, ToolOutcome, ToolSpec, Usage
from support.helpers import scenario, write_script


def _request(messages: list[dict[str, str]]) -> ModelRequest:
    return ModelRequest(messages=[dict(m) for m in messages], action_format="react")


def _step(recorder: TrajectoryRecorder, agent: str, prompt: object, index: int) -> None:
    recorder.step(
        agent,
        index=index,
        run=1,
        t_start=0,
        t_model=0,
        t_end=0,
        notifications=[],
        prompt=prompt,
        outputs=[],
        acted_on=None,
        calls=[],
        outcomes=[],  # type: ignore[arg-type]
    )


def test_prompts_are_stored_once_and_rebuilt_whole():
    recorder = TrajectoryRecorder()
    for name in ("main", "Calendar"):
        recorder.add_agent(name=name, role="main", parent=None, app=None, task=None, model="m", scaffold="react", tools={}, are_tools=())
    conversation = [{"role": "system", "content": "you are an agent"}, {"role": "user", "content": "task"}]
    prompts = []
    for i in range(30):
        prompts.append(recorder.prompt("main", _request(conversation)))
        _step(recorder, "main", prompts[-1], i)
        if i == 10:  # the same prompt again (an invalid-format retry resends it): nothing new stored
            prompts.append(recorder.prompt("main", _request(conversation)))
            _step(recorder, "main", prompts[-1], i)
        conversation = [*conversation, {"role": "assistant", "content": f"step {i}"}, {"role": "user", "content": f"observation {i}"}]
    other = recorder.prompt("Calendar", _request([{"role": "system", "content": "app agent"}]))  # another agent: its own chain
    _step(recorder, "Calendar", other, 0)
    trajectory = recorder.build(ledgers=[], delegations=[], event_log=[], stop_reason="x")
    stored = sum(len(s.prompt.messages) for a in trajectory.agents for s in a.steps if s.prompt is not None)
    assert stored == 2 + 2 * 29 + 1  # each message once (N, not N²)
    assert prompts[11].base == prompts[10].id and prompts[11].prefix == 2 + 2 * 10 and prompts[11].messages == []
    assert other.base is None and other.id == 31
    assert trajectory.prompt(prompts[-1].id) == conversation[:-2]
    assert trajectory.prompt(prompts[0].id) == conversation[:2]
    assert trajectory.prompt(other.id) == [{"role": "system", "content": "app agent"}]
    again = Trajectory.model_validate_json(trajectory.model_dump_json())
    assert again.prompt(prompts[20].id) == trajectory.prompt(prompts[20].id)


def test_thoughts_are_the_reasoning_before_the_action():
    react = ModelResponse(text='Thought: I should look it up.\nAction:\n{"action": "X", "action_input": {}}', tool_calls=[], usage=Usage())
    code = ModelResponse(text="Thought: loop over them\nCode:\n```py\nprint(1)\n```", tool_calls=[], usage=Usage())
    plain = ModelResponse(text="Hello there", tool_calls=[], usage=Usage())
    assert thought_of(react) == "I should look it up."
    assert thought_of(code) == "loop over them"
    assert thought_of(plain) is None


def test_each_event_names_the_agent_that_made_it_and_each_call_its_event():
    spec = ToolSpec(
        name="Chats__send_message", app_name="Chats", app_class="MessagingAppV2", method="send_message", description="", args=(), return_type="str", writes=True
    )
    recorder = TrajectoryRecorder()
    recorder.set_start_time(1000.0)
    tools = {spec.name: spec}
    recorder.add_agent(name="main", role="main", parent=None, app=None, task=None, model="m", scaffold="react", tools=tools, are_tools=tools)
    calls = [ToolCall(name="Chats__send_message", arguments={"content": "hi"}, id="c1"), ToolCall(name="Chats__teleport", id="c2", error="unknown tool")]
    outcomes = [
        ToolOutcome(calls[0].name, calls[0].arguments, ok=True, output="id", sim_time=1005.0),
        ToolOutcome(calls[1].name, {}, ok=False, sim_time=1005.0),
    ]
    recorder.step(
        "main", index=0, run=1, t_start=1, t_model=5, t_end=7, notifications=[], prompt=None, outputs=[], acted_on=None, calls=calls, outcomes=outcomes
    )
    events = [
        {"t": 1.0, "type": "USER", "tool": "AgentUserInterface__send_message_to_agent"},
        {"t": 5.0, "type": "AGENT", "tool": "MessagingAppV2__get_existing_conversation_ids"},  # the app's nested call
        {"t": 5.0, "type": "AGENT", "tool": "MessagingAppV2__send_message"},
        {"t": 6.0, "type": "ENV", "tool": "MessagingAppV2__create_and_add_message"},
    ]
    t = recorder.build(ledgers=[], delegations=[], event_log=events, stop_reason="x")
    assert t.event_agents == [None, "main", "main", None]
    sent, unknown = t.agents[0].steps[0].tool_calls
    assert (sent.t, sent.event, sent.event_name, sent.problem) == (5.0, 2, "MessagingAppV2__send_message", None)
    assert (unknown.event, unknown.event_name, unknown.problem, unknown.error) == (None, None, "unknown_tool", "unknown tool")
    assert t.tool_names == {"Chats__send_message": "MessagingAppV2__send_message"}


def _run(tmp_path, name, *args):
    out = tmp_path / name
    assert main(["run", *args, "--out", str(out), "--no-progress"]) in (0, 1)
    return out


def test_eighty_unknown_tool_calls_leave_their_trace_in_the_record(tmp_path, capsys):
    entries = [{"text": f"try {i}", "tool_calls": [{"name": "Nowhere__teleport", "arguments": {"to": i}}]} for i in range(80)]
    script = write_script(tmp_path, entries)
    path = scenario("starter_search_lookup")
    out = _run(tmp_path, "out", "--model", f"orchestra/scripted:{script}", "--scaffold", "tool_calling", "--scenarios", str(path))
    capsys.readouterr()
    record = RolloutRecord.model_validate_json((out / "rollouts" / "starter_search_lookup.json").read_text())
    t = record.trajectory
    assert t is not None and t.stop_reason == "step_budget"
    main_agent = t.agents[0]
    model_steps = [s for s in main_agent.steps if s.auto is None]
    assert len(model_steps) == 80
    for i, step in enumerate(model_steps):
        assert step.index == i and step.outputs[-1].text == f"try {i}"
        (call,) = step.tool_calls
        assert call.name == "Nowhere__teleport" and call.problem == "unknown_tool" and not call.ok and call.event_name is None
        assert "Nowhere__teleport" in (call.error or "") and call.arguments == {"to": i}
    (auto,) = [s for s in main_agent.steps if s.auto is not None]
    assert auto.tool_calls[0].name == "AgentUserInterface__send_message_to_user" and "Max iterations (80)" in auto.tool_calls[0].arguments["content"]
    # the results file stays compact: the trajectory is only in rollouts/NAME.json
    line = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert "trajectory" not in line and line["result"]["event_log_sha256"] == record.result.event_log_sha256  # type: ignore[union-attr]


def test_a_permanent_model_failure_keeps_the_step_it_cut_short(tmp_path, capsys):
    script = write_script(tmp_path, [{"text": "no action here"}])  # rejected, then the script runs out: permanent
    path = scenario("starter_execution_calendar")
    out = _run(tmp_path, "out", "--model", f"orchestra/scripted:{script}", "--scaffold", "react", "--scenarios", str(path))
    capsys.readouterr()
    record = RolloutRecord.model_validate_json((out / "rollouts" / "starter_execution_calendar.json").read_text())
    assert record.status == "ERROR" and record.trajectory is not None and record.trajectory.stop_reason == "model_error"
    (step,) = record.trajectory.agents[0].steps
    assert [o.text for o in step.outputs] == ["no action here"] and step.outputs[0].rejected
    assert step.model_error is not None and "script exhausted" in step.model_error and step.prompt is not None


def test_team_trajectory_nests_the_app_agents_steps_and_maps_tool_names(tmp_path, capsys):
    path = scenario("starter_execution_group_chat")
    out = _run(tmp_path, "team", "--team", "oracle", "--scenarios", str(path))
    capsys.readouterr()
    record = RolloutRecord.model_validate_json((out / "rollouts" / "starter_execution_group_chat.json").read_text())
    assert record.status == "PASS"
    t = record.trajectory
    assert t is not None and record.result is not None
    main_agent, *subs = t.agents
    assert main_agent.role == "main" and subs
    delegating = [c for s in main_agent.steps for c in s.tool_calls if c.delegate is not None]
    assert len(delegating) == len(record.result.delegations) == len(subs)
    for call in delegating:
        child = t.agent(call.delegate)  # type: ignore[arg-type]
        assert child is not None and child.parent == "main" and child.app is not None and child.steps
        assert call.name == f"{child.app}__expert_agent" and call.event_name == "AppAgent__expert_agent"
        assert child.runs[0].task and any(c.name == "final_answer" for s in child.steps for c in s.tool_calls)
    # the model's names and the judge's: Chats__... is logged as MessagingAppV2__...
    assert any(k.endswith("__expert_agent") and v == "AppAgent__expert_agent" for k, v in t.tool_names.items())
    sub_calls = [c for a in subs for s in a.steps for c in s.tool_calls if c.event_name is not None]
    assert sub_calls and all(c.event is not None for c in sub_calls)
    for call in sub_calls:
        event = record.result.event_log[call.event]  # type: ignore[index]
        assert event["tool"] == call.event_name and t.event_agents[call.event] != "main"  # type: ignore[index]
    agent_events = [i for i, e in enumerate(record.result.event_log) if e["type"] == "AGENT"]
    assert agent_events and all(t.event_agents[i] is not None for i in agent_events)
    assert {t.event_agents[i] for i in agent_events} >= {"main", subs[0].name}
    capsys.readouterr()
    assert main(["show", str(out / "starter_execution_group_chat")]) == 0
    text = capsys.readouterr().out
    assert f"[{subs[0].name}] app-agent for {subs[0].app}" in text and "  | " in text and "[logged as AppAgent__expert_agent]" in text


def test_rerun_writes_byte_identical_rollout_files(tmp_path, capsys):
    path = str(scenario("starter_time_deadline"))
    a = _run(tmp_path, "a", "--model", "orchestra/oracle", "--scaffold", "react", "--scenarios", path)
    b = _run(tmp_path, "b", "--model", "orchestra/oracle", "--scaffold", "react", "--scenarios", path)
    capsys.readouterr()
    name = "rollouts/starter_time_deadline.json"
    assert (a / name).read_bytes() == (b / name).read_bytes()
    assert (a / "results.jsonl").read_bytes() == (b / "results.jsonl").read_bytes()


def test_recording_changes_nothing_the_loop_does():
    """The record of a rollout driven through the step API (same recorder, same loop) equals the one
    `execute` makes: trajectory included, and the event-log hash is the world's, not the recorder's."""
    spec = RolloutSpec(
        scenario=str(scenario("starter_execution_calendar")),
        agent=AgentConfig(scaffold="react", model=ModelConfig(model="orchestra/oracle")),
        session=SessionConfig(),
    )
    first = anyio.run(lambda: execute(spec, host=Host.create()))
    second = anyio.run(lambda: execute(spec, host=Host.create()))
    assert first.result is not None and first.trajectory is not None
    assert first.model_dump_json() == second.model_dump_json()
    steps = [s for s in first.trajectory.agents[0].steps]
    assert sum(len(s.tool_calls) for s in steps) == first.result.n_tool_calls
    assert len(steps) == first.result.steps and all(s.thought for s in steps if s.tool_calls)
