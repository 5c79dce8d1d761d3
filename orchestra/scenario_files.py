"""Finding scenario files on disk: single JSON files or folders of them, in a deterministic order.

ARE's own local loader collects files with `as_completed` (non-deterministic order) and silently
drops files that fail to import. Here every source is expanded in sorted path order and every
problem is an error that names the path.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from orchestra.errors import ScenarioError


@dataclass(frozen=True)
class ScenarioFile:
    """One scenario's raw JSON text and where it came from."""

    path: Path
    text: str


def read_scenario_file(path: str | Path) -> ScenarioFile:
    p = Path(path)
    if not p.is_file():
        raise ScenarioError(p, "no such scenario file")
    try:
        return ScenarioFile(path=p, text=p.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ScenarioError(p, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def discover(sources: Iterable[str | Path]) -> list[Path]:
    """Expand files and folders (recursively, `*.json`) into a sorted, de-duplicated path list."""
    found: dict[Path, None] = {}
    for source in sources:
        p = Path(source)
        if p.is_dir():
            files = sorted(f for f in p.rglob("*.json") if f.is_file())
            if not files:
                raise ScenarioError(p, "folder holds no *.json scenario files")
            for f in files:
                found.setdefault(f, None)
        elif p.is_file():
            found.setdefault(p, None)
        else:
            raise ScenarioError(p, "no such file or folder")
    return list(found)
