"""Built-in plugin: the `local`, `process` and `ray` executors (`orchestra.runs.executors`).

The factories import their executor on first use, so registering them imports neither the
process pool nor Ray."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestra.hookspecs import hookimpl


def _local(workers: int | None = None, address: str | None = None) -> Any:
    from orchestra.runs.executors.local import local_executor

    return local_executor(workers, address)


def _process(workers: int | None = None, address: str | None = None) -> Any:
    from orchestra.runs.executors.process import process_executor

    return process_executor(workers, address)


def _ray(workers: int | None = None, address: str | None = None) -> Any:
    from orchestra.runs.executors.ray import ray_executor

    return ray_executor(workers, address)


@hookimpl
def register_executors(register: Callable[[str, Callable[..., Any]], None]) -> None:
    register("local", _local)
    register("process", _process)
    register("ray", _ray)
