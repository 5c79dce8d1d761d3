"""Acceptance: teams run on the oracle model score 1.0 on every bundled scenario, through app-agents.

The all-app-agents team (every app an app-agent) and the heterogeneous team (its models swapped
for `orchestra/oracle`), each with every scaffold in each role: the main agent's oracle delegates
each app's due actions to that app's expert with a task text, the app-agent's oracle performs the
calls the text lists. Each rollout is checked for what really happened: 1.0, the main agent made
no call on a served app itself, the app-agents made every app call ARE logged. The fast subset runs
every scenario once (tool_calling in both roles) and every scaffold pair on a few scenarios that
exercise delegation chains, placeholders across delegations and environment-started turns; the
cross product of 2 teams x 8 other scaffold pairs with a stratified subset (every capability, every
universe, single- and multi-turn: `helpers.stratified`'s 7 scenarios, plus the tightest-timed one)
is `slow`, one test per pair, one file per team, so CI's `pytest -n 2 --dist loadfile` runs the two
teams on two workers. (It ran the whole corpus for every pair until the suite's time mattered:
16 x 51 rollouts, about 300 s of CI's 30 min, for combinations the scenario subset and the
whole-corpus pair already cover.)
"""

from __future__ import annotations

import pytest

from orchestra.host import Host
from support.oracle_team_helpers import (
    ALL_SCENARIOS,
    OTHER_PAIRS,
    PAIRS,
    CallRecorder,
    assert_scores_one_through_app_agents,
    check_every_scenario,
    load_shipped_team,
    oracle_apps,
    run_team,
    with_roles,
)

TEAMS = ("all_app_agents", "heterogeneous")
#: Delegation chains (several actions of one app at once, several apps in one turn), ids created
#: by an app-agent and used in a later delegation, environment-started turns, time-checked actions.
CHOSEN = (
    "starter_multiturn_followup",  # Calendar id created in turn 1, deleted in turn 2
    "univ_02_mt_adapt_one_on_one_slot",  # three actions on two apps due 5 s after an env event
    "univ_05_mt_exec_order_cancel",  # Shopping order id (uuid minted in the app) cancelled later
    "univ_02_exec_group_chat",  # group conversation id used by the next call
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


@pytest.mark.parametrize("team_name", TEAMS)
def test_every_bundled_scenario_scores_one_through_app_agents(team_name, host, recorder, judge_pool):
    team = with_roles(load_shipped_team(team_name), "tool_calling", "tool_calling")
    assert len(ALL_SCENARIOS) == 51
    for path in ALL_SCENARIOS:
        record = run_team(path, team, host, judge_pool, recorder)
        assert record.policy == f"team:{team.name}"
        app_calls = assert_scores_one_through_app_agents(record, recorder)
        # every scenario whose oracle acts on an app delegated (the others only answer the user)
        assert (app_calls > 0) == bool(oracle_apps(path)), path.stem
        assert {d.app for d in record.result.delegations} == oracle_apps(path), path.stem


@pytest.mark.parametrize("main,app_agents", PAIRS, ids=[f"{m}-{a}" for m, a in PAIRS])
def test_every_scaffold_pair_scores_one_on_chosen_scenarios(main, app_agents, host, recorder, judge_pool):
    team = with_roles(load_shipped_team("all_app_agents"), main, app_agents)
    for stem in CHOSEN:
        first = run_team(_scenario(stem), team, host, judge_pool, recorder)
        assert assert_scores_one_through_app_agents(first, recorder) > 0
        again = run_team(_scenario(stem), team, host, judge_pool)
        assert again.result.event_log_sha256 == first.result.event_log_sha256, stem  # deterministic
        ledgers = [a for a in first.result.agents if a.role == "sub"]
        assert ledgers and all(a.scaffold == app_agents and a.answer and a.prompt_tokens > 0 for a in ledgers)
        assert first.result.agents[0].scaffold == main


@pytest.mark.slow
@pytest.mark.parametrize("main,app_agents", OTHER_PAIRS, ids=[f"{m}-{a}" for m, a in OTHER_PAIRS])
def test_every_scaffold_pair_scores_one_across_capabilities_and_universes(main, app_agents, judge_pool):
    # the heterogeneous team's matrix is in test_oracle_teams_heterogeneous.py (another file: CI's
    # `--dist loadfile` runs it on another worker)
    check_every_scenario("all_app_agents", main, app_agents, judge_pool)
