"""The shipped team files (`orchestra/teams/shipped/*.yaml`, package data), found by name; standard library only.

Apart from `loading` so that `orchestra teams list` reads the list without importing the team
schema (pydantic, the agent and session modules). Found beside this module: a wheel installs its
package data as plain files, so an installed orchestra finds them as a checkout does (and the list
needs no `importlib.resources`, a tenth of `orchestra teams list`'s start-up).
"""

from __future__ import annotations

from pathlib import Path


def shipped_root() -> Path:
    """The folder of the shipped teams (package data of `orchestra.teams`)."""
    return Path(__file__).resolve().parent / "shipped"


def shipped_teams() -> list[Path]:
    """The shipped team files, sorted by name."""
    return sorted(shipped_root().glob("*.yaml"))


def team_path(text: str | Path) -> Path:
    """A team file's path: `text` itself when it exists, else the shipped team of that name
    (`oracle` → `orchestra/teams/shipped/oracle.yaml`); a missing file is left for `read_team` to report."""
    path = Path(text)
    if not path.exists() and path.parent == Path(".") and not path.suffix:
        shipped = shipped_root() / f"{path.name}.yaml"
        if shipped.exists():
            return shipped
    return path
