"""Errors orchestra raises for bad input: each names *what* is wrong and *where*."""

from __future__ import annotations

from pathlib import Path


class OrchestraError(Exception):
    """Base class of every error orchestra raises on purpose."""


class ScenarioError(OrchestraError):
    """A scenario file cannot be used: malformed JSON, wrong version, missing judge prerequisites..."""

    def __init__(self, source: str | Path, problem: str) -> None:
        self.source = str(source)
        self.problem = problem
        super().__init__(f"{self.source}: {problem}")


class SessionError(OrchestraError):
    """A rollout was driven in a way the session cannot honour (e.g. acting after it finished)."""
