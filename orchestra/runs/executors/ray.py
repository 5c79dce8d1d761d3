"""`--executor ray`: rollouts on Ray actors, on this machine or on a cluster (`--ray-address`).

Each of `workers` actors (`RolloutWorker`, one CPU each) rebuilds the caller's plugin host once,
keeps a warm judge pool across rollouts, and runs up to `concurrency` rollouts at once on its
event loop (an async actor): model calls go from the actors to the endpoints in the specs, so
those must be reachable from the cluster's nodes. The dispatcher (`orchestra.runs.executors.pool`)
keeps at most `workers * concurrency` rollouts in flight and streams records back as they finish.

An actor that dies mid-rollout (its process killed, its node lost) costs only the rollouts it
held: each gets an `ERROR` record (a resumed run runs it again); Ray restarts the actor and the
batch goes on. Tasks are never retried by Ray itself, so no rollout runs twice unseen.

Without `--ray-address` a private local cluster is started for the run (`address="local"`: never
one that happens to run on the machine) and stopped after it: no dashboard, a small object
store, usage statistics off (`RAY_USAGE_STATS_ENABLED=0` unless set), nothing reaching the
network. With an address, orchestra joins that cluster as a driver and leaves it running. A
`host:port` address is first checked with a plain TCP connection (at most `connect_timeout`
seconds, `CONNECT_TIMEOUT` by default): Ray itself retries a head that does not answer for
minutes, logging only its own lines; here nothing listening fails the run at once, in one line.
Ray is imported here only, when the executor runs: `import orchestra` never imports it.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import AsyncIterator
from typing import Any

from orchestra.are.judge_pool import JudgePool
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.models import env_refs
from orchestra.record import RolloutRecord
from orchestra.runs.executors.pool import Batch, dispatch
from orchestra.runs.executors.worker import HostRecipe, Task, WorkerError, run_task

__all__ = ["CONNECT_TIMEOUT", "FORWARDED_ENV", "LOCAL_OBJECT_STORE_BYTES", "RayExecutor", "RolloutWorker", "check_reachable", "forwarded_env", "import_ray"]

#: The object store of a local cluster: records travel through it, a few MB each at most.
LOCAL_OBJECT_STORE_BYTES = 96 * 1024 * 1024
#: Seconds a `--ray-address host:port` has to accept a TCP connection before the run fails.
CONNECT_TIMEOUT = 30.0
#: Environment variables a joined cluster's workers get from the driver (when set here): what
#: keeps them offline and loads the same plugins. Variables the specs refer to (`${VAR}`) too.
FORWARDED_ENV = (
    "ORCHESTRA_PLUGINS",
    "ORCHESTRA_HF_DATASET",
    "LITELLM_LOCAL_MODEL_COST_MAP",
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "TOKENIZERS_PARALLELISM",
)


def import_ray() -> Any:
    """Ray, or one clear error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise OrchestraError("--executor ray needs Ray: install orchestra's `ray` extra (pip install 'orchestra-agents[ray]')") from None
    return ray


class RolloutWorker:
    """A Ray actor (made remote at run time): the caller's host, a warm judge pool, rollouts."""

    def __init__(self, recipe: HostRecipe) -> None:
        self.host = recipe.build()

    def pid(self) -> int:
        return os.getpid()

    async def run(self, task: Task) -> RolloutRecord:
        return await run_task(task, self.host)


def forwarded_env(batch: Batch) -> dict[str, str]:
    """What a joined cluster's workers need from this environment: `FORWARDED_ENV` and every
    variable a spec refers to (`${VAR}`: API keys stay out of specs and records; they reach the
    workers as environment variables of the job), those that are set here."""
    names = set(FORWARDED_ENV)
    for spec, _ in batch:
        names.update(env_refs(spec.model_dump_json()))
    return {name: os.environ[name] for name in sorted(names) if name in os.environ}


def ray_executor(workers: int | None = None, address: str | None = None) -> RayExecutor:
    """The `ray` factory: `workers` actors on a private local cluster, or on the cluster at `address`
    (checked now: a head that does not answer fails in one line, where Ray would retry for minutes)."""
    if address is not None:
        check_reachable(address, CONNECT_TIMEOUT)
    return RayExecutor(workers, address)


