"""Agents as first-class citizens of a rollout: sub-agents, per-agent tools and ledgers, the stepper.

Scripted models only (no network). The multi-turn scenario is `test_env_turn_email`: turn 1 is the
user's task, turn 2 starts with an ENV event (Elena's email) and no user message.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import anyio
import pytest

from orchestra.agent import AgentStepper, run_agent, spawn
from orchestra.hookspecs import hookimpl
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.rollout import AgentConfig, Rollout, RolloutRecord, RolloutSpec, execute
from orchestra.types import ToolSpec
from support.contacts_expert import EXPERT, EXPERT_SPEC, USAGE, ContactsExpert
from support.helpers import open_rollout, write_script


def _react(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"text": f"Thought: ok\nAction:\n{json.dumps({'action': name, 'action_input': args})}<end_action>"}


class ContactsTeam(ContactsExpert):
    """The Contacts expert, also recording each agent's tools and the order agent runs start and end."""

    def __init__(self, sub_model: str) -> None:
        super().__init__(sub_model)
        self.tools_seen: dict[str, list[str]] = {}
        self.runs: list[str] = []

    @hookimpl(wrapper=True)
    def agent_run(self, agent: Any) -> Any:
        inner = yield
        self.tools_seen[agent.name] = sorted(agent.tools)

        async def traced() -> None:
            self.runs.append(f"start {agent.name}")
            try:
                await inner
            finally:
                self.runs.append(f"end {agent.name}")

        return traced()


def _main_script(tmp_path: Any) -> str:
    return write_script(
        tmp_path,
        [
            _react(EXPERT, {"task": "Find Elena Rossi's email address."}),
            _react("Emails__send_email", {"recipients": ["elena.rossi@example.com"], "subject": "Design review Friday", "content": "11:00 Friday?"}),
            _react("AgentUserInterface__send_message_to_user", {"content": "Sent."}),
            _react("AgentUserInterface__send_message_to_user", {"content": "She answered."}),
        ],
        name="main.json",
    )


def _sub_script(tmp_path: Any) -> str:
    return write_script(
        tmp_path,
        [
            {"tool_calls": [{"name": "Contacts__get_contacts", "arguments": {}}], "usage": USAGE},
            {"tool_calls": [{"name": "final_answer", "arguments": {"answer": "elena.rossi@example.com"}}], "usage": USAGE},
        ],
        name="sub.json",
    )


def test_a_sub_agent_shares_the_clock_keeps_its_own_mailbox_and_ledger(env_turn_scenarios, tmp_path, judge_pool):
    path = next(p for p in env_turn_scenarios if p.stem == "test_env_turn_email")
    team = ContactsTeam(f"orchestra/scripted:{_sub_script(tmp_path)}")
    host = Host.create([team], entry_points=False)
    with open_rollout(path, model=f"orchestra/scripted:{_main_script(tmp_path)}", scaffold="react", host=host, judge_pool=judge_pool) as rollout:
        main = rollout.main
        assert main is not None
        anyio.run(run_agent, main)
        result = rollout.finish().result
        assert result is not None
        session_tools = rollout.session.tools

    # The main agent's tools were shaped: no Contacts__* tool, the expert instead.
    assert EXPERT in team.tools_seen["main"] and not any(n.startswith("Contacts__get") for n in team.tools_seen["main"])
    assert "Contacts__expert_agent" in main.scaffold.messages[0]["content"] and "Contacts__get_contacts" not in main.scaffold.messages[0]["content"]
    # The sub-agent has its own tools: the contacts and a way to return, nothing user-facing.
    assert team.tools_seen["contacts_expert"] == sorted(["final_answer", *(n for n in session_tools if n.startswith("Contacts__"))])
    assert team.runs == ["start main", "start contacts_expert", "end contacts_expert", "end main"]

    # Its answer came back as the tool outcome.
    expert_call = main.records[0]
    assert [c.name for c in expert_call.calls] == [EXPERT]
    outcome = expert_call.outcomes[0]
    assert outcome.ok and outcome.output == "elena.rossi@example.com"

    # Its own ledger, in the result; its tokens and tools moved the shared clock while the main agent waited.
    ledgers = {a.name: a for a in result.agents}
    assert list(ledgers) == ["main", "contacts_expert"]
    sub = ledgers["contacts_expert"]
    assert (sub.role, sub.parent, sub.scaffold, sub.answer, sub.error) == ("sub", "main", "tool_calling", "elena.rossi@example.com", None)
    assert (sub.model_calls, sub.prompt_tokens, sub.completion_tokens, sub.tool_calls, sub.steps) == (2, 2000, 200, 2, 2)
    assert sub.sim_seconds == pytest.approx(2 * 2.2 + 2 * 2.0)
    send_email = main.records[1].outcomes[0]
    assert send_email.sim_time - outcome.sim_time >= sub.sim_seconds + 2.0  # the sub-agent's time, then the call's own
    assert ledgers["main"].tool_calls == 4 and ledgers["main"].model_calls == 4

    # The main agent's notifications and turns are intact: turn 2 started with Elena's email.
    assert main.runs == 2 and main.turns == 2 and result.turns_completed == result.nb_turns == 2
    contents = [m["content"] for m in main.scaffold.messages]
    assert sum(c.startswith("[TASK]") for c in contents) == 1
    env_updates = [c for c in contents if c.startswith("Environment notifications updates:")]
    assert len(env_updates) == 1 and "New email received from elena.rossi@example.com" in env_updates[0]


