"""What a scenario is, read from its JSON without running it: for listings and filters."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
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
    ARE's version with a definition and apps: `ScenarioError` otherwise, naming the file).

    A file whose text was described before (same sha256) is answered from the on-disk cache
    (`cache_path()`) without parsing it: a listing of the corpus parses 34 MB of JSON otherwise."""
    digest = hashlib.sha256(file.text.encode("utf-8")).hexdigest()
    cache = _cache()
    facts = cache.get(digest)
    if facts is None:
        facts = _facts(file)
        cache.put(digest, facts)
    scenario_id = facts["scenario_id"] or Path(file.path).stem
    return ScenarioInfo(
        scenario_id=scenario_id,
        source=str(file.path),
        capabilities=list(facts["capabilities"]),
        turns=facts["turns"],
        universe_bytes=facts["universe_bytes"],
        split=split_of(scenario_id),
    )


def _facts(file: ScenarioFile) -> dict[str, Any]:
    """The path-independent facts of a valid scenario's text (what the cache keeps)."""
    from orchestra.are.loading import precheck_scenario_json

    raw = precheck_scenario_json(file.text, file.path)
    definition = (raw.get("metadata") or {}).get("definition") or {}
    answers = sum(
        1 for e in raw.get("events") or [] if e.get("class_name") == "OracleEvent" and (e.get("action") or {}).get("function") == "send_message_to_user"
    )
    return {
        "scenario_id": str(definition["scenario_id"]) if definition.get("scenario_id") else None,
        "capabilities": [t for t in definition.get("tags") or [] if t not in NON_CAPABILITY_TAGS],
        "turns": max(1, answers),
        "universe_bytes": len(json.dumps(raw.get("apps") or [], separators=(",", ":"))),
    }


# --------------------------------------------------------------------------------------------
# The cache: sha256 of a scenario's text -> its facts, one JSON file
# --------------------------------------------------------------------------------------------

#: Bump when `_facts` or the checks of `precheck_scenario_json` change: old entries are then ignored.
CACHE_FORMAT = 1
#: Entries kept (the oldest go first); a corpus of 10k scenarios still lists from the cache.
CACHE_MAX_ENTRIES = 20_000


def cache_path() -> Path | None:
    """`$ORCHESTRA_SCENARIO_CACHE` (empty: no cache), else the user's cache folder:
    `$XDG_CACHE_HOME/orchestra/`, or `~/.cache/orchestra/` — never the project's virtual
    environment (a cache is the user's, not a file of the install)."""
    env = os.environ.get("ORCHESTRA_SCENARIO_CACHE")
    if env is not None:
        return Path(env) if env else None
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    root = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"  # the XDG spec: a relative value is ignored
    return root / "orchestra" / "scenario-info.json"


def _valid_facts(facts: Any) -> bool:
    return (
        isinstance(facts, dict)
        and (facts.get("scenario_id") is None or isinstance(facts.get("scenario_id"), str))
        and isinstance(facts.get("capabilities"), list)
        and all(isinstance(c, str) for c in facts["capabilities"])
        and type(facts.get("turns")) is int
        and type(facts.get("universe_bytes")) is int
    )


class _Cache:
    """Read once per process, written back (atomically) at exit if something was added. A cache
    that cannot be read or written is no cache: the listing is the same, only slower."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: dict[str, dict[str, Any]] = {}
        self.dirty = False
        if path is None:
            return
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("format") == CACHE_FORMAT and isinstance(data.get("entries"), dict):
            self.entries = {k: v for k, v in data["entries"].items() if _valid_facts(v)}

    def get(self, digest: str) -> dict[str, Any] | None:
        return self.entries.get(digest)

    def put(self, digest: str, facts: dict[str, Any]) -> None:
        if self.path is None:
            return
        if not self.dirty:
            import atexit

            atexit.register(self.save)
        self.entries[digest] = facts
        self.dirty = True

    def save(self) -> None:
        if self.path is None or not self.dirty:
            return
        entries = dict(list(self.entries.items())[-CACHE_MAX_ENTRIES:])
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".scenario-info-", suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"format": CACHE_FORMAT, "entries": entries}, f, separators=(",", ":"))
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return
        self.dirty = False


_caches: dict[Path | None, _Cache] = {}


def _cache() -> _Cache:
    path = cache_path()
    if path not in _caches:
        _caches[path] = _Cache(path)
    return _caches[path]
