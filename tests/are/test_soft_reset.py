"""Preprocessing: ARE's soft reset after the oracle run, keeping a Files app the oracle left as loaded."""

from __future__ import annotations

import json
import os

from helpers import REPO
from orchestra.are import loading
from orchestra.session import Session

UNIVERSE = REPO / "scenarios/corpus/adaptability/validation/univ_01_adapt_email_reschedule.json"


def _paths(node: dict, prefix: str = "") -> set[tuple[str, str]]:
    out = set()
    for child in node.get("children", []):
        path = f"{prefix}/{child['name']}"
        out |= {(path, child["type"])} | _paths(child, path)
    return out


def test_the_fingerprint_sees_every_change_to_the_tree(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_text("")
    base = loading._tree_fingerprint(str(tmp_path))
    assert loading._tree_fingerprint(str(tmp_path)) == base
    (tmp_path / "a" / "f.txt").write_text("content")
    written = loading._tree_fingerprint(str(tmp_path))
    assert written != base
    os.utime(tmp_path / "a" / "f.txt", ns=(1, 1))
    touched = loading._tree_fingerprint(str(tmp_path))
    assert touched != written
    (tmp_path / "a" / "f.txt").rename(tmp_path / "a" / "g.txt")
    renamed = loading._tree_fingerprint(str(tmp_path))
    assert renamed != touched
    (tmp_path / "b").mkdir()
    assert loading._tree_fingerprint(str(tmp_path)) != renamed


def test_a_kept_files_app_holds_the_universe_s_initial_tree(judge_pool):
    with Session.open(UNIVERSE, judge_pool=judge_pool) as s:
        sc = s.prepared.scenario
        files = loading._file_system_apps(sc)
        assert files, "the corpus universe has a Files app"
        for app in files:
            snapshot = json.loads(sc._initial_apps[app.name]["serialized_state"])["files"]
            assert _paths(app.get_state()["files"]) == _paths(snapshot) and len(_paths(snapshot)) > 1000


def test_a_files_app_the_oracle_changed_is_reloaded(judge_pool, monkeypatch):
    """An oracle that wrote to the sandbox (here: a stray file, written between the two fingerprints) gets ARE's reload."""
    real = loading._tree_fingerprint
    calls: list[str] = []

    def fingerprint_after_a_write(root: str):
        calls.append(root)
        if len(calls) == 2:  # the second fingerprint: after the oracle run
            (open(os.path.join(root, "stray.txt"), "w")).close()
        return real(root)

    monkeypatch.setattr(loading, "_tree_fingerprint", fingerprint_after_a_write)
    with Session.open(UNIVERSE, judge_pool=judge_pool) as s:
        (app,) = loading._file_system_apps(s.prepared.scenario)
        assert app.tmpdir != calls[0]  # ARE's reset made a new sandbox and reloaded it
        assert ("/stray.txt", "file") not in _paths(app.get_state()["files"])
