"""The oracle model in a team: the main agent's oracle delegates, the app-agent's oracle reads its task.

The app-agent must act on the task text it received, never on the scenario's plan: a plugin that
rewrites the text in transit changes what the app-agent does. The main agent learns what it needs
later (ids an app-agent created, when its calls ran) from the app-agent's answer: a plugin that
rewrites the answer changes the next delegation.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest

from orchestra.agent import spawn
from orchestra.are.agent_format import are_parse_action
from orchestra.hookspecs import hookimpl
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.plugins.offline_models import CALLS_MARKER, delegation_task, dump_block, parse_calls, parse_results
from orchestra.rollout import AgentConfig, RolloutRecord, RolloutSpec, execute
from orchestra.teams.config import AppAgentsConfig, AppAgentSettings, TeamConfig
from support.helpers import SCENARIOS, open_rollout, scenario

ORACLE = ModelConfig(model="orchestra/oracle")
CALLS = [
    {"tool": "Emails__send_email", "arguments": {"recipients": ["a@b.c"], "subject": 'It\'s "done"', "content": "back\\slash \\\" and 'quotes'"}},
    {"tool": "Calendar__delete_calendar_event", "arguments": {"event_id": "abc", "n": 2, "flag": None}},
]


def team(main: str = "tool_calling", app_agents: str = "tool_calling", **selection: Any) -> TeamConfig:
    return TeamConfig(
        name="oracle-test",
        main=AgentConfig(scaffold=main, model=ORACLE),
        app_agents=AppAgentsConfig(**(selection or {"proportion": 1.0}), defaults=AppAgentSettings(scaffold=app_agents)),
    )


def run(path: Any, t: TeamConfig, judge_pool: Any, plugins: list[Any] = ()) -> RolloutRecord:  # type: ignore[assignment]
    spec = RolloutSpec(scenario=str(path), team=t)
    record = anyio.run(lambda: execute(spec, host=Host.create(list(plugins)), judge_pool=judge_pool))
    assert record.error is None and record.result is not None, record.error
    return record


def corpus(stem: str) -> Any:
    return next(SCENARIOS.rglob(f"{stem}.json"))


# ------------------------------------------------------------------ the texts


def test_the_calls_block_survives_are_wrapping_and_are_react_parsing():
    task = delegation_task(CALLS)
    assert "Emails__send_email, then Calendar__delete_calendar_event" in task  # the sentence names the calls
    # ARE's app-agent receives str(AUIMessage): header lines before, "Already read" after
    wrapped = f"Received at: 2024-10-15 07:00:00\nSender: User\nMessage: {task}\nAlready read: True\nRead at: 2024-10-15 07:00:00"
    assert parse_calls(wrapped) == CALLS
    # a ReAct main agent's action goes through ARE's parser, which turns every \" into '
    action = f"Thought: delegate\nAction:\n{json.dumps({'action': 'Emails__expert_agent', 'action_input': {'task': task}})}"
    _, action_input = are_parse_action(action)
    assert action_input["task"] != task and parse_calls(action_input["task"]) == CALLS


def test_results_blocks_read_back_and_garbage_is_no_result():
    results = [{"tool": "Calendar__add_calendar_event", "ok": True, "output": 'it\'s "x"', "time": 1.5}]
    assert parse_results(f"Done.\n=== RESULTS (JSON, in order) ===\n{dump_block(results)}") == results
    assert parse_results("task completed") == [] and parse_results(None) == []
    with pytest.raises(ValueError, match="no calls block"):
        parse_calls("Please add lunch with Sofia on Saturday.")
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_calls(f'{CALLS_MARKER}\n[{{"tool": ')


def test_a_sub_agent_whose_task_lists_no_calls_says_so_and_makes_none(judge_pool):
    with open_rollout(scenario("starter_execution_calendar"), judge_pool=judge_pool) as rollout:
        main = rollout.main
        assert main is not None
        outcome = anyio.run(lambda: spawn(main, "Add lunch with Sofia on Saturday.", model=ORACLE, scaffold="tool_calling"))
        assert outcome.ok and "I could not do this task: no calls block" in outcome.output
        assert [d.steps for d in rollout.delegations] == [1]


# ------------------------------------------------------------------ the app-agent acts on its task text


class RewriteTasks:
    """Rewrites every expert task in transit, before the Agent2Agent plugin hands it to the app-agent."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new
        self.seen: list[str] = []

    @hookimpl(wrapper=True)
    def delegate(self, agent: Any, call: Any) -> Any:
        if call.name.endswith("__expert_agent"):
            self.seen.append(call.arguments["task"])
            call.arguments["task"] = call.arguments["task"].replace(self.old, self.new)
        return (yield)


