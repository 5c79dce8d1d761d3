"""Batches for the executor tests (tests/executors): a small subset of the corpus, the oracle team, records as results lines."""

from __future__ import annotations

import json

import anyio

from orchestra.record import RolloutRecord
from orchestra.runs.runner import execute_all, specs_for
from orchestra.scenario_files import resolve
from orchestra.teams.loading import read_team, team_path
from support.helpers import REPO, STARTER

#: The default suite's subset: four starter scenarios of four capabilities (the whole corpus is `slow`).
SUBSET = [p for p in STARTER if p.stem in ("starter_execution_calendar", "starter_search_lookup", "starter_time_deadline", "starter_adaptability_reply")]


class InlinePlugin:
    """An inline plugin object that registers nothing: picklable, and its class importable in a
    worker process (`tests/support` is on the path a spawned worker inherits; a test module is not)."""

    def __init__(self, n: int) -> None:
        self.n = n


def line(record: RolloutRecord) -> str:
    """A record as results.jsonl writes it."""
    return json.dumps(record.compact(), sort_keys=True, separators=(",", ":"), default=str)


def oracle_team_batch(sources: list[str]) -> list:
    team = read_team(team_path("oracle")).config
    return specs_for(resolve(sources), team=team)


def run_batch(batch: list, **kwargs: object) -> list[RolloutRecord]:
    async def go() -> list[RolloutRecord]:
        return [r async for r in execute_all(batch, **kwargs)]  # type: ignore[arg-type]

    return anyio.run(go)


def whole_corpus() -> list[str]:
    return [str(REPO / "scenarios")]
