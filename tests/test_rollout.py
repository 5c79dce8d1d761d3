"""The rollout as an object: its record's totals, its step API, its failures."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from orchestra.errors import OrchestraError
from orchestra.hookspecs import hookimpl
from orchestra.host import Host
from orchestra.models import ModelConfig, ModelError
from orchestra.record import RolloutRecord
from orchestra.rollout import AgentConfig, Rollout, RolloutSpec, execute
from orchestra.teams.loading import load_team, shipped_teams
from support.helpers import REPO, scenario

ORACLE = "orchestra/oracle"
#: Scenarios whose oracle delegates to several apps (a team then has several agents).
TEAM_SCENARIOS = ("starter_execution_calendar", "starter_multiturn_followup")


def _totals_match_ledgers(record: RolloutRecord) -> None:
    result = record.result
    assert result is not None, record.error
    agents = result.agents
    assert result.steps == sum(a.steps for a in agents)
    assert result.model_calls == sum(a.model_calls for a in agents)
    assert result.n_tool_calls == sum(a.tool_calls for a in agents)
    assert result.prompt_tokens == sum(a.prompt_tokens for a in agents)
    assert result.completion_tokens == sum(a.completion_tokens for a in agents)
    assert result.reasoning_tokens == sum(a.reasoning_tokens for a in agents)
    assert result.cost_usd == pytest.approx(sum(a.cost_usd for a in agents))
    main = agents[0]
    assert main.role == "main"
    assert (result.main_steps, result.main_prompt_tokens, result.main_completion_tokens) == (main.steps, main.prompt_tokens, main.completion_tokens)


@pytest.mark.parametrize("team_name", [p.stem for p in shipped_teams()])
def test_record_totals_are_sums_over_every_agent_of_every_shipped_team(team_name, judge_pool):
    team = load_team(REPO / "orchestra" / "teams" / "shipped" / f"{team_name}.yaml").with_overrides(model=ORACLE)  # local models swapped for the oracle
    for name in TEAM_SCENARIOS:
        spec = RolloutSpec(scenario=str(scenario(name)), team=team, session=team.session)
        record = anyio.run(lambda spec=spec: execute(spec, judge_pool=judge_pool))
        _totals_match_ledgers(record)
        assert record.result is not None and record.result.success
        if record.result.delegations:  # a team that delegated: the totals are more than the main agent's
            assert len(record.result.agents) > 1 and record.result.steps > record.result.main_steps


def test_run_team_oracle_reports_all_agents_steps_beside_the_main_agents(capsys):
    from orchestra.cli import main

    path = str(scenario("starter_execution_calendar"))
    assert main(["run", "--team", "oracle", "--scenarios", path, "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["agents"] and len(row["agents"]) > 1
    assert row["steps"] == sum(a["steps"] for a in row["agents"]) > row["main_steps"] == row["agents"][0]["steps"]
    assert row["prompt_tokens"] == sum(a["prompt_tokens"] for a in row["agents"])
    assert row["cost_usd"] == pytest.approx(sum(a["cost_usd"] for a in row["agents"]))


def test_a_team_rollout_driven_from_outside_equals_orchestra_run(judge_pool):
    """An RL-style driver: it owns the main agent's model call (here: it asks the oracle itself)
    and steps the rollout; app-agents run inside `apply`. Same event log, same record."""
    team = load_team(REPO / "orchestra" / "teams" / "shipped" / "oracle.yaml")
    spec = RolloutSpec(scenario=str(scenario("starter_multiturn_followup")), team=team, session=team.session)
    host = Host.create(entry_points=False)
    ran = anyio.run(lambda: execute(spec, host=host, judge_pool=judge_pool))
    assert ran.result is not None and ran.result.success and ran.result.delegations

    async def drive(rollout: Rollout) -> int:
        n = 0
        while (request := await rollout.next_request()) is not None:
            assert rollout.main is not None
            response = await host.hook.model_call(agent=rollout.main, request=request)  # the trainer's model
            await rollout.apply(response)
            n += 1
        return n

    with Rollout.open(spec, host=host, judge_pool=judge_pool) as rollout:
        assert anyio.run(drive, rollout) == ran.result.main_steps
        assert rollout.done and anyio.run(rollout.next_request) is None
        stepped = rollout.finish()
    assert stepped.result is not None and stepped.result.event_log_sha256 == ran.result.event_log_sha256
    assert stepped.model_dump() == ran.model_dump()
    assert stepped.spec == spec


def test_a_record_carries_its_spec_without_literal_secrets(judge_pool, tmp_path):
    model = ModelConfig(model=ORACLE, api_key="sk-secret-value")
    spec = RolloutSpec(scenario=str(scenario("starter_search_lookup")), agent=AgentConfig(model=model), seed=7)
    record = anyio.run(lambda: execute(spec, judge_pool=judge_pool))
    assert record.spec == spec and record.result is not None and record.result.success
    dumped = record.model_dump_json()
    assert "sk-secret-value" not in dumped and '"api_key":"***"' in dumped
    restored = RolloutRecord.model_validate_json(dumped)
    assert restored.spec is not None and restored.spec.scenario == spec.scenario and restored.spec.seed == 7
    referenced = spec.model_copy(update={"agent": AgentConfig(model=ModelConfig(model=ORACLE, api_key="${OPENAI_API_KEY}"))})
    assert "${OPENAI_API_KEY}" in anyio.run(lambda: execute(referenced, judge_pool=judge_pool)).model_dump_json()


def test_a_permanent_model_failure_in_the_step_api_ends_the_rollout_with_the_error(judge_pool):
    spec = RolloutSpec(scenario=str(scenario("starter_search_lookup")), agent=AgentConfig(model=ModelConfig(model="unused/never-called")))

    async def steps(rollout: Rollout) -> None:
        assert await rollout.next_request() is not None
        await rollout.fail(ModelError("unused/never-called: AuthenticationError: no key"))
        assert rollout.done and await rollout.next_request() is None

    with Rollout.open(spec, judge_pool=judge_pool) as rollout:
        anyio.run(steps, rollout)
        record = rollout.finish()
    assert record.error is not None and "AuthenticationError" in record.error
    assert record.result is not None and record.result.stop_reason == "model_error"
    assert record.result.agents[0].error == record.error


class _ExplodingTool:
    """A plugin whose tool wrapper raises on the second call: a bug mid-rollout."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl(wrapper=True)
    def tool_call(self, agent: Any, call: Any) -> Any:
        inner = yield
        self.calls += 1
        if self.calls == 2:
            inner.close()
            raise KeyError("plugin bug")
        return inner


