"""Preprocessing: ARE's soft reset after the oracle run, keeping a Files app the oracle left as loaded."""

from __future__ import annotations

import json
import os

from orchestra.are import loading
from orchestra.session import Session
from support.helpers import REPO

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
    loading.process_templates().clear()  # a cold start: the load and its soft reset run in this test
    with Session.open(UNIVERSE, judge_pool=judge_pool) as s:
        (app,) = loading._file_system_apps(s.prepared.scenario)
        assert app.tmpdir != calls[0]  # ARE's reset made a new sandbox and reloaded it
        assert ("/stray.txt", "file") not in _paths(app.get_state()["files"])
        assert _paths(app.get_state()["files"]) == _paths(json.loads(s.prepared.scenario._initial_apps[app.name]["serialized_state"])["files"])


def test_initialize_keeps_the_same_initial_state_as_ares():
    """`initialize_scenario` leaves the Files app's tree to be written at first use; the JSON copy
    is ARE's, text for text, for every other app, and for the Files app the same tree (ARE's lists
    each folder in the disk's order, which is the file system's; ours in the scenario's)."""
    text = UNIVERSE.read_text()
    ours = loading.parse_scenario_json(text, UNIVERSE)
    trees = loading.initialize_scenario(ours)
    theirs = loading.parse_scenario_json(text, UNIVERSE)
    theirs.initialize()
    assert ours._initialized and list(ours._initial_apps) == list(theirs._initial_apps)
    (ours_fs,) = loading._file_system_apps(ours)
    assert set(trees) == {ours_fs.name} and not os.listdir(ours_fs.tmpdir)  # nothing written yet
    for name, entry in theirs._initial_apps.items():
        mine = ours._initial_apps[name]
        if name == ours_fs.name:  # the same tree; only the sandbox folder's own name differs
            mine_state, their_state = json.loads(mine["serialized_state"]), json.loads(entry["serialized_state"])
            assert mine_state["tmpdir"] == ours_fs.tmpdir and mine_state["files"] == trees[name]
            assert _paths(mine_state["files"]) == _paths(their_state["files"]) and mine["class_name"] == entry["class_name"]
            loading.stabilize_file_systems(ours, pending=trees)
            assert _paths(ours_fs.get_state()["files"]) == _paths(their_state["files"])  # written at its first use
            continue
        assert mine == entry, name
    assert len(ours.events) == len(theirs.events)


def test_the_sandbox_state_lists_folders_in_ls_order(tmp_path):
    """The tree `_sandbox_state` reads equals ARE's `get_state()` of a Files app, nested folders and empty ones included."""
    from are.simulation.apps.sandbox_file_system import SandboxLocalFileSystem

    app = SandboxLocalFileSystem(sandbox_dir=str(tmp_path))
    tree = {"name": "", "type": "directory", "children": [
        {"name": "b", "type": "directory", "children": [{"name": "x.txt", "type": "file"}, {"name": "deep", "type": "directory", "children": []}]},
        {"name": "a.txt", "type": "file"},
        {"name": "c", "type": "directory", "children": []},
    ]}  # fmt: skip
    app.load_state({"files": tree})
    assert loading._sandbox_state(app) == app.get_state()
    assert _paths(loading._sandbox_state(app)["files"]) == _paths(tree)
