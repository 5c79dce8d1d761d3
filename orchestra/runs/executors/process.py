"""`--executor process`: rollouts in a pool of worker processes on this machine.

For CPU-bound work (judging, app state, the oracle team): each of `workers` processes (started
with `spawn` — ARE and litellm start threads, which `fork` would copy half-alive) rebuilds the
caller's plugin host, keeps its own judge pool, and runs up to `concurrency` rollouts at once on
its own event loop. Tasks and records travel over a pipe per worker. Workers ignore SIGINT (the
caller decides what a Ctrl-C stops) and exit when the caller closes their pipe or dies.

A worker that dies mid-run (killed, out of memory) costs only the rollouts it held: each gets an
`ERROR` record naming the exit status, a new worker takes its place, and the batch goes on.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread

from orchestra.are.judge_pool import JudgePool
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.record import RolloutRecord
from orchestra.runs.executors import WORKER_NAME_PREFIX
from orchestra.runs.executors.pool import Batch, dispatch
from orchestra.runs.executors.worker import HostRecipe, Task, WorkerError, run_task

__all__ = ["ProcessExecutor", "default_workers"]

#: Seconds a worker has to start (import orchestra, build its host) before the run fails.
START_TIMEOUT = 300.0
#: A worker that dies before it is ready this many times in a row fails the run.
MAX_START_FAILURES = 3


def default_workers() -> int:
    """One worker per CPU this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def process_executor(workers: int | None = None, address: str | None = None) -> ProcessExecutor:
    """The `process` factory: `workers` processes on this machine (no address)."""
    if address is not None:
        raise OrchestraError("--ray-address is for --executor ray, not process")
    return ProcessExecutor(workers)


class ProcessExecutor:
    """A pool of `workers` processes (default: one per CPU), each running up to `concurrency`
    rollouts at once; started for a batch and stopped after it."""

    name = "process"
    in_process = False

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and workers < 1:
            raise OrchestraError(f"workers must be 1 or more, got {workers}")
        self.workers = workers
        #: The pids of the workers alive now (for tests and diagnostics).
        self.pids: list[int] = []

    async def run(self, batch: Batch, *, host: Host, judge_pool: JudgePool | None, concurrency: int) -> AsyncIterator[RolloutRecord]:
        if judge_pool is not None:
            raise OrchestraError("a judge pool lives in one process: the process executor's workers build their own (pass none)")
        if not batch:
            return
        recipe = HostRecipe.of(host)
        n = min(self.workers or default_workers(), len(batch))
        workers = [_Worker(index, recipe, concurrency) for index in range(n)]
        try:
            async with anyio.create_task_group() as tg:
                for w in workers:
                    tg.start_soon(w.start)
            self.pids = [w.pid for w in workers]

            async def submit(index: int, task: Task) -> RolloutRecord:
                record = await workers[index].call(task)
                self.pids = [w.pid for w in workers]
                return record

            async for record in dispatch(batch, workers=n, concurrency=concurrency, submit=submit):
                yield record
        finally:
            with anyio.CancelScope(shield=True):
                for w in workers:
                    await w.stop()
            self.pids = []


