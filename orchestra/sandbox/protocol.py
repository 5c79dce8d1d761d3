"""The host's half of the guest channel: tool stubs to install, outputs to send, calls to check.

* `guest_tools` describes each tool the agent holds — name, docstring, parameters with their
  types and defaults — so the guest builds a Python function with the real signature;
* `encode` turns a tool's output (ARE returns strings, ids, lists, dicts, dataclasses, enums)
  into JSON the guest decodes back into Python values; a dataclass becomes a record with
  attribute and item access whose `repr` is the host's own, so `print(result)` shows exactly what
  a JSON agent's observation shows;
* `CallGate` is the gate: only the calling agent's own tools, with arguments its JSON schema
  accepts, ever reach the `tool_call` hook (and so ARE).
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

import jsonschema

from orchestra.tool_schemas import parameters_schema
from orchestra.types import ToolSpec


def guest_tools(tools: dict[str, ToolSpec]) -> list[dict[str, Any]]:
    out = []
    for name, spec in tools.items():
        args = []
        for arg in spec.args:
            default = arg.default if _jsonable(arg.default) else None
            args.append({"name": arg.name, "type": arg.type_text, "required": arg.required, "default": default})
        out.append({"name": name, "doc": tool_docstring(spec), "args": args, "returns": spec.return_type})
    return out


def tool_docstring(spec: ToolSpec) -> str:
    """The stub's docstring: the tool's description, then its arguments as ARE describes them."""
    lines = [spec.description.strip()]
    if spec.args:
        lines += ["", "Args:"]
        lines += [f"    {a.name} ({a.type_text}{'' if a.required else ', optional'}): {a.description}" for a in spec.args]
    lines += ["", f"Returns: {spec.return_type}"]
    return "\n".join(lines)


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def encode(value: Any, _depth: int = 0) -> Any:
    """A tool output as JSON for the guest (see `orchestra.sandbox.guest.decode`)."""
    if _depth > 64:
        return {"$text": str(value)}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else {"$text": str(value)}
    if isinstance(value, enum.Enum):
        return encode(value.value, _depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: encode(getattr(value, f.name, None), _depth + 1) for f in dataclasses.fields(value)}
        return {"$record": type(value).__name__, "$text": _text(value), "fields": fields}
    if isinstance(value, tuple):
        return {"$tuple": [encode(v, _depth + 1) for v in value]}
    if isinstance(value, (list, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return [encode(v, _depth + 1) for v in items]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and not any(k.startswith("$") for k in value):
            return {k: encode(v, _depth + 1) for k, v in value.items()}
        return {"$dict": [[encode(k, _depth + 1), encode(v, _depth + 1)] for k, v in value.items()]}
    return {"$text": _text(value)}


def _text(value: Any) -> str:
    try:
        return repr(value)
    except Exception:  # a broken __repr__ in an app object
        return f"<{type(value).__name__}>"


def dumps(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


class CallGate:
    """The tools one agent may call, with a compiled argument validator per tool."""

    def __init__(self, tools: dict[str, ToolSpec]) -> None:
        self.tools = tools
        self._validators: dict[str, Any] = {}

    def check(self, name: str, arguments: dict[str, Any]) -> str | None:
        """Why the call may not run (None: it may): an unknown tool, or arguments its schema rejects."""
        spec = self.tools.get(name)
        if spec is None:
            return f"{name!r} is not one of your tools; yours: {', '.join(sorted(self.tools))}"
        validator = self._validators.get(name)
        if validator is None:
            schema = parameters_schema(spec)
            validator = self._validators[name] = jsonschema.validators.validator_for(schema)(schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path)
        return f"invalid arguments for {name}{f' ({where})' if where else ''}: {error.message}"
