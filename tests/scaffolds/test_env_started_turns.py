"""Turns that start with an environment event, as ARE's outer agent loop runs them.

ARE runs its agent again when there are new user messages *or* new environment notifications
(the task then empty). These scenarios' later turns start with an email or a chat message, no
user message: an agent that waits for the user only can never pass them.
"""

from __future__ import annotations

import anyio
import pytest

from orchestra.host import Host
from orchestra.rollout import Rollout, RolloutSpec
from support.helpers import run_agent_on, write_script

SCAFFOLDS = ("react", "tool_calling", "parallel_tools")


@pytest.fixture(scope="module")
def host():
    return Host.create()


@pytest.mark.parametrize("scaffold", SCAFFOLDS)
def test_oracle_model_passes_env_started_turns(scaffold, env_turn_scenarios, host, judge_pool):
    for path in env_turn_scenarios:
        result = run_agent_on(path, model="orchestra/oracle", scaffold=scaffold, host=host, judge_pool=judge_pool)
        assert result.error is None
        assert result.success, (path.stem, result.rationale)
        assert result.turns_completed == result.nb_turns >= (2 if path.stem.startswith("test_env_turn") else 1)
        assert len(result.turns) == result.nb_turns and all(t.success for t in result.turns)


def _react(name, args, thought="ok"):
    import json

    return {"text": f"Thought: {thought}\nAction:\n{json.dumps({'action': name, 'action_input': args})}<end_action>"}


def _run_react(path, entries, tmp_path, host, judge_pool, **kw):
    from orchestra.agent import AgentContext, run_agent
    from orchestra.models import ModelConfig
    from orchestra.scaffolds.react import ReactScaffold

    script = write_script(tmp_path, entries)
    with Rollout.open(RolloutSpec(scenario=str(path)), host=host, judge_pool=judge_pool) as rollout:
        s = rollout.session
        scaffold = ReactScaffold(s.tools)
        agent = AgentContext(name="main", rollout=rollout, model=ModelConfig(model=f"orchestra/scripted:{script}"), scaffold=scaffold, **kw)
        anyio.run(run_agent, agent)
        result = rollout.finish().result
    return agent, scaffold, result


def test_an_env_started_run_has_no_task_only_the_notification(env_turn_scenarios, tmp_path, host, judge_pool):
    path = next(p for p in env_turn_scenarios if p.stem == "test_env_turn_email")
    entries = [
        _react("Emails__send_email", {"recipients": ["elena.rossi@example.com"], "subject": "Design review Friday", "content": "11:00 Friday?"}),
        _react("AgentUserInterface__send_message_to_user", {"content": "Sent."}),
        _react("AgentUserInterface__send_message_to_user", {"content": "She answered."}),
    ]
    agent, scaffold, result = _run_react(path, entries, tmp_path, host, judge_pool)
    assert agent.runs == 2 and agent.turns == 2 and result.turns_completed == 2
    contents = [m["content"] for m in scaffold.messages]
    tasks = [c for c in contents if c.startswith("[TASK]: \n")]
    assert len(tasks) == 1  # turn 2 started with the email alone: no (empty) task message
    second_run = contents[contents.index(scaffold.messages[-3]["content"]) :]
    assert second_run[0].startswith("Environment notifications updates:\n***\n[2024-10-15 07:00:")
    assert "] EmailClientV2: New email received from elena.rossi@example.com\n***\n" in second_run[0]


def test_user_messages_together_make_one_task_and_a_later_one_arrives_as_an_update(env_turn_scenarios, tmp_path, host, judge_pool):
    path = next(p for p in env_turn_scenarios if p.stem == "test_user_messages_together")
    entries = [_react("Contacts__get_contacts", {}, thought="look")] * 4 + [_react("AgentUserInterface__send_message_to_user", {"content": "done"})]
    agent, scaffold, result = _run_react(path, entries, tmp_path, host, judge_pool)
    users = [m["content"] for m in scaffold.messages if m["role"] == "user"]
    task = users[0]
    assert task.startswith("[TASK]: \nReceived at: 2024-10-15 07:00:01\nSender: User\nMessage: What is Tom Becker's phone number?\n")
    assert "\nReceived at: 2024-10-15 07:00:01\nSender: User\nMessage: Also, what is Marcus Lee's job?" in task
    assert sum(u.startswith("[TASK]") for u in users) == 1
    updates = [
        u for u in users if u.startswith("User messages updates:\n***\nReceived at: 2024-10-15 07:00:04\nSender: User\nMessage: And his email address, please.")
    ]
    assert len(updates) == 1 and agent.runs == 1 and result.turns_completed == 1
