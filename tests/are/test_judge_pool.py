"""Judges for concurrent rollouts: the first is built, the others are copies that share its per-tool judges."""

from __future__ import annotations

from orchestra.are.judge_pool import JudgePool, clone_scripted_judge
from orchestra.oracle.replay import build_plan, replay
from orchestra.session import SEND_TO_USER_TOOL, Session


def test_concurrent_sessions_get_a_cloned_judge_with_its_own_state(scenario_path):
    pool = JudgePool()
    # two rollouts open at once, interleaved: one replays the oracle (passes), one answers without the write (fails)
    with Session.open(scenario_path("starter_execution_calendar"), judge_pool=pool) as good:
        with Session.open(scenario_path("starter_execution_calendar"), judge_pool=pool) as bad:
            assert pool.builds == 2 and pool.clones == 1
            assert good.prepared.judge is not bad.prepared.judge and good.prepared.judge.state is not bad.prepared.judge.state
            assert good.prepared.judge.event_judges is bad.prepared.judge.event_judges  # the expensive, read-only part is shared
            plan = build_plan(good)
            bad.call_tool(SEND_TO_USER_TOOL, {"content": "Done."})
            replay(good, plan)
            bad_result = bad.finish()
        good_result = good.finish()
    assert good_result.success is True and good_result.reward == 1.0
    assert bad_result.success is False and bad_result.reward == 0.0
    assert not good.prepared.judge.error_logs


def test_a_clone_judges_like_a_built_judge(scenario_path):
    built, cloned = JudgePool(clone=lambda judge: None), JudgePool()
    results = []
    for pool in (built, cloned):
        pool.warm()
        pool.warm()
        sessions = [Session.start(scenario_path(name), judge_pool=pool) for name in ("starter_execution_calendar", "starter_search_lookup")]
        for s in sessions:
            replay(s, build_plan(s))
        results.append([(r.success, r.reward, r.rationale) for r in (s.finish() for s in sessions)])
        for s in sessions:
            s.close()
    assert built.clones == 0 and cloned.clones == 1
    assert results[0] == results[1] and all(success for success, _, _ in results[0])


def test_only_aress_scripted_judge_is_cloned():
    class NotAJudge:
        pass

    assert clone_scripted_judge(NotAJudge()) is None
    pool = JudgePool(lambda: NotAJudge())  # a custom builder: every judge is built
    pool.warm()
    pool.warm()
    assert pool.builds == 2 and pool.clones == 0
