"""The starter Gaia2-format scenarios in ``scenarios/`` (built by ``scripts/build_starter_scenarios.py``).

* every file has the shape Gaia2 files have and imports with ARE's own importer;
* the committed files are exactly what the generator produces (``--check``).

Preprocessing, oracle replay and perturbations of these files are exercised through orchestra's
session in ``tests/test_oracle.py`` and ``tests/test_perturbations.py``; ARE's own oracle harness
runs on them in ``tests/test_parity.py``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from orchestra.are.imports import import_are

REPO = Path(__file__).resolve().parents[2]
SCENARIO_DIR = REPO / "scenarios"
FILES = sorted(SCENARIO_DIR.glob("*/validation/*.json"))
BY_ID = {p.stem: p for p in FILES}
import_are()
from are.simulation.data_handler.importer import JsonScenarioImporter  # noqa: E402
from are.simulation.types import CapabilityTag, OracleEvent  # noqa: E402


def _load_generator():
    spec = importlib.util.spec_from_file_location("build_starter_scenarios", REPO / "scripts" / "build_starter_scenarios.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses need the module registered
    spec.loader.exec_module(module)
    return module


EXPECTED = {
    # scenario id: (config, capability, turns, oracle events)
    "starter_execution_calendar": ("execution", "Execution", 1, 3),
    "starter_search_lookup": ("search", "Search", 1, 1),
    "starter_adaptability_reply": ("adaptability", "Adaptability", 1, 4),
    "starter_time_deadline": ("time", "Time", 1, 2),
    "starter_execution_group_chat": ("execution", "Execution", 1, 3),
    "starter_multiturn_followup": ("execution", "Execution", 2, 6),
    "starter_ambiguity_clarify": ("ambiguity", "Ambiguity", 1, 1),
}


def test_all_expected_files_present():
    assert set(BY_ID) == set(EXPECTED)


@pytest.mark.parametrize("scenario_id", sorted(EXPECTED))
def test_file_shape(scenario_id):
    path = BY_ID[scenario_id]
    data = json.loads(path.read_text(encoding="utf-8"))
    config, capability, _, _ = EXPECTED[scenario_id]
    assert path.parent.parent.name == config and path.parent.name == "validation"
    assert data["version"] == "are_simulation_v1"
    definition = data["metadata"]["definition"]
    assert definition["scenario_id"] == scenario_id
    assert definition["start_time"] == 1728975600.0
    assert isinstance(definition["seed"], int)
    assert capability in definition["tags"]
    assert all(tag in CapabilityTag.__members__ for tag in definition["tags"])
    contacts = [a for a in data["apps"] if a["name"] == "Contacts"]
    assert len(contacts) == 1 and contacts[0]["class_name"] == "ContactsApp"
    assert sum(c["is_user"] for c in contacts[0]["app_state"]["contacts"].values()) == 1
    assert {a["name"] for a in data["apps"]} >= {"AgentUserInterface", "SystemApp", "Emails", "Calendar"}
    for event in data["events"]:
        if event["action"]["function"] == "send_message_to_agent":
            assert event["event_type"] == "USER"
        for arg in event["action"]["args"]:
            assert arg["value_type"] != "NoneType"
            if arg["value_type"] in ("list", "dict"):
                json.loads(arg["value"])
    assert data["completed_events"] == []


@pytest.mark.parametrize("scenario_id", sorted(EXPECTED))
def test_imports_with_ares_importer(scenario_id):
    sc, _, _ = JsonScenarioImporter().import_from_json_to_benchmark(BY_ID[scenario_id].read_text(), load_completed_events=False)
    sc.initialize()
    _, _, _, n_oracle = EXPECTED[scenario_id]
    assert sc.scenario_id == scenario_id
    assert sum(isinstance(e, OracleEvent) for e in sc.events) == n_oracle


def test_generator_is_up_to_date(capsys):
    assert _load_generator().check(SCENARIO_DIR) == 0, capsys.readouterr().out
