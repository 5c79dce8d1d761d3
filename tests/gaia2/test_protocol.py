"""Gaia2's whole protocol from Python, without the command line: every phase, ARE's files, the table,
and resume — a second call runs only what did not finish, and writes the same files."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Generator
from pathlib import Path

import pytest

import orchestra
from orchestra.gaia2.protocol import TABLE, run_gaia2
from orchestra.hookspecs import hookimpl
from orchestra.record import RolloutRecord

IDS = ("starter_time_deadline", "univ_04_time_chat_posts")


class Counting:
    """A plugin that counts the rollouts that ran (the `rollout` hook)."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    @hookimpl(wrapper=True)
    def rollout(self, rollout: object) -> Generator[None, Awaitable[RolloutRecord], Awaitable[RolloutRecord]]:
        inner = yield
        self.ran.append(rollout.spec.scenario)  # type: ignore[attr-defined]
        return inner


def _files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_the_protocol_runs_from_python_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "gaia2"
    first = Counting()
    result = run_gaia2(team=orchestra.load_team("oracle"), source="bundled", out=out, runs=1, scenario_ids=IDS, plugins=[first])
    assert result.table is not None
    columns = {c.name: c for c in result.table.columns}
    # univ_04_time_chat_posts is in the bundled mini: it also runs in the agent2agent and noise phases
    assert (columns["Time"].rollouts, columns["Agent2Agent"].rollouts, columns["Noise"].rollouts) == (2, 1, 1)
    assert columns["Time"].pass_at_1.mean == 1.0 and columns["Agent2Agent"].pass_at_1.mean == 1.0
    assert len(first.ran) == 4
    table = json.loads((out / TABLE).read_text())
    assert table["runs"] == 1 and (out / "computed_stats.json").is_file()
    assert (out / "standard" / "time" / "output.jsonl").is_file() and list((out / "standard" / "time" / "hf").glob("*.json"))
    assert list((out / "standard" / "rollouts").glob("*.json")), "the phases keep each rollout's trajectory, as `orchestra run` does"
    files = _files(out)

    again = Counting()
    run_gaia2(team=orchestra.load_team("oracle"), source="bundled", out=out, runs=1, scenario_ids=IDS, plugins=[again])
    assert again.ran == [] and _files(out) == files  # nothing ran again; every file byte for byte

    results = out / "standard" / "results.jsonl"
    lines = results.read_text().splitlines()
    results.write_text("\n".join(lines[:-1]) + "\n")  # one standard rollout lost (a run killed before it was kept)
    (out / TABLE).unlink()
    resumed = Counting()
    run_gaia2(team=orchestra.load_team("oracle"), source="bundled", out=out, runs=1, scenario_ids=IDS, plugins=[resumed])
    assert len(resumed.ran) == 1
    assert json.loads((out / TABLE).read_text()) == table
