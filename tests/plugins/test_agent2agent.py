"""The built-in Agent2Agent plugin: apps served by app-agents, as ARE 1.2.0's `_apply_a2a_config` does it.

Offline: scripted models for a main agent that delegates and app-agents that act and answer, on the
bundled `starter_execution_calendar` scenario (add a calendar event, email two people, answer).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from orchestra.are import agent_format
from orchestra.hookspecs import hookimpl
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.rollout import AgentConfig, Rollout, RolloutRecord, RolloutSpec, execute
from orchestra.session import Session, SessionConfig
from orchestra.teams.config import AppAgentsConfig, AppAgentSettings, TeamConfig
from support.helpers import write_script

SCENARIO = "starter_execution_calendar"
EVENT = {
    "title": "Q4 roadmap review",
    "start_datetime": "2024-10-17 14:00:00",
    "end_datetime": "2024-10-17 15:00:00",
    "location": "Room 4B",
    "attendees": ["Priya Shah", "Marcus Lee"],
}
EMAIL = {
    "recipients": ["priya.shah@example.com", "marcus.lee@example.com"],
    "subject": "Q4 roadmap review scheduled",
    "content": "Booked for Thursday 14:00-15:00 in Room 4B.",
}
TASK = "Add 'Q4 roadmap review' on 2024-10-17 14:00-15:00 in Room 4B with Priya Shah and Marcus Lee."
USAGE = {"prompt_tokens": 1000, "completion_tokens": 100}  # 100/50 + 1000/5000 = 2.2 simulated seconds per call


def react(name: str, args: dict[str, Any], usage: dict[str, int] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"text": f"Thought: ok\nAction:\n{json.dumps({'action': name, 'action_input': args})}<end_action>"}
    if usage:
        entry["usage"] = usage
    return entry


def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": args}], "usage": USAGE}


def main_script(tmp_path: Path, expert_calls: list[dict[str, Any]], name: str = "main.json") -> str:
    return write_script(
        tmp_path,
        [
            *(react("Calendar__expert_agent", args) for args in expert_calls),
            react("Emails__send_email", EMAIL),
            react("AgentUserInterface__send_message_to_user", {"content": "Done."}),
        ],
        name=name,
    )


def calendar_script(tmp_path: Path, name: str = "calendar.json") -> str:
    return write_script(
        tmp_path,
        [
            call("Calendar__add_calendar_event", EVENT),
            call("final_answer", {"answer": "Event created."}),
        ],
        name=name,
    )


def team(
    main_model: str, app_model: str, *, apps: Any = ("Calendar",), scaffold: str = "react", app_scaffold: str = "tool_calling", max_steps: int | None = None
) -> TeamConfig:
    return TeamConfig(
        name="calendar-team",
        main=AgentConfig(scaffold=scaffold, model=ModelConfig(model=main_model, backoff_seconds=0.0, max_retries=0)),
        app_agents=AppAgentsConfig(
            apps=apps if apps == "all" else list(apps),
            defaults=AppAgentSettings(scaffold=app_scaffold, model=ModelConfig(model=app_model, backoff_seconds=0.0, max_retries=0), max_steps=max_steps),
        ),
    )


def run_team(t: TeamConfig, scenario: Path, judge_pool: Any, host: Host | None = None) -> RolloutRecord:
    spec = RolloutSpec(scenario=str(scenario), team=t, session=SessionConfig())
    return anyio.run(lambda: execute(spec, host=host or Host.create(entry_points=False), judge_pool=judge_pool))


def test_an_app_agent_acts_for_the_main_agent_and_the_judge_counts_its_write(tmp_path, judge_pool, scenario_path):
    t = team(f"orchestra/scripted:{main_script(tmp_path, [{'task': TASK}])}", f"orchestra/scripted:{calendar_script(tmp_path)}")
    record = run_team(t, scenario_path(SCENARIO), judge_pool)
    assert record.error is None and record.result is not None
    result = record.result
    assert result.success, result.rationale  # the app-agent's Calendar write is judged as the main agent's would be

    ledgers = {a.name: a for a in result.agents}
    assert list(ledgers) == ["main", "Calendar"]
    sub = ledgers["Calendar"]
    assert (sub.role, sub.parent, sub.app, sub.scaffold, sub.answer, sub.error) == ("sub", "main", "Calendar", "tool_calling", "Event created.", None)
    assert ledgers["main"].app is None
    assert result.app_agents == ["Calendar"]  # the result says which apps app-agents served here

    agent_events = [e for e in result.event_log if e["type"] == "AGENT"]
    tools = [e["tool"] for e in agent_events]
    assert tools == ["AppAgent__expert_agent", "CalendarApp__add_calendar_event", "EmailClientV2__send_email", "AgentUserInterface__send_message_to_user"]
    expert = agent_events[0]
    assert expert["args"] == {"task": TASK} and expert["return"] == "Event created." and expert["exception"] is None

    [d] = result.delegations
    assert (d.caller, d.callee, d.app, d.tool, d.task, d.ok, d.answer, d.error) == (
        "main",
        "Calendar",
        "Calendar",
        "Calendar__expert_agent",
        TASK,
        True,
        "Event created.",
        None,
    )
    assert (d.steps, d.prompt_tokens, d.completion_tokens) == (2, 2000, 200)
    # The app-agent ran on the simulated clock: two model calls (2.2 s each) and two tool calls (2 s each).
    assert d.duration == pytest.approx(2 * 2.2 + 2 * 2.0) and sub.sim_seconds == pytest.approx(d.duration)
    assert agent_events[1]["t"] - expert["t"] == pytest.approx(2.2)  # its first model call, then its write


# ------------------------------------------------------------------ the main agent's tools, as ARE's


class _NoEngine:
    """Stands in for ARE's `LLMEngineBuilder`: ARE's builders need an engine object, never called here."""

    def create_engine(self, engine_config: Any, mock_responses: Any = None) -> Any:
        return object()


def _are_main_tools(path: Path, judge_pool: Any, proportion: float) -> dict[str, Any]:
    """ARE's own Agent2Agent set-up on the same scenario: `_apply_a2a_config`, then the tools ARE's
    main agent holds (`AppToolAdapter` over `scenario.get_tools()` minus the AUI tools it removes)."""
    from are.simulation.agents.agent_builder import AppAgentBuilder
    from are.simulation.agents.default_agent.are_simulation_main import ARESimulationAgent
    from are.simulation.scenario_runner import _apply_a2a_config
    from are.simulation.scenarios.config import ScenarioRunnerConfig
    from are.simulation.tool_utils import AppToolAdapter

    with Session.open(path, judge_pool=judge_pool) as s:
        config = ScenarioRunnerConfig(model="any", model_provider="mock", a2a_app_prop=proportion)
        sc = _apply_a2a_config(config, s.scenario, s.env.env, app_agent_builder=AppAgentBuilder(llm_engine_builder=_NoEngine()))  # type: ignore[arg-type]
        tools = ARESimulationAgent.remove_aui_irrelevant_tools(None, sc.get_tools())  # type: ignore[arg-type]
        return {a.name: a for a in (AppToolAdapter(t) for t in tools)}


def _our_rollout(path: Path, t: TeamConfig, host: Host, judge_pool: Any) -> Rollout:
    """The team's rollout, started: its main agent is made (tools shaped), nothing has run."""
    return Rollout.open(RolloutSpec(scenario=str(path), team=t), host=host, judge_pool=judge_pool)