def test_a_failing_sub_agent_model_is_a_failed_outcome_and_the_rollout_is_judged(env_turn_scenarios, tmp_path, judge_pool):
    path = next(p for p in env_turn_scenarios if p.stem == "test_env_turn_email")
    team = ContactsTeam("orchestra/scripted:/no/such/script.json")
    host = Host.create([team], entry_points=False)
    spec = RolloutSpec(scenario=str(path), agent=AgentConfig(scaffold="react", model=ModelConfig(model=f"orchestra/scripted:{_main_script(tmp_path)}")))
    record = anyio.run(lambda: execute(spec, host=host, judge_pool=judge_pool))
    assert record.error is None and record.result is not None
    result = record.result
    assert result.turns_completed == 2 and result.judge == "scripted"  # judged as usual
    sub = {a.name: a for a in result.agents}["contacts_expert"]
    assert sub.error and "script.json" in sub.error and sub.stop_reason == "model_error" and sub.answer is None
    # the main agent went on after the failed call: it emailed and answered both turns
    tools = [e["tool"] for e in result.event_log if e["type"] == "AGENT"]
    assert "Emails__send_email" in " ".join(tools) or "EmailClientV2__send_email" in " ".join(tools)
    assert tools.count("AgentUserInterface__send_message_to_user") == 2


def test_spawn_without_a_final_answer_is_a_failed_outcome(tmp_path, judge_pool, scenario_path):
    script = write_script(tmp_path, [{"tool_calls": [{"name": "Contacts__get_contacts", "arguments": {}}]}] * 3, name="loop.json")
    host = Host.create(entry_points=False)
    with open_rollout(scenario_path("starter_search_lookup"), host=host, judge_pool=judge_pool) as rollout:
        main = rollout.main
        assert main is not None
        outcome = anyio.run(lambda: spawn(main, "look around", model=ModelConfig(model=f"orchestra/scripted:{script}"), max_steps=3))
        assert not outcome.ok and "spent its 3-step budget without calling final_answer" in (outcome.error or "")
        assert rollout.agents["main.sub"].steps == 3 and rollout.session.notifications("main.sub") == []


