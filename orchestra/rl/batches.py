"""Batched rollouts against an OpenAI-compatible server (`rollouts`): the trainer's model pointed at
the endpoint, run through the runner's executors, preflight first.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

import anyio

from orchestra.are.judge_pool import JudgePool
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.record import RolloutRecord
from orchestra.rl.env import POLICY_MODEL
from orchestra.runs.preflight import DEFAULT_TIMEOUT
from orchestra.runs.preflight import preflight as check_batch
from orchestra.runs.runner import execute_all
from orchestra.scenario_files import ScenarioFile
from orchestra.spec import RolloutSpec


async def rollouts(
    specs: Iterable[RolloutSpec | tuple[RolloutSpec, ScenarioFile | None]],
    endpoint: str | ModelConfig,
    *,
    model: str | None = None,
    api_key: str | None = None,
    concurrency: int = 8,
    executor: str = "local",
    host: Host | None = None,
    judge_pool: JudgePool | None = None,
    workers: int | None = None,
    address: str | None = None,
    preflight: bool = True,
    preflight_timeout: float = DEFAULT_TIMEOUT,
) -> AsyncIterator[RolloutRecord]:
    """Run a batch of specs against an OpenAI-compatible server, one record per spec as each finishes.

    Every agent of each spec whose model is the trainer's (`policy`, or any model when `model` is
    given) is pointed at `endpoint` (`http://host:port/v1`, or a whole `ModelConfig`); app-agents
    with models of their own keep them. Runs through the runner's executor seam: `executor`
    `local` (this event loop, `concurrency` rollouts at once), `process` or `ray` (`workers`
    processes or Ray actors, `concurrency` rollouts each; `address` joins a Ray cluster, whose
    nodes must reach `endpoint`).

    `preflight` (the default) checks the batch first, as `orchestra run` does: an endpoint that
    refuses the connection or does not list its models within `preflight_timeout` seconds, a
    scenario file that cannot run, a model that does not resolve — `PreflightError`, one line,
    before any scenario loads (otherwise every model call of every rollout retries first)."""
    if isinstance(endpoint, ModelConfig):
        target = endpoint
    else:
        target = ModelConfig(model=f"openai/{model}" if model else "openai/policy", endpoint=endpoint, api_key=api_key or "none")
    batch = []
    for item in specs:
        spec, file = item if isinstance(item, tuple) else (item, None)
        batch.append((_pointed(spec, target, replace_any=model is not None or isinstance(endpoint, ModelConfig)), file))
    if preflight:
        host = host or Host.create()
        checked_host = host
        await anyio.to_thread.run_sync(lambda: check_batch(batch, checked_host, timeout=preflight_timeout))
    async for record in execute_all(batch, host=host, judge_pool=judge_pool, concurrency=concurrency, executor=executor, workers=workers, address=address):
        yield record


def _pointed(spec: RolloutSpec, target: ModelConfig, *, replace_any: bool) -> RolloutSpec:
    """`spec` with the policy's model pointed at `target`: the main agent's (when `replace_any`, or
    when it is the `policy` label), and any app-agent's that is the `policy` label."""

    def point(settings: Any, *, main: bool) -> Any:
        current: ModelConfig | None = settings.model
        if current is None or not (current.model == POLICY_MODEL or (main and replace_any)):
            return settings
        return settings.model_copy(update={"model": target})

    if spec.team is not None:
        team = spec.team.map_agents(lambda s: point(s, main=False))
        return spec.model_copy(update={"team": team.model_copy(update={"main": point(spec.team.main, main=True)})})
    if spec.agent is not None:
        return spec.model_copy(update={"agent": point(spec.agent, main=True)})
    raise OrchestraError(f"{spec.scenario}: an oracle spec has no model to point at an endpoint")
