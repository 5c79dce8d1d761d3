"""What ARE's Files app shows an agent is the scenario's, not the machine's: names in order, no
inodes or host times (`orchestra.are.loading.stabilize_file_systems`)."""

from __future__ import annotations

from typing import Any

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
