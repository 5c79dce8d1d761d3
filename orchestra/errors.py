"""Errors orchestra raises for bad input: each names *what* is wrong and *where*."""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

_PACKAGE = str(Path(__file__).resolve().parent)


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


class OneLineWarnings:
    """A `warnings.showwarning` for a command line: orchestra's own warnings (a category defined in
    orchestra, or warned from its code) as one line on stderr, `orchestra: warning: MESSAGE`; any
    other through `fallback` (Python's two lines). Each message once (Python's own "once per
    place" is undone by every `warnings.filterwarnings` call, which ARE and litellm make), so the
    noise warning is one line per scenario file, however many rollouts read it."""

    def __init__(self, fallback: Callable[..., None]) -> None:
        self.fallback = fallback
        self.shown: set[str] = set()

    def __call__(
        self, message: Warning | str, category: type[Warning], filename: str, lineno: int, file: TextIO | None = None, line: str | None = None
    ) -> None:
        if not (category.__module__.startswith("orchestra.") or str(Path(filename).resolve()).startswith(_PACKAGE)):
            self.fallback(message, category, filename, lineno, file, line)
            return
        text = str(message)
        if text in self.shown:
            return
        self.shown.add(text)
        stream = file if file is not None else sys.stderr
        if stream is None:  # no stderr (pythonw): nowhere to show it
            return
        with contextlib.suppress(OSError):
            stream.write(f"orchestra: warning: {text}\n")


@contextlib.contextmanager
def one_line_warnings() -> Iterator[None]:
    """Show orchestra's warnings as one line each (`OneLineWarnings`) until the block ends; the
    warning machinery's state (filters, `showwarning`) is restored after it."""
    with warnings.catch_warnings():
        warnings.showwarning = OneLineWarnings(warnings.showwarning)
        yield


def shows_one_line_warnings() -> bool:
    """Whether this process shows orchestra's warnings as one line (a worker does as its caller)."""
    return isinstance(warnings.showwarning, OneLineWarnings)


def show_one_line_warnings() -> None:
    """From now on, in this process (a worker of the caller's), orchestra's warnings as one line."""
    if not shows_one_line_warnings():
        warnings.showwarning = OneLineWarnings(warnings.showwarning)
