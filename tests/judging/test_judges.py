"""The three judge modes on real rollouts: settings, strict checks, the cached LLM judge, and the
LLM judge's verdicts against ARE's own `are-benchmark` judge path on identical judge-model replies."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import ValidationError

from orchestra.are import judges as are_judges
from orchestra.are.native_verdict import are_native_verdict, export_trace
from orchestra.judging.cache import JudgeCallCache
from orchestra.judging.engine import JudgeEngine
from orchestra.judging.settings import JudgeConfig
from orchestra.oracle.perturbations import JudgeRules, NotApplicable, perturb
from orchestra.oracle.replay import build_plan, replay
from orchestra.session import Session, SessionConfig

YES, NO = "<subtask>Answer the user.</subtask> [[True]] [[Success]]", "[[False]] [[Failure]]"


def _rollout(
    path: Path, judge: JudgeConfig, answer: str | None = None, turn_event: str | None = None, kind: str | None = None, edit: tuple[str, str, str] | None = None
):
    """Replay the oracle (optionally with one answer's text or one (event, arg) replaced, or a perturbation)."""
    with Session.open(path, SessionConfig(judge=judge)) as s:
        plan = build_plan(s)
        if kind is not None:
            plan = perturb(plan, kind, JudgeRules.from_judge(s.prepared.judge, s.scenario))
        if answer is not None:
            target = next(a for a in plan.actions if a.is_answer and (turn_event is None or a.event_id == turn_event))
            plan.actions = [replace(a, args={**a.args, "content": answer}) if a is target else a for a in plan.actions]
        if edit is not None:
            event_id, arg, value = edit
            plan.actions = [replace(a, args={**a.args, arg: value}) if a.event_id == event_id else a for a in plan.actions]
        replay(s, plan)
        result = s.finish()
        return result, export_trace(s.env.env, s.scenario, s.scenario_id, path.read_text())


def _script(tmp_path: Path, rules: list[dict], default: str = YES) -> str:
    path = tmp_path / "judge-model.json"
    path.write_text(json.dumps({"rules": rules, "default": default}))
    return f"orchestra-judge/{path}"


# ------------------------------------------------------------------ settings


def test_default_is_scripted_and_named_in_results(scenario_path, judge_pool):
    assert SessionConfig().judge.mode == "scripted"
    with Session.open(scenario_path("starter_search_lookup"), judge_pool=judge_pool) as s:
        replay(s, build_plan(s))
        r = s.finish()
    assert r.success and r.judge == "scripted" and r.judge_usage is None and r.judge_checks == []


def test_bad_judge_settings_are_clear_errors():
    with pytest.raises(ValidationError, match="needs a judge model"):
        JudgeConfig(mode="llm")
    with pytest.raises(ValidationError, match="only apply to --judge llm"):
        JudgeConfig(mode="strict", model="openai/gpt-4o-mini")
    assert JudgeConfig(mode="llm", model="openai/x").label == "llm:openai/x"
    assert JudgeConfig(mode="llm", model="openai/x", are_bool_bug=False).label == "llm:openai/x+verbatim-bools"
    with pytest.raises(ValidationError, match="only applies to --judge llm"):
        JudgeConfig(mode="strict", are_bool_bug=False)
    assert "secret" not in repr(JudgeConfig(mode="llm", model="m", api_key="secret"))
    assert "api_key" not in JudgeConfig(mode="llm", model="m", api_key="secret").model_dump()


def test_a_pool_of_other_judges_is_refused(scenario_path, judge_pool):
    with pytest.raises(Exception, match="holds scripted judges"):
        with Session.open(scenario_path("starter_search_lookup"), SessionConfig(judge=JudgeConfig(mode="strict")), judge_pool=judge_pool):
            pass


# ------------------------------------------------------------------ strict


def test_strict_accepts_the_oracle_and_rejects_a_wrong_answer_naming_the_facts(scenario_path):
    strict = JudgeConfig(mode="strict")
    ok, _ = _rollout(scenario_path("starter_search_lookup"), strict)
    assert ok.success and ok.reward == 1.0 and ok.judge == "strict"
    assert [c["arg"] for c in ok.judge_checks] == ["content"] and ok.judge_checks[0]["ok"]
    bad, _ = _rollout(scenario_path("starter_search_lookup"), strict, answer="I have no idea, sorry.")
    assert not bad.success and bad.reward == 0.0
    assert "strict: oracle_reply.content: missing or wrong" in bad.rationale and "INV-2041" in bad.rationale
    para, _ = _rollout(
        scenario_path("starter_search_lookup"),
        strict,
        answer="Tom Becker's latest invoice (INV-2041, October bookkeeping) is 1280 USD, due 31 Oct 2024; phone (415) 555-0144.",
    )
    assert para.success, para.rationale


def test_strict_says_when_the_oracle_text_has_no_checkable_fact(scenario_path):
    # the text to Sofia carries only "10 minutes"; the answer names Sofia; a message with no fact is not checked
    result, _ = _rollout(
        scenario_path("starter_time_deadline"), JudgeConfig(mode="strict"), answer="Sent to Sofia Alvarez: 'Running 10 minutes late, order without me!'"
    )
    assert result.success
    strict = are_judges.build_judge(JudgeConfig(mode="strict"))
    from orchestra.are.judges import strict_text_verdict

    note = strict_text_verdict("On my way!", "Heading over now", None)
    assert note["ok"] and "no checkable fact" in note["note"]
    assert are_judges.info(strict).config.mode == "strict"


def test_strict_checks_free_text_of_other_tools_too(scenario_path):
    """The email body of starter_execution_calendar: a wrong day is rejected (scripted accepts it)."""

    def wrong_email(plan):
        return [
            replace(a, args={**a.args, "content": "Hi both, the review is on Friday, October 18, 14:00-15:00 in Room 4B."})
            if a.event_id == "oracle_send_email"
            else a
            for a in plan.actions
        ]

    verdicts = {}
    for mode in ("scripted", "strict"):
        with Session.open(scenario_path("starter_execution_calendar"), SessionConfig(judge=JudgeConfig(mode=mode))) as s:
            plan = build_plan(s)
            plan.actions = wrong_email(plan)
            replay(s, plan)
            verdicts[mode] = s.finish()
    assert verdicts["scripted"].success is True
    assert verdicts["strict"].success is False and "oracle_send_email.content" in verdicts["strict"].rationale


def test_wrong_answer_is_na_under_scripted_and_rejected_under_strict(scenario_path, judge_pool):
    with Session.open(scenario_path("starter_search_lookup"), judge_pool=judge_pool) as s:
        with pytest.raises(NotApplicable, match="does not check free text"):
            perturb(build_plan(s), "wrong_answer", JudgeRules.from_judge(s.prepared.judge, s.scenario))
    result, _ = _rollout(scenario_path("starter_multiturn_followup"), JudgeConfig(mode="strict"), kind="wrong_answer")
    assert result.success is False and result.reward == 0.0


# ------------------------------------------------------------------ llm: engine and cache


def test_engine_post_processes_like_ares_litellm_engine_and_caches(tmp_path):
    model = _script(tmp_path, [{"contains": "hello", "reply": "True, done. STOP ignored"}], default="False")
    engine = JudgeEngine(model, cache_dir=tmp_path / "cache")
    text, meta = engine([{"role": "user", "content": "hello"}], stop_sequences=["STOP"])
    assert (text, meta) == ("true, done. ", None)  # ARE's LiteLLMEngine: True/False lowered, cut at stops
    assert engine.usage.calls == 1 and engine.usage.prompt_tokens > 0 and engine.usage.cache_hits == 0
    again = JudgeEngine(model, cache_dir=tmp_path / "cache")
    assert again([{"role": "user", "content": "hello"}], stop_sequences=["STOP"])[0] == "true, done. "
    assert again.usage.calls == 0 and again.usage.cache_hits == 1
    key = JudgeCallCache.key(model, [{"role": "user", "content": "hello"}], ["STOP"])
    assert json.loads((tmp_path / "cache" / key[:2] / f"{key}.json").read_text())["text"] == "true, done. "
    uncached = JudgeEngine(model)
    uncached([{"role": "user", "content": "hello"}])
    uncached([{"role": "user", "content": "hello"}])
    assert uncached.usage.calls == 2


def test_the_bool_bug_opt_out_keeps_true_verbatim_in_its_own_cache_entries(tmp_path):
    model = _script(tmp_path, [{"contains": "hello", "reply": "[[True]] STOP x"}], default="[[False]]")
    messages = [{"role": "user", "content": "hello"}]
    assert JudgeEngine(model, cache_dir=tmp_path / "cache")(messages, stop_sequences=["STOP"])[0] == "[[true]] "
    verbatim = JudgeEngine(model, cache_dir=tmp_path / "cache", are_bool_bug=False)
    assert verbatim(messages, stop_sequences=["STOP"])[0] == "[[True]] "  # not the faithful engine's cached entry
    assert verbatim.usage.calls == 1 and verbatim.usage.cache_hits == 0
    again = JudgeEngine(model, cache_dir=tmp_path / "cache", are_bool_bug=False)
    assert again(messages, stop_sequences=["STOP"])[0] == "[[True]] " and again.usage.cache_hits == 1
    assert JudgeEngine(model, cache_dir=tmp_path / "cache")(messages, stop_sequences=["STOP"])[0] == "[[true]] "


def test_a_script_without_a_matching_rule_is_a_clear_error(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"rules": [{"contains": "x", "reply": "y"}]}))
    with pytest.raises(Exception, match="no rule matches"):
        JudgeEngine(f"orchestra-judge/{path}")([{"role": "user", "content": "hello"}])


