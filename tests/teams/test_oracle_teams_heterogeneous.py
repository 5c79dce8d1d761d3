"""Acceptance (slow): the heterogeneous team, its models swapped for the oracle, scores 1.0 with every
scaffold pair (main agent x app-agents), through its app-agents, on a subset that covers every
capability, universe and turn count (`helpers.stratified`; every bundled scenario is run by the
tool_calling pair in test_oracle_teams.py).

Its own file so that CI's `--dist loadfile` runs it beside the all-app-agents matrix
(test_oracle_teams.py, which also has the fast tests and the tool_calling/tool_calling pair).
"""

from __future__ import annotations

import pytest

from support.oracle_team_helpers import OTHER_PAIRS, check_every_scenario


@pytest.mark.slow
@pytest.mark.parametrize("main,app_agents", OTHER_PAIRS, ids=[f"{m}-{a}" for m, a in OTHER_PAIRS])
def test_every_scaffold_pair_scores_one_across_capabilities_and_universes(main, app_agents, judge_pool):
    check_every_scenario("heterogeneous", main, app_agents, judge_pool)
