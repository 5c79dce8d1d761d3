"""Running agents over scenarios: config → host → session → scaffold → model/tools → judge → result."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field

from orchestra.agent import DEFAULT_MAX_STEPS, AgentContext, run_agent
from orchestra.are.judge_pool import JudgePool
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.models import ModelConfig, ModelError
from orchestra.scaffold import ScaffoldOptions
from orchestra.scenario_files import ScenarioFile, resolve
from orchestra.session import RolloutResult, Session, SessionConfig


class AgentConfig(BaseModel):
    """One agent: which scaffold around which model, and its step budget."""

    model_config = ConfigDict(extra="forbid")

    scaffold: str = "tool_calling"
    model: ModelConfig
    max_steps: int = Field(DEFAULT_MAX_STEPS, gt=0, description="whole-scenario step budget (ARE: 80)")
    scaffold_options: dict[str, Any] = Field(default_factory=dict)


class RolloutOutcome(BaseModel):
    """A rollout's result, or the error that kept it from producing one (the batch goes on)."""

    source: str
    scenario_id: str
    result: RolloutResult | None = None
    error: str | None = None


async def run_rollout(
    file: ScenarioFile,
    agent_config: AgentConfig,
    *,
    host: Host,
    session_config: SessionConfig | None = None,
    judge_pool: JudgePool | None = None,
) -> RolloutResult:
    """One agent on one scenario. A permanent model failure ends this rollout with `error` set."""
    factory = host.scaffold(agent_config.scaffold)
    with Session.open(file, session_config, judge_pool=judge_pool) as session:
        tools = {**session.tools, **{name: spec for name, (spec, _) in host.tools.items()}}
        scaffold = factory(tools, ScaffoldOptions(**agent_config.scaffold_options))
        agent = AgentContext(name="main", session=session, model=agent_config.model, scaffold=scaffold, host=host, max_steps=agent_config.max_steps)
        error = None
        try:
            await run_agent(agent)
        except ModelError as exc:
            error = str(exc)
        result = session.finish(error=error)
        return result.model_copy(
            update={
                "steps": agent.steps,
                "reasoning_tokens": agent.reasoning_tokens,
                "cost_usd": agent.cost_usd,
                "stop_reason": "model_error" if error else (agent.stop_reason or result.stop_reason),
            }
        )


async def run_sources(
    sources: Iterable[str | Path],
    agent_config: AgentConfig,
    *,
    host: Host,
    session_config: SessionConfig | None = None,
    judge_pool: JudgePool | None = None,
    capabilities: Iterable[str] = (),
    scenario_ids: Iterable[str] = (),
    limit: int | None = None,
    concurrency: int = 1,
) -> AsyncIterator[RolloutOutcome]:
    """Yield one outcome per scenario as each finishes (source order when `concurrency` is 1).

    With `concurrency > 1`, up to that many rollouts run at once on one event loop — worthwhile
    when the model is a remote API and rollouts mostly wait for it. Each rollout has its own
    session and judge (the pool builds more judges as needed).
    """
    files = resolve(sources, capabilities=capabilities, scenario_ids=scenario_ids, limit=limit)

    async def one(file: ScenarioFile) -> RolloutOutcome:
        outcome = RolloutOutcome(source=str(file.path), scenario_id=file.stem)
        try:
            outcome.result = await run_rollout(file, agent_config, host=host, session_config=session_config, judge_pool=judge_pool)
            outcome.scenario_id = outcome.result.scenario_id
        except OrchestraError as exc:
            outcome.error = str(exc)
        return outcome

    if concurrency <= 1:
        for file in files:
            yield await one(file)
        return
    send, receive = anyio.create_memory_object_stream[RolloutOutcome](max_buffer_size=concurrency)
    limiter = anyio.CapacityLimiter(concurrency)

    async def worker(file: ScenarioFile) -> None:
        async with limiter:
            outcome = await one(file)
        await send.send(outcome)

    async def feed() -> None:
        async with anyio.create_task_group() as tg:
            for file in files:  # each file's text is read only once its rollout holds the limiter
                tg.start_soon(worker, file)
        await send.aclose()

    async with anyio.create_task_group() as tg:
        tg.start_soon(feed)
        async with receive:
            async for outcome in receive:
                yield outcome