# ------------------------------------------------------------------ llm: against ARE's are-benchmark judge


PARAPHRASE = "Tom Becker's latest invoice, INV-2041, is $1,280 and due Oct 31, 2024; his number is +1 415 555 0144."
TURN2_PARAPHRASE = "Lunch with Sofia now runs 13:00-14:00 on Saturday Oct 19 at Cafe Lumiere, and Sofia knows."


def test_llm_verdicts_equal_ares_own_llm_judge_on_the_same_judge_model_replies(scenario_path, tmp_path):
    """orchestra's `llm` judge (online, in the thread-free driver, cached engine) vs ARE's
    `are-benchmark judge` path (ARE's preprocess_scenario_from_config, ARE's LiteLLMEngine), both
    asking one scripted judge model that accepts the paraphrases and rejects the wrong answers."""
    model = _script(
        tmp_path,
        [
            {"contains": "Sorry, I could not", "reply": NO},
            {"contains": "INV-2042", "reply": NO},
            {"contains": PARAPHRASE, "reply": YES},
            {"contains": "Elena Rossi", "reply": NO},
            {"contains": "title: Q3 planning", "reply": NO},
        ],
    )
    judge = JudgeConfig(mode="llm", model=model, cache_dir=tmp_path / "cache")
    cases = [
        ("starter_search_lookup", {}),
        ("starter_search_lookup", {"kind": "wrong_answer"}),
        ("starter_search_lookup", {"answer": PARAPHRASE}),
        ("starter_multiturn_followup", {"answer": TURN2_PARAPHRASE, "turn_event": "oracle_reply_turn2"}),
        ("starter_multiturn_followup", {"kind": "wrong_answer"}),
        # ARE's event checker ([[Success]]) decides these: accepted, then rejected, by the judge model
        ("starter_execution_calendar", {"edit": ("oracle_add_calendar_event", "title", "Q4 roadmap review meeting")}),
        ("starter_execution_calendar", {"edit": ("oracle_add_calendar_event", "title", "Q3 planning")}),
    ]
    ours, theirs = [], []
    for name, kw in cases:
        result, trace = _rollout(scenario_path(name), judge, **kw)
        ours.append(result.success)
        theirs.append(are_native_verdict(trace, judge=judge).success)
        assert result.judge == f"llm:{model}"
    assert ours == theirs, list(zip(cases, ours, theirs))
    # non-vacuous: the oracle passes, a wrong answer fails, and the judge model's replies decide the last two
    assert ours[0] is True and ours[1] is False and ours[-2:] == [True, False]


