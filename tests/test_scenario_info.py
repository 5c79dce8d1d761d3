"""`describe`: what a scenario file holds, and its cache keyed by the text's sha256."""

from __future__ import annotations

import json

import pytest

from orchestra import scenario_info
from orchestra.errors import ScenarioError
from orchestra.scenario_files import ScenarioFile
from support.helpers import scenario


@pytest.fixture
def cache_file(tmp_path, monkeypatch):
    path = tmp_path / "cache" / "scenario-info.json"
    monkeypatch.setenv("ORCHESTRA_SCENARIO_CACHE", str(path))
    monkeypatch.setattr(scenario_info, "_caches", {})
    return path


def _uncached(file: ScenarioFile) -> scenario_info.ScenarioInfo:
    with pytest.MonkeyPatch.context() as m:
        m.setenv("ORCHESTRA_SCENARIO_CACHE", "")
        return scenario_info.describe(file)


def test_a_cached_description_is_the_parsed_one_without_parsing(cache_file, monkeypatch):
    path = scenario("starter_multiturn_followup")
    first = scenario_info.describe(ScenarioFile(path))
    assert first == _uncached(ScenarioFile(path)) and first.turns == 2 and first.universe_bytes > 0
    scenario_info._cache().save()
    monkeypatch.setattr(scenario_info, "_caches", {})  # a new process: the cache is read from disk

    def no_parse(*args: object) -> None:
        raise AssertionError("parsed a file the cache knows")

    monkeypatch.setattr(scenario_info, "_facts", no_parse)
    assert scenario_info.describe(ScenarioFile(path)) == first


def test_the_same_text_elsewhere_keeps_its_own_source_and_stem(cache_file, tmp_path):
    raw = json.loads(scenario("starter_search_lookup").read_text())
    raw["metadata"]["definition"].pop("scenario_id", None)
    text = json.dumps(raw)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(text)
    b.write_text(text)
    infos = [scenario_info.describe(ScenarioFile(p)) for p in (a, b)]
    assert [(i.scenario_id, i.source) for i in infos] == [("a", str(a)), ("b", str(b))]
    assert infos[0].universe_bytes == infos[1].universe_bytes == _uncached(ScenarioFile(a)).universe_bytes


def test_a_changed_file_is_described_again(cache_file, tmp_path):
    raw = json.loads(scenario("starter_search_lookup").read_text())
    path = tmp_path / "s.json"
    path.write_text(json.dumps(raw))
    before = scenario_info.describe(ScenarioFile(path))
    raw["metadata"]["definition"]["tags"] = ["Time"]
    path.write_text(json.dumps(raw))
    after = scenario_info.describe(ScenarioFile(path))
    assert before.capabilities != after.capabilities == ["Time"]


def test_an_unreadable_or_foreign_cache_is_ignored(cache_file):
    path = scenario("starter_search_lookup")
    expected = _uncached(ScenarioFile(path))
    cache_file.parent.mkdir(parents=True)
    for junk in ("not json", json.dumps({"format": 0, "entries": {}}), json.dumps({"format": scenario_info.CACHE_FORMAT, "entries": {"x": 1}})):
        cache_file.write_text(junk)
        scenario_info._caches.clear()
        assert scenario_info.describe(ScenarioFile(path)) == expected
        scenario_info._cache().save()
        assert json.loads(cache_file.read_text())["format"] == scenario_info.CACHE_FORMAT


def test_a_poisoned_entry_is_not_trusted(cache_file):
    path = scenario("starter_search_lookup")
    expected = scenario_info.describe(ScenarioFile(path))
    scenario_info._cache().save()
    data = json.loads(cache_file.read_text())
    for digest in data["entries"]:
        data["entries"][digest]["turns"] = "many"
    cache_file.write_text(json.dumps(data))
    scenario_info._caches.clear()
    assert scenario_info.describe(ScenarioFile(path)) == expected


def test_invalid_files_are_still_refused_and_not_cached(cache_file, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"version": "nope"}')
    for _ in range(2):
        with pytest.raises(ScenarioError, match="unsupported scenario version"):
            scenario_info.describe(ScenarioFile(path))
    assert scenario_info._cache().entries == {}


def test_no_cache_when_disabled(monkeypatch, tmp_path):
    monkeypatch.setenv("ORCHESTRA_SCENARIO_CACHE", "")
    monkeypatch.setattr(scenario_info, "_caches", {})
    scenario_info.describe(ScenarioFile(scenario("starter_search_lookup")))
    assert scenario_info._cache().entries == {} and scenario_info.cache_path() is None


def test_the_cache_is_in_the_user_s_cache_folder_never_the_venv(monkeypatch, tmp_path):
    """`orchestra scenarios` used to write its cache into the project's `.venv/share/orchestra/`."""
    import sys

    monkeypatch.delenv("ORCHESTRA_SCENARIO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert scenario_info.cache_path() == tmp_path / "xdg" / "orchestra" / "scenario-info.json"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec: only an absolute path counts
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert scenario_info.cache_path() == tmp_path / "home" / ".cache" / "orchestra" / "scenario-info.json"
    monkeypatch.delenv("XDG_CACHE_HOME")
    path = scenario_info.cache_path()
    assert path == tmp_path / "home" / ".cache" / "orchestra" / "scenario-info.json"
    assert not str(path).startswith(sys.prefix)
