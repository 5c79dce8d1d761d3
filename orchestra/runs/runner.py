"""Batches of rollouts: specs for files, and an executor that runs them.

A batch is a list of `(RolloutSpec, ScenarioFile | None)` pairs in a deterministic order
(`specs_for`); an *executor* runs them and yields one `RolloutRecord` per spec as each finishes.
Because a spec is plain data and a record carries its spec, an executor may run rollouts anywhere
— on this event loop (`local`, the default), in worker processes (`process`) or on a Ray cluster
(`ray`; `orchestra.runs.executors`) — and the records mean the same.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path
from typing import Protocol

import anyio

from orchestra.are.judge_pool import JudgePool
from orchestra.config import SessionConfig
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.record import RolloutRecord
from orchestra.rollout import execute
from orchestra.runs.run_dir import rollout_key
from orchestra.scenario_files import ScenarioFile, resolve
from orchestra.spec import AgentConfig, OracleConfig, PerturbationKind, RolloutSpec, TeamConfig

__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "execute_all", "execute_sources_sync", "executor", "specs_for"]

Batch = Sequence[tuple[RolloutSpec, ScenarioFile | None]]


def specs_for(
    files: Iterable[ScenarioFile],
    *,
    agent: AgentConfig | None = None,
    team: TeamConfig | None = None,
    perturbations: Iterable[PerturbationKind | None] = (None,),
    session: SessionConfig | None = None,
    native_parity: bool = False,
    runs: int = 1,
    seed: int | None = None,
    are_model_failures: bool = False,
) -> list[tuple[RolloutSpec, ScenarioFile]]:
    """One spec per file and run (an agent or a team), or per file, run and perturbation (the
    oracle), in deterministic order: file by file, then run index (`sample_index`, 0 to `runs`-1:
    each an independent rollout, its sampling seed `seed + sample_index` when `seed` is given).

    A team runs with `session` when given, else with the team file's own session settings."""
    if runs < 1:
        raise OrchestraError(f"runs must be 1 or more, got {runs}")
    kinds = list(perturbations)
    common = dict(seed=seed, are_model_failures=are_model_failures)
    out = []
    for file in files:
        for index in range(runs):
            if team is not None:
                out.append((RolloutSpec(scenario=str(file.path), team=team, session=session or team.session, sample_index=index, **common), file))
            elif agent is not None:
                out.append((RolloutSpec(scenario=str(file.path), agent=agent, session=session or SessionConfig(), sample_index=index, **common), file))
            else:
                for kind in kinds:
                    oracle = OracleConfig(perturbation=kind, native_parity=native_parity)
                    out.append((RolloutSpec(scenario=str(file.path), oracle=oracle, session=session or SessionConfig(), sample_index=index, **common), file))
    return out


class Executor(Protocol):
    """Runs a batch, yielding one record per spec as each finishes (spec order when `concurrency` is 1)."""

    def run(self, batch: Batch, *, host: Host, judge_pool: JudgePool | None, concurrency: int) -> AsyncIterator[RolloutRecord]: ...


class LocalExecutor:
    """Rollouts on this event loop: up to `concurrency` at once, worthwhile when the model is a
    remote API and rollouts mostly wait for it. Each has its own session and judge (the pool
    builds more judges as needed); a scenario file is read only once its rollout holds a slot."""

    async def run(self, batch: Batch, *, host: Host, judge_pool: JudgePool | None, concurrency: int) -> AsyncIterator[RolloutRecord]:
        if concurrency <= 1:
            for spec, file in batch:
                yield await execute(spec, host=host, judge_pool=judge_pool, file=file)
            return
        send, receive = anyio.create_memory_object_stream[RolloutRecord](max_buffer_size=concurrency)
        limiter = anyio.CapacityLimiter(concurrency)

        async def worker(spec: RolloutSpec, file: ScenarioFile | None) -> None:
            async with limiter:
                record = await execute(spec, host=host, judge_pool=judge_pool, file=file)
            await send.send(record)

        async def feed() -> None:
            async with anyio.create_task_group() as tg:
                for spec, file in batch:
                    tg.start_soon(worker, spec, file)
            await send.aclose()

        async with anyio.create_task_group() as tg:
            tg.start_soon(feed)
            async with receive:
                async for record in receive:
                    yield record


