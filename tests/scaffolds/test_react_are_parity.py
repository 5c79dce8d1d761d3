"""The react scaffold shows the model what ARE's default agent shows it, and the loop ends runs
and turns as ARE's does (each check names the ARE behaviour it pins)."""

from __future__ import annotations

import json

import anyio
import pytest

from orchestra.host import Host
from orchestra.rollout import Rollout, RolloutSpec
from orchestra.session import SEND_TO_USER_TOOL, WAIT_TOOL
from support.helpers import write_script

RETRY = "\n***\n\nNow let's retry: take care not to repeat previous errors! If you have retried several times, try a completely different approach.\n"


@pytest.fixture(scope="module")
def host():
    return Host.create()


def _react(name, args, thought="ok"):
    return {"text": f"Thought: {thought}\nAction:\n{json.dumps({'action': name, 'action_input': args})}<end_action>"}


def _run(path, entries, tmp_path, host, judge_pool, *, requests=None, **kw):
    from orchestra.agent import AgentContext, run_agent
    from orchestra.hookspecs import hookimpl
    from orchestra.models import ModelConfig
    from orchestra.scaffolds.react import ReactScaffold

    script = write_script(tmp_path, entries)

    class Spy:
        @hookimpl(wrapper=True)
        def model_call(self, agent, request):
            if requests is not None:
                requests.append(request)
            return (yield)

    spy_host = Host.create(plugins=[Spy()]) if requests is not None else host
    with Rollout.open(RolloutSpec(scenario=str(path)), host=spy_host, judge_pool=judge_pool) as rollout:
        s = rollout.session
        scaffold = ReactScaffold(s.tools)
        agent = AgentContext(name="main", rollout=rollout, model=ModelConfig(model=f"orchestra/scripted:{script}"), scaffold=scaffold, **kw)
        anyio.run(run_agent, agent)
        result = rollout.finish().result
    return agent, scaffold, result


def test_system_prompt_is_ares_own(scenario_path, judge_pool, host):
    """ARE's agent (`AgentBuilder` + `ARESimulationAgent.prepare_are_simulation_run`) builds the same prompt."""
    from are.simulation.agents.agent_builder import AgentBuilder
    from are.simulation.agents.agent_config_builder import AgentConfigBuilder

    from orchestra.agent import AgentContext
    from orchestra.models import ModelConfig
    from orchestra.scaffolds.react import ReactScaffold

    with Rollout.open(RolloutSpec(scenario=str(scenario_path("starter_adaptability_reply"))), host=host, judge_pool=judge_pool) as rollout:
        s = rollout.session
        scaffold = ReactScaffold(s.tools)
        scaffold.start(AgentContext(name="main", rollout=rollout, model=ModelConfig(model="orchestra/oracle"), scaffold=scaffold))
        config = AgentConfigBuilder().build("default")
        config.base_agent_config.llm_engine_config.provider = "mock"  # never called
        are_agent = AgentBuilder().build(config, env=s.env.env, mock_responses=[])
        are_agent.prepare_are_simulation_run(scenario=s.scenario, notification_system=s.env.env.notification_system)
        are_agent.react_agent.initialize()
        expected = are_agent.react_agent.build_history_from_logs()[0]["content"]
    assert scaffold.messages[0] == {"role": "system", "content": expected}
    assert "Acts on app Emails: " in expected and "\n\n- Emails__send_email: " in expected


def test_request_sends_no_temperature_or_stop_and_output_is_cut_client_side(scenario_path, tmp_path, host, judge_pool):
    requests: list = []
    entries = [
        {
            "text": 'Thought: done.\nAction:\n{"action": "AgentUserInterface__send_message_to_user", "action_input": {"content": "ok"}}<end_action>\nObservation: invented'
        }
    ]
    _, scaffold, result = _run(scenario_path("starter_search_lookup"), entries, tmp_path, host, judge_pool, requests=requests)
    assert requests[0].stop is None and requests[0].temperature is None
    from orchestra.models import ModelConfig

    assert ModelConfig(model="x").temperature is None
    assert scaffold.messages[-2] == {
        "role": "assistant",
        "content": 'Thought: done.\nAction:\n{"action": "AgentUserInterface__send_message_to_user", "action_input": {"content": "ok"}}\n',
    }
    assert scaffold.messages[-1]["content"] == "[OUTPUT OF STEP 1] Observation:\n***\nNone\n***\n"
    assert result.turns_completed == 1


def test_true_false_lowercased_and_escaped_quotes_as_parse_json_blob(scenario_path, tmp_path, host, judge_pool):
    text = 'Thought: True story.\nAction:\n{"action": "AgentUserInterface__send_message_to_user", "action_input": {"content": "Invoice \\"INV-2041\\": Paid: False. Reminder: True"}}<end_action>'
    _, scaffold, result = _run(scenario_path("starter_search_lookup"), [{"text": text}], tmp_path, host, judge_pool)
    sent = [e for e in result.event_log if e["tool"] == SEND_TO_USER_TOOL]
    assert sent[0]["args"]["content"] == "Invoice 'INV-2041': Paid: false. Reminder: true"
    assert scaffold.messages[-2]["content"].startswith("Thought: true story.")


