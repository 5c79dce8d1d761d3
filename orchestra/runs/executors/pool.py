"""The dispatcher the `process` and `ray` executors share: bounded in flight, records as they finish."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence

import anyio

from orchestra.record import RolloutRecord
from orchestra.runs.executors.worker import Task, WorkerError, error_record, task_for
from orchestra.scenario_files import ScenarioFile
from orchestra.spec import RolloutSpec

__all__ = ["Batch", "Submit", "dispatch"]

Batch = Sequence[tuple[RolloutSpec, ScenarioFile | None]]
#: Run one task on worker `index` and return its record (`WorkerError` when the worker gave none).
Submit = Callable[[int, Task], Awaitable[RolloutRecord]]


async def dispatch(batch: Batch, *, workers: int, concurrency: int, submit: Submit) -> AsyncGenerator[RolloutRecord, None]:
    """Send the batch's rollouts to `workers` workers, at most `concurrency` on each at once, in
    batch order as slots free up (a scenario file is read only then), and yield each record as it
    comes back — in batch order when there is one slot in all. A rollout whose worker returned no
    record (it died mid-rollout) gets an `ERROR` record saying so; the others go on."""
    slots = workers * concurrency
    free_send, free = anyio.create_memory_object_stream[int](max_buffer_size=slots)
    for _ in range(concurrency):
        for index in range(workers):  # round robin: each worker gets work before any gets a second
            free_send.send_nowait(index)
    out, records = anyio.create_memory_object_stream[RolloutRecord](max_buffer_size=slots)

    async def one(index: int, task: Task) -> None:
        try:
            record = await submit(index, task)
        except WorkerError as exc:
            record = error_record(task, str(exc))
        free_send.send_nowait(index)
        await out.send(record)

    async def feed() -> None:
        async with out:
            async with anyio.create_task_group() as tg:
                for spec, file in batch:
                    index = await free.receive()
                    tg.start_soon(one, index, task_for(spec, file))

    async with anyio.create_task_group() as tg:
        tg.start_soon(feed)
        async with records:
            async for record in records:
                try:
                    yield record
                except GeneratorExit:  # the caller closed the batch early: stop what runs, end without an error group
                    tg.cancel_scope.cancel()
                    return
