"""What a run shows while it runs: one row per finished rollout, and on a terminal a live
progress bar under them (`rich`): done / total, pass rate so far, errors, tokens, cost, ETA.

Not on a terminal (CI logs, pipes) the rows are plain lines; with `--json` each row is one JSON
object and nothing else reaches stdout, so the output stays machine-readable.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol, TextIO

from orchestra.record import RolloutRecord

__all__ = ["Display", "PlainDisplay", "RichDisplay", "display_for"]


class Display(Protocol):
    def __enter__(self) -> Display: ...
    def __exit__(self, *exc: object) -> None: ...
    def add(self, record: RolloutRecord) -> None: ...


class _Tally:
    def __init__(self, total: int, done: list[RolloutRecord]) -> None:
        self.total = total
        self.done = len(done)
        self.passed = sum(r.status == "PASS" for r in done)
        self.judged = sum(r.status in ("PASS", "FAIL") for r in done)
        self.errors = sum(r.status == "ERROR" for r in done)
        self.tokens = sum(r.result.prompt_tokens + r.result.completion_tokens for r in done if r.result is not None)
        self.cost = sum(r.result.cost_usd for r in done if r.result is not None)

    def add(self, r: RolloutRecord) -> None:
        self.done += 1
        self.passed += r.status == "PASS"
        self.judged += r.status in ("PASS", "FAIL")
        self.errors += r.status == "ERROR"
        if r.result is not None:
            self.tokens += r.result.prompt_tokens + r.result.completion_tokens
            self.cost += r.result.cost_usd

    @property
    def fields(self) -> dict[str, Any]:
        rate = f"{100 * self.passed / self.judged:.0f}%" if self.judged else "-"
        return {"rate": rate, "errors": self.errors, "tokens": self.tokens, "cost": self.cost}


class PlainDisplay:
    """One line (or JSON object) per rollout on stdout."""

    def __init__(self, row: Callable[[RolloutRecord], None]) -> None:
        self._row = row

    def __enter__(self) -> PlainDisplay:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add(self, record: RolloutRecord) -> None:
        self._row(record)


class RichDisplay:
    """Rows above a live progress bar (a terminal only)."""

    def __init__(self, line: Callable[[RolloutRecord], str], *, total: int, done: list[RolloutRecord], file: TextIO | None = None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self._line = line
        self._tally = _Tally(total, done)
        self.console = Console(file=file or sys.stdout, highlight=False)
        self._progress = Progress(
            TextColumn("[bold]rollouts"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("pass {task.fields[rate]}  errors {task.fields[errors]}  tokens {task.fields[tokens]:,}  ${task.fields[cost]:.4f}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self._task = self._progress.add_task("run", total=total, completed=self._tally.done, **self._tally.fields)

    def __enter__(self) -> RichDisplay:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def add(self, record: RolloutRecord) -> None:
        self._tally.add(record)
        self.console.print(self._line(record), markup=False, highlight=False, soft_wrap=True)
        self._progress.update(self._task, completed=self._tally.done, **self._tally.fields)


def display_for(
    *,
    json_rows: bool,
    line: Callable[[RolloutRecord], str],
    emit: Callable[[RolloutRecord], None],
    total: int,
    done: list[RolloutRecord],
    rich: bool | None = None,
) -> Display:
    """Rich on a terminal (unless `rich` is False), plain lines otherwise; JSON rows are always plain."""
    if json_rows:
        return PlainDisplay(emit)
    if rich is None:
        rich = sys.stdout.isatty()
    if rich:
        return RichDisplay(line, total=total, done=done)
    return PlainDisplay(lambda r: print(line(r), flush=True))
