"""What ARE's Files app shows an agent is the scenario's, not the machine's: names in order, no
inodes or host times (`orchestra.are.loading.stabilize_file_systems`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from orchestra.are import loading
from orchestra.session import Session
from support.helpers import REPO

UNIVERSE = REPO / "scenarios/corpus/adaptability/validation/univ_01_adapt_email_reschedule.json"


def _walk(session: Session, detail: bool) -> list[list[Any]]:
    """Every folder's `Files__ls` output, depth first from the root."""
    listings, todo = [], ["/"]
    while todo:
        out = session.call_tool("Files__ls", {"path": todo.pop(), "detail": True})
        assert out.ok, out.error
        listings.append(out.output if detail else [e["name"] for e in out.output])
        todo += [e["name"] for e in out.output if e["type"] == "directory"]
    return listings


def test_every_folder_lists_by_name() -> None:
    with Session.open(UNIVERSE) as session:
        listings = _walk(session, detail=False)
    assert len(listings) > 100  # the universe's folders, not just the root
    unsorted = [names for names in listings if names != sorted(names)]
    assert not unsorted, f"{len(unsorted)} folder(s) listed out of order, e.g. {unsorted[0][:5]}"


def test_details_are_the_scenarios_not_the_hosts() -> None:
    with Session.open(UNIVERSE) as first:
        start = float(first.scenario.start_time)
        listed = _walk(first, detail=True)
        info = first.call_tool("Files__info", {"path": "/Documents"}).output
    with Session.open(UNIVERSE) as second:  # another sandbox folder: other inodes, later host times
        assert _walk(second, detail=True) == listed
    entries = [entry for folder in listed for entry in folder] + [info]
    assert not {"uid", "gid", "ino", "nlink"} & {key for e in entries for key in e}
    assert {(e["created"], e["mtime"]) for e in entries} == {(start, start)}
    assert {e["size"] for e in entries if e["type"] == "directory"} == {0}


def _sandbox(session: Session) -> Any:
    (app,) = loading._file_system_apps(session.prepared.scenario)
    return app.sandbox_fs if hasattr(app, "sandbox_fs") else app


def test_the_tree_is_written_at_its_first_use_cold_and_warm_alike() -> None:
    listings = []
    for cold in (True, False):
        if cold:
            loading.process_templates().clear()
        with Session.open(UNIVERSE) as session:
            assert os.listdir(_sandbox(session).tmpdir) == []  # loaded, not written
            listings.append(_walk(session, detail=True))
            assert os.listdir(_sandbox(session).tmpdir)
    assert listings[0] == listings[1] and len(listings[0]) > 100


def test_the_contents_fallback_is_set_for_the_tree_when_it_exists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ARE reads a file's contents from `DEMO_FS_PATH` (`FallbackFileSystem`) for the paths its
    `load_state` wrote; with the tree written at first use, the fallback is set all the same, cold
    and warm, and reads what ARE's own load reads."""
    from are.simulation.apps.sandbox_file_system import SandboxLocalFileSystem

    tree = json.loads(UNIVERSE.read_text())
    (files_app,) = [a for a in tree["apps"] if a["name"] == "Files"]
    path = next(p for p in sorted(loading._tree_files(files_app["app_state"]["files"])) if p.endswith(".txt"))
    (tmp_path / path.lstrip("/")).parent.mkdir(parents=True)
    (tmp_path / path.lstrip("/")).write_text("from the dataset")
    defaults = SandboxLocalFileSystem.__init__.__defaults__
    assert defaults is not None
    monkeypatch.setattr(SandboxLocalFileSystem.__init__, "__defaults__", (*defaults[:-1], str(tmp_path)))  # DEMO_FS_PATH, as ARE binds it
    theirs = SandboxLocalFileSystem()
    theirs.load_state(files_app["app_state"])
    contents = [theirs.cat(path)]
    for cold in (True, False):
        if cold:
            loading.process_templates().clear()
        with Session.open(UNIVERSE) as session:
            out = session.call_tool("Files__cat", {"path": path})
            assert out.ok, out.error
            contents.append(out.output)
    assert contents == [b"from the dataset"] * 3
