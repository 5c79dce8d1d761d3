"""Built-in plugin: registers the bundled scaffolds, exactly as a third party would."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestra.hookspecs import hookimpl


@hookimpl
def register_scaffolds(register: Callable[[str, Callable[..., Any]], None]) -> None:
    from orchestra.scaffolds.code import CodeScaffold
    from orchestra.scaffolds.parallel_tools import ParallelToolsScaffold
    from orchestra.scaffolds.react import ReactScaffold
    from orchestra.scaffolds.tool_calling import ToolCallingScaffold

    register("react", ReactScaffold)
    register("tool_calling", ToolCallingScaffold)
    register("parallel_tools", ParallelToolsScaffold)
    register("code", CodeScaffold)