@pytest.mark.parametrize("selection", [{"apps": "all"}, {"proportion": 0.5}, {"proportion": 0.75}])
def test_the_main_agent_sees_the_tools_ares_main_agent_sees(selection, judge_pool, scenario_path):
    path = scenario_path(SCENARIO)
    proportion = 1.0 if selection.get("apps") == "all" else selection["proportion"]
    are_tools = _are_main_tools(path, judge_pool, proportion)
    t = TeamConfig(name="t", main=AgentConfig(scaffold="react", model=ModelConfig(model="orchestra/oracle")), app_agents=AppAgentsConfig(**selection))
    host = Host.create(entry_points=False)
    with _our_rollout(path, t, host, judge_pool) as rollout:
        main = rollout.main
        assert main is not None
        # same names in the same order: kept apps first, then the experts in ARE's sampled order
        assert list(main.tools) == list(are_tools)
        experts = [n for n in main.tools if n.endswith("__expert_agent")]
        assert len(experts) == int(4 * proportion)
        assert not any(n.split("__")[0] + "__expert_agent" in experts for n in main.tools if not n.endswith("__expert_agent"))
        # and what the react model reads of them is ARE's rendering of ARE's tools (the expert docstring included)
        main.scaffold.start(main)
        assert agent_format.are_tool_descriptions(main.scaffold.are_tools) == agent_format.are_tool_descriptions(are_tools)


