"""The three scaffolds: oracle model scores 1.0 everywhere; wrong writes and garbage are handled."""

from __future__ import annotations

import pytest

from orchestra.host import Host
from orchestra.rollout import Rollout, RolloutSpec
from support.helpers import STARTER, run_agent_on, write_script

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
    (
        "Calendar__add_calendar_event",
        {"title": "Roadmap review", "start_datetime": "2024-10-18 14:00:00", "end_datetime": "2024-10-18 15:00:00", "attendees": ["Priya Shah", "Marcus Lee"]},
    ),
    ("Emails__send_email", {"recipients": ["priya.shah@example.com", "marcus.lee@example.com"], "subject": "Roadmap review", "content": "See you there."}),
    ("AgentUserInterface__send_message_to_user", {"content": "Done."}),
]


@pytest.mark.parametrize("scaffold", SCAFFOLDS)
def test_scripted_wrong_write_scores_zero(scaffold, tmp_path, host, judge_pool, scenario_path):
    entries = [_react(n, a) if scaffold == "react" else _calls((n, a)) for n, a in WRONG_WRITE]
    result = run_agent_on(
        scenario_path("starter_execution_calendar"),
        model=f"orchestra/scripted:{write_script(tmp_path, entries)}",
        scaffold=scaffold,
        host=host,
        judge_pool=judge_pool,
    )
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
    """The first reply has no action at all: asked again inside the same iteration (ARE's format
    retry), so four replies make three iterations; then the budget answers the user."""
    entries = GARBAGE[scaffold]
    result = run_agent_on(
        scenario_path("starter_execution_calendar"),
        model=f"orchestra/scripted:{write_script(tmp_path, entries)}",
        scaffold=scaffold,
        host=host,
        judge_pool=judge_pool,
        max_steps=3,
    )
    assert result.error is None
    assert result.steps == 3
    assert result.stop_reason == "step_budget"
    assert result.success is False
    answers = [e for e in result.event_log if e["tool"] == "AgentUserInterface__send_message_to_user"]
    assert [a["args"]["content"] for a in answers] == ["Max iterations (3) reached. Stopping."]


def test_garbage_observations_say_what_was_wrong(scenario_path, judge_pool, host, tmp_path):
    """What the model was told, in ARE's words (a third-party view: the scaffold keeps its history)."""
    import anyio

    from orchestra.agent import AgentContext, run_agent
    from orchestra.models import ModelConfig
    from orchestra.scaffolds.react import ReactScaffold

    script = write_script(tmp_path, GARBAGE["react"])
    with Rollout.open(RolloutSpec(scenario=str(scenario_path("starter_execution_calendar"))), host=host, judge_pool=judge_pool) as rollout:
        s = rollout.session
        scaffold = ReactScaffold(s.tools)
        agent = AgentContext(name="main", rollout=rollout, model=ModelConfig(model=f"orchestra/scripted:{script}"), scaffold=scaffold, max_steps=3)
        anyio.run(run_agent, agent)
    users = [m["content"] for m in scaffold.messages if m["role"] == "user"]
    errors = [m for m in users if "] ERROR:" in m]
    assert len(errors) == 4
    assert errors[0].startswith(
        "[OUTPUT OF STEP 1] ERROR:\n***\nError: InvalidActionAgentError\nException: The LLM output was not formatted correctly: I think"
    )
    assert errors[1].startswith("[OUTPUT OF STEP 2] ERROR:\n***\nError: JsonParsingAgentError\nException: Could not parse the given action:")
    assert "Error: UnavailableToolAgentError\nException: Error: unknown tool Calendar__teleport, should be instead one of ['" in errors[2]
    assert "Error: JsonExecutionAgentError\nException: Error in tool call execution: " in errors[3]
    assert "As a reminder, this tool's description is the following:\n\n- Calendar__get_calendar_event: Acts on app Calendar:" in errors[3]
    assert all(
        e.endswith(
            "\nCategory: AgentError\n***\n\nNow let's retry: take care not to repeat previous errors! If you have retried several times, try a completely different approach.\n"
        )
        for e in errors
    )
    # the rejected reply never became an assistant message; the others did, as ARE stores them
    assistants = [m["content"] for m in scaffold.messages if m["role"] == "assistant"]
    assert len(assistants) == 3 and not any(a.startswith("I think") for a in assistants)
    assert all(a.endswith("\n") and "<end_action>" not in a for a in assistants)


def test_parallel_batch_is_charged_per_call(tmp_path, host, judge_pool, scenario_path):
    """Two calls in one turn cost the model's tokens once and tool_call_seconds twice."""
    usage = {"prompt_tokens": 5000, "completion_tokens": 100}  # 1 s + 2 s
    entries = [
        {**_calls(("Contacts__get_contacts", {}), ("Calendar__get_all_tags", {})), "usage": usage},
        {**_calls(("AgentUserInterface__send_message_to_user", {"content": "ok"})), "usage": usage},
    ]
    result = run_agent_on(
        scenario_path("starter_search_lookup"),
        model=f"orchestra/scripted:{write_script(tmp_path, entries)}",
        scaffold="parallel_tools",
        host=host,
        judge_pool=judge_pool,
    )
    # idle until the task at +1 s, then (3 s + 2 x 2 s) + (3 s + 2 s)
    assert result.sim_seconds == pytest.approx(1.0 + 7.0 + 5.0)
    assert result.n_tool_calls == 3


@pytest.mark.slow
@pytest.mark.parametrize("scaffold", SCAFFOLDS)
def test_oracle_model_scores_one_on_the_corpus(scaffold, host, judge_pool):
    from support.helpers import SCENARIOS

    for path in sorted((SCENARIOS / "corpus").rglob("*.json")):
        result = run_agent_on(path, model="orchestra/oracle", scaffold=scaffold, host=host, judge_pool=judge_pool)
        assert result.error is None and result.success and result.reward == 1.0, (path.stem, result.rationale)
