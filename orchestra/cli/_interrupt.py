"""Ctrl-C for the commands that run rollouts (`orchestra run`, `orchestra gaia2`).

Run as the program, Ctrl-C (or SIGTERM) ends the process at once, even while a rollout is inside
synchronous work (a scenario loading, the judge) that an event-loop signal receiver would first
wait for: every finished rollout is on disk (each is kept whole before the next, `Interrupt.keeping`),
the rollouts in flight are abandoned, worker processes are killed and the trace is flushed. Called
in-process (`main(argv)`), the rollouts are cancelled at their next await and `Interrupt.run`
returns with `interrupted` set.

Two more ways a run stops the same way (what finished kept, the command that resumes on stderr):
a `SystemExit` raised inside the run — Ray's `ray.init` replaces the SIGTERM handler with one that
raises `SystemExit(15)`, so SIGTERM while Ray connects or runs arrives so — and stdout closed under
the run (`orchestra run ... | head -1`: `BrokenPipeError`)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
import warnings
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, NoReturn

import anyio
import anyio.abc

from orchestra.cli import CLOSED_OUTPUT, INTERRUPTED, leaves
from orchestra.cli._trace import say_lost
from orchestra.runs.executors import abandon_workers
from orchestra.tracing import active as active_tracing

#: Why a run stopped early: a signal (or `SystemExit` inside the run), or its stdout closed.
INTERRUPTED_WHY = "interrupted"
CLOSED_WHY = "stdout closed"


def as_program(args: argparse.Namespace) -> bool:
    """Whether this is the `orchestra` program (not `main(argv)` called in-process): `args.program`
    where the command line sets it, else whether the arguments are the process's own."""
    program = getattr(args, "program", None)
    if program is not None:
        return bool(program)
    return getattr(args, "argv", None) == sys.argv[1:]


class Interrupt:
    """One batch's Ctrl-C handling. `display`: the progress display, closed before the last words;
    `last_words(why)`: prints why the run stopped (`INTERRUPTED_WHY`, `CLOSED_WHY`), what finished,
    where it is kept and the command that resumes."""

    def __init__(self, args: argparse.Namespace, *, display: Any, last_words: Callable[[str], None]) -> None:
        self.program = as_program(args) and threading.current_thread() is threading.main_thread()
        self.why: str | None = None  # in-process: why the batch stopped early (a signal cancelled it, stdout closed)
        self._display = display
        self._last_words = last_words
        self._tracing = active_tracing()
        self._keeping = False  # a finished rollout is being written: a signal waits for it (`_pending`)
        self._pending = False

    @property
    def interrupted(self) -> bool:
        """Whether the batch stopped before its end (in-process: `why` says why)."""
        return self.why is not None

    @property
    def code(self) -> int:
        """The exit status of a batch that stopped early."""
        return CLOSED_OUTPUT if self.why == CLOSED_WHY else INTERRUPTED

    def stop_now(self, why: str = INTERRUPTED_WHY) -> NoReturn:
        """End the process now: what finished is on disk, the rollouts in flight are abandoned."""
        with contextlib.suppress(Exception):
            self._display.__exit__(None, None, None)
        self._last_words(why)
        abandon_workers()  # `os._exit` skips the executor's clean-up: no worker process or private Ray cluster outlives the run
        if self._tracing is not None:
            self._tracing.shutdown()
            say_lost(self._tracing)
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(CLOSED_OUTPUT if why == CLOSED_WHY else INTERRUPTED)

    def _on_signal(self, signum: int, frame: object) -> None:
        if self._keeping:
            self._pending = True  # never in the middle of keeping a finished rollout
            return
        self.stop_now()

    @contextlib.contextmanager
    def keeping(self) -> Iterator[None]:
        """Around writing a finished rollout: a signal that comes meanwhile stops the process after it."""
        self._keeping = True
        try:
            yield
        finally:
            self._keeping = False
        if self._pending:
            self.stop_now()

    def run(self, rollouts: Callable[[anyio.abc.TaskGroup], Awaitable[None]]) -> None:
        """Run `rollouts` (given the task group, whose scope it may cancel to stop early) under this
        handling; in-process, a signal cancels it and sets `interrupted`."""

        async def main() -> None:
            async with anyio.create_task_group() as tg:

                async def on_signal_in_loop() -> None:  # called in-process (`main(argv)`): stop at the next await
                    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                        async for _ in signals:
                            self.why = INTERRUPTED_WHY
                            # The calls in flight are abandoned on purpose: litellm's executor thread may
                            # have made a provider coroutine the cancelled task never awaits.
                            warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
                            tg.cancel_scope.cancel()
                            return

                if not self.program:
                    tg.start_soon(on_signal_in_loop)
                await rollouts(tg)
                tg.cancel_scope.cancel()  # the signal receiver

        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)} if self.program else {}
        try:
            anyio.run(main)
        except BaseException as exc:
            self._stopped_by(exc)  # returns when `exc` is a way the run stops early (in-process), else raises it
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)

    def _stopped_by(self, exc: BaseException) -> None:
        """The run raised `exc` (the task group's exception group, usually): stop as on Ctrl-C if it
        is stdout closed or a `SystemExit` (Ray's SIGTERM handler), else raise it.

        Stdout closed (`| head -1`): the run stops, as pytest or inspect_ai do, rather than running
        on unseen for hours; what finished is kept and the resume hint goes to stderr. Later writes
        to stdout (the progress display's, the interpreter's last flush) go to /dev/null, Python's
        recommended handling of EPIPE, so nothing prints a second `BrokenPipeError`."""
        errors = leaves(exc)
        if any(isinstance(e, BrokenPipeError) for e in errors):
            why = CLOSED_WHY
            if self.program:
                with contextlib.suppress(OSError, ValueError):
                    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        elif any(isinstance(e, SystemExit) for e in errors):
            why = INTERRUPTED_WHY
        else:
            raise exc
        if self.program:
            self.stop_now(why)
        self.why = why
