"""Ctrl-C for the commands that run rollouts (`orchestra run`, `orchestra gaia2`).

Run as the program, Ctrl-C (or SIGTERM) ends the process at once, even while a rollout is inside
synchronous work (a scenario loading, the judge) that an event-loop signal receiver would first
wait for: every finished rollout is on disk (each is kept whole before the next, `Interrupt.keeping`),
the rollouts in flight are abandoned, worker processes are killed and the trace is flushed. Called
in-process (`main(argv)`), the rollouts are cancelled at their next await and `Interrupt.run`
returns with `interrupted` set."""

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

from orchestra.cli import INTERRUPTED
from orchestra.cli._trace import say_lost
from orchestra.executors import abandon_workers
from orchestra.tracing import active as active_tracing


def as_program(args: argparse.Namespace) -> bool:
    """Whether this is the `orchestra` program (not `main(argv)` called in-process): `args.program`
    where the command line sets it, else whether the arguments are the process's own."""
    program = getattr(args, "program", None)
    if program is not None:
        return bool(program)
    return getattr(args, "argv", None) == sys.argv[1:]


class Interrupt:
    """One batch's Ctrl-C handling. `display`: the progress display, closed before the last words;
    `last_words`: prints what finished, where it is kept and the command that resumes."""

    def __init__(self, args: argparse.Namespace, *, display: Any, last_words: Callable[[], None]) -> None:
        self.program = as_program(args) and threading.current_thread() is threading.main_thread()
        self.interrupted = False  # in-process: a signal cancelled the batch
        self._display = display
        self._last_words = last_words
        self._tracing = active_tracing()
        self._keeping = False  # a finished rollout is being written: a signal waits for it (`_pending`)
        self._pending = False

    def stop_now(self) -> NoReturn:
        """End the process now: what finished is on disk, the rollouts in flight are abandoned."""
        with contextlib.suppress(Exception):
            self._display.__exit__(None, None, None)
        self._last_words()
        abandon_workers()  # `os._exit` skips the executor's clean-up: no worker process or private Ray cluster outlives the run
        if self._tracing is not None:
            self._tracing.shutdown()
            say_lost(self._tracing)
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(INTERRUPTED)

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
                            self.interrupted = True
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
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
