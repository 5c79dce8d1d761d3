"""What a scenario is, read from its JSON without running it: for listings and filters."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

from orchestra.errors import ScenarioError
from orchestra.scenario_files import MANIFEST_NAME, ScenarioFile, bundled_root

#: Gaia2's tag for "runs in a generated universe"; not a capability.
NON_CAPABILITY_TAGS = frozenset({"Universe"})


@dataclass
class ScenarioInfo:
    scenario_id: str
    source: str
    capabilities: list[str]
    turns: int
    universe_bytes: int
    split: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@cache
def _manifest() -> dict[str, Any]:
    try:
        path = bundled_root() / MANIFEST_NAME
    except ScenarioError:
        return {}
    return json.loads(path.read_text()) if path.is_file() else {}


def split_of(scenario_id: str) -> str | None:
    """`train` / `heldout` for scenarios in the frozen manifest; None for anything else."""
    entry = (_manifest().get("scenarios") or {}).get(scenario_id)
    return entry.get("split") if entry else None


def describe(file: ScenarioFile) -> ScenarioInfo:
    """What the file holds, once it passed the checks that need no ARE import (a JSON object of
    ARE's version with a definition and apps: `ScenarioError` otherwise, naming the file)."""
    from orchestra.are.loading import precheck_scenario_json

    raw = precheck_scenario_json(file.text, file.path)
    definition = (raw.get("metadata") or {}).get("definition") or {}
    scenario_id = str(definition.get("scenario_id") or Path(file.path).stem)
    answers = sum(
        1 for e in raw.get("events") or [] if e.get("class_name") == "OracleEvent" and (e.get("action") or {}).get("function") == "send_message_to_user"
    )
    apps = raw.get("apps") or []
    return ScenarioInfo(
        scenario_id=scenario_id,
        source=str(file.path),
        capabilities=[t for t in definition.get("tags") or [] if t not in NON_CAPABILITY_TAGS],
        turns=max(1, answers),
        universe_bytes=len(json.dumps(apps, separators=(",", ":"))),
        split=split_of(scenario_id),
    )
