"""The one resumable batch loop: what is left of a batch runs, each record kept as it finishes.

`orchestra run`, `orchestra replay` and `orchestra gaia2` (each of its phases) all go through
`BatchRun`, and so can a script::

    batch = specs_for(resolve(["bundled:time"]), team=load_team("oracle"))
    result = await run_into(batch, Path("out"), host=Host.create(), concurrency=4)
    result.records  # finished before (a rerun resumes) + finished now

* **Resume.** With a run folder (`orchestra.runs.run_dir.RunDir`), the rollouts it holds finished
  are skipped (`earlier`); the others run (`todo`). Without one, everything runs and nothing is kept.
* **Kept as each finishes.** A finished rollout's whole record (its trajectory included) goes to
  `rollouts/NAME.json`, then its line to `results.jsonl`, before the next record is taken: a run
  killed at any moment loses only the rollouts in flight. `keeping()` wraps that write (the command
  line's Ctrl-C handling waits for it, never interrupting a record half-written).
* **Stops early** after `max_consecutive_errors` rollouts in a row ended in `ERROR` (a model that
  died mid-run), or at the first `ERROR` after which `health` says the model's endpoint no longer
  answers (`orchestra.runs.preflight.endpoint_health`: a server that died stops the batch after
  one rollout, not ten): the rollouts in flight are abandoned, `stopped` says why; what finished is
  kept and the same batch resumes. A run folder that cannot be written mid-run (deleted, disk
  full) stops it the same way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from orchestra.are.judge_pool import JudgePool
from orchestra.host import Host
from orchestra.record import RolloutRecord
from orchestra.runs.executors import Batch, Executor
from orchestra.runs.run_dir import RunDir, rollout_key
from orchestra.runs.runner import execute_all
from orchestra.scenario_files import ScenarioFile
from orchestra.spec import RolloutSpec

__all__ = ["BatchRun", "run_into"]


@dataclass
class BatchRun:
    """One batch into one run folder (or none): what finished before, what runs now, what finished now."""

    batch: list[tuple[RolloutSpec, ScenarioFile | None]]
    run_dir: RunDir | None
    #: Rollouts the run folder held finished (resumed, not run again).
    earlier: list[RolloutRecord]
    #: What runs now: the batch without `earlier`.
    todo: list[tuple[RolloutSpec, ScenarioFile | None]]
    #: Rollouts finished now, in the order they finished (trajectories left out: they are on disk).
    done: list[RolloutRecord] = field(default_factory=list)
    #: Why the batch stopped before its end (errors in a row), None when it ran to its end.
    stopped: str | None = None

    @classmethod
    def open(
        cls, batch: Iterable[tuple[RolloutSpec, ScenarioFile | None]], out: Path | RunDir | None = None, *, runs: int = 1, plugins: dict[str, str] | None = None
    ) -> BatchRun:
        """The batch against its run folder: `out` is opened (its manifest checked or written, what
        finished loaded; a folder of another configuration, or of other `plugins` — `Host.third_party()` —
        is refused), or None to keep nothing."""
        items = list(batch)
        run_dir = out if isinstance(out, RunDir) or out is None else RunDir(out)
        if run_dir is None:
            return cls(items, None, [], list(items))
        run_dir.open(items, runs=runs, plugins=plugins)
        keys = {rollout_key(spec) for spec, _ in items}  # a folder may hold more than this batch (a smaller --limit)
        earlier = [record for key, record in run_dir.finished.items() if key in keys]
        return cls(items, run_dir, earlier, run_dir.remaining(items))

    @property
    def records(self) -> list[RolloutRecord]:
        """Every finished rollout of the batch: those of before, then those of now."""
        return self.earlier + self.done

    @property
    def retried(self) -> int:
        """`ERROR` rollouts of an earlier run, dropped from the folder to run again."""
        return self.run_dir.retried if self.run_dir is not None else 0

    async def run(
        self,
        *,
        host: Host,
        executor: str | Executor = "local",
        concurrency: int = 1,
        judge_pool: JudgePool | None = None,
        max_consecutive_errors: int = 0,
        on_record: Callable[[RolloutRecord], None] | None = None,
        keeping: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext,
        health: Callable[[RolloutRecord], str | None] | None = None,
    ) -> BatchRun:
        """Run `todo`, keeping each record as it finishes; `on_record(record)` (a progress display)
        sees each one after it is kept; `health(record)`, after each `ERROR` (in a worker thread: it
        may wait on a network), returns why the batch must stop now, or None. Returns self (`done`,
        `stopped` filled)."""
        streak = 0
        with anyio.CancelScope() as scope:
            async for record in execute_all(self.todo, host=host, judge_pool=judge_pool, concurrency=concurrency, executor=executor):
                if self.stopped is not None:
                    continue  # cancelled: nothing more is kept
                with keeping():
                    if self.run_dir is not None:
                        try:
                            self.run_dir.keep(record)  # rollouts/NAME.json with the trajectory, then its line in results.jsonl
                        except OSError as exc:  # the folder went away or filled up mid-run: stop, keep what was kept
                            self.stopped = f"{self.run_dir.unwritable(exc)}; the rollout that just finished is lost"
                            scope.cancel()
                            continue
                    self.done.append(record.model_copy(update={"trajectory": None}))
                if on_record is not None:
                    on_record(record)
                if health is not None and record.status == "ERROR":
                    reason = await anyio.to_thread.run_sync(health, record)
                    if reason is not None:
                        self.stopped = reason
                        scope.cancel()  # as below: the rollouts in flight are abandoned
                        continue
                streak = streak + 1 if record.status == "ERROR" else 0
                if max_consecutive_errors and streak >= max_consecutive_errors:
                    self.stopped = f"{streak} rollouts in a row ended in ERROR (--max-consecutive-errors {max_consecutive_errors}); the last: {record.error}"
                    scope.cancel()  # the rollouts in flight are abandoned, as on Ctrl-C
        return self


async def run_into(batch: Batch, out: Path | RunDir | None, *, runs: int = 1, host: Host | None = None, **options: object) -> BatchRun:
    """`BatchRun.open(batch, out).run(...)` in one call: what is left of `batch` runs into the run
    folder `out` (None: nothing kept). `options` are `BatchRun.run`'s."""
    host = host or Host.create()
    return await BatchRun.open(batch, out, runs=runs, plugins=host.third_party()).run(host=host, **options)  # type: ignore[arg-type]