def test_a_plugin_bug_mid_rollout_keeps_the_event_log_so_far_and_names_the_plugin(judge_pool):
    host = Host.create([_ExplodingTool()], entry_points=False)
    spec = RolloutSpec(scenario=str(scenario("starter_execution_calendar")), agent=AgentConfig(model=ModelConfig(model=ORACLE)))
    record = anyio.run(lambda: execute(spec, host=host, judge_pool=judge_pool))
    assert record.result is None and record.error is not None
    assert "KeyError" in record.error and "raised in plugin '_ExplodingTool', hook 'tool_call'" in record.error
    partial = record.partial
    assert partial is not None and partial.event_log and partial.agents[0].name == "main"
    assert [e["tool"] for e in partial.event_log if e["type"] == "AGENT"]  # the first call happened and is kept
    assert record.agents is partial.agents


class _RefusingTool:
    """A plugin that refuses a call with an `OrchestraError` of its own (a quota, a policy)."""

    @hookimpl(wrapper=True)
    def tool_call(self, agent: Any, call: Any) -> Any:
        inner = yield
        inner.close()
        raise OrchestraError("tool quota exceeded")


def test_a_plugins_own_orchestra_error_is_recorded_with_the_plugins_and_hooks_names(judge_pool):
    host = Host.create([_RefusingTool()], entry_points=False)
    spec = RolloutSpec(scenario=str(scenario("starter_search_lookup")), agent=AgentConfig(model=ModelConfig(model=ORACLE)))
    record = anyio.run(lambda: execute(spec, host=host, judge_pool=judge_pool))
    assert record.error == "tool quota exceeded (raised in plugin '_RefusingTool', hook 'tool_call')"
    assert record.partial is not None


def test_opening_a_rollout_with_an_unknown_scaffold_or_judge_fails_before_loading():
    spec = RolloutSpec(scenario="/no/such/file.json", agent=AgentConfig(scaffold="nope", model=ModelConfig(model=ORACLE)))
    with pytest.raises(OrchestraError, match="unknown scaffold 'nope'"):
        Rollout.open(spec)
    judged = RolloutSpec(scenario="/no/such/file.json", session={"judge": {"mode": "oracle-of-delphi"}})
    with pytest.raises(OrchestraError, match="unknown judge 'oracle-of-delphi'; registered: llm, scripted, strict"):
        Rollout.open(judged)


class _Closings:
    def __init__(self) -> None:
        self.closed: list[str] = []

    @hookimpl
    def rollout_closed(self, rollout: Any) -> None:
        self.closed.append(rollout.spec.scenario)


