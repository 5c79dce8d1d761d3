"""What runs in a worker: the caller's plugin host rebuilt (`HostRecipe`), one rollout (`Task`) run.

A worker (a process of the `process` executor, a Ray actor) builds its host once, from the recipe
of the host the batch was given, and runs every task it receives through
`orchestra.rollout.execute` with that host: the judge pool is the worker's own (the process-wide
pool of each judge setting, warm after the first rollout), exactly as `local` uses one per process.
"""

from __future__ import annotations

import logging
import pickle
import types
from dataclasses import dataclass, field
from typing import Any

from orchestra.errors import OrchestraError, show_one_line_warnings, shows_one_line_warnings
from orchestra.host import Host
from orchestra.record import RolloutRecord, build_record
from orchestra.rollout import execute
from orchestra.scenario_files import ScenarioFile
from orchestra.spec import RolloutSpec

#: Loggers whose levels a worker takes from the caller (the root's, ARE's, litellm's, httpx's).
LOGGERS = ("", "are", "LiteLLM", "litellm", "httpx")

__all__ = ["LOGGERS", "HostRecipe", "Task", "WorkerError", "error_record", "run_task", "task_for"]


class WorkerError(Exception):
    """A rollout got no record from its worker (the worker died, or could not send it back)."""


@dataclass(frozen=True)
class HostRecipe:
    """How to build, in another process, a host with the same plugins as the caller's.

    Built-ins are always there; entry-point plugins are named (the worker loads exactly those);
    plugins registered in code travel as a module name (a module) or pickled (any other object:
    a class or an instance of an importable class)."""

    entry_points: tuple[str, ...] = ()
    #: ("module", name) or ("object", pickled bytes), in registration order.
    inline: tuple[tuple[str, Any], ...] = ()
    #: The caller's log levels of the noisy libraries (the CLI quiets ARE): a worker logs as it would.
    log_levels: tuple[tuple[str, int], ...] = ()
    #: The caller shows orchestra's warnings as one line (the CLI): a worker does too.
    one_line_warnings: bool = False

    @classmethod
    def of(cls, host: Host) -> HostRecipe:
        sources = {info.name: info.source for info in host.plugins()}
        entry_points: list[str] = []
        inline: list[tuple[str, Any]] = []
        for name in host.plugin_names:
            source = sources.get(name, "inline")
            if source == "builtin":
                continue
            if source != "inline":
                entry_points.append(name)
                continue
            plugin = host.pm.get_plugin(name)
            if isinstance(plugin, types.ModuleType):
                inline.append(("module", plugin.__name__))
                continue
            try:
                inline.append(("object", pickle.dumps(plugin)))
            except Exception as exc:
                raise OrchestraError(
                    f"plugin {name!r} cannot be sent to worker processes ({type(exc).__name__}: {exc}); "
                    "register it as a module, an importable object or an entry point, or use --executor local"
                ) from None
        levels = tuple((name, logging.getLogger(name).level) for name in LOGGERS)
        return cls(entry_points=tuple(entry_points), inline=tuple(inline), log_levels=levels, one_line_warnings=shows_one_line_warnings())

    def build(self) -> Host:
        """The host (and the caller's log levels, in this worker process)."""
        import importlib

        for name, level in self.log_levels:
            logging.getLogger(name).setLevel(level)
        if self.one_line_warnings:
            show_one_line_warnings()
        plugins: list[object] = []
        for kind, value in self.inline:
            plugins.append(importlib.import_module(value) if kind == "module" else pickle.loads(value))
        return Host.create(plugins, allow=self.entry_points)


@dataclass(frozen=True)
class Task:
    """One rollout for a worker: the spec, and the scenario file's name and text (read by the
    caller, so a worker needs no access to the caller's files; None: the worker reads `path`)."""

    spec: RolloutSpec
    path: str
    text: str | None = field(default=None, repr=False)


def task_for(spec: RolloutSpec, file: ScenarioFile | None) -> Task:
    """The task of one batch entry; a file that cannot be read is left to the worker, whose
    rollout then fails with the same error `local` records."""
    file = file or ScenarioFile(spec.scenario)
    try:
        text: str | None = file.text
    except OrchestraError:
        text = None
    return Task(spec=spec, path=str(file.path), text=text)


async def run_task(task: Task, host: Host) -> RolloutRecord:
    """Run one task to its record (errors are in the record, as with `local`)."""
    return await execute(task.spec, host=host, file=ScenarioFile(task.path, text=task.text))


def error_record(task: Task, message: str) -> RolloutRecord:
    """The `ERROR` record of a rollout its worker returned nothing for (a resumed run runs it again)."""
    return build_record(task.spec, task.path, error=f"{task.path}: {message}")