def test_bare_json_is_a_format_error_retried_inside_the_iteration(scenario_path, tmp_path, host, judge_pool):
    bare = {"text": json.dumps({"action": "Contacts__get_contacts", "action_input": {}})}
    entries = [{"text": "Let me think."}, bare, _react(SEND_TO_USER_TOOL, {"content": "done"})]
    agent, scaffold, result = _run(scenario_path("starter_search_lookup"), entries, tmp_path, host, judge_pool)
    assert agent.steps == 1  # three outputs, one iteration
    assert [e["tool"] for e in result.event_log if e["type"] == "AGENT"] == [SEND_TO_USER_TOOL]  # the bare blob never ran
    users = [m["content"] for m in scaffold.messages if m["role"] == "user"]
    assert (
        users[-3]
        == "[OUTPUT OF STEP 1] ERROR:\n***\nError: InvalidActionAgentError\nException: The LLM output was not formatted correctly: Let me think.\nCategory: AgentError"
        + RETRY
    )
    assert users[-2].startswith("[OUTPUT OF STEP 2] ERROR:\n***\nError: InvalidActionAgentError\nException: The LLM output was not formatted correctly: {")
    assert users[-1] == "[OUTPUT OF STEP 3] Observation:\n***\nNone\n***\n"
    assert [m["content"] for m in scaffold.messages if m["role"] == "assistant"] == [
        'Thought: ok\nAction:\n{"action": "AgentUserInterface__send_message_to_user", "action_input": {"content": "done"}}\n'
    ]


def test_a_failed_send_message_to_user_still_ends_the_turn(scenario_path, tmp_path, host, judge_pool):
    entries = [_react(SEND_TO_USER_TOOL, {"message": "wrong argument"}), _react(SEND_TO_USER_TOOL, {"content": "never asked"})]
    agent, scaffold, result = _run(scenario_path("starter_search_lookup"), entries, tmp_path, host, judge_pool)
    assert agent.steps == 1 and result.turns_completed == 1
    assert not any(e["tool"] == SEND_TO_USER_TOOL for e in result.event_log)  # ARE logs no event for bad arguments
    assert result.success is False
    assert "Error: JsonExecutionAgentError\nException: Error in tool call execution: " in scaffold.messages[-1]["content"]


def test_a_failed_wait_still_pauses(scenario_path, tmp_path, host, judge_pool):
    """ARE's tool rejects the timeout, yet the run pauses: nothing else ever arrives here, so the
    agent is never run again and the scenario runs out its time (as ARE's outer loop would)."""
    entries = [_react(WAIT_TOOL, {"timeout": -5}), _react(SEND_TO_USER_TOOL, {"content": "never asked"})]
    agent, scaffold, result = _run(scenario_path("starter_search_lookup"), entries, tmp_path, host, judge_pool)
    assert agent.runs == 1 and agent.steps == 1 and agent.turns == 0
    assert "Exception: Error in tool call execution: Timeout must be non-negative" in scaffold.messages[-1]["content"]
    assert result.stop_reason == "duration_reached" and result.turns_completed == 0


def test_max_iterations_answers_through_the_real_tool_and_later_turns_are_auto_answered(scenario_path, tmp_path, host, judge_pool):
    """ARE's budget is per scenario: turn 1 spends it, turn 2 is answered at once."""
    entries = [
        _react(
            "Calendar__add_calendar_event",
            {
                "title": "Lunch with Sofia",
                "start_datetime": "2024-10-19 12:30:00",
                "end_datetime": "2024-10-19 13:30:00",
                "location": "Cafe Lumiere",
                "attendees": ["Sofia Alvarez"],
            },
        ),
        _react(SEND_TO_USER_TOOL, {"content": "Added."}),
    ]
    agent, _, result = _run(scenario_path("starter_multiturn_followup"), entries, tmp_path, host, judge_pool, max_steps=2)
    assert agent.steps == 2 and agent.turns == 2 and result.turns_completed == 2
    answers = [e["args"]["content"] for e in result.event_log if e["tool"] == SEND_TO_USER_TOOL]
    assert answers == ["Added.", "Max iterations (2) reached. Stopping."]
    assert result.turns[0].success and not result.success  # the turn judge saw turn 1 pass, turn 2 fails


def test_wait_observes_none_then_notifications_arrive_as_ares_block(scenario_path, tmp_path, host, judge_pool):
    entries = [_react(WAIT_TOOL, {"timeout": 600}), _react(SEND_TO_USER_TOOL, {"content": "done"})]
    agent, scaffold, result = _run(scenario_path("starter_adaptability_reply"), entries, tmp_path, host, judge_pool)
    users = [m["content"] for m in scaffold.messages if m["role"] == "user"]
    assert users[0].startswith("[TASK]: \nReceived at: 2024-10-15 07:00:01\nSender: User\nMessage: Please email Elena")
    assert users[1] == "[OUTPUT OF STEP 1] Observation:\n***\nNone\n***\n"
    assert users[2] == "Environment notifications updates:\n***\n[2024-10-15 07:00:31] EmailClientV2: New email received from elena.rossi@example.com\n***\n"
    waits = [e for e in result.event_log if e["tool"] == "SystemApp__wait_for_notification"]
    assert len(waits) == 1


def test_observations_are_str_of_the_output_uncut(scenario_path, tmp_path, host, judge_pool):
    entries = [_react("Contacts__get_contacts", {}), _react(SEND_TO_USER_TOOL, {"content": "done"})]
    _, scaffold, _ = _run(scenario_path("starter_search_lookup"), entries, tmp_path, host, judge_pool)
    obs = [m["content"] for m in scaffold.messages if m["content"].startswith("[OUTPUT OF STEP 1]")][0]
    body = obs.split("\n***\n")[1]
    assert body.startswith("{'contacts': [Contact(first_name=") and "... [truncated" not in body
