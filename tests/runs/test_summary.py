"""Per-capability numbers: pass@1 ± stderr over runs, pass@k, tau2's pass^k, errors apart; two runs compared."""

from __future__ import annotations

import math

import pytest

from orchestra.record import RolloutRecord, RolloutResult
from orchestra.runs.run_dir import Manifest, ScenarioEntry
from orchestra.runs.summary import compare, format_compare, format_summary, pass_hat_k, summarize
from orchestra.spec import RolloutSpec


def _record(scenario: str, run: int, success: bool | None, *, cost: float = 0.0, sim: float = 10.0) -> RolloutRecord:
    spec = RolloutSpec(scenario=f"{scenario}.json", sample_index=run)
    if success is None:
        return RolloutRecord(scenario_id=scenario, source=spec.scenario, policy="oracle", sample_index=run, spec=spec, error="harness failed")
    result = RolloutResult(
        scenario_id=scenario,
        source=spec.scenario,
        success=success,
        reward=float(success),
        reward_mode="binary",
        rationale=None,
        turns=[],
        nb_turns=1,
        turns_completed=1,
        sim_seconds=sim,
        stop_reason="all_turns_completed",
        event_log_sha256="0",
        event_log=[],
        prompt_tokens=100,
        completion_tokens=10,
        cost_usd=cost,
    )
    return RolloutRecord(scenario_id=scenario, source=spec.scenario, policy="oracle", sample_index=run, spec=spec, result=result)


MANIFEST = Manifest(
    scenarios={
        "a.json": ScenarioEntry(sha256="0", scenario_id="a", capabilities=["Time"]),
        "b.json": ScenarioEntry(sha256="0", scenario_id="b", capabilities=["Time"]),
        "c.json": ScenarioEntry(sha256="0", scenario_id="c", capabilities=["Search"]),
    }
)


def test_pass_hat_k_is_tau2s_formula():
    assert pass_hat_k(4, 2, 1) == 0.5 and pass_hat_k(4, 2, 2) == pytest.approx(1 / 6) and pass_hat_k(3, 3, 3) == 1.0 and pass_hat_k(3, 2, 3) == 0.0
    with pytest.raises(ValueError):
        pass_hat_k(2, 1, 3)


def test_per_capability_rates_over_runs():
    # Time: a passes runs 0,1,2; b passes run 0 only. Search: c errors once, passes twice.
    records = [_record("a", i, True, cost=0.5) for i in range(3)] + [_record("b", i, i == 0, cost=0.5) for i in range(3)]
    records += [_record("c", 0, None), _record("c", 1, True), _record("c", 2, True)]
    summary = summarize(records, MANIFEST)
    caps = {c.capability: c for c in summary.capabilities}
    time = caps["Time"]
    assert (time.scenarios, time.runs, time.passed, time.failed, time.errors) == (2, 3, 4, 2, 0)
    per_run = [1.0, 0.5, 0.5]
    mean = sum(per_run) / 3
    assert time.pass_at_1 == pytest.approx(mean)
    assert time.pass_at_1_stderr == pytest.approx(math.sqrt(sum((p - mean) ** 2 for p in per_run) / 2) / math.sqrt(3))
    assert time.pass_at_k == 1.0  # each scenario passed at least once
    assert time.pass_hat_k[3] == pytest.approx((1.0 + 0.0) / 2) and time.pass_hat_k[1] == pytest.approx((1.0 + 1 / 3) / 2)
    assert time.cost_usd == pytest.approx(3.0) and time.success_per_dollar == pytest.approx(4 / 3.0)
    search = caps["Search"]
    assert search.errors == 1 and search.pass_at_1 == 1.0 and search.pass_hat_k == {1: 1.0, 2: 1.0}  # the error is left out
    assert search.success_per_dollar is None  # nothing spent: offline
    assert caps["all"].rollouts == 9 and caps["all"].errors == 1
    table = format_summary(summary)
    assert table.splitlines()[0].startswith("capability") and "Time" in table and "all" in table


def test_the_summary_does_not_depend_on_the_order_rollouts_finished_in():
    """`--concurrency` changes the order records arrive in; floating-point sums must not show it."""
    records = [_record(name, run, True, cost=cost, sim=sim) for run, (name, cost, sim) in enumerate([("a", 0.1, 0.1), ("b", 0.2, 0.2), ("c", 0.3, 0.3)])]
    forward, backward = summarize(records), summarize(list(reversed(records)))
    assert forward.model_dump_json() == backward.model_dump_json()
    assert sum(r.result.sim_seconds for r in records) != sum(r.result.sim_seconds for r in reversed(records))  # plain sums would differ


def test_compare_names_flips_and_deltas():
    a = [_record("a", 0, True), _record("b", 0, False), _record("c", 0, True)]
    b = [_record("a", 0, True), _record("b", 0, True), _record("c", 0, False)]
    result = compare(a, b, MANIFEST, MANIFEST)
    assert [(f["scenario"], f["direction"]) for f in result["flips"]] == [("b", "better"), ("c", "worse")]
    deltas = {d["capability"]: d["delta"] for d in result["capabilities"]}
    assert deltas["Time"] == pytest.approx(0.5) and deltas["Search"] == pytest.approx(-1.0) and deltas["all"] == pytest.approx(0.0)
    assert "2 scenario(s) changed" in format_compare(result, "A", "B")


def test_compare_names_the_scenarios_whose_rollouts_ended_in_error():
    """An ERROR is left out of the rates; compare says which scenarios had one, so a run whose model
    server died does not read as 'no scenario changed' and nothing else."""
    a = [_record("a", 0, True), _record("b", 0, True)]
    b = [_record("a", 0, True), _record("b", 0, None)]
    result = compare(a, b, MANIFEST, MANIFEST)
    assert result["errors"] == {"a": [], "b": ["b"]} and result["only_in"] == {"a": ["b"], "b": []}
    text = format_compare(result, "A", "B")
    assert "ERROR in B (left out of the rates): b" in text and "A err" in text
