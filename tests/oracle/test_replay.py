"""Oracle replay: the offline policy must score 1.0 on every bundled scenario."""

from __future__ import annotations

import pytest

from orchestra.oracle.replay import build_plan, replay
from orchestra.session import Session, SessionConfig
from support.helpers import STARTER


@pytest.mark.parametrize("path", STARTER, ids=[p.stem for p in STARTER])
def test_oracle_replay_scores_one(path, judge_pool):
    with Session.open(path, judge_pool=judge_pool) as s:
        plan = build_plan(s)
        records = replay(s, plan)
        result = s.finish()
    assert all(r.ok for r in records), [(r.event_id, r.error) for r in records]
    assert result.success, result.rationale
    assert result.reward == 1.0
    assert result.turns_completed == result.nb_turns
    assert len(result.turns) == result.nb_turns and all(t.success for t in result.turns)


def test_replay_follows_the_oracle_timing(scenario_path, judge_pool):
    """The time-checked reply to the env email happens 5 s (+ the wait's tool charge) after it."""
    with Session.open(scenario_path("starter_time_deadline"), judge_pool=judge_pool) as s:
        plan = build_plan(s)
        timed = [a for a in plan.actions if a.time_checked]
        assert [a.delay for a in timed] == [180.0]
        records = {r.event_id: r for r in replay(s, plan)}
        user = next(e for e in s.env.event_log() if e.event_type.value == "USER")
        gap = records[timed[0].event_id].sim_time - float(user.event_time)
        assert 180.0 <= gap <= 180.0 + 2.0 + 1e-6


def test_dense_reward_of_a_success_is_one(scenario_path, judge_pool):
    with Session.open(scenario_path("starter_execution_calendar"), SessionConfig(reward_mode="dense"), judge_pool=judge_pool) as s:
        replay(s, build_plan(s))
        assert s.finish().reward == 1.0
