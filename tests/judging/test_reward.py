"""Reward hazards of the defaults (issue #28 finding 10): dense credit pays nothing for a
content-free answer, while the oracle keeps its full credit.

ARE's scripted judge (the default) never reads an answer's text, so before this a policy that only
answered "Done." earned a matched write for every oracle answer: 0.8 of dense credit on every
bundled Search scenario, 0.1-0.53 elsewhere. (That the scripted verdict itself accepts such an
answer on 8 of the 9 Search scenarios is ARE's judge, kept as the default and documented in
docs/judges.md; `judge_mode="strict"` is the offline remedy.)
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from orchestra.are.reward import DENSE_CAP, dense_credit
from orchestra.oracle.replay import build_plan, replay
from orchestra.scenario_files import resolve
from orchestra.session import Session, SessionConfig

SEARCH = sorted(f.path for f in resolve(["bundled:search"]))


def _dense(path: Path, judge_pool, answer: str | None) -> tuple[float, float]:
    """(reward, dense credit) of the oracle, or of a policy that only answers `answer`."""
    with Session.open(path, SessionConfig(reward_mode="dense"), judge_pool=judge_pool) as s:
        plan = build_plan(s)
        if answer is not None:
            ids = {a.event_id for a in plan.actions}
            answers = {a.event_id for a in plan.actions if a.is_answer}
            plan.actions = [
                replace(a, args={**a.args, "content": answer}, parents=tuple(p for p in a.parents if p not in ids or p in answers))
                for a in plan.actions
                if a.is_answer
            ]
        replay(s, plan)
        result = s.finish()
        return result.reward, dense_credit(s.prepared, s.env.event_log())


def test_the_bundled_search_scenarios_are_nine():
    assert len(SEARCH) == 9


@pytest.mark.parametrize("path", SEARCH, ids=lambda p: p.stem)
def test_a_policy_that_only_answers_gets_no_dense_credit_on_search_and_the_oracle_gets_its_full_credit(path, judge_pool):
    reward, credit = _dense(path, judge_pool, "Done.")
    assert credit == 0.0
    assert reward in (0.0, 1.0)  # ARE's scripted verdict (1.0: the hazard docs/judges.md leads its RL section with)
    reward, credit = _dense(path, judge_pool, None)
    assert reward == 1.0 and credit == DENSE_CAP


def test_a_confirmation_earns_credit_only_with_the_work_it_confirms(scenario_path, judge_pool):
    path = scenario_path("starter_execution_calendar")
    reward, credit = _dense(path, judge_pool, "Done.")
    assert reward == credit == 0.0  # was 0.8 * 1/3: the answer alone counted as one of three writes
    reward, credit = _dense(path, judge_pool, "The Q4 roadmap review is booked for Thursday, October 17, 14:00-15:00 in Room 4B.")
    assert reward == credit == 0.0  # the user's own details repeated, with none of the work done