def test_named_apps_the_scenario_lacks_are_not_replaced_and_others_are(judge_pool, scenario_path):
    t = TeamConfig(
        name="t",
        main=AgentConfig(scaffold="tool_calling", model=ModelConfig(model="orchestra/oracle")),
        app_agents=AppAgentsConfig(apps=["Shopping", "Emails"]),
    )
    host = Host.create(entry_points=False)
    with _our_rollout(scenario_path(SCENARIO), t, host, judge_pool) as rollout:
        main = rollout.main
        assert main is not None
        experts = [n for n in main.tools if n.endswith("__expert_agent")]
        assert experts == ["Emails__expert_agent"] and not any(n.startswith("Emails__send") for n in main.tools)
        assert "Calendar__add_calendar_event" in main.tools
        assert rollout.app_agents == ["Emails"]  # what the result reports: Shopping is not in this scenario


def test_an_unknown_scaffold_anywhere_in_the_team_fails_before_the_rollout(tmp_path, judge_pool, scenario_path):
    good = team("orchestra/oracle", "orchestra/oracle")
    assert good.app_agents is not None
    bad_override = good.model_copy(update={"app_agents": good.app_agents.model_copy(update={"overrides": {"Shopping": AppAgentSettings(scaffold="reactt")}})})
    record = run_team(bad_override, scenario_path(SCENARIO), judge_pool)
    assert record.result is None and record.error is not None
    assert "app_agents.overrides.Shopping: unknown scaffold 'reactt'" in record.error and "team 'calendar-team'" in record.error


# ------------------------------------------------------------------ the app-agent: prompt, statelessness


class Capture:
    """Keeps every agent that runs (the app-agents' scaffolds hold what their models read)."""

    def __init__(self) -> None:
        self.agents: list[Any] = []

    @hookimpl(wrapper=True)
    def agent_run(self, agent: Any) -> Any:
        self.agents.append(agent)
        return (yield)


def _are_app_agent(path: Path, judge_pool: Any, app: str) -> Any:
    """ARE's own app-agent for `app` (`AppAgentConfigBuilder` + `AppAgentBuilder`), initialised as its `run()` does."""
    from are.simulation.agents.agent_builder import AppAgentBuilder
    from are.simulation.agents.agent_config_builder import AppAgentConfigBuilder

    with Session.open(path, judge_pool=judge_pool) as s:
        config = AppAgentConfigBuilder().build("default_app_agent")
        app_agent = AppAgentBuilder(llm_engine_builder=_NoEngine()).build(agent_config=config, app=s.scenario.get_app(app), env=s.env.env)  # type: ignore[arg-type]
        agent = app_agent.app_agent
        agent.initialize()
        return agent


def test_a_react_app_agent_reads_exactly_what_ares_app_agent_reads(tmp_path, judge_pool, scenario_path):
    from are.simulation.apps.agent_user_interface import AUIMessage, Sender

    path = scenario_path(SCENARIO)
    app_script = write_script(
        tmp_path, [react("Calendar__add_calendar_event", EVENT, USAGE), react("final_answer", {"answer": "Event created."}, USAGE)], "cal.json"
    )
    t = team(f"orchestra/scripted:{main_script(tmp_path, [{'task': TASK}])}", f"orchestra/scripted:{app_script}", app_scaffold="react")
    capture = Capture()
    record = run_team(t, path, judge_pool, Host.create([capture], entry_points=False))
    assert record.result is not None and record.result.success, record.error or record.result.rationale
    main, app_agent = capture.agents
    assert (app_agent.name, app_agent.role, app_agent.app, app_agent.max_steps) == ("Calendar", "sub", "Calendar", 50)

    are_agent = _are_app_agent(path, judge_pool, "Calendar")
    templates = agent_format.are_message_templates()
    expert = next(e for e in record.result.event_log if e["tool"] == "AppAgent__expert_agent")
    now = 1728975600.0 + expert["t"]  # the scenario's start + the call's time
    are_task = str(AUIMessage(sender=Sender.USER, content=TASK, timestamp=now, time_read=now))
    messages = app_agent.scaffold.messages
    assert messages[0] == {"role": "system", "content": templates["system_prompt"].format(content=are_agent.system_prompt)}
    assert messages[1] == {"role": "user", "content": templates["task"].format(content=are_task)}
    assert app_agent.task == are_task and "Today's date" not in messages[0]["content"]
    assert list(app_agent.tools) == list(are_agent.tools)  # the app's tools in ARE's order, then final_answer


