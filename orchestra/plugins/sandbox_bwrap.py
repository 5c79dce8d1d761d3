"""Built-in plugin: the `bwrap` sandbox backend (the host's full CPython under bubblewrap)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestra.hookspecs import hookimpl


@hookimpl
def register_sandboxes(register: Callable[[str, Callable[..., Any]], None]) -> None:
    from orchestra.sandbox.bwrap import BwrapSandbox

    register("bwrap", BwrapSandbox)
