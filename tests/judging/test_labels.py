"""The labelled set (tests/support/judge_labelled_set.py): coverage, and the strict judge's guarantees.

strict must reject every wrong or missing fact in the set and accept >= 95% of the hand-written
correct paraphrases (the issue's bar). On the adversarial review set (texts written blind to the
judge's rules, issue #28 finding 18), its false-accept and false-reject rates per shape stay within
the bounds below, on the part the judge was tuned on and on the held-out part. The measured tables
are in docs/judges.md (benchmarks/judge_agreement.py).
"""

from __future__ import annotations

import json

import pytest
import yaml

from orchestra.are.judges import build_judge
from orchestra.judging.facts import extract_facts
from orchestra.judging.settings import JudgeConfig
from support.judge_labelled_set import (
    HELDOUT_FILE,
    LABELS_FILE,
    REVIEW_FILE,
    REVIEW_SHAPES,
    agreement,
    free_texts,
    judge_items,
    judge_script_for,
    labelled_set,
    review_items,
)

#: Upper bounds on strict's error rate per shape of the review set: false accepts for the wrong
#: shapes, false rejects for the correct ones. Measured (docs/judges.md): tune 0/27 hedges, 2/27
#: negations, 3/16 extra wrong values, 0/10 wrong confirmations accepted, 5/19 confirmations and
#: 4/29 paraphrases rejected; held-out 2/25, 3/26, 10/23, 0/9 accepted, 10/25 and 2/19 rejected
#: (before this judge: 38/52 hedges, 29/53 negations, 26/39 extra wrong values accepted, 44/44
#: confirmations and 10/48 paraphrases rejected).
REVIEW_BOUNDS = {
    "review-tune": {"hedge": 0.05, "negation": 0.10, "extra_wrong": 0.25, "confirmation_wrong": 0.0, "confirmation": 0.30, "paraphrase": 0.15},
    "review-heldout": {"hedge": 0.10, "negation": 0.15, "extra_wrong": 0.50, "confirmation_wrong": 0.0, "confirmation": 0.45, "paraphrase": 0.15},
}


@pytest.fixture(scope="module")
def labelled():
    return labelled_set()


def test_every_bundled_scenario_with_a_checkable_answer_has_hand_written_labels(labelled):
    targets, items = labelled
    checkable = {t.scenario_id for t in targets if extract_facts(t.oracle_text, t.gazetteer)}
    hand = {e["scenario"] for e in yaml.safe_load(LABELS_FILE.read_text())}
    missing = sorted(checkable - hand)
    assert not missing, f"add hand-written paraphrases for {missing} to {LABELS_FILE}"
    generated = {i.target.scenario_id for i in items if i.source == "generated"}
    assert checkable <= generated
    assert {i.kind for i in items} == {"paraphrase", "politeness", "wrong_value", "missing_fact", "other_question", "unhelpful", "hand_wrong"}


def test_strict_rejects_every_wrong_text_and_accepts_the_paraphrases(labelled):
    _, items = labelled
    verdicts = judge_items(build_judge(JudgeConfig(mode="strict")), items)
    a = agreement("strict", items, verdicts)
    false_accepts = [(i.target.scenario_id, i.kind, i.text) for i, v in zip(items, verdicts) if i.label == "wrong" and v]
    assert not false_accepts, false_accepts[:5]
    assert a.paraphrase_total >= 90 and a.paraphrase_accepted / a.paraphrase_total >= 0.95, a
    heldout = [(i, v) for i, v in zip(items, verdicts) if i.source == "heldout" and i.kind == "paraphrase"]
    assert heldout and sum(v for _, v in heldout) / len(heldout) >= 0.95


def test_the_heldout_file_names_only_real_free_texts(labelled):
    targets, _ = labelled
    index = {(t.scenario_id, t.event_id, t.arg) for t in targets}
    for entry in yaml.safe_load(HELDOUT_FILE.read_text()):
        assert (entry["scenario"], entry["event"], entry.get("arg", "content")) in index


def test_llm_with_the_bool_bug_opt_out_and_a_perfect_judge_model_agrees_with_the_labels(labelled, tmp_path):
    """A scripted judge model answering each text's label: with `--no-judge-are-bool-bug` the LLM
    judge agrees with every label; ARE's faithful default rejects the correct texts all the same
    (ARE 1.2.0 lowers `[[True]]`, docs/judges.md). Every correct text, and the hand-written wrong ones."""
    _, items = labelled
    items = [i for i in items if i.label == "correct" or i.source != "generated"]
    script = tmp_path / "labels-judge.json"
    script.write_text(json.dumps(judge_script_for(items)))
    model = f"orchestra-judge/{script}"
    verbatim = judge_items(build_judge(JudgeConfig(mode="llm", model=model, use_cache=False, are_bool_bug=False)), items)
    disagree = [(i.target.scenario_id, i.label, i.text) for i, v in zip(items, verbatim) if (i.label == "correct") != v]
    assert not disagree, disagree[:5]
    assert sum(i.label == "correct" for i in items) >= 200 and sum(i.label == "wrong" for i in items) >= 90
    correct = [i for i in items if i.label == "correct"][:20]
    faithful = judge_items(build_judge(JudgeConfig(mode="llm", model=model, use_cache=False)), correct)
    assert not any(faithful)


def test_the_review_file_is_split_by_scenario_into_a_tuned_and_a_held_out_part():
    items = review_items(free_texts())
    assert len(items) == 255 and {i.kind for i in items} == set(REVIEW_SHAPES)
    parts = {i.source for i in items}
    assert parts == {"review-tune", "review-heldout"}
    by_scenario: dict[str, set[str]] = {}
    for i in items:
        by_scenario.setdefault(i.target.scenario_id, set()).add(i.source)
    assert all(len(p) == 1 for p in by_scenario.values())  # no scenario in both parts
    assert all(i.label == REVIEW_SHAPES[i.kind] for i in items)


def test_strict_on_the_review_set_stays_within_its_bounds_per_shape_tuned_and_held_out():
    items = review_items(free_texts())
    verdicts = judge_items(build_judge(JudgeConfig(mode="strict")), items)
    report = {}
    for part, bounds in REVIEW_BOUNDS.items():
        for shape, bound in bounds.items():
            mine = [(i, v) for i, v in zip(items, verdicts) if i.source == part and i.kind == shape]
            errors = [i.text for i, v in mine if v != (i.label == "correct")]
            report[(part, shape)] = f"{len(errors)}/{len(mine)}"
            assert mine and len(errors) / len(mine) <= bound, (part, shape, report[(part, shape)], errors[:3])
    # the existing guarantee holds with the review set's rules in place (the set itself is reported apart)
    assert not any(v for i, v in zip(items, verdicts) if i.kind == "confirmation_wrong"), report


def test_the_review_file_is_read_strictly(tmp_path):
    bad = tmp_path / "review.yaml"
    bad.write_text(REVIEW_FILE.read_text().replace("shape: confirmation}", "shape: hedge}", 1))
    with pytest.raises(ValueError, match="correct shape"):
        review_items(free_texts(), bad)