@pytest.mark.parametrize("app_scaffold", ["tool_calling", "parallel_tools"])
def test_a_native_tool_calling_app_agent_gets_ares_app_agent_frame(app_scaffold, tmp_path, judge_pool, scenario_path):
    from are.simulation.agents.default_agent.prompts.system_prompt import APP_AGENT_HINTS

    t = team(f"orchestra/scripted:{main_script(tmp_path, [{'task': TASK}])}", f"orchestra/scripted:{calendar_script(tmp_path)}", app_scaffold=app_scaffold)
    capture = Capture()
    record = run_team(t, scenario_path(SCENARIO), judge_pool, Host.create([capture], entry_points=False))
    assert record.result is not None and record.result.success
    prompt = capture.agents[1].scaffold.messages[0]["content"]
    assert APP_AGENT_HINTS in prompt and "call final_answer with your answer" in prompt
    assert "Today's date" not in prompt and "<<" not in prompt and "send_message_to_user" not in prompt
    assert "Calendar__add_calendar_event" in prompt and "Emails__send_email" not in prompt


def test_each_expert_call_is_a_fresh_stateless_app_agent(tmp_path, judge_pool, scenario_path):
    reads = write_script(tmp_path, [call("Calendar__get_all_tags", {}), call("final_answer", {"answer": "No tags."})], "reads.json")
    t = team(f"orchestra/scripted:{main_script(tmp_path, [{'task': 'List the tags.'}, {'task': 'List them again.'}])}", f"orchestra/scripted:{reads}")
    capture = Capture()
    record = run_team(t, scenario_path(SCENARIO), judge_pool, Host.create([capture], entry_points=False))
    assert record.result is not None, record.error
    result = record.result
    main, first, second = capture.agents
    assert (first.name, second.name) == ("Calendar", "Calendar#2") and first.run_id != second.run_id
    # the second one starts from nothing: its own prompt and task, the script from its start, no trace of the first call
    assert first.scaffold.messages[0] == second.scaffold.messages[0] and len(first.scaffold.messages) == len(second.scaffold.messages)
    assert "List the tags." in first.task and "List them again." in second.task and "List the tags." not in str(second.scaffold.messages)
    assert [d.callee for d in result.delegations] == ["Calendar", "Calendar#2"]
    assert [d.task for d in result.delegations] == ["List the tags.", "List them again."]
    tools = [e["tool"] for e in result.event_log if e["type"] == "AGENT"]
    assert tools[:4] == ["AppAgent__expert_agent", "CalendarApp__get_all_tags"] * 2
    assert [a.name for a in result.agents] == ["main", "Calendar", "Calendar#2"]


# ------------------------------------------------------------------ the clock


def test_the_main_agent_waits_on_the_simulated_clock_while_the_app_agent_works(tmp_path, judge_pool, scenario_path):
    slow = write_script(
        tmp_path,
        [
            {**call("Calendar__add_calendar_event", EVENT), "usage": {"prompt_tokens": 5000, "completion_tokens": 1000}},  # 20 + 1 = 21 s
            call("final_answer", {"answer": "Event created."}),  # 2.2 s
        ],
        "slow.json",
    )
    t = team(f"orchestra/scripted:{main_script(tmp_path, [{'task': TASK}])}", f"orchestra/scripted:{slow}")
    record = run_team(t, scenario_path(SCENARIO), judge_pool)
    assert record.result is not None and record.result.success
    events = {e["tool"]: e["t"] for e in record.result.event_log if e["type"] == "AGENT"}
    [d] = record.result.delegations
    assert d.duration == pytest.approx(21.0 + 2.2 + 2 * 2.0)  # its two model calls and two tool calls
    assert events["CalendarApp__add_calendar_event"] - events["AppAgent__expert_agent"] == pytest.approx(21.0)
    # the main agent's next step starts after the app-agent's time and the expert call's own tool charge
    assert events["EmailClientV2__send_email"] - events["AppAgent__expert_agent"] >= d.duration + 2.0
    assert d.start == pytest.approx(events["AppAgent__expert_agent"])


