"""`--executor local` (the default): rollouts on this event loop."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import anyio.lowlevel

from orchestra.are.judge_pool import JudgePool
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.record import RolloutRecord
from orchestra.rollout import execute
from orchestra.runs.collector import batch_collection, rollout_finished
from orchestra.runs.executors import Batch
from orchestra.scenario_files import ScenarioFile
from orchestra.spec import RolloutSpec


class LocalExecutor:
    """Rollouts on this event loop: up to `concurrency` at once, worthwhile when the model is a
    remote API and rollouts mostly wait for it. Each has its own session and judge (the pool
    builds more judges as needed); a scenario file is read only once its rollout holds a slot."""

    name = "local"
    in_process = True

    async def run(self, batch: Batch, *, host: Host, judge_pool: JudgePool | None, concurrency: int) -> AsyncIterator[RolloutRecord]:
        with batch_collection(concurrency):
            async for record in self._run(batch, host=host, judge_pool=judge_pool, concurrency=concurrency):
                yield record

    async def _run(self, batch: Batch, *, host: Host, judge_pool: JudgePool | None, concurrency: int) -> AsyncIterator[RolloutRecord]:
        if concurrency <= 1:
            for spec, file in batch:
                record = await execute(spec, host=host, judge_pool=judge_pool, file=file)
                rollout_finished()
                yield record
            return
        send, receive = anyio.create_memory_object_stream[RolloutRecord](max_buffer_size=concurrency)
        limiter = anyio.CapacityLimiter(concurrency)

        async def worker(spec: RolloutSpec, file: ScenarioFile | None) -> None:
            async with limiter:
                record = await execute(spec, host=host, judge_pool=judge_pool, file=file)
            rollout_finished()
            await send.send(record)

        async def feed() -> None:
            async with anyio.create_task_group() as tg:
                for spec, file in batch:
                    tg.start_soon(worker, spec, file)
                    # one turn of the event loop between two starts: the rollout just started sends its
                    # first model request before the next one's start (CPU) runs — started all at once,
                    # 256 starts ran before any request went out, and every rollout waited for all of them
                    await anyio.lowlevel.checkpoint()
            await send.aclose()

        async with anyio.create_task_group() as tg:
            tg.start_soon(feed)
            async with receive:
                async for record in receive:
                    yield record


def local_executor(workers: int | None = None, address: str | None = None) -> LocalExecutor:
    """The `local` factory: no workers and no address (it runs on this event loop)."""
    if workers is not None:
        raise OrchestraError("--workers is for --executor process or ray (local runs on this event loop: use --concurrency)")
    if address is not None:
        raise OrchestraError("--ray-address is for --executor ray, not local")
    return LocalExecutor()
