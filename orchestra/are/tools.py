"""ARE's app tools as agent tools: `<App>__<method>` names and the `ToolSpec` scaffolds read."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - import for type checkers only
    pass
from orchestra.types import ToolArg, ToolSpec

#: Tools ARE's own agent hides: user messages reach the agent as notifications instead.
HIDDEN_AUI_TOOLS = frozenset(
    {
        "AgentUserInterface__get_last_message_from_user",
        "AgentUserInterface__get_last_message_from_agent",
        "AgentUserInterface__get_last_unread_messages",
        "AgentUserInterface__get_all_messages",
    }
)

# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


def agent_tools(scenario: Any) -> dict[str, tuple[ToolSpec, Any]]:
    """The tools ARE's own agent would get, keyed by agent-visible name, with their `AppTool`."""
    out: dict[str, tuple[ToolSpec, Any]] = {}
    for tool in scenario.get_tools():
        if tool.name in HIDDEN_AUI_TOOLS:
            continue
        spec = spec_from_app_tool(tool)
        out[spec.name] = (spec, tool)
    return out


def _variadic_params(tool: Any) -> set[str]:
    """Names of `*args`/`**kwargs` parameters of the tool's method.

    ARE's `build_tool` lists them as ordinary arguments with no default, so a `**kwargs` looks
    like a *required* argument named "kwargs" (the Files / SandboxLocalFileSystem /
    VirtualFileSystem tools). Passing `kwargs={...}` would hand a stray keyword named "kwargs" to
    the underlying file system; the model should never be asked for it.
    """
    func = getattr(tool, "function", None)
    if func is None:
        return set()
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return set()
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return {name for name, p in params.items() if p.kind in variadic}


def spec_from_app_tool(tool: Any) -> ToolSpec:
    """A `ToolSpec` for one ARE `AppTool`; `*args`/`**kwargs` parameters are left out (see `_variadic_params`)."""
    variadic = _variadic_params(tool)
    args = tuple(
        ToolArg(
            name=a.name,
            type_hint=a.type_obj,
            type_text=str(a.arg_type),
            description=a.description or "",
            required=not a.has_default,
            default=a.default if a.has_default else None,
        )
        for a in tool.args
        if a.name not in variadic
    )
    return ToolSpec(
        name=tool._public_name or tool.name,
        app_name=tool.app_name,
        app_class=tool.class_name,
        method=tool.name.split("__", 1)[1] if "__" in tool.name else tool.name,
        description=tool._public_description or tool.function_description or "",
        args=args,
        return_type=str(tool.return_type),
        writes=bool(tool.write_operation),
    )