# ------------------------------------------------------------------ the judge, as if the main agent had acted


def test_the_judge_and_the_dense_reward_see_an_app_agents_write_as_the_main_agents(tmp_path, judge_pool, scenario_path):
    """The same writes, once by the main agent itself and once through an app-agent, get the same verdict and dense reward."""
    path = scenario_path(SCENARIO)
    dense = SessionConfig(reward_mode="dense")
    no_email = write_script(
        tmp_path,
        [
            react("Calendar__expert_agent", {"task": TASK}),
            react("AgentUserInterface__send_message_to_user", {"content": "Done."}),
        ],
        "no_email.json",
    )
    t = team(f"orchestra/scripted:{no_email}", f"orchestra/scripted:{calendar_script(tmp_path)}")
    team_record = anyio.run(
        lambda: execute(RolloutSpec(scenario=str(path), team=t, session=dense), host=Host.create(entry_points=False), judge_pool=judge_pool)
    )
    alone = write_script(
        tmp_path,
        [
            react("Calendar__add_calendar_event", EVENT),
            react("AgentUserInterface__send_message_to_user", {"content": "Done."}),
        ],
        "alone.json",
    )
    agent = AgentConfig(scaffold="react", model=ModelConfig(model=f"orchestra/scripted:{alone}"))
    alone_record = anyio.run(
        lambda: execute(RolloutSpec(scenario=str(path), agent=agent, session=dense), host=Host.create(entry_points=False), judge_pool=judge_pool)
    )
    assert team_record.result is not None and alone_record.result is not None
    assert not team_record.result.success and not alone_record.result.success  # the email is missing in both
    assert team_record.result.reward == alone_record.result.reward > 0.0

    def writes(result: Any) -> list[tuple[str, Any]]:
        return [(e["tool"], e["args"]) for e in result.event_log if e["type"] == "AGENT" and e["tool"] != "AppAgent__expert_agent"]

    assert writes(team_record.result) == writes(alone_record.result)


# ------------------------------------------------------------------ failures


def test_a_bad_task_argument_is_a_failed_call_that_starts_no_agent(tmp_path, judge_pool, scenario_path):
    script = write_script(
        tmp_path,
        [
            react("Calendar__expert_agent", {}),
            react("Calendar__expert_agent", {"task": 5}),
            react("Calendar__expert_agent", {"task": "x", "when": "now"}),
            react("AgentUserInterface__send_message_to_user", {"content": "Gave up."}),
        ],
        "bad.json",
    )
    t = team(f"orchestra/scripted:{script}", "orchestra/scripted:/no/such/app/script.json")
    capture = Capture()
    record = run_team(t, scenario_path(SCENARIO), judge_pool, Host.create([capture], entry_points=False))
    assert record.error is None and record.result is not None
    main = capture.agents[0]
    assert [a.name for a in capture.agents] == ["main"] and record.result.delegations == []
    errors = [step.outcomes[0].error for step in main.records[:3]]
    assert errors == [
        "Invalid arguments for Calendar__expert_agent: missing required argument 'task'. Expected (task: str).",
        "Invalid arguments for Calendar__expert_agent: 'task' must be a string, got int. Expected (task: str).",
        "Invalid arguments for Calendar__expert_agent: unexpected argument(s) ['when']. Expected (task: str).",
    ]
    assert not any(e["tool"] == "AppAgent__expert_agent" for e in record.result.event_log)


def test_an_app_agent_that_spends_its_budget_is_a_failed_call_not_an_empty_answer(tmp_path, judge_pool, scenario_path):
    loop = write_script(tmp_path, [call("Calendar__get_all_tags", {})] * 3, "loop.json")
    t = team(f"orchestra/scripted:{main_script(tmp_path, [{'task': TASK}])}", f"orchestra/scripted:{loop}", max_steps=3)
    capture = Capture()
    record = run_team(t, scenario_path(SCENARIO), judge_pool, Host.create([capture], entry_points=False))
    assert record.error is None and record.result is not None
    outcome = capture.agents[0].records[0].outcomes[0]
    assert not outcome.ok and outcome.error == "sub-agent 'Calendar' failed: it spent its 3-step budget without calling final_answer"
    [d] = record.result.delegations
    assert (d.ok, d.answer, d.error, d.steps) == (False, None, outcome.error, 3)
    expert = next(e for e in record.result.event_log if e["tool"] == "AppAgent__expert_agent")
    assert expert["exception"] == outcome.error and expert["return"] is None
    assert not record.result.success  # no calendar event was made