@dataclass
class _Worker:
    """One worker process as the caller sees it: its pipe, the calls it holds, and a restart."""

    index: int
    recipe: HostRecipe
    concurrency: int
    process: BaseProcess | None = None
    conn: Connection | None = None
    pid: int = 0
    #: Calls in flight: id -> (done, [record or error]).
    pending: dict[int, tuple[anyio.Event, list[Any]]] = field(default_factory=dict)
    ids: itertools.count[int] = field(default_factory=itertools.count)
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    starting: anyio.Lock = field(default_factory=anyio.Lock)
    start_failures: int = 0
    stopping: bool = False

    @property
    def alive(self) -> bool:
        return self.conn is not None

    async def start(self) -> None:
        async with self.starting:
            if self.alive:
                return
            while True:
                try:
                    await self._start_once()
                    self.start_failures = 0
                    return
                except WorkerError as exc:
                    self.start_failures += 1
                    if self.start_failures >= MAX_START_FAILURES:
                        raise OrchestraError(f"worker process {self.index} could not start: {exc}") from None

    async def _start_once(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        process = ctx.Process(target=_child_main, args=(child, self.recipe, self.concurrency), name=f"{WORKER_NAME_PREFIX}{self.index}", daemon=True)
        process.start()
        child.close()  # the caller keeps one end only, so the worker's death reads as EOF
        try:
            with anyio.fail_after(START_TIMEOUT):
                first = await anyio.to_thread.run_sync(parent.recv, abandon_on_cancel=True)
        except (EOFError, OSError, TimeoutError):
            parent.close()
            _end(process)
            raise WorkerError(f"it exited before it was ready (exit status {process.exitcode})") from None
        if first[0] != "ready":
            parent.close()
            _end(process)
            raise OrchestraError(f"worker process {self.index} could not build its plugin host: {first[1]}")
        self.process, self.conn, self.pid = process, parent, first[1]
        _spawn_reader(self, parent, process)

    async def call(self, task: Task) -> RolloutRecord:
        if not self.alive:
            await self.start()
        conn = self.conn
        assert conn is not None
        call_id = next(self.ids)
        done = anyio.Event()
        box: list[Any] = []
        self.pending[call_id] = (done, box)
        try:
            async with self.lock:
                await anyio.to_thread.run_sync(conn.send, (call_id, task))
        except (OSError, EOFError, ValueError):
            pass  # the worker is gone: the reader reports it to every pending call
        await done.wait()
        result = box[0]
        if isinstance(result, RolloutRecord):
            return result
        raise WorkerError(str(result))

    def died(self, process: BaseProcess) -> None:
        """The reader saw the pipe close: every call the worker held gets no record."""
        process.join(timeout=5)
        why = f"worker process {self.pid} died (exit status {process.exitcode}) while this rollout ran; nothing of it was kept (a resumed run runs it again)"
        if self.conn is not None:
            self.conn.close()
        self.conn = None
        for done, box in self.pending.values():
            box.append(why)
            done.set()
        self.pending.clear()

    async def stop(self) -> None:
        self.stopping = True
        conn, process = self.conn, self.process
        self.conn = None
        if conn is not None:
            try:
                conn.send(None)
            except (OSError, EOFError, ValueError):
                pass
            conn.close()
        if process is not None:
            await anyio.to_thread.run_sync(_end, process)


def _spawn_reader(worker: _Worker, conn: Connection, process: BaseProcess) -> None:
    """A thread that reads the worker's replies and wakes the calls they answer (from the loop)."""
    import threading

    token = anyio.lowlevel.current_token()

    def read() -> None:
        while True:
            try:
                call_id, result = conn.recv()
            except (EOFError, OSError, TypeError, ValueError):
                break
            entry = worker.pending.pop(call_id, None)
            if entry is not None:
                entry[1].append(result)
                if not _in_loop(entry[0].set, token):
                    return
        if not worker.stopping:
            _in_loop(lambda: worker.died(process), token)

    threading.Thread(target=read, name=f"orchestra-worker-{worker.index}-reader", daemon=True).start()


def _in_loop(fn: Any, token: Any) -> bool:
    """Run `fn` on the caller's event loop; False when that loop has ended (the run is over)."""
    try:
        anyio.from_thread.run_sync(fn, token=token)
    except RuntimeError:
        return False
    return True


def _end(process: BaseProcess) -> None:
    """Wait a little for a worker to exit, then kill it."""
    process.join(timeout=10)
    if process.is_alive():
        process.kill()
        process.join(timeout=10)


# ------------------------------------------------------------------------------ in the worker


def _child_main(conn: Connection, recipe: HostRecipe, concurrency: int) -> None:
    """A worker process: build the host, say ready, serve tasks until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # this process's own handler: Ctrl-C is the caller's to handle
    try:
        host = recipe.build()
    except Exception as exc:
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", os.getpid()))
    anyio.run(_serve, conn, host, concurrency)


async def _serve(conn: Connection, host: Host, concurrency: int) -> None:
    limiter = anyio.CapacityLimiter(concurrency)
    sending = anyio.Lock()

    async def one(call_id: int, task: Task) -> None:
        async with limiter:
            record: Any = await run_task(task, host)
        async with sending:
            try:
                await anyio.to_thread.run_sync(conn.send, (call_id, record))
            except (OSError, EOFError, ValueError):
                raise
            except Exception as exc:  # a record that cannot be pickled: say so rather than hang the call
                await anyio.to_thread.run_sync(conn.send, (call_id, f"the worker could not send the record back: {type(exc).__name__}: {exc}"))

    async with anyio.create_task_group() as tg:
        while True:
            try:
                message = await anyio.to_thread.run_sync(conn.recv, abandon_on_cancel=True)
            except (EOFError, OSError):
                message = None
            if message is None:  # the caller is done (or gone): stop what runs
                tg.cancel_scope.cancel()
                break
            tg.start_soon(one, *message)
