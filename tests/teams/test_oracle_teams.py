"""Acceptance: teams run on the oracle model score 1.0 on every bundled scenario, through app-agents.

The all-app-agents team (every app an app-agent) and the heterogeneous team (its models swapped
for `orchestra/oracle`), each with every scaffold in each role: the main agent's oracle delegates
each app's due actions to that app's expert with a task text, the app-agent's oracle performs the
calls the text lists. Each rollout is checked for what really happened: 1.0, the main agent made
no call on a served app itself, the app-agents made every app call ARE logged. The fast subset runs
every scenario once (tool_calling in both roles) and every scaffold pair on a few scenarios that
exercise delegation chains, placeholders across delegations and environment-started turns; the
whole cross product (2 teams x 9 scaffold pairs x 51 scenarios) is `slow`, one test per team and
pair, so `pytest -n` spreads it over workers.
"""

from __future__ import annotations

import pytest
from oracle_team_helpers import (
    ALL_SCENARIOS,
    SCAFFOLDS,
    CallRecorder,
    check_delegated,
    load_shipped_team,
    oracle_apps,
    run_team,
    with_roles,
)

from orchestra.host import Host

TEAMS = ("all_app_agents", "heterogeneous")
PAIRS = [(m, a) for m in SCAFFOLDS for a in SCAFFOLDS]
#: Delegation chains (several actions of one app at once, several apps in one turn), ids created
#: by an app-agent and used in a later delegation, environment-started turns, time-checked actions.
CHOSEN = (
    "starter_multiturn_followup",          # Calendar id created in turn 1, deleted in turn 2
    "univ_02_mt_adapt_one_on_one_slot",    # three actions on two apps due 5 s after an env event
    "univ_05_mt_exec_order_cancel",        # Shopping order id (uuid minted in the app) cancelled later
    "univ_02_exec_group_chat",             # group conversation id used by the next call
    "univ_05_time_reply_within_deadline",  # a time comparator
)


def _scenario(stem: str):
    return next(p for p in ALL_SCENARIOS if p.stem == stem)


@pytest.fixture(scope="module")
def recorder() -> CallRecorder:
    return CallRecorder()


@pytest.fixture(scope="module")
def host(recorder) -> Host:
    return Host.create([recorder])


def _assert_one(record, recorder) -> int:
    assert record.error is None, (record.scenario_id, record.error)
    result = record.result
    assert result.success and result.reward == 1.0, (record.scenario_id, result.rationale)
    return check_delegated(record, recorder)


@pytest.mark.parametrize("team_name", TEAMS)
def test_every_bundled_scenario_scores_one_through_app_agents(team_name, host, recorder, judge_pool):
    team = with_roles(load_shipped_team(team_name), "tool_calling", "tool_calling")
    assert len(ALL_SCENARIOS) == 51
    for path in ALL_SCENARIOS:
        record = run_team(path, team, host, judge_pool)
        assert record.policy == f"team:{team.name}"
        app_calls = _assert_one(record, recorder)
        # every scenario whose oracle acts on an app delegated (the others only answer the user)
        assert (app_calls > 0) == bool(oracle_apps(path)), path.stem
        assert {d.app for d in record.result.delegations} == oracle_apps(path), path.stem


@pytest.mark.parametrize("main,app_agents", PAIRS, ids=[f"{m}-{a}" for m, a in PAIRS])
def test_every_scaffold_pair_scores_one_on_chosen_scenarios(main, app_agents, host, recorder, judge_pool):
    team = with_roles(load_shipped_team("all_app_agents"), main, app_agents)
    for stem in CHOSEN:
        first = run_team(_scenario(stem), team, host, judge_pool)
        assert _assert_one(first, recorder) > 0
        again = run_team(_scenario(stem), team, host, judge_pool)
        assert again.result.event_log_sha256 == first.result.event_log_sha256, stem  # deterministic
        ledgers = [a for a in first.result.agents if a.role == "sub"]
        assert ledgers and all(a.scaffold == app_agents and a.answer and a.prompt_tokens > 0 for a in ledgers)
        assert first.result.agents[0].scaffold == main


@pytest.mark.slow
@pytest.mark.parametrize("team_name", TEAMS)
@pytest.mark.parametrize("main,app_agents", PAIRS, ids=[f"{m}-{a}" for m, a in PAIRS])
def test_every_bundled_scenario_scores_one_with_every_scaffold_pair(team_name, main, app_agents, host, recorder, judge_pool):
    team = with_roles(load_shipped_team(team_name), main, app_agents)
    hashes = {}
    for path in ALL_SCENARIOS:
        record = run_team(path, team, host, judge_pool)
        _assert_one(record, recorder)
        hashes[path.stem] = record.result.event_log_sha256
    again = run_team(_scenario(CHOSEN[1]), team, host, judge_pool)
    assert again.result.event_log_sha256 == hashes[CHOSEN[1]]
