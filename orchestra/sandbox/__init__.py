"""Sandboxes for model-written code: the interface (`base`), the guest channel (`protocol`) and the
built-in backends (`wasm`: CPython on WebAssembly, the default; `bwrap`: the host's CPython under
bubblewrap). Backends are registered by plugins through the `register_sandboxes` hook."""

from orchestra.sandbox.base import CellResult, Sandbox, SandboxConfig, SandboxError, SandboxEvent, SandboxLimits, ToolRequest

__all__ = ["CellResult", "Sandbox", "SandboxConfig", "SandboxError", "SandboxEvent", "SandboxLimits", "ToolRequest"]
