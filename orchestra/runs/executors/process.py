"""`--executor process`: rollouts in a pool of worker processes on this machine.

For CPU-bound work (judging, app state, the oracle team): each of `workers` processes (started
with `spawn` — ARE and litellm start threads, which `fork` would copy half-alive) rebuilds the
caller's plugin host, keeps its own judge pool, and runs up to `concurrency` rollouts at once on
its own event loop. Tasks and records travel over a pipe per worker. Workers ignore SIGINT (the
caller decides what a Ctrl-C stops) and exit when the caller closes their pipe or dies.

A worker that dies mid-run (killed, out of memory) costs only the rollouts it held: each gets an
`ERROR` record naming the exit status, a new worker takes its place, and the batch goes on.

By default the workers start with each batch and stop after it. `ProcessExecutor(keep_alive=True)`
keeps them for the next batches (an RL trainer's steps, each perhaps on its own event loop) until
`close()`: a batch then pays no start-up.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import signal
import threading
import weakref
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
from orchestra.runs.collector import batch_collection, note_concurrency, rollout_finished
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
    return ProcessExecutor(workers)  # one batch per command: `keep_alive` is for Python callers running many


class ProcessExecutor:
    """A pool of `workers` processes (default: one per CPU), each running up to `concurrency`
    rollouts at once; started for a batch and stopped after it — or, with `keep_alive`, kept
    for the next batches until `close()`.

    `keep_alive=True` is for many batches in one process (an RL trainer calling
    `orchestra.rl.rollouts` once per step): the workers the first `run()` starts serve every later
    `run()`, from any event loop (a trainer's `anyio.run` per step), so a batch no longer pays the
    workers' start-up (importing ARE, building the host and judges: seconds of CPU each). The pool
    grows to the most workers a batch has needed (at most `workers`); a smaller batch uses the
    first ones. A kept-alive pool serves one batch at a time (a second batch started while one
    runs is refused). Between batches it is checked: a worker that died is started anew, as one
    that dies during a batch is, and so is one still holding rollouts of a batch that ended early
    (the caller stopped reading it, an error). A batch for a host with other plugins (another
    `HostRecipe`: plugins, log levels) restarts the whole pool: workers built for one host never
    run another's rollouts. `concurrency` travels with each rollout rather than being fixed when a
    worker starts: a worker's limit is only a guard behind the dispatcher's (which never gives a
    worker more than `concurrency` at once), and restarting would cost the start-up the pool
    saves. `close()` / `aclose()` (or `with` / `async with`) stop the workers; a later `run()`
    starts new ones. Workers are daemons and exit when their pipe closes, so none outlives this
    process (nor the executor, once it is garbage-collected)."""

    name = "process"
    in_process = False

    def __init__(self, workers: int | None = None, *, keep_alive: bool = False) -> None:
        if workers is not None and workers < 1:
            raise OrchestraError(f"workers must be 1 or more, got {workers}")
        self.workers = workers
        self.keep_alive = keep_alive
        #: The pids of the workers alive now (for tests and diagnostics): a batch's while it runs;
        #: after it, the kept-alive pool's (none without `keep_alive`).
        self.pids: list[int] = []
        #: The kept-alive workers (mutated in place: the finalizer below holds this list, not self).
        self._pool: list[_Worker] = []
        self._recipe: HostRecipe | None = None
        self._running = False
        weakref.finalize(self, _close_pipes, self._pool)

    async def run(self, batch: Batch, *, host: Host, judge_pool: JudgePool | None, concurrency: int) -> AsyncIterator[RolloutRecord]:
        if judge_pool is not None:
            raise OrchestraError("a judge pool lives in one process: the process executor's workers build their own (pass none)")
        if not batch:
            return
        recipe = HostRecipe.of(host)
        n = min(self.workers or default_workers(), len(batch))
        if self.keep_alive and self._running:
            raise OrchestraError(
                "this ProcessExecutor(keep_alive=True) is running a batch already: its pool serves one batch at a time "
                "(finish that batch, or close its iterator, first)"
            )
        self._running = True
        workers: list[_Worker] = []
        finished = False
        try:
            workers = await self._kept(recipe, n) if self.keep_alive else [_Worker(index, recipe) for index in range(n)]
            token = anyio.lowlevel.current_token()
            for w in workers:
                w.bind(token)
            async with anyio.create_task_group() as tg:
                for w in workers:
                    if not w.alive:
                        tg.start_soon(w.start)
            self.pids = [w.pid for w in workers]

            async def submit(index: int, task: Task) -> RolloutRecord:
                record = await workers[index].call(task, concurrency)
                self.pids = [w.pid for w in workers]
                return record

            # closed here, in this task, when this batch is closed early (its task group may not exit in another)
            async with contextlib.aclosing(dispatch(batch, workers=n, concurrency=concurrency, submit=submit)) as records:
                async for record in records:
                    yield record
            finished = True
        finally:
            with anyio.CancelScope(shield=True):
                if self.keep_alive:
                    for w in workers:
                        if not finished and w.pending:  # rollouts of this batch still run there: start that worker anew next time
                            await w.stop()
                    self.pids = [w.pid for w in self._pool if w.alive]
                else:
                    for w in workers:
                        await w.stop()
                    self.pids = []
                self._running = False

    async def _kept(self, recipe: HostRecipe, n: int) -> list[_Worker]:
        """The pool's first `n` workers for `recipe`: a pool built for another host is stopped,
        a worker that died or still holds an earlier batch's rollouts is stopped (to start anew)."""
        if self._recipe != recipe:
            for w in self._pool:
                await w.stop()
            self._pool.clear()
            self._recipe = recipe
        for w in self._pool:
            if w.alive and not w.healthy:
                await w.stop()
        while len(self._pool) < n:
            self._pool.append(_Worker(len(self._pool), recipe))
        return self._pool[:n]

    def close(self) -> None:
        """Stop the kept-alive workers (a batch's own workers, without `keep_alive`, stop with it).
        Rollouts a running batch still held on them get `ERROR` records, and so does the rest of
        that batch; a later `run()` starts new workers."""
        for process in self._retire():
            _end(process)

    async def aclose(self) -> None:
        """`close()`, waiting for the workers to exit off the event loop."""
        for process in self._retire():
            await anyio.to_thread.run_sync(_end, process)

    def _retire(self) -> list[BaseProcess]:
        """Close the pool's pipes (each worker exits on EOF) and forget it; the processes to wait for."""
        processes = [w.hang_up(retire=self._running) for w in self._pool]
        self._pool.clear()
        self._recipe = None
        self.pids = []
        return [p for p in processes if p is not None]

    def __enter__(self) -> ProcessExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> ProcessExecutor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _close_pipes(pool: list[_Worker]) -> None:
    """The executor was garbage-collected (or the interpreter exits): its workers exit on EOF."""
    for w in pool:
        w.hang_up(retire=False)


@dataclass
class _Worker:
    """One worker process as the caller sees it: its pipe, the calls it holds, and a restart.

    A kept-alive worker outlives the event loop of the batch that started it: `bind` gives it the
    loop of each batch (the reader thread wakes calls on that loop) and locks of that loop."""

    index: int
    recipe: HostRecipe
    process: BaseProcess | None = None
    conn: Connection | None = None
    pid: int = 0
    #: Calls in flight: id -> (done, [record or error]).
    pending: dict[int, tuple[anyio.Event, list[Any]]] = field(default_factory=dict)
    ids: itertools.count[int] = field(default_factory=itertools.count)
    lock: anyio.Lock | None = None
    starting: anyio.Lock | None = None
    #: The event loop of the batch being served (`anyio.lowlevel.current_token()`), read by the reader thread.
    token: Any = None
    reader: threading.Thread | None = None
    start_failures: int = 0
    #: The caller closed this process's pipe: its reader ends quietly, nothing to report.
    stopping: bool = False
    #: The executor was closed while a batch ran on this worker: no restart, the batch's rollouts are errors.
    retired: bool = False

    @property
    def alive(self) -> bool:
        return self.conn is not None

    @property
    def healthy(self) -> bool:
        """Alive, read, and holding no call (between batches: fit for the next)."""
        return self.alive and self.process is not None and self.process.is_alive() and self.reader is not None and self.reader.is_alive() and not self.pending

    def bind(self, token: Any) -> None:
        """Serve the batch running on the event loop of `token` (locks of that loop, its calls woken there)."""
        self.token = token
        self.lock = anyio.Lock()
        self.starting = anyio.Lock()

    async def start(self) -> None:
        assert self.starting is not None
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
        process = ctx.Process(target=_child_main, args=(child, self.recipe), name=f"{WORKER_NAME_PREFIX}{self.index}", daemon=True)
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
        self.process, self.conn, self.pid, self.stopping = process, parent, first[1], False
        self.reader = _spawn_reader(self, parent, process)

    async def call(self, task: Task, concurrency: int) -> RolloutRecord:
        if self.retired:
            raise WorkerError("the process executor was closed while this batch ran; nothing of this rollout ran (a resumed run runs it)")
        if not self.alive:
            await self.start()
        conn, lock = self.conn, self.lock
        assert conn is not None and lock is not None
        call_id = next(self.ids)
        done = anyio.Event()
        box: list[Any] = []
        self.pending[call_id] = (done, box)
        try:
            async with lock:
                await anyio.to_thread.run_sync(conn.send, (call_id, task, concurrency))
        except (OSError, EOFError, ValueError):
            pass  # the worker is gone: the reader reports it to every pending call
        await done.wait()
        result = box[0]
        if isinstance(result, RolloutRecord):
            return result
        raise WorkerError(str(result))

    def died(self, process: BaseProcess) -> None:
        """The reader saw the pipe close: every call the worker held gets no record."""
        if process is not self.process:
            return  # an earlier process of this worker, already replaced
        process.join(timeout=5)
        if self.retired:
            why = "the process executor was closed while this rollout ran; nothing of it was kept (a resumed run runs it again)"
        else:
            why = f"worker process {self.pid} died (exit status {process.exitcode}) while this rollout ran"
            why += "; nothing of it was kept (a resumed run runs it again)"
        if self.conn is not None:
            self.conn.close()
        self.conn = None
        for done, box in self.pending.values():
            box.append(why)
            done.set()
        self.pending.clear()

    def hang_up(self, *, retire: bool) -> BaseProcess | None:
        """Close the pipe (the worker exits on EOF); the process to wait for. `retire`: a batch
        still runs here, so its reader reports the calls this worker held as errors and no
        restart follows; otherwise the reader ends quietly and the calls are forgotten."""
        if retire:
            self.retired = True
        else:
            self.stopping = True
            self.pending.clear()
        conn, process = self.conn, self.process
        self.conn = None
        if conn is not None:
            try:
                conn.send(None)
            except (OSError, EOFError, ValueError):
                pass
            conn.close()
        return process

    async def stop(self) -> None:
        process = self.hang_up(retire=False)
        if process is not None:
            await anyio.to_thread.run_sync(_end, process)


def _spawn_reader(worker: _Worker, conn: Connection, process: BaseProcess) -> threading.Thread:
    """A thread that reads the worker's replies and wakes the calls they answer, on the event loop
    of the batch being served (`worker.token`, read at each reply: a kept-alive worker serves
    batches of many loops). It lives as long as the pipe."""

    def read() -> None:
        while True:
            try:
                call_id, result = conn.recv()
            except (EOFError, OSError, TypeError, ValueError):
                break
            entry = worker.pending.pop(call_id, None)
            if entry is not None:
                entry[1].append(result)
                _in_loop(entry[0].set, worker.token)  # False: that batch's loop has ended (the batch is over)
        if not worker.stopping:
            _in_loop(lambda: worker.died(process), worker.token)

    thread = threading.Thread(target=read, name=f"orchestra-worker-{worker.index}-reader", daemon=True)
    thread.start()
    return thread


def _in_loop(fn: Any, token: Any) -> bool:
    """Run `fn` on the batch's event loop; False when that loop has ended (the batch is over)."""
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


def _child_main(conn: Connection, recipe: HostRecipe) -> None:
    """A worker process: build the host, say ready, serve tasks until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # this process's own handler: Ctrl-C is the caller's to handle
    try:
        host = recipe.build()
    except Exception as exc:
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", os.getpid()))
    anyio.run(_serve, conn, host)


async def _serve(conn: Connection, host: Host) -> None:
    """Run each `(call_id, task, concurrency)` received, at most `concurrency` at once (the batch's,
    sent with each task: a kept-alive worker serves batches of different concurrencies)."""
    limiter = anyio.CapacityLimiter(1)
    sending = anyio.Lock()

    async def one(call_id: int, task: Task) -> None:
        async with limiter:
            record: Any = await run_task(task, host)
        rollout_finished()
        async with sending:
            try:
                await anyio.to_thread.run_sync(conn.send, (call_id, record))
            except (OSError, EOFError, ValueError):
                raise
            except Exception as exc:  # a record that cannot be pickled: say so rather than hang the call
                await anyio.to_thread.run_sync(conn.send, (call_id, f"the worker could not send the record back: {type(exc).__name__}: {exc}"))

    # a worker is a batch runner for its whole life: the collector as a batch wants it (`orchestra.runs.collector`)
    with batch_collection():
        async with anyio.create_task_group() as tg:
            while True:
                try:
                    message = await anyio.to_thread.run_sync(conn.recv, abandon_on_cancel=True)
                except (EOFError, OSError):
                    message = None
                if message is None:  # the caller is done (or gone): stop what runs
                    tg.cancel_scope.cancel()
                    break
                call_id, task, concurrency = message
                limiter.total_tokens = concurrency
                note_concurrency(concurrency)
                tg.start_soon(one, call_id, task)
