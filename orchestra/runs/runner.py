"""Batches of rollouts: specs for files, and an executor that runs them.

A batch is a list of `(RolloutSpec, ScenarioFile | None)` pairs in a deterministic order
(`specs_for`); an *executor* runs them and yields one `RolloutRecord` per spec as each finishes.
Because a spec is plain data and a record carries its spec, an executor may run rollouts anywhere
— on this event loop (`local`, the default), in worker processes (`process`) or on a Ray cluster
(`ray`; `orchestra.runs.executors`) — and the records mean the same.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import anyio

from orchestra.are.judge_pool import JudgePool
from orchestra.config import SessionConfig
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.record import RolloutRecord
from orchestra.runs.executors import Batch, Executor
from orchestra.runs.run_dir import rollout_key
from orchestra.scenario_files import ScenarioFile, resolve
from orchestra.spec import AgentConfig, OracleConfig, PerturbationKind, RolloutSpec, TeamConfig

__all__ = ["check_executor_options", "execute_all", "execute_sources_sync", "in_batch_order", "specs_for"]


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


async def execute_all(
    specs: Iterable[tuple[RolloutSpec, ScenarioFile | None]],
    *,
    host: Host | None = None,
    judge_pool: JudgePool | None = None,
    concurrency: int = 1,
    executor: str | Executor = "local",
    workers: int | None = None,
    address: str | None = None,
) -> AsyncIterator[RolloutRecord]:
    """Yield one record per spec as each finishes (spec order when `concurrency` is 1 with
    `local`, or with one worker). `executor`: a registered executor's name (built with `workers`
    and `address`; `orchestra plugins` lists them) or an `Executor` (built already: `workers` and
    `address` are refused with it); `concurrency` is per worker."""
    if concurrency < 1:
        raise OrchestraError(f"concurrency must be 1 or more, got {concurrency}")
    check_executor_options(executor, workers=workers, address=address)
    host = host or Host.create()
    chosen = host.executor(executor, workers=workers, address=address) if isinstance(executor, str) else executor
    if not chosen.in_process and "orchestra.tracing" in sys.modules:
        from orchestra.tracing import active

        if active() is not None:
            raise OrchestraError(f"tracing records the rollouts of this process only: not with --executor {chosen.name} (use --executor local to trace)")
    run = chosen.run(list(specs), host=host, judge_pool=judge_pool, concurrency=concurrency)
    async for record in run:
        yield record


def check_executor_options(executor: str | Executor, *, workers: int | None, address: str | None) -> None:
    """`workers` and `address` build a named executor; an `Executor` instance comes built with its
    own (`ProcessExecutor(2, keep_alive=True)`): giving them too is refused rather than ignored."""
    if isinstance(executor, str) or (workers is None and address is None):
        return
    given = " and ".join(f"{name}={value!r}" for name, value in (("workers", workers), ("address", address)) if value is not None)
    name = getattr(executor, "name", type(executor).__name__)
    raise OrchestraError(
        f"{given} builds a named executor; the {name} executor given is built already and keeps its own settings "
        f"(pass executor={name!r} with {given}, or build the executor with them)"
    )


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
    executor: str | Executor = "local",
    workers: int | None = None,
    address: str | None = None,
) -> list[RolloutRecord]:
    """The oracle (plain and/or perturbed) over resolved sources, one record per rollout, in
    spec order whatever the executor."""
    files = resolve(sources, capabilities=capabilities, scenario_ids=scenario_ids, limit=limit)
    specs = specs_for(files, perturbations=perturbations, session=session, native_parity=native_parity)

    async def go() -> list[RolloutRecord]:
        run = execute_all(specs, host=host, judge_pool=judge_pool, executor=executor, workers=workers, address=address)
        return [r async for r in run]

    return in_batch_order(anyio.run(go), specs)


def in_batch_order(records: Iterable[RolloutRecord], batch: Batch) -> list[RolloutRecord]:
    """Records in the order of their specs in `batch` (workers finish in any order; tables read file by file)."""
    keys = {rollout_key(spec): i for i, (spec, _) in enumerate(batch)}
    return sorted(records, key=lambda r: keys.get(rollout_key(r.spec), len(keys)) if r.spec is not None else len(keys))
