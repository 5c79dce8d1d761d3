"""Judges for concurrent rollouts (scripted, strict, llm): the first is built, the others are copies that share its per-tool judges."""

from __future__ import annotations

import json
from dataclasses import replace

import anyio

from orchestra.are import judges as are_judges
from orchestra.are.judge_pool import JudgePool, clone_scripted_judge
from orchestra.are.judges import BUILTIN_JUDGES, judge_pool_for, new_judge_pool
from orchestra.judging.settings import JudgeConfig
from orchestra.oracle.replay import build_plan, replay
from orchestra.rl import EnvConfig, GaiaEnv
from orchestra.session import SEND_TO_USER_TOOL, Session, SessionConfig
from support.helpers import scenario


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


# ------------------------------------------------------------------ strict and llm judges: built once, cloned


def test_concurrent_strict_resets_build_the_strict_judge_once(scenario_path):
    """16 episodes of one scenario opened at once (a GRPO group): one strict judge is built (once
    in the process), the others are clones, each with its own state."""
    config = EnvConfig(judge=JudgeConfig(mode="strict"))
    pool = judge_pool_for(config.judge)  # the process-wide pool a GaiaEnv uses
    envs = [GaiaEnv(config) for _ in range(16)]

    async def reset_all() -> None:
        async with anyio.create_task_group() as tg:
            for env in envs:
                tg.start_soon(env.reset, scenario_path("starter_search_lookup"))

    anyio.run(reset_all)
    try:
        judges = [env.episode.rollout.session.prepared.judge for env in envs]
        assert len({id(j) for j in judges}) == 16 and len({id(j.strict_state) for j in judges}) == 16
        assert pool.builds >= 16 and pool.builds - pool.clones == 1  # built once in the process, cloned since
    finally:
        for env in envs:
            env.close()


def _judged(pool, config, names, answer=None):
    """Open every scenario at once (one judge each), replay the oracle (or answer `answer`), judge."""
    sessions = [Session.start(scenario(name), SessionConfig(judge=config), judge_pool=pool) for name in names]
    try:
        for s in sessions:
            plan = build_plan(s)
            if answer is not None:
                plan.actions = [replace(a, args={**a.args, "content": answer}) if a.is_answer else a for a in plan.actions]
            replay(s, plan)
        return [s.finish() for s in sessions], [s.prepared.judge for s in sessions]
    finally:
        for s in sessions:
            s.close()


WRONG = "Tom Becker's latest invoice, INV-2042, is $1,280 and due Oct 31, 2024; his number is +1 415 555 0144."


def test_a_cloned_strict_judge_judges_like_a_built_one_and_keeps_its_own_checks():
    config = JudgeConfig(mode="strict")
    built, cloned = JudgePool(lambda: BUILTIN_JUDGES["strict"](config), mode="strict"), new_judge_pool(config)
    results = []
    for pool in (built, cloned):
        good, _ = _judged(pool, config, ["starter_search_lookup", "starter_execution_calendar"])
        bad, judges = _judged(pool, config, ["starter_search_lookup", "starter_search_lookup"], answer=WRONG)
        results.append([(r.success, r.reward, r.rationale, r.judge, r.judge_checks) for r in good + bad])
        assert judges[0].strict_state is not judges[1].strict_state
    assert built.clones == 0 and cloned.builds == 2 and cloned.clones == 1
    assert results[0] == results[1]
    assert [r[0] for r in results[1]] == [True, True, False, False] and all(r[3] == "strict" and r[4] for r in results[1])


def test_a_cloned_llm_judge_counts_its_own_rollouts_judge_calls(tmp_path):
    """The LLM judge's clones share ARE's checkers; each reports the judge-model calls of its own rollout."""
    rules = {"rules": [], "default": "<subtask>Answer the user.</subtask> [[True]] [[Success]]"}
    (tmp_path / "judge-model.json").write_text(json.dumps(rules))
    config = JudgeConfig(mode="llm", model=f"orchestra-judge/{tmp_path / 'judge-model.json'}", use_cache=False)
    pool = new_judge_pool(config)
    results, judges = _judged(pool, config, ["starter_search_lookup", "starter_search_lookup", "starter_execution_calendar"], answer="Paraphrased.")
    assert pool.builds == 3 and pool.clones == 2
    assert judges[1].event_judges is judges[0].event_judges  # the checkers (and their templates) are shared
    usage = [r.judge_usage for r in results]
    assert usage[0].calls > 0 and usage[0] == usage[1]  # the same rollout twice: the same calls, each counted once
    assert [u.calls for u in usage] == [are_judges.info(j).engine.usage.calls for j in judges]
