"""Executors: where a batch's rollouts run — this event loop (`local`), worker processes
(`process`), Ray actors (`ray`) or a plugin's (the `register_executors` hook).

An executor implements `Executor`: `run(batch, host=, judge_pool=, concurrency=)` yields one
record per spec as each finishes. A plugin registers a factory, `factory(workers=None,
address=None) -> Executor`, which refuses (an `OrchestraError`) an option it has no use for::

    class SerialExecutor:
        name = "serial"
        in_process = True

        async def run(self, batch, *, host, judge_pool, concurrency):
            for spec, file in batch:
                yield await orchestra.execute(spec, host=host, judge_pool=judge_pool, file=file)

    @hookimpl
    def register_executors(register):
        register("serial", lambda workers=None, address=None: SerialExecutor())

The runner (`orchestra.runs.runner`) hands an executor a batch of `(RolloutSpec, ScenarioFile)` pairs;
the executor yields one `RolloutRecord` per spec as each finishes. A spec is plain data and a
record carries its spec, so a rollout means the same wherever it runs: the workers here rebuild
the caller's plugin host from a `HostRecipe`, keep one judge pool each (warm across rollouts),
and run each spec through `orchestra.rollout.execute` — the one path `local` uses too. Event
logs, verdicts and records are therefore identical to `local`'s (tested on the whole corpus).

* `worker`: what runs in a worker (the host recipe, a task, running it) — no executor in it.
* `pool`: the dispatcher both executors share: each worker holds at most `concurrency` rollouts,
  specs go out in batch order as slots free up, records stream back as they finish; a rollout
  whose worker died becomes an `ERROR` record (a resumed run runs it again).
* `process`: a pool of worker processes (`spawn`: ARE and litellm start threads, so no `fork`).
* `ray`: Ray actors (Ray from the optional `ray` extra, imported only there).
* `local`: this event loop.
"""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # pragma: no cover - types only
    from orchestra.are.judge_pool import JudgePool
    from orchestra.host import Host
    from orchestra.record import RolloutRecord
    from orchestra.scenario_files import ScenarioFile
    from orchestra.spec import RolloutSpec

__all__ = ["Batch", "Executor", "ExecutorFactory", "abandon_workers"]

#: A batch: `(spec, its scenario file or None)` pairs, in the order the records should follow.
Batch = Sequence[tuple["RolloutSpec", "ScenarioFile | None"]]


class Executor(Protocol):
    """Runs a batch, yielding one record per spec as each finishes (spec order when `concurrency`
    is 1 and there is one worker). `concurrency` is the rollouts in flight per worker."""

    #: The name it is registered under (`--executor NAME`), for messages.
    name: str
    #: Whether the rollouts run in this process (tracing records only those, so it refuses the others).
    in_process: bool

    def run(self, batch: Batch, *, host: Host, judge_pool: JudgePool | None, concurrency: int) -> AsyncIterator[RolloutRecord]: ...


class ExecutorFactory(Protocol):
    """What `register_executors` registers: builds an executor; refuses an option it has no use for."""

    def __call__(self, workers: int | None = None, address: str | None = None) -> Executor: ...


#: The name every worker process of the `process` executor starts with (`process._Worker`).
WORKER_NAME_PREFIX = "orchestra-worker-"


def abandon_workers() -> None:
    """The command is about to end its process at once (Ctrl-C, `os._exit`), skipping the executors'
    own clean-up: kill the worker processes this process started and stop the private Ray cluster
    it started (or leave a joined one), so nothing it started outlives it. A no-op when none runs."""
    for child in multiprocessing.active_children():
        if child.name.startswith(WORKER_NAME_PREFIX):
            child.kill()
    ray = sys.modules.get("ray")  # imported only by `--executor ray`: never import it here
    if ray is not None and ray.is_initialized():
        ray.shutdown()  # a private cluster stops (its raylet, GCS and agents); a joined one stays up
