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

from helpers import write_script
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.rollout import AgentConfig, RolloutRecord, RolloutSpec, execute
from orchestra.session import SessionConfig
from orchestra.teams.config import AppAgentsConfig, AppAgentSettings, TeamConfig

SCENARIO = "starter_execution_calendar"
EVENT = {
    "title": "Q4 roadmap review", "start_datetime": "2024-10-17 14:00:00", "end_datetime": "2024-10-17 15:00:00",
    "location": "Room 4B", "attendees": ["Priya Shah", "Marcus Lee"],
}
EMAIL = {
    "recipients": ["priya.shah@example.com", "marcus.lee@example.com"], "subject": "Q4 roadmap review scheduled",
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
    return write_script(tmp_path, [
        *(react("Calendar__expert_agent", args) for args in expert_calls),
        react("Emails__send_email", EMAIL),
        react("AgentUserInterface__send_message_to_user", {"content": "Done."}),
    ], name=name)


def calendar_script(tmp_path: Path, name: str = "calendar.json") -> str:
    return write_script(tmp_path, [
        call("Calendar__add_calendar_event", EVENT),
        call("final_answer", {"answer": "Event created."}),
    ], name=name)


def team(main_model: str, app_model: str, *, apps: Any = ("Calendar",), scaffold: str = "react", app_scaffold: str = "tool_calling",
         max_steps: int | None = None) -> TeamConfig:
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

    agent_events = [e for e in result.event_log if e["type"] == "AGENT"]
    tools = [e["tool"] for e in agent_events]
    assert tools == ["AppAgent__expert_agent", "CalendarApp__add_calendar_event", "EmailClientV2__send_email", "AgentUserInterface__send_message_to_user"]
    expert = agent_events[0]
    assert expert["args"] == {"task": TASK} and expert["return"] == "Event created." and expert["exception"] is None

    [d] = result.delegations
    assert (d.caller, d.callee, d.app, d.tool, d.task, d.ok, d.answer, d.error) == (
        "main", "Calendar", "Calendar", "Calendar__expert_agent", TASK, True, "Event created.", None)
    assert (d.steps, d.prompt_tokens, d.completion_tokens) == (2, 2000, 200)
    # The app-agent ran on the simulated clock: two model calls (2.2 s each) and two tool calls (2 s each).
    assert d.duration == pytest.approx(2 * 2.2 + 2 * 2.0) and sub.sim_seconds == pytest.approx(d.duration)
    assert agent_events[1]["t"] - expert["t"] == pytest.approx(2.2)  # its first model call, then its write
