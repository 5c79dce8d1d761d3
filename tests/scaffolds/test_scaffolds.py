"""The three scaffolds: oracle model scores 1.0 everywhere; wrong writes and garbage are handled."""

from __future__ import annotations

import pytest

from helpers import STARTER
from helpers import run_agent_on, write_script
from orchestra.host import Host

SCAFFOLDS = ("react", "tool_calling", "parallel_tools")
CASES = [(s, p) for s in SCAFFOLDS for p in STARTER]


@pytest.fixture(scope="module")
def host():
    return Host.create()


@pytest.mark.parametrize("scaffold,path", CASES, ids=[f"{s}-{p.stem}" for s, p in CASES])
def test_oracle_model_scores_one(scaffold, path, host, judge_pool):
    result = run_agent_on(path, model="orchestra/oracle", scaffold=scaffold, host=host, judge_pool=judge_pool)
    assert result.error is None
    assert result.success, result.rationale
    assert result.reward == 1.0
    assert result.steps > 0 and result.prompt_tokens > 0 and result.completion_tokens > 0


def _calls(*calls):
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in calls]}


def _react(name, args):
    import json

    return {"text": f"Thought: do it.\nAction:\n{json.dumps({'action': name, 'action_input': args})}<end_action>"}


WRONG_WRITE = [
    ("Calendar__add_calendar_event", {"title": "Roadmap review", "start_datetime": "2024-10-18 14:00:00", "end_datetime": "2024-10-18 15:00:00", "attendees": ["Priya Shah", "Marcus Lee"]}),
    ("Emails__send_email", {"recipients": ["priya.shah@example.com", "marcus.lee@example.com"], "subject": "Roadmap review", "content": "See you there."}),
    ("AgentUserInterface__send_message_to_user", {"content": "Done."}),
]


@pytest.mark.parametrize("scaffold", SCAFFOLDS)
def test_scripted_wrong_write_scores_zero(scaffold, tmp_path, host, judge_pool, scenario_path):
    entries = [_react(n, a) if scaffold == "react" else _calls((n, a)) for n, a in WRONG_WRITE]
    result = run_agent_on(scenario_path("starter_execution_calendar"), model=f"orchestra/scripted:{write_script(tmp_path, entries)}",
                          scaffold=scaffold, host=host, judge_pool=judge_pool)
    assert result.error is None
    assert result.turns_completed == 1
    assert result.success is False and result.reward == 0.0
    assert "CalendarApp__add_calendar_event" in (result.rationale or "")


GARBAGE = {
    "react": [
        {"text": "I think I should look at the calendar."},  # no Action
        {"text": "Thought: x\nAction:\n{not json<end_action>"},  # bad JSON
        _react("Calendar__teleport", {}),  # unknown tool
        _react("Calendar__get_calendar_event", {"wrong_arg": 1}),  # bad arguments
    ],
    "tool_calling": [
        {"text": "Let me think about it."},  # text only
        _calls(("Calendar__teleport", {})),
        _calls(("Calendar__get_calendar_event", {"wrong_arg": 1})),
        {"tool_calls": [{"name": "Calendar__get_calendar_event", "arguments": "{broken"}]},
    ],
}
GARBAGE["parallel_tools"] = GARBAGE["tool_calling"]


@pytest.mark.parametrize("scaffold", SCAFFOLDS)
def test_garbage_gets_observations_until_the_step_budget(scaffold, tmp_path, host, judge_pool, scenario_path):
    entries = GARBAGE[scaffold]
    result = run_agent_on(scenario_path("starter_execution_calendar"), model=f"orchestra/scripted:{write_script(tmp_path, entries)}",
                          scaffold=scaffold, host=host, judge_pool=judge_pool, max_steps=len(entries))
    assert result.error is None
    assert result.steps == len(entries)
    assert result.stop_reason == "step_budget"
    assert result.success is False


def test_garbage_observations_say_what_was_wrong(scenario_path, judge_pool, host):
    """Look at what the model was told, through a third-party scaffold subclass that keeps its history."""
    import anyio

    from orchestra.agent import AgentContext, run_agent
    from orchestra.models import ModelConfig
    from orchestra.scaffolds.react import ReactScaffold
    from orchestra.session import Session

    import json
    import tempfile
    from pathlib import Path

    d = Path(tempfile.mkdtemp())
    script = write_script(d, GARBAGE["react"])
    with Session.open(scenario_path("starter_execution_calendar"), judge_pool=judge_pool) as s:
        scaffold = ReactScaffold(s.tools)
        agent = AgentContext(name="main", session=s, model=ModelConfig(model=f"orchestra/scripted:{script}"), scaffold=scaffold, host=host, max_steps=4)
        anyio.run(run_agent, agent)
    errors = [m["content"] for m in scaffold.messages if m["role"] == "user" and "ERROR" in m["content"]]
    assert len(errors) == 4
    assert "No 'Action:' found" in errors[0]
    assert "JSON blob" in errors[1]
    assert "Unknown tool 'Calendar__teleport'" in errors[2]
    assert "unknown argument(s) ['wrong_arg']" in errors[3] and "missing required argument(s) ['event_id']" in errors[3]
    assert json.dumps  # keep import used


def test_parallel_batch_is_charged_per_call(tmp_path, host, judge_pool, scenario_path):
    """Two calls in one turn cost the model's tokens once and tool_call_seconds twice."""
    usage = {"prompt_tokens": 5000, "completion_tokens": 100}  # 1 s + 2 s
    entries = [
        {**_calls(("Contacts__get_contacts", {}), ("Calendar__get_all_tags", {})), "usage": usage},
        {**_calls(("AgentUserInterface__send_message_to_user", {"content": "ok"})), "usage": usage},
    ]
    result = run_agent_on(scenario_path("starter_search_lookup"), model=f"orchestra/scripted:{write_script(tmp_path, entries)}",
                          scaffold="parallel_tools", host=host, judge_pool=judge_pool)
    # idle until the task at +1 s, then (3 s + 2 x 2 s) + (3 s + 2 s)
    assert result.sim_seconds == pytest.approx(1.0 + 7.0 + 5.0)
    assert result.n_tool_calls == 3


@pytest.mark.slow
@pytest.mark.parametrize("scaffold", SCAFFOLDS)
def test_oracle_model_scores_one_on_the_corpus(scaffold, host, judge_pool):
    from helpers import SCENARIOS

    for path in sorted((SCENARIOS / "corpus").rglob("*.json")):
        result = run_agent_on(path, model="orchestra/oracle", scaffold=scaffold, host=host, judge_pool=judge_pool)
        assert result.error is None and result.success and result.reward == 1.0, (path.stem, result.rationale)