class RayExecutor:
    """Rollouts on `workers` Ray actors (default: the cluster's CPUs, one actor per CPU), each
    running up to `concurrency` at once. `address`: join that cluster (`host:port`, `auto`, or
    `ray://...`, untested) instead of starting a private local one."""

    def __init__(
        self,
        workers: int | None = None,
        address: str | None = None,
        *,
        object_store_bytes: int = LOCAL_OBJECT_STORE_BYTES,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        if workers is not None and workers < 1:
            raise OrchestraError(f"workers must be 1 or more, got {workers}")
        self.name, self.in_process = "ray", False
        self.workers = workers
        self.address = address
        self.connect_timeout = connect_timeout
        self.object_store_bytes = object_store_bytes
        #: The pids of the actors (for tests and diagnostics), filled once they are ready.
        self.pids: list[int] = []

    async def run(self, batch: Batch, *, host: Host, judge_pool: JudgePool | None, concurrency: int) -> AsyncIterator[RolloutRecord]:
        if judge_pool is not None:
            raise OrchestraError("a judge pool lives in one process: the ray executor's actors build their own (pass none)")
        if not batch:
            return
        if self.address is not None:
            check_reachable(self.address, self.connect_timeout)
        ray = import_ray()
        recipe = HostRecipe.of(host)
        started = self._connect(ray)
        actors: list[Any] = []
        try:
            n = min(self.workers or max(1, int(ray.cluster_resources().get("CPU", 1))), len(batch))
            options: dict[str, Any] = dict(num_cpus=1, max_restarts=-1, max_task_retries=0, max_concurrency=concurrency)
            env = forwarded_env(batch)
            if self.address is not None and env:
                options["runtime_env"] = {"env_vars": env}
            actor_class = ray.remote(RolloutWorker).options(**options)
            actors = [actor_class.remote(recipe) for _ in range(n)]
            try:
                self.pids = [await a.pid.remote() for a in actors]
            except ray.exceptions.RayError as exc:
                raise OrchestraError(f"the Ray workers could not start: {_cause(exc)}") from None

            async def submit(index: int, task: Task) -> RolloutRecord:
                try:
                    record: RolloutRecord = await actors[index].run.remote(task)
                except ray.exceptions.RayActorError as exc:
                    raise WorkerError(
                        f"the Ray worker running this rollout died ({_cause(exc)}); nothing of it was kept (a resumed run runs it again)"
                    ) from None
                except ray.exceptions.RayError as exc:
                    raise WorkerError(f"the Ray worker returned no record: {_cause(exc)}") from None
                return record

            async for record in dispatch(batch, workers=n, concurrency=concurrency, submit=submit):
                yield record
        finally:
            for actor in actors:
                try:
                    ray.kill(actor, no_restart=True)
                except Exception:  # noqa: S110 - already gone
                    pass
            self.pids = []
            if started:
                ray.shutdown()

    def _connect(self, ray: Any) -> bool:
        """Join the cluster at `address`, or start a private local one; True when this run started
        (and so stops) the connection. An existing connection of this process is used as it is."""
        if ray.is_initialized():
            return False
        quiet: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
        if self.address is not None:
            try:
                ray.init(address=self.address, **quiet)
            except Exception as exc:
                raise OrchestraError(f"--ray-address {self.address}: cannot join the Ray cluster: {type(exc).__name__}: {exc}") from None
            return True
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # read by the processes Ray starts: never phone home
        # on loopback: the node never looks up its network address (Ray would probe a public IP for it)
        ray.init(address="local", num_cpus=self.workers, object_store_memory=self.object_store_bytes, _node_ip_address="127.0.0.1", **quiet)
        return True


def check_reachable(address: str, timeout: float) -> None:
    """A `host:port` address (not `auto`, not `ray://`) accepts a TCP connection within `timeout`
    seconds, or `OrchestraError` in one line (Ray would retry it for minutes)."""
    if "://" in address or address == "auto":
        return
    host, sep, port_text = address.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit():
        raise OrchestraError(f"--ray-address {address}: cannot join the Ray cluster: expected host:port, auto or ray://host:port")
    try:
        with socket.create_connection((host, int(port_text)), timeout=timeout):
            pass
    except OSError as exc:
        why = f"nothing answered within {timeout:g} s" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        raise OrchestraError(f"--ray-address {address}: cannot join the Ray cluster: {why} (is the head node up, is its GCS port open?)") from None


def _cause(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