def test_spawn_whose_model_server_is_down_names_the_endpoint_and_the_error(tmp_path, judge_pool, scenario_path):
    # A local server that died mid-run: every call fails (non-permanent), the budget goes on errors.
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again below: nothing listens there
    endpoint = f"http://127.0.0.1:{port}/v1"
    dead = ModelConfig(model="openai/local", endpoint=endpoint, max_retries=0, backoff_seconds=0.0, timeout_seconds=10.0)
    host = Host.create(entry_points=False)
    with open_rollout(scenario_path("starter_search_lookup"), host=host, judge_pool=judge_pool) as rollout:
        main = rollout.main
        assert main is not None
        outcome = anyio.run(lambda: spawn(main, "look around", model=dead, max_steps=2))
    assert not outcome.ok and outcome.error is not None
    assert "spent its 2-step budget without calling final_answer" in outcome.error
    assert f"its last model call (openai/local at {endpoint}) failed:" in outcome.error
    assert "Connection" in outcome.error


class Recorder:
    def __init__(self) -> None:
        self.responses: list[Any] = []

    @hookimpl(wrapper=True)
    def model_call(self, agent: Any, request: Any) -> Any:
        inner = yield

        async def record() -> Any:
            response = await inner
            self.responses.append(copy.deepcopy(response))
            return response

        return record()


@pytest.mark.parametrize("scaffold", ["react", "tool_calling"])
def test_a_rollout_driven_step_by_step_from_outside_equals_run_agent(scaffold, judge_pool, scenario_path):
    path = scenario_path("starter_multiturn_followup")
    recorder = Recorder()
    spec = RolloutSpec(scenario=str(path), agent=AgentConfig(scaffold=scaffold, model=ModelConfig(model="orchestra/oracle")))
    driven = anyio.run(lambda: execute(spec, host=Host.create([recorder], entry_points=False), judge_pool=judge_pool))
    assert driven.result is not None and driven.result.success and len(recorder.responses) >= 4

    # The same responses, handed in by a driver outside the loop (a trainer owning the model call).
    given = iter(recorder.responses)

    async def outside(rollout: Rollout) -> int:
        n = 0
        while (request := await rollout.next_request()) is not None:
            assert request.messages
            await rollout.apply(next(given))
            n += 1
        return n

    with Rollout.open(
        spec.model_copy(update={"agent": spec.agent.model_copy(update={"model": ModelConfig(model="unused/never-called")})}),
        host=Host.create(entry_points=False),
        judge_pool=judge_pool,
    ) as rollout:
        assert anyio.run(outside, rollout) == len(recorder.responses)
        stepped = rollout.finish()
    assert stepped.result is not None
    assert stepped.result.event_log_sha256 == driven.result.event_log_sha256
    assert stepped.result.model_dump(exclude={"agents"}) == driven.result.model_dump(exclude={"agents"})
    assert [(a.name, a.model_calls, a.prompt_tokens, a.sim_seconds) for a in stepped.result.agents] == [
        (a.name, a.model_calls, a.prompt_tokens, a.sim_seconds) for a in driven.result.agents
    ]


