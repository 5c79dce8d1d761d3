"""The scenario helpers that slow matrices and local-model tests stand on (tests/helpers.py): a
trimmed starter is still a scenario ARE loads and judges, with and without Gaia2's noise, and the
stratified subset covers every capability, universe and turn count of the bundled corpus."""

from __future__ import annotations

import json

import pytest

from orchestra.cli import main
from support.helpers import SCENARIOS, STARTER, scenario_features, stratified, trimmed_scenario

ALL = sorted(p for p in SCENARIOS.rglob("*.json") if p.name != "manifest.json")


@pytest.mark.parametrize("noise", ["--no-noise", "--noise"])
@pytest.mark.parametrize("name", ["starter_search_lookup", "starter_ambiguity_clarify"])
def test_a_trimmed_starter_replays_to_a_pass(name, noise, tmp_path, capsys):
    path = trimmed_scenario(name, tmp_path)
    data = json.loads(path.read_text())
    assert [a["name"] for a in data["apps"]] == ["AgentUserInterface", "SystemApp", "Contacts"]
    assert main(["replay", str(path), "--json", noise]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "PASS", out


def test_a_starter_whose_events_use_a_dropped_app_is_refused(tmp_path):
    with pytest.raises(AssertionError, match=r"starter_time_deadline: its events use \['Messages'\]"):
        trimmed_scenario("starter_time_deadline", tmp_path)
    assert not list(tmp_path.iterdir())


def test_every_bundled_scenario_is_in_the_manifest_and_the_stratified_subset_covers_them_all():
    manifest = json.loads((SCENARIOS / "manifest.json").read_text())["scenarios"]
    assert sorted(manifest) == sorted(p.stem for p in ALL)
    subset = stratified(ALL)
    assert set().union(*(scenario_features(p) for p in subset)) == set().union(*(scenario_features(p) for p in ALL))
    assert {f for p in ALL for f in scenario_features(p) if f[0] == "turns"} == {("turns", "single"), ("turns", "multi")}
    assert len({f for p in ALL for f in scenario_features(p) if f[0] == "universe"}) >= 7
    assert stratified(list(reversed(ALL))) == subset and len(subset) < len(ALL) // 4
    assert set(STARTER) <= set(ALL)
