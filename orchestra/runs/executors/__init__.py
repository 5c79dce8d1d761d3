"""Executors beyond this event loop: worker processes (`process`) and Ray (`ray`).

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
* `ray_executor`: Ray actors (Ray from the optional `ray` extra, imported only there).
"""

from __future__ import annotations

import multiprocessing
import sys

__all__ = ["abandon_workers"]

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
