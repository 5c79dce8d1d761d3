"""Sandboxes for model-written code: the interface (`base`), the guest channel (`protocol`) and the
built-in backends (`wasm`: CPython on WebAssembly, the default; `bwrap`: the host's CPython under
bubblewrap). Backends are registered by plugins through the `register_sandboxes` hook; a backend
implements `Sandbox.launch`, `write` and `terminate` and feeds a `GuestChannel` (docs/sandbox.md)."""

from orchestra.sandbox.base import (
    GUEST_SOURCE,
    BackendOptions,
    CellResult,
    GuestChannel,
    Sandbox,
    SandboxConfig,
    SandboxError,
    SandboxEvent,
    SandboxLimits,
    ToolRequest,
    write_all,
)

__all__ = [
    "GUEST_SOURCE",
    "BackendOptions",
    "CellResult",
    "GuestChannel",
    "Sandbox",
    "SandboxConfig",
    "SandboxError",
    "SandboxEvent",
    "SandboxLimits",
    "ToolRequest",
    "write_all",
]
