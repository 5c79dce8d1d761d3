"""Verifying the verifier: every applicable perturbation of the oracle must score 0.0."""

from __future__ import annotations

import json

import pytest

from orchestra.oracle.perturbations import KINDS, JudgeRules, NotApplicable, perturb, wrong_value
from orchestra.oracle.replay import OracleAction, OraclePlan, build_plan, replay
from orchestra.session import Session, SessionConfig
from support.helpers import STARTER


def _run(path, kind, judge_pool, reward_mode="binary"):
    with Session.open(path, SessionConfig(reward_mode=reward_mode), judge_pool=judge_pool) as s:
        plan = perturb(build_plan(s), kind, JudgeRules.from_judge(s.prepared.judge))
        replay(s, plan)
        return plan, s.finish()


CASES = [(p, k) for p in STARTER for k in KINDS]


@pytest.mark.parametrize("path,kind", CASES, ids=[f"{p.stem}-{k}" for p, k in CASES])
def test_perturbation_is_rejected_or_not_applicable(path, kind, judge_pool):
    try:
        plan, result = _run(path, kind, judge_pool)
    except NotApplicable as exc:
        assert str(exc), "a non-applicable perturbation must say why"
        return
    assert plan.notes, "the perturbed plan must describe what changed"
    assert result.success is False, f"judge accepted a perturbed trajectory: {plan.notes}"
    assert result.reward == 0.0


def test_every_kind_applies_somewhere(judge_pool):
    """Guard against a vacuous suite: each perturbation must really run on some bundled scenario.

    (`wrong_answer` is n/a under the scripted judge by design; tests/test_judges.py covers it.)"""
    applicable = {k: [] for k in KINDS if k != "wrong_answer"}
    for path in STARTER:
        with Session.open(path, judge_pool=judge_pool) as s:
            plan = build_plan(s)
            rules = JudgeRules.from_judge(s.prepared.judge)
            for kind in applicable:
                try:
                    perturb(plan, kind, rules)
                    applicable[kind].append(path.stem)
                except NotApplicable:
                    pass
    assert all(applicable.values()), applicable


def test_not_applicable_is_reported_with_a_reason(scenario_path, judge_pool):
    for kind, reason in [("wrong_arg", "hard-checked"), ("late", "timing window"), ("missing", "only write"), ("swap", "depends")]:
        with pytest.raises(NotApplicable, match=reason):
            _run(scenario_path("starter_ambiguity_clarify"), kind, judge_pool)


def test_dense_reward_gives_partial_credit_below_the_cap(scenario_path, judge_pool):
    _, result = _run(scenario_path("starter_execution_calendar"), "missing", judge_pool, reward_mode="dense")
    assert result.success is False
    # 2 of 3 oracle writes matched (event + answer; the dropped one missing): 0.8 * 2/3
    assert result.reward == pytest.approx(0.8 * 2 / 3, abs=1e-6)
    _, extra = _run(scenario_path("starter_execution_calendar"), "extra", judge_pool, reward_mode="dense")
    assert 0.0 < extra.reward < 0.8


@pytest.mark.parametrize(
    "value,checker,expected",
    [
        ("2024-10-18 15:00:00", "datetime_checker", "2024-10-19 15:00:00"),
        (["a@x.com"], "unordered_list_checker", ["wrong.a@x.com"]),
        (["A", "B"], "list_attendees_checker", ["A"]),
        (["A"], "list_attendees_checker", ["A", "Zed Nobody"]),
        ("+14155550155", "phone_number_checker", "+14155550156"),
        (3, "eq_checker", 4),
    ],
)
def test_wrong_values_keep_type_and_format(value, checker, expected):
    assert wrong_value(value, checker) == expected


def _write(event_id: str, tool: str, tool_class_name: str) -> OracleAction:
    return OracleAction(event_id, tool, tool_class_name, {}, {}, (), 0.0, False, True, 0)


def test_extra_repeats_a_write_whose_repeat_the_app_accepts():
    """ARE refuses a second `order_ride` while one is on-going: repeating it changed nothing and the
    judge-check reported a false PROBLEM. The first other write is repeated; with none, `n/a`."""
    ride = _write("ride", "Cabs__order_ride", "CabApp__order_ride")
    mail = _write("mail", "Emails__send_email", "EmailClientV2__send_email")
    rules = JudgeRules(hard_args={}, post_tolerance=25.0)
    plan = perturb(OraclePlan("s", [ride, mail]), "extra", rules)
    assert [a.event_id for a in plan.actions] == ["ride", "mail", "mail__extra"]
    with pytest.raises(NotApplicable, match=r"the app refuses a repeat of every write \(Cabs__order_ride: a second ride cannot be ordered"):
        perturb(OraclePlan("s", [ride]), "extra", rules)


@pytest.mark.parametrize("scenario", ["univ_02_adapt_cab_cancel", "univ_03_mt_adapt_cab_rebook"])
def test_extra_on_the_cab_scenarios_is_caught_or_not_applicable_never_a_false_problem(scenario, capsys):
    from orchestra.cli import main

    code = main(["judge-check", "bundled", "--id", scenario, "--json"])
    records = {r["perturbation"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    extra = records["extra"]
    assert extra["as_expected"] is not False, extra
    assert extra["status"] == "N/A" or extra["reward"] == 0.0
    assert code == 0