def test_every_rollout_is_closed_finished_failed_or_cancelled(judge_pool, tmp_path):
    closings = _Closings()
    host = Host.create([closings], entry_points=False)
    good = RolloutSpec(scenario=str(scenario("starter_search_lookup")))
    bad = RolloutSpec(scenario=str(tmp_path / "missing.json"))
    assert anyio.run(lambda: execute(good, host=host, judge_pool=judge_pool)).error is None
    assert "no such scenario file" in (anyio.run(lambda: execute(bad, host=host, judge_pool=judge_pool)).error or "")

    async def cancelled() -> None:
        with anyio.move_on_after(0):  # cancelled at its first checkpoint
            await execute(RolloutSpec(scenario=good.scenario, agent=AgentConfig(model=ModelConfig(model=ORACLE))), host=host, judge_pool=judge_pool)

    anyio.run(cancelled)
    assert closings.closed == [good.scenario, bad.scenario, good.scenario]


def test_a_misused_step_api_raises_and_leaves_the_rollout_and_its_verdict_as_they_were(judge_pool):
    """A trainer's mistake — a wrong type, a second answer, one after the end, after finish or
    after close — is an OrchestraError, and nothing else: the rollout goes on, its verdict stays."""
    spec = RolloutSpec(scenario=str(scenario("starter_search_lookup")), agent=AgentConfig(model=ModelConfig(model=ORACLE)))
    host = Host.create(entry_points=False)
    ran = anyio.run(lambda: execute(spec, host=host, judge_pool=judge_pool))
    assert ran.result is not None and ran.result.success

    async def misuse(rollout: Rollout, what: str, answer: Any, match: str) -> None:
        with pytest.raises(OrchestraError, match=match):
            await (rollout.apply(answer) if what == "apply" else rollout.fail(answer))
        assert rollout._failure is None

    async def drive(rollout: Rollout) -> int:
        seconds = 0
        while (request := await rollout.next_request()) is not None:
            await misuse(rollout, "apply", {"text": "hi"}, r"apply\(\) takes an orchestra.types.ModelResponse, got dict")
            await misuse(rollout, "fail", RuntimeError("no"), r"fail\(\) takes an orchestra.models.ModelError, got RuntimeError")
            assert not rollout.done
            assert rollout.main is not None
            await rollout.apply(await host.hook.model_call(agent=rollout.main, request=request))
            if not rollout.done:  # a second answer to one request
                await misuse(rollout, "apply", ran, "exactly one apply")
                seconds += 1
        assert rollout.done
        await misuse(rollout, "apply", ran, r"apply\(\) after the rollout ended")
        await misuse(rollout, "fail", ModelError("late", permanent=False), r"fail\(\) after the rollout ended")
        return seconds

    with Rollout.open(spec, host=host, judge_pool=judge_pool) as rollout:
        assert anyio.run(drive, rollout) >= 1
        stepped = rollout.finish()
        anyio.run(misuse, rollout, "fail", ModelError("after"), r"fail\(\) after finish\(\)")
        assert rollout.finish() is stepped
    assert stepped.model_dump() == ran.model_dump()

    closed = Rollout.open(spec, host=host, judge_pool=judge_pool)
    assert anyio.run(closed.next_request) is not None
    closed.close()
    with pytest.raises(OrchestraError, match=r"next_request\(\) after the rollout was closed"):
        anyio.run(closed.next_request)
    anyio.run(misuse, closed, "apply", ran, r"apply\(\) after the rollout was closed")


def test_an_executed_rollout_lets_its_world_go_and_stays_readable() -> None:
    """`execute` releases the rollouts it makes once their records are made: the world (session,
    ARE's scenario and environment) is freed without the cyclic collector; the rollout, its agents
    and the record stay readable."""
    import gc
    import weakref

    seen: dict[str, Any] = {}

    class Keep:
        @hookimpl
        def rollout_closed(self, rollout: Any) -> None:
            seen["rollout"] = rollout
            seen["agent"] = rollout.main
            seen["scenario"] = weakref.ref(rollout.session.scenario)

    spec = RolloutSpec(scenario=str(scenario("starter_search_lookup")), agent=AgentConfig(model=ModelConfig(model=ORACLE)))
    gc.disable()
    try:
        record = anyio.run(lambda: execute(spec, host=Host.create([Keep()])))
        assert seen["scenario"]() is None  # freed by reference counting: no collection ran
    finally:
        gc.enable()
    assert record.error is None and record.result is not None and record.result.success
    assert seen["agent"].name == "main" and seen["rollout"].spec == spec and seen["rollout"].agents["main"].steps > 0