#: Executors by name: this event loop, worker processes, Ray (`orchestra.runs.executors`; Ray itself is
#: imported only when the `ray` executor runs).
EXECUTORS = ("local", "process", "ray")


def executor(name: str = "local", *, workers: int | None = None, ray_address: str | None = None) -> Executor:
    """The executor `name`: `workers` processes or actors (`process`, `ray`; default one per
    CPU), `ray_address` a Ray cluster to join (`ray`; default a private local one)."""
    if name not in EXECUTORS:
        raise OrchestraError(f"unknown executor {name!r}; available: {', '.join(EXECUTORS)}")
    if name != "local" and "orchestra.tracing" in sys.modules:
        from orchestra.tracing import active

        if active() is not None:
            raise OrchestraError(f"tracing records the rollouts of this process only: not with --executor {name} (use --executor local to trace)")
    if ray_address is not None and name != "ray":
        raise OrchestraError(f"--ray-address is for --executor ray, not {name}")
    if name == "process":
        from orchestra.runs.executors.process import ProcessExecutor

        return ProcessExecutor(workers)
    if name == "ray":
        from orchestra.runs.executors.ray import RayExecutor

        return RayExecutor(workers, ray_address)
    if workers is not None:
        raise OrchestraError("--workers is for --executor process or ray (local runs on this event loop: use --concurrency)")
    return LocalExecutor()


async def execute_all(
    specs: Iterable[tuple[RolloutSpec, ScenarioFile | None]],
    *,
    host: Host | None = None,
    judge_pool: JudgePool | None = None,
    concurrency: int = 1,
    executor_name: str = "local",
    workers: int | None = None,
    ray_address: str | None = None,
) -> AsyncIterator[RolloutRecord]:
    """Yield one record per spec as each finishes (spec order when `concurrency` is 1 with
    `local`, or with one worker). `concurrency` is per worker with `process` and `ray`."""
    if concurrency < 1:
        raise OrchestraError(f"concurrency must be 1 or more, got {concurrency}")
    chosen = executor(executor_name, workers=workers, ray_address=ray_address)
    run = chosen.run(list(specs), host=host or Host.create(), judge_pool=judge_pool, concurrency=concurrency)
    async for record in run:
        yield record


def execute_sources_sync(
    sources: Iterable[str | Path],
    *,
    perturbations: Iterable[PerturbationKind | None] = (None,),
    session: SessionConfig | None = None,
    judge_pool: JudgePool | None = None,
    native_parity: bool = False,
    capabilities: Iterable[str] = (),
    scenario_ids: Iterable[str] = (),
    limit: int | None = None,
    host: Host | None = None,
    executor_name: str = "local",
    workers: int | None = None,
    ray_address: str | None = None,
) -> list[RolloutRecord]:
    """The oracle (plain and/or perturbed) over resolved sources, one record per rollout, in
    spec order whatever the executor."""
    files = resolve(sources, capabilities=capabilities, scenario_ids=scenario_ids, limit=limit)
    specs = specs_for(files, perturbations=perturbations, session=session, native_parity=native_parity)

    async def go() -> list[RolloutRecord]:
        run = execute_all(specs, host=host, judge_pool=judge_pool, executor_name=executor_name, workers=workers, ray_address=ray_address)
        return [r async for r in run]

    records = anyio.run(go)
    if executor_name == "local":
        return records
    keys = {rollout_key(spec): i for i, (spec, _) in enumerate(specs)}
    return sorted(records, key=lambda r: keys[rollout_key(r.spec)] if r.spec is not None else len(keys))
