"""Built-in plugin: the `wasm` sandbox backend (CPython on WebAssembly; the `code` scaffold's default)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestra.hookspecs import hookimpl


@hookimpl
def register_sandboxes(register: Callable[[str, Callable[..., Any]], None]) -> None:
    from orchestra.sandbox.wasm import WasmSandbox

    register("wasm", WasmSandbox)
