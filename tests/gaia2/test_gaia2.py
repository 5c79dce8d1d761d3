"""Gaia2's protocol pieces: the phases as ARE's gaia2-run has them, the mini selection, who runs
in each phase, and the report formulas against ARE's own `calculate_statistics`."""

from __future__ import annotations

import hashlib
import math

import pytest

from orchestra.config import NoiseConfig, SessionConfig
from orchestra.gaia2.phases import PHASES, phase_policy, phase_session
from orchestra.gaia2.sources import MINI, STANDARD_CONFIGS, Gaia2Source, mini_selection
from orchestra.gaia2.table import format_table, gaia2_table
from orchestra.models import ModelConfig
from orchestra.record import RolloutRecord, RolloutResult
from orchestra.runs.summary import are_pass_k, are_success_rate, macro_success_rate
from orchestra.scenario_files import expand
from orchestra.spec import AgentConfig
from orchestra.teams.config import AppAgentsConfig, AppAgentSettings, TeamConfig

#: The bundled corpus's mini: ceil(n/5) of each config, round-robin over universes (docs/gaia2.md).
BUNDLED_MINI = {
    "univ_02_mt_adapt_viewing_between_turns",
    "univ_03_mt_adapt_cab_rebook",
    "univ_05_adapt_new_listing",
    "univ_01_mt_amb_email_namesake",
    "univ_03_mt_amb_product_color",
    "univ_02_exec_forward_invoice",
    "univ_04_exec_contact_update",
    "starter_multiturn_followup",
    "univ_01_search_invoice",
    "univ_05_search_dentist",
    "univ_04_time_chat_posts",
    "univ_05_time_reply_within_deadline",
}


def test_the_phases_are_gaia2_runs():
    from orchestra.are.submission import config_name, standard_configs

    assert list(STANDARD_CONFIGS) == standard_configs()
    assert [(p.name, p.configs, p.a2a_app_prop, p.noise) for p in PHASES] == [
        ("standard", STANDARD_CONFIGS, 0.0, False),
        ("agent2agent", (MINI,), 1.0, False),
        ("noise", (MINI,), 0.0, True),
    ]
    assert [config_name(c, p.name) for p in PHASES for c in p.configs][-2:] == ["mini_a2a", "mini_noise"]


def test_bundled_mini_is_a_fifth_of_each_config_spread_over_universes():
    source = Gaia2Source("bundled")
    mini = source.files(MINI)
    by_config = {c: {f.stem for f in source.files(c)} for c in STANDARD_CONFIGS}
    for config, ids in by_config.items():
        chosen = [f.stem for f in mini if f.stem in ids]
        assert len(chosen) == math.ceil(len(ids) / 5), config
        universes = [s.split("_")[1] if s.startswith("univ_") else "starter" for s in chosen]
        assert len(set(universes)) == len(universes), f"{config}: {chosen} repeat a universe"
    assert len(mini) == sum(math.ceil(len(ids) / 5) for ids in by_config.values()) == 12
    assert {f.stem for f in mini} == BUNDLED_MINI  # pinned: docs/gaia2.md lists it
    assert [str(f.path) for f in mini] == sorted(str(f.path) for f in mini)
    again = Gaia2Source("bundled").files(MINI)
    assert [str(f.path) for f in again] == [str(f.path) for f in mini]


def test_mini_selection_takes_universes_round_robin():
    files = list(expand("bundled:adaptability"))
    chosen = mini_selection({"adaptability": files})
    assert len(chosen) == math.ceil(len(files) / 5) == 3
    assert len({f.stem.split("_")[1] for f in chosen}) == 3  # three universes
    one_universe = mini_selection({"adaptability": files}, universe=lambda f: "")
    by_rank = sorted(files, key=lambda f: hashlib.sha256(f"gaia2-mini/{f.stem}".encode()).hexdigest())[:3]
    assert {f.stem for f in one_universe} == {f.stem for f in by_rank}


def test_who_runs_in_each_phase():
    main = AgentConfig(scaffold="react", model=ModelConfig(model="orchestra/oracle"))
    team = TeamConfig(
        name="t",
        main=main,
        app_agents=AppAgentsConfig(proportion=0.5, defaults=AppAgentSettings(scaffold="tool_calling"), overrides={"Calendar": AppAgentSettings(max_steps=3)}),
    )
    standard, agent2agent, noise = PHASES
    assert phase_policy(standard, team=team, agent=None)[0].app_agents is None
    a2a = phase_policy(agent2agent, team=team, agent=None)[0].app_agents
    assert a2a.apps == "all" and a2a.proportion is None and a2a.defaults.scaffold == "tool_calling" and "Calendar" in a2a.overrides
    solo = phase_policy(agent2agent, team=None, agent=main)[0]
    assert solo.app_agents.apps == "all" and solo.app_agent("Emails").model == main.model
    assert phase_policy(noise, team=None, agent=main) == (None, main)
    base = SessionConfig(noise=NoiseConfig(tool_failure_probability=0.3))
    assert phase_session(standard, base).noise is None and phase_session(agent2agent, base).noise is None
    assert phase_session(noise, base).noise.tool_failure_probability == 0.3
    assert phase_session(noise, SessionConfig()).noise == NoiseConfig()