def test_an_app_agent_whose_model_fails_is_a_failed_call_and_the_rollout_is_judged(tmp_path, judge_pool, scenario_path):
    t = team(f"orchestra/scripted:{main_script(tmp_path, [{'task': TASK}])}", "orchestra/scripted:/no/such/app/script.json")
    record = run_team(t, scenario_path(SCENARIO), judge_pool)
    assert record.error is None and record.result is not None and record.result.judge == "scripted"
    [d] = record.result.delegations
    assert not d.ok and d.error is not None and "/no/such/app/script.json" in d.error
    sub = {a.name: a for a in record.result.agents}["Calendar"]
    assert sub.stop_reason == "model_error" and sub.app == "Calendar"
    tools = [e["tool"] for e in record.result.event_log if e["type"] == "AGENT"]
    assert tools == ["AppAgent__expert_agent", "EmailClientV2__send_email", "AgentUserInterface__send_message_to_user"]


# ------------------------------------------------------------------ what a user reads


def test_json_out_files_and_the_result_line_report_agents_and_delegations(tmp_path, judge_pool, scenario_path):
    from orchestra.cli._output import outcome_line, outcome_record, write_outcome

    t = team(f"orchestra/scripted:{main_script(tmp_path, [{'task': TASK}])}", f"orchestra/scripted:{calendar_script(tmp_path)}")
    record = run_team(t, scenario_path(SCENARIO), judge_pool)
    rec = json.loads(json.dumps(outcome_record(record), default=str))
    assert rec["policy"] == "team:calendar-team"
    assert [(a["name"], a["role"], a["app"], a["model"]) for a in rec["agents"]] == [
        ("main", "main", None, t.main.model.model),
        ("Calendar", "sub", "Calendar", f"orchestra/scripted:{tmp_path / 'calendar.json'}"),
    ]
    [d] = rec["delegations"]
    assert (d["caller"], d["callee"], d["app"], d["task"], d["answer"], d["ok"]) == ("main", "Calendar", "Calendar", TASK, "Event created.", True)
    assert d["duration"] > 0 and d["steps"] == 2

    write_outcome(tmp_path / "out", record)
    judge_file = json.loads((tmp_path / "out" / f"{SCENARIO}.judge.json").read_text())
    assert judge_file["delegations"] == rec["delegations"] and judge_file["agents"] == rec["agents"]
    assert "agents=2 delegations=1  judge=scripted" in outcome_line(record)


def test_a_team_rollout_is_reproducible_byte_for_byte(tmp_path, judge_pool, scenario_path):
    t = team(f"orchestra/scripted:{main_script(tmp_path, [{'task': TASK}])}", f"orchestra/scripted:{calendar_script(tmp_path)}")
    first, second = (run_team(t, scenario_path(SCENARIO), judge_pool) for _ in range(2))
    assert first.result is not None and second.result is not None
    assert first.result.event_log_sha256 == second.result.event_log_sha256
    assert first.result.event_log == second.result.event_log and first.result.delegations == second.result.delegations


def test_a_sampling_seed_reaches_every_agents_model(tmp_path, judge_pool, scenario_path):
    t = team(f"orchestra/scripted:{main_script(tmp_path, [{'task': TASK}])}", f"orchestra/scripted:{calendar_script(tmp_path)}")
    capture = Capture()
    spec = RolloutSpec(scenario=str(scenario_path(SCENARIO)), team=t, seed=7, sample_index=2)
    record = anyio.run(lambda: execute(spec, host=Host.create([capture], entry_points=False), judge_pool=judge_pool))
    assert record.result is not None and record.result.success, record.error
    assert [(a.name, a.model.extra.get("seed")) for a in capture.agents] == [("main", 9), ("Calendar", 9)]
