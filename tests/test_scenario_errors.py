"""Bad scenario files get one clear error naming the file and the problem."""

from __future__ import annotations

import json

import pytest

from orchestra.errors import ScenarioError
from orchestra.session import Session


@pytest.fixture()
def good(scenario_path) -> dict:
    return json.loads(scenario_path("starter_execution_calendar").read_text())


def _write(tmp_path, name, content) -> str:
    p = tmp_path / name
    p.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(p)


def _open(path, judge_pool):
    with Session.open(path, judge_pool=judge_pool):
        pass


def test_malformed_json(tmp_path, judge_pool):
    path = _write(tmp_path, "broken.json", '{"version": "are_simulation_v1", "apps": [')
    with pytest.raises(ScenarioError, match=r"broken\.json: malformed JSON at line 1 column"):
        _open(path, judge_pool)


def test_wrong_version(tmp_path, good, judge_pool):
    path = _write(tmp_path, "old.json", {**good, "version": "are_simulation_v0"})
    with pytest.raises(ScenarioError, match=r"old\.json: unsupported scenario version 'are_simulation_v0'"):
        _open(path, judge_pool)


def test_missing_user_contact(tmp_path, good, judge_pool):
    for app in good["apps"]:
        if app["name"] == "Contacts":
            for c in app["app_state"]["contacts"].values():
                c["is_user"] = False
    path = _write(tmp_path, "nouser.json", good)
    with pytest.raises(ScenarioError, match=r"nouser\.json: app 'Contacts' must hold exactly one contact with is_user=true.*found 0"):
        _open(path, judge_pool)


def test_missing_contacts_app(tmp_path, good, judge_pool):
    good["apps"] = [a for a in good["apps"] if a["name"] != "Contacts"]
    path = _write(tmp_path, "nocontacts.json", good)
    with pytest.raises(ScenarioError, match=r"nocontacts\.json: no app named 'Contacts'"):
        _open(path, judge_pool)


def test_unknown_tag_and_unknown_app(tmp_path, good, judge_pool):
    good["metadata"]["definition"]["tags"] = ["Execution", "Telepathy"]
    with pytest.raises(ScenarioError, match=r"unknown capability tag\(s\) \['Telepathy'\]"):
        _open(_write(tmp_path, "tag.json", good), judge_pool)
    good["metadata"]["definition"]["tags"] = ["Execution"]
    good["apps"][-1]["class_name"] = "TimeMachineApp"
    with pytest.raises(ScenarioError, match=r"unknown app class 'TimeMachineApp'"):
        _open(_write(tmp_path, "app.json", good), judge_pool)


def test_schema_violation_names_the_field(tmp_path, good, judge_pool):
    good["events"][0]["event_type"] = 42
    with pytest.raises(ScenarioError, match=r"schema\.json: invalid scenario at events\.0"):
        _open(_write(tmp_path, "schema.json", good), judge_pool)


def test_missing_path(judge_pool):
    with pytest.raises(ScenarioError, match=r"nowhere\.json: no such scenario file"):
        _open("nowhere.json", judge_pool)