def _record(scenario: str, run: int, status: str) -> RolloutRecord:
    result = None
    if status != "ERROR":
        result = RolloutResult(
            scenario_id=scenario,
            source=scenario,
            success=status == "PASS",
            reward=float(status == "PASS"),
            reward_mode="binary",
            rationale=None,
            turns=[],
            nb_turns=1,
            turns_completed=1,
            sim_seconds=10.0,
            stop_reason="done",
            event_log_sha256="",
            event_log=[],
        )
    return RolloutRecord(scenario_id=scenario, source=scenario, policy="p", sample_index=run, result=result, error="boom" if status == "ERROR" else None)


OUTCOMES = {
    "execution": {"a": "PPF", "b": "FFP", "c": "PEP"},
    "search": {"d": "PPP", "e": "FPF"},
    "mini_agent2agent": {"f": "EEE", "g": "FPP"},
}


def test_the_formulas_are_ares_calculate_statistics():
    """The same outcomes through orchestra's formulas and ARE's own report code agree to the last digit."""
    import polars as pl
    from are.simulation.benchmark.report_stats import calculate_statistics

    groups = {}
    for cap, scen in OUTCOMES.items():  # "E" is an error: no verdict
        groups[cap] = [_record(s, i, {"P": "PASS", "F": "FAIL", "E": "ERROR"}[o]) for s, runs in scen.items() for i, o in enumerate(runs)]
    rows = []
    for cap, scen in OUTCOMES.items():
        config, phase = ("mini", "agent2agent") if cap.startswith("mini") else (cap, "standard")
        for s, runs in scen.items():
            for i, o in enumerate(runs):
                status = {"P": "success", "F": "failed", "E": "exception"}[o]
                rows.append(
                    {
                        "base_scenario_id": s,
                        "run_number": i + 1,
                        "success_numeric": {"P": 1.0, "F": 0.0, "E": None}[o],
                        "status": status,
                        "config": config,
                        "phase_name": phase,
                        "run_duration": 1.0,
                        "job_duration": 1.0,
                    }
                )
    stats = calculate_statistics(pl.DataFrame(rows))
    for cap, records in groups.items():
        ours = are_success_rate(records)
        theirs = stats["per_capability"][cap]
        if ours.mean is None:
            assert theirs["success_rate"] == 0.0
        else:
            assert 100 * ours.mean == pytest.approx(theirs["success_rate"])
            assert 100 * ours.sem == pytest.approx(theirs["success_rate_sem"])
            assert 100 * ours.std == pytest.approx(theirs["success_rate_std"])
        at_k, hat_k = are_pass_k(records)
        assert 100 * at_k == pytest.approx(theirs["pass_at_k_percent"]) and 100 * hat_k == pytest.approx(theirs["pass_k_percent"])
    macro = macro_success_rate(groups)
    assert 100 * macro.mean == pytest.approx(stats["global"]["macro_success_rate"])
    assert 100 * macro.sem == pytest.approx(stats["global"]["macro_success_rate_sem"])


def test_gaia2_score_is_over_the_capabilities_the_run_holds():
    """`--id` / `--limit` may leave columns empty: the score is over the others (as ARE's
    statistics of the same folder) and the table says so, instead of scoring them 0."""
    records = {("standard", "execution"): [_record("a", 0, "PASS")], ("noise", MINI): [_record("b", 0, "PASS"), _record("c", 0, "FAIL")]}
    table = gaia2_table(records, source="s", runs=1)
    assert table.overall.mean == pytest.approx((1.0 + 0.5) / 2)
    assert format_table(table).splitlines()[-1] == (
        "Gaia2: over 2 of 7 capabilities (Search, Adaptability, Time, Ambiguity, Agent2Agent: no rollout selected); not a submission"
    )
    full = {key: [_record("a", 0, "PASS")] for key in [("standard", c) for c in STANDARD_CONFIGS] + [("agent2agent", MINI), ("noise", MINI)]}
    assert "not a submission" not in format_table(gaia2_table(full, source="s", runs=1))
