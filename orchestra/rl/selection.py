"""Which scenarios an RL run trains or evaluates on: one capability of a source (`select_scenarios`),
the one scenario a reset names (`one_scenario`), ARE's own registered scenarios; failures are
reported, never dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from orchestra.errors import OrchestraError
from orchestra.scenario_files import ScenarioFile, resolve


def one_scenario(source: str | Path) -> ScenarioFile:
    """The one scenario a source names: a file, or `bundled[:CONFIG]/ID` / any source plus `/ID`."""
    path = Path(source)
    if path.is_file():
        return ScenarioFile(path)
    text = str(source)
    base, _, scenario_id = text.rpartition("/")
    if text.startswith(("bundled", "hf:")) and base:
        files = list(resolve([base], scenario_ids=[scenario_id]))
    else:
        files = list(resolve([text]))
    if len(files) != 1:
        raise OrchestraError(f"{source}: names {len(files)} scenarios; reset() takes one (a file, or SOURCE/SCENARIO_ID)")
    return files[0]


#: Gaia2's capabilities (`capability=`); `agent2agent` is Gaia2's mini set played by a team of app-agents.
CAPABILITIES = ("execution", "search", "adaptability", "ambiguity", "time", "agent2agent", "mini")


SOURCES = ("gaia2", "bundled", "are")


@dataclass(frozen=True)
class ScenarioFailure:
    """A scenario that could not be loaded, and why (never dropped silently)."""

    source: str
    reason: str


def select_scenarios(
    source: str,
    capability: str,
    *,
    split: str = "validation",
    scenario_split: str | None = None,
    num_examples: int = -1,
) -> tuple[list[ScenarioFile], list[ScenarioFailure]]:
    """The scenarios of one capability of a source (sorted, deterministic) and those that failed to load.

    * `gaia2`: the Hugging Face dataset from the local cache, config `capability` (`agent2agent`:
      `mini`), split `split`;
    * `bundled`: this repository's scenarios of that capability (`mini`: the seven starter
      scenarios; `agent2agent`: all of them, to be played by a team);
    * `are`: ARE's own registered demo scenarios, exported to JSON (all capabilities);
    * else a local file or folder (filtered by the capability tag unless `mini`/`agent2agent`).

    `scenario_split` (`<manifest>/<part>`, e.g. `bundled/train`) keeps the scenarios of one part of
    a frozen split (`scenarios/manifest.json`; `<manifest>` may also be a manifest file or its folder).
    Only each file's JSON is read here — no scenario is loaded into ARE (no oracle pre-run)."""
    from orchestra.errors import ScenarioError
    from orchestra.scenario_info import describe

    capability = capability.lower()
    if capability not in CAPABILITIES:
        raise OrchestraError(f"unknown capability {capability!r}; choose from {', '.join(CAPABILITIES)}")
    if isinstance(num_examples, bool) or not isinstance(num_examples, int) or num_examples == 0 or num_examples < -1:
        raise OrchestraError(f"num_examples={num_examples!r}: give -1 (all scenarios) or a positive count")
    failures: list[ScenarioFailure] = []
    tag_filter: str | None = None
    if source == "gaia2":
        sources = [f"hf:{'mini' if capability == 'agent2agent' else capability}/{split}"]
    elif source == "bundled":
        sources = ["bundled"] if capability in ("mini", "agent2agent") else [f"bundled:{capability}"]
    elif source == "are":
        files, failures = are_registered_scenarios()  # ARE's demo scenarios carry no capability tag: kept for every capability
        sources, tag_filter = [], None
    else:
        sources, tag_filter = [source], None if capability in ("mini", "agent2agent") else capability
    files = files if source == "are" else []
    for src in sources:
        try:
            files.extend(resolve([src]))
        except ScenarioError as exc:
            raise OrchestraError(str(exc)) from None
    keep = _split_members(scenario_split) if scenario_split else None
    chosen: list[ScenarioFile] = []
    for file in files:
        try:
            info = describe(file)
        except Exception as exc:  # unreadable JSON: reported, never dropped silently
            failures.append(ScenarioFailure(str(file.path), f"{type(exc).__name__}: {exc}"))
            continue
        if source == "bundled" and capability == "mini" and not info.scenario_id.startswith("starter_"):
            continue
        if tag_filter is not None and tag_filter not in {c.lower() for c in info.capabilities}:
            continue
        if keep is not None and info.scenario_id not in keep:
            continue
        chosen.append(file)
    if num_examples > 0:
        chosen = chosen[:num_examples]
    return chosen, failures


def _split_members(scenario_split: str) -> set[str]:
    name, _, part = scenario_split.rpartition("/")
    if not name or not part:
        raise OrchestraError(f"scenario_split {scenario_split!r}: expected <manifest>/<part>, e.g. bundled/train")
    from orchestra.scenario_files import MANIFEST_NAME, bundled_root

    path = bundled_root() / MANIFEST_NAME if name == "bundled" else Path(name)
    if path.is_dir():
        path = path / MANIFEST_NAME
    if not path.is_file():
        raise OrchestraError(f"scenario_split {scenario_split!r}: no manifest {path} (give bundled/<part>, or a manifest file or folder)")
    manifest = json.loads(path.read_text())
    parts = sorted({str(e.get("split")) for e in (manifest.get("scenarios") or {}).values()})
    if part not in parts:
        raise OrchestraError(f"scenario_split {scenario_split!r}: {path} has the parts {', '.join(parts)}")
    return {sid for sid, e in manifest["scenarios"].items() if e.get("split") == part}


def are_registered_scenarios() -> tuple[list[ScenarioFile], list[ScenarioFailure]]:
    """ARE's own registered (demo) scenarios as Gaia2 JSON, and those that could not be exported."""
    from orchestra.are.registered import registered_scenarios

    files, failed = registered_scenarios()
    return files, [ScenarioFailure(source, reason) for source, reason in failed]
