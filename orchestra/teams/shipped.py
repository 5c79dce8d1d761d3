"""The shipped team files (`teams/*.yaml` of the checkout), found by name; standard library only.

Apart from `loading` so that `orchestra teams list` reads the list without importing the team
schema (pydantic, the agent and session modules).
"""

from __future__ import annotations

from pathlib import Path


def shipped_root() -> Path:
    """The repository's `teams/` folder (the shipped teams), beside `scenarios/`."""
    return Path(__file__).resolve().parents[2] / "teams"


def shipped_teams() -> list[Path]:
    """The shipped team files, sorted by name."""
    return sorted(shipped_root().glob("*.yaml"))


def team_path(text: str | Path) -> Path:
    """A team file's path: `text` itself when it exists, else the shipped team of that name
    (`oracle` → `teams/oracle.yaml`); a missing file is left for `read_team` to report."""
    path = Path(text)
    if not path.exists() and path.parent == Path(".") and not path.suffix:
        shipped = shipped_root() / f"{path.name}.yaml"
        if shipped.exists():
            return shipped
    return path