@pytest.mark.parametrize("main,app_agents", [("tool_calling", "tool_calling"), ("react", "react"), ("parallel_tools", "parallel_tools")])
def test_the_app_agent_follows_the_task_text_it_received(main, app_agents, judge_pool):
    rewrite = RewriteTasks("Lunch with Sofia", "Picnic with Sofia")
    record = run(scenario("starter_multiturn_followup"), team(main, app_agents), judge_pool, [rewrite])
    assert rewrite.seen and all("Lunch with Sofia" in t for t in rewrite.seen if "add_calendar_event" in t)
    titles = [e["args"]["title"] for e in record.result.event_log if e["tool"] == "CalendarApp__add_calendar_event"]
    assert titles and all(t.startswith("Picnic with Sofia") for t in titles)
    calendar = [d for d in record.result.delegations if d.app == "Calendar"]
    assert calendar and all("Picnic with Sofia" in d.task for d in calendar if "add_calendar_event" in d.task)


class RewriteAnswers:
    """Replaces one id in every expert answer on its way back to the main agent."""

    def __init__(self) -> None:
        self.replaced: list[str] = []

    @hookimpl(wrapper=True)
    def tool_call(self, agent: Any, call: Any) -> Any:
        inner = yield

        async def rewritten() -> Any:
            outcome = await inner
            if call.name == "Calendar__expert_agent" and outcome.ok and "add_calendar_event" in outcome.output:
                ids = re.findall(r'"output":"([0-9a-f]{32})"', outcome.output)
                self.replaced += ids
                for old in ids:
                    outcome.output = outcome.output.replace(old, "f" * 32)
            return outcome

        return rewritten()


def test_the_main_agent_takes_created_ids_from_the_answer(judge_pool):
    answers = RewriteAnswers()
    record = run(scenario("starter_multiturn_followup"), team(), judge_pool, [answers])
    assert answers.replaced  # the lunch's id, created by the app-agent in turn 1
    delete = [d for d in record.result.delegations if "delete_calendar_event" in d.task]
    assert len(delete) == 1 and "f" * 32 in delete[0].task and answers.replaced[0] not in delete[0].task
    deletes = [e for e in record.result.event_log if e["tool"] == "CalendarApp__delete_calendar_event"]
    assert [e["args"]["event_id"] for e in deletes] == ["f" * 32]
    assert not record.result.success  # the judge sees the wrong delete


def test_ids_an_app_agent_creates_reach_the_next_delegation(judge_pool):
    record = run(corpus("univ_05_mt_exec_order_cancel"), team(), judge_pool)
    assert record.result.success, record.result.rationale
    checkout = next(e for e in record.result.event_log if e["tool"] == "ShoppingApp__checkout")
    cancel = next(d for d in record.result.delegations if "cancel_order" in d.task)
    assert checkout["return"] and checkout["return"] in cancel.task


# ------------------------------------------------------------------ how the app-agent works


@pytest.mark.parametrize("app_agents,steps", [("react", 3), ("tool_calling", 3), ("parallel_tools", 2)])
def test_one_call_per_step_or_all_at_once(app_agents, steps, judge_pool):
    # turn 3: three actions due 5 s after the pairing request, two on Calendar (one delegation) and one on Chats
    record = run(corpus("univ_02_mt_adapt_one_on_one_slot"), team("tool_calling", app_agents), judge_pool)
    assert record.result.success, record.result.rationale
    both = [d for d in record.result.delegations if "delete_calendar_event" in d.task]
    assert len(both) == 1 and "add_calendar_event" in both[0].task
    assert both[0].steps == steps  # 2 calls + final_answer, or both calls in one step + final_answer
    results = parse_results(both[0].answer)
    assert [r["tool"] for r in results] == ["Calendar__delete_calendar_event", "Calendar__add_calendar_event"]
    assert all(r["ok"] for r in results)


def test_only_the_served_apps_are_delegated(judge_pool):
    record = run(scenario("starter_execution_calendar"), team(apps=["Calendar"]), judge_pool)
    assert record.result.success, record.result.rationale
    assert [d.app for d in record.result.delegations] == ["Calendar"]
    calendar = [a for a in record.result.agents if a.app == "Calendar"]
    assert len(calendar) == 1 and calendar[0].role == "sub" and calendar[0].answer