def test_llm_judge_calls_are_cached_reported_apart_and_never_move_the_clock(scenario_path, tmp_path, judge_pool):
    model = _script(tmp_path, [{"contains": PARAPHRASE, "reply": YES}])
    judge = JudgeConfig(mode="llm", model=model, cache_dir=tmp_path / "cache")
    first, _ = _rollout(scenario_path("starter_search_lookup"), judge, answer=PARAPHRASE)
    second, _ = _rollout(scenario_path("starter_search_lookup"), judge, answer=PARAPHRASE)
    assert first.judge_usage.calls >= 2 and first.judge_usage.cache_hits == 0 and first.judge_usage.prompt_tokens > 0
    assert second.judge_usage.calls == 0 and second.judge_usage.cache_hits == first.judge_usage.calls
    assert second.success == first.success
    scripted, _ = _rollout(scenario_path("starter_search_lookup"), JudgeConfig(), answer=PARAPHRASE)
    assert (first.sim_seconds, first.event_log_sha256) == (scripted.sim_seconds, scripted.event_log_sha256)


def test_a_cache_that_cannot_be_written_costs_only_the_cache(tmp_path, monkeypatch):
    import orchestra.judging.cache as judges_module

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    model = _script(tmp_path, [{"contains": "hello", "reply": "[[True]]"}])
    monkeypatch.setattr(judges_module.os, "replace", refuse)  # a read-only folder (tests may run as root)
    engine = JudgeEngine(model, cache_dir=tmp_path / "cache")
    with pytest.warns(UserWarning, match="cannot be written"):
        assert engine([{"role": "user", "content": "hello"}])[0] == "[[true]]"
    assert engine([{"role": "user", "content": "hello"}])[0] == "[[true]]"  # warned once, asked again
    assert engine.usage.calls == 2 and not list((tmp_path / "cache").rglob("*.tmp"))