def test_replay_judge_check_and_run_produce_the_same_record_type(capsys, scenario_path):
    from orchestra.cli import main

    path = str(scenario_path("starter_search_lookup"))
    oracle = anyio.run(lambda: execute(RolloutSpec(scenario=path)))
    agent = anyio.run(lambda: execute(RolloutSpec(scenario=path, agent=AgentConfig(model=ModelConfig(model="orchestra/oracle")))))
    assert type(oracle) is type(agent) is RolloutRecord
    assert oracle.policy == "oracle" and agent.policy == "tool_calling:orchestra/oracle"
    assert oracle.result.success and agent.result.success and [a.name for a in agent.agents] == ["main"]
    assert RolloutRecord.model_validate_json(agent.model_dump_json()) == agent  # serialisable, round trip

    assert main(["replay", path, "--json"]) == 0
    replay = json.loads(capsys.readouterr().out)
    assert main(["run", "--model", "orchestra/oracle", "--scenarios", path, "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert main(["judge-check", path, "--json"]) == 0
    checks = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    judged = [c for c in checks if c["status"] in ("PASS", "FAIL")]
    assert judged and set(replay) == set(run) and all(set(replay) <= set(c) for c in judged)
    assert (replay["policy"], run["policy"]) == ("oracle", "tool_calling:orchestra/oracle")


def test_a_plugin_exception_is_recorded_on_its_rollout_and_the_batch_goes_on(scenario_path):
    from orchestra.runs.runner import execute_all, specs_for
    from orchestra.scenario_files import resolve

    class Broken:
        def __init__(self) -> None:
            self.calls = 0

        @hookimpl(wrapper=True)
        def rollout(self, rollout: Any) -> Any:
            inner = yield
            self.calls += 1
            if self.calls == 1:
                inner.close()  # the built-in coroutine is never awaited
                raise RuntimeError("tracer exploded")
            return inner

    broken = Broken()
    host = Host.create([broken], entry_points=False)
    files = resolve([scenario_path("starter_search_lookup"), scenario_path("starter_time_deadline")])

    async def go() -> list[RolloutRecord]:
        return [r async for r in execute_all(specs_for(files), host=host)]

    first, second = anyio.run(go)
    assert first.result is None and "RuntimeError: tracer exploded" in (first.error or "")
    assert first.scenario_id == "starter_search_lookup"
    assert second.error is None and second.result is not None and second.result.success


def test_apply_answers_exactly_one_request_and_none_after_the_agent_finished(judge_pool, scenario_path):
    """A trainer that applies twice for one request (or after the end) gets a clear error, not a
    response silently taken as the answer to the next request it never saw."""
    from orchestra.errors import OrchestraError
    from orchestra.types import ModelResponse, ToolCall, Usage

    with open_rollout(scenario_path("starter_search_lookup"), model="unused/never-called", judge_pool=judge_pool) as rollout:
        agent = rollout.main
        assert agent is not None
        stepper = AgentStepper(agent)
        say = ModelResponse(text="", tool_calls=[ToolCall("SystemApp__get_current_time", {}, id="c1")], usage=Usage(10, 5))

        async def steps() -> None:
            assert await stepper.next_request() is not None
            with pytest.raises(OrchestraError, match="ModelResponse, got dict"):
                await stepper.apply({"text": "hi", "tool_calls": []})  # type: ignore[arg-type]
            assert not stepper.finished  # a wrong type is refused before the loop sees it
            await stepper.apply(say)
            calls = agent.ledger.model_calls
            with pytest.raises(OrchestraError, match="next_request"):
                await stepper.apply(say)
            assert agent.ledger.model_calls == calls  # the second apply changed nothing
            await stepper.aclose()
            with pytest.raises(OrchestraError, match="finished"):
                await stepper.apply(say)

        anyio.run(steps)


def test_a_delegate_that_returns_a_plain_outcome_is_a_clear_error(tmp_path, judge_pool, scenario_path):
    """The hook must return an awaitable; a plugin returning the ToolOutcome itself is told so by name."""
    from orchestra.types import ToolOutcome

    class SyncDelegate:
        @hookimpl
        def agent_tools(self, agent: Any, tools: dict[str, ToolSpec]) -> None:
            if agent.role == "main":
                tools[EXPERT] = EXPERT_SPEC

        @hookimpl
        def delegate(self, agent: Any, call: Any) -> Any:
            return ToolOutcome(call.name, call.arguments, ok=True, output="done", sim_time=agent.session.now) if call.name == EXPERT else None

    script = write_script(tmp_path, [{"tool_calls": [{"name": EXPERT, "arguments": {"task": "find Elena"}}]}])
    spec = RolloutSpec(scenario=str(scenario_path("starter_search_lookup")), agent=AgentConfig(model=ModelConfig(model=f"orchestra/scripted:{script}")))
    record = anyio.run(lambda: execute(spec, host=Host.create([SyncDelegate()], entry_points=False), judge_pool=judge_pool))
    assert record.error is not None and "`delegate` implementation returned ToolOutcome for 'Contacts__expert_agent'" in record.error
