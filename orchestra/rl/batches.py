"""Batched rollouts against an OpenAI-compatible server (`rollouts`): the trainer's model pointed at
the endpoint, run through the runner's executors, preflight first.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import Any

import anyio

from orchestra.are.judge_pool import JudgePool
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.openai_client import TOKEN_REQUEST
from orchestra.record import RolloutRecord
from orchestra.rl.env import POLICY_MODEL
from orchestra.runs.executors import Executor
from orchestra.runs.preflight import DEFAULT_TIMEOUT, PassedChecks
from orchestra.runs.preflight import preflight as check_batch
from orchestra.runs.runner import check_executor_options, execute_all
from orchestra.scenario_files import ScenarioFile
from orchestra.spec import RolloutSpec

#: The preflight checks this process passed (`rollouts` skips them in later batches).
PASSED = PassedChecks()


async def rollouts(
    specs: Iterable[RolloutSpec | tuple[RolloutSpec, ScenarioFile | None]],
    endpoint: str | ModelConfig,
    *,
    model: str | None = None,
    api_key: str | None = None,
    concurrency: int = 8,
    executor: str | Executor = "local",
    host: Host | None = None,
    judge_pool: JudgePool | None = None,
    workers: int | None = None,
    address: str | None = None,
    preflight: bool = True,
    preflight_timeout: float = DEFAULT_TIMEOUT,
    group_size: int = 1,
    vary_noise: bool = False,
    token_ids: bool = True,
) -> AsyncIterator[RolloutRecord]:
    """Run a batch of specs against an OpenAI-compatible server, one record per spec as each finishes.

    Every agent of each spec whose model is the trainer's (`policy`, or any model when `model` is
    given) is pointed at `endpoint` (`http://host:port/v1`, or a whole `ModelConfig`); app-agents
    with models of their own keep them. Runs through the runner's executor seam: `executor`
    `local` (this event loop, `concurrency` rollouts at once), `process` or `ray` (`workers`
    processes or Ray actors, `concurrency` rollouts each; `address` joins a Ray cluster, whose
    nodes must reach `endpoint`) — or an `Executor` built already, which keeps its own workers
    (`workers` and `address` are refused with it). A trainer calling `rollouts` once per step
    passes one `ProcessExecutor(workers, keep_alive=True)` to every call: its worker processes
    start once and serve every step (each step's `anyio.run` included) until its `close()`.

    `preflight` (the default) checks the batch first, as `orchestra run` does: an endpoint that
    refuses the connection or does not list its models within `preflight_timeout` seconds, a
    scenario file that cannot run, a model that does not resolve — `PreflightError`, one line,
    before any scenario loads (otherwise every model call of every rollout retries first). What
    passed once in this process is not checked again (`PASSED`: a trainer's next step starts at
    once; `PASSED.clear()` checks everything again).

    `group_size` (GRPO): each spec runs as that many members, member `i` as sample `i` (its
    sampling seed `seed + i`), all meeting the same noise unless `vary_noise`; the scenario is
    loaded once and the members start from copies of it (`orchestra.are.loading.ScenarioTemplate`).
    `token_ids` (the default) asks the endpoint for each call's token ids and logprobs (vLLM's
    `return_token_ids`, `logprobs`): the records' training traces (`RolloutRecord.training`)."""
    if not isinstance(endpoint, str | ModelConfig):
        raise TypeError(f"rollouts: endpoint is a URL ('http://host:port/v1') or a ModelConfig, got {type(endpoint).__name__} {endpoint!r:.60}")
    if group_size < 1:
        raise OrchestraError(f"group_size must be 1 or more, got {group_size}")
    check_executor_options(executor, workers=workers, address=address)  # before the preflight
    if isinstance(endpoint, ModelConfig):
        target = endpoint
    else:
        target = ModelConfig(model=f"openai/{model}" if model else "openai/policy", endpoint=endpoint, api_key=api_key or "none")
    if token_ids:
        target = target.model_copy(update={"extra": {**TOKEN_REQUEST, **target.extra}})
    if isinstance(specs, RolloutSpec | str | bytes | Mapping) or not isinstance(specs, Iterable):
        what = "one RolloutSpec: put it in a list" if isinstance(specs, RolloutSpec) else f"{type(specs).__name__}"
        raise TypeError(f"rollouts: specs is a list of RolloutSpec (or (spec, ScenarioFile) pairs), got {what}")
    batch = []
    for n, item in enumerate(specs):
        spec, file = item if isinstance(item, tuple) and len(item) == 2 else (item, None)
        if not isinstance(spec, RolloutSpec) or not (file is None or isinstance(file, ScenarioFile)):
            hint = " (make one with EnvConfig().spec(path, seed=...))" if isinstance(item, str | Path) else ""
            raise TypeError(f"rollouts: specs[{n}] is a RolloutSpec or a (RolloutSpec, ScenarioFile) pair, got {type(item).__name__} {item!r:.60}{hint}")
        pointed = _pointed(spec, target, replace_any=model is not None or isinstance(endpoint, ModelConfig))
        for i in range(group_size):
            member = pointed if group_size == 1 else pointed.model_copy(update={"sample_index": i, "noise_index": i if vary_noise else 0})
            batch.append((member, file))
    if preflight:
        host = host or Host.create()
        checked_host = host
        await anyio.to_thread.run_sync(lambda: check_batch(batch, checked_host, timeout=preflight_timeout, passed=PASSED))
    async for record in execute_all(batch, host=host, judge_pool=judge_pool, concurrency=concurrency, executor=executor, workers=workers, address=address):
        yield record


def _pointed(spec: RolloutSpec, target: ModelConfig, *, replace_any: bool) -> RolloutSpec:
    """`spec` with the policy's model pointed at `target`: the main agent's (when `replace_any`, or
    when it is the `policy` label), any app-agent's that is the `policy` label, and every app-agent
    the team marks `trainable: true` (the trainer trains it: its calls go to the trainer's endpoint)."""

    def point(settings: Any, *, main: bool) -> Any:
        current: ModelConfig | None = settings.model
        trainable = getattr(settings, "trainable", None) is True
        if not trainable and (current is None or not (current.model == POLICY_MODEL or (main and replace_any))):
            return settings
        return settings.model_copy(update={"model": target})

    if spec.team is not None:
        team = spec.team.map_agents(lambda s: point(s, main=False))
        return spec.model_copy(update={"team": team.model_copy(update={"main": point(spec.team.main, main=True)})})
    if spec.agent is not None:
        return spec.model_copy(update={"agent": point(spec.agent, main=True)})
    raise OrchestraError(f"{spec.scenario}: an oracle spec has no model to point at an endpoint")
