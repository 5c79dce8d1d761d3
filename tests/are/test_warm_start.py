"""A rollout started from a loaded template (a warm start) is a cold start's twin, down to the ids
ARE mints while the judge is attached (they are in every exported Gaia2 trace)."""

from __future__ import annotations

from typing import Any

from orchestra.are import loading
from orchestra.session import Session
from support.helpers import REPO

UNIVERSE = REPO / "scenarios/corpus/adaptability/validation/univ_01_adapt_email_reschedule.json"

MULTI_TURN = REPO / "scenarios/execution/validation/starter_multiturn_followup.json"


def _condition_action_ids(session: Session) -> list[str]:
    events: list[Any] = session.prepared.scenario.events
    return [str(e.action.action_id) for e in events if type(e).__name__ == "ConditionCheckEvent"]


def test_a_warm_start_mints_the_turn_condition_ids_of_a_cold_start(judge_pool):
    loading.process_templates().clear()
    with Session.open(MULTI_TURN, judge_pool=judge_pool) as cold:
        cold_ids = _condition_action_ids(cold)
        cold_state = cold.prepared.world_rng_state
    assert cold_ids, "a multi-turn scenario has ARE's turn conditions"
    assert loading.process_templates().get(loading.template_key(MULTI_TURN.read_text(), None, None)) is not None
    with Session.open(MULTI_TURN, judge_pool=judge_pool) as warm:
        assert _condition_action_ids(warm) == cold_ids
        assert warm.prepared.world_rng_state == cold_state


def test_a_warm_start_s_strict_judge_knows_the_universe_s_names():
    """The strict judge and the perturbations read the names of the universe from the file's app
    states, which a warm start parses without (`member_text`): it gets them from the template."""
    from orchestra.are import judges
    from orchestra.config import SessionConfig
    from orchestra.judging.settings import JudgeConfig

    config = SessionConfig(judge=JudgeConfig(mode="strict"))
    loading.process_templates().clear()
    with Session.open(UNIVERSE, config) as cold:
        cold_names = vars(judges.strict_gazetteer(cold.prepared.judge))
    with Session.open(UNIVERSE, config) as warm:
        assert vars(judges.strict_gazetteer(warm.prepared.judge)) == cold_names
    assert cold_names["people"], "the universe's contacts are known by name"


def test_the_corpus_replays_alike_from_warm_and_cold_starts(monkeypatch, capsys):
    """Every bundled scenario, judged strictly with a perturbed answer (the names of the universe
    matter) and as ARE's own judge does: the same verdict lines from cold loads and from templates."""
    import json

    from orchestra.cli import main

    def verdicts() -> list[dict]:
        for judge in ("strict", "scripted"):
            assert main(["replay", "bundled", "--judge", judge, "--perturb", "wrong_answer", "--json"]) in (0, 1)
        return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]

    templates = loading.process_templates()
    templates.clear()
    try:
        monkeypatch.setattr(templates, "size", 0)  # every load cold, none kept
        cold = verdicts()
        monkeypatch.setattr(templates, "size", 1000)
        main(["replay", "bundled", "--json"])  # loads each file once, keeps its template
        capsys.readouterr()
        warm = verdicts()
        assert len(cold) == 2 * 51 and warm == cold
    finally:
        templates.clear()
