"""ARE's app tools as agent tools: `<App>__<method>` names and the `ToolSpec` scaffolds read."""

from __future__ import annotations

import functools
import inspect
import threading
import types
from typing import Any, NamedTuple

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
    """The tools ARE's own agent would get, keyed by agent-visible name, with their `AppTool` —
    or, for an app whose tools ARE has not built yet, a `DeferredTool` that builds them when one is
    first called (`resolve`): the specs come from the app's class (`deferred_specs`), the same
    specs in the same order, and most rollouts call a few of an app's tools, never all of them."""
    from are.simulation.apps import INTERNAL_APPS

    internal = {app.name for app in INTERNAL_APPS}
    out: dict[str, tuple[ToolSpec, Any]] = {}
    for app in scenario.apps or []:
        if app.name in internal:
            continue
        specs = deferred_specs(app)
        if specs is not None:
            for index, spec in specs:
                out[spec.name] = (spec, DeferredTool(app, index, spec.name))
            continue
        bind_agent_tools(app)
        for tool in app.get_tools():
            if tool.name in HIDDEN_AUI_TOOLS:
                continue
            spec = spec_from_app_tool(tool)
            out[spec.name] = (spec, tool)
    return out


class DeferredTool(NamedTuple):
    """An `AppTool` not built yet: app `app`'s tool at `position` in what `build_agent_tools` builds."""

    app: Any
    position: int
    name: str


def resolve(tool: Any) -> Any:
    """The `AppTool` behind `tool` (a `DeferredTool`: its app's tools bound now, once)."""
    if type(tool) is not DeferredTool:
        return tool
    bind_agent_tools(tool.app)
    built = tool.app.get_tools()[tool.position]
    if built.name != tool.name:  # pragma: no cover - the class's tools changed under the specs
        raise RuntimeError(f"{tool.app.name}: tool {tool.position} is {built.name}, its spec says {tool.name}")
    return built


def deferred_specs(app: Any) -> tuple[tuple[int, ToolSpec], ...] | None:
    """(index in the app's tool list, spec) of each agent tool of `app` — what `spec_from_app_tool`
    gives for `build_agent_tools(app)`'s tools, hidden ones left out — made from its class's
    templates without building them; None when the app's tools are not all its class's (ARE built
    its registry already, with the augmentation's public names; methods set on the instance; an
    app class whose tool building is not mirrored)."""
    from are.simulation.apps.app import ToolType
    from are.simulation.tool_utils import ToolAttributeName

    registries = getattr(app, "_tool_registries", None)
    if not isinstance(registries, dict) or registries.get(ToolType.APP) is not None:
        return None
    fixup = _are_built_tools_fixup(app)
    if fixup is False:
        return None
    marker = ToolAttributeName.APP.value
    templates = _class_templates(app)
    processed = {t.attr_name for t in templates}
    if any(name not in processed and hasattr(value, marker) for name, value in app.__dict__.items()):
        return None
    # (`MessagingAppV2`'s suffix goes on `function_description` after ARE set the public description
    # from it: the agent is shown the description without it, in ARE as here)
    key = (type(app), app.name)
    found = _deferred.get(key)
    if found is None:
        specs = []
        for index, t in enumerate(templates):
            name = f"{app.name}__{t.func_name}"
            if name in HIDDEN_AUI_TOOLS:
                continue
            specs.append((index, _spec_of_template(t, app.name, name, t.function_description)))
        found = _remember(_deferred, key, tuple(specs))
    return found


#: `deferred_specs` per (app class, app name): immutable, shared by rollouts.
_deferred: dict[tuple[Any, ...], tuple[tuple[int, ToolSpec], ...]] = {}


def _description_suffix(app: Any) -> str:
    """What `_are_built_tools_fixup`'s function appends to each description (`MessagingAppV2`'s mode)."""
    from are.simulation.apps.messaging_v2 import MessagingAppMode

    if app.mode == MessagingAppMode.PHONE_NUMBER:
        return "\n\n All the User Ids for this tool (user_id, recipient_id, sender_id, ...) are Phone numbers"
    if app.mode == MessagingAppMode.NAME:
        return "\n\n All the User Ids for this tool (user_id, recipient_id, sender_id, ...) are User Ids that are internal, and thus names and Ids need to be matched"
    return ""


# --------------------------------------------------------------------------------------------
# ARE's tool registry, built once per app class
# --------------------------------------------------------------------------------------------


class _ToolTemplate(NamedTuple):
    """What ARE's `build_tool` derives from an app's class and one method (docstring, signature,
    type hints): everything of an `AppTool` but the app instance, its name and failure probability."""

    attr_name: str
    function: Any
    func_name: str
    class_name: str
    function_description: str | None
    args: tuple[Any, ...]
    return_type: Any
    return_description: str | None
    write_operation: bool | None


#: Per app class: the templates of its class-level agent tools, in ARE's order. Immutable values,
#: written once per class under the lock; safe for many rollouts and threads (a worker process builds its own).
_TEMPLATES: dict[type, tuple[_ToolTemplate, ...]] = {}
_TEMPLATES_LOCK = threading.Lock()


def _class_templates(app: Any) -> tuple[_ToolTemplate, ...]:
    """The class-level half of ARE's `App.get_tools_with_attribute` (are/simulation/apps/app.py:120-190),
    step for step (MRO order, overrides skipped, a missing docstring taken from the base class),
    each tool built by ARE's own `build_tool` — once per class."""
    cls = type(app)
    templates = _TEMPLATES.get(cls)
    if templates is not None:
        return templates
    from are.simulation.apps.app import get_base_method_doc
    from are.simulation.tool_utils import ToolAttributeName, build_tool

    marker = ToolAttributeName.APP.value
    with _TEMPLATES_LOCK:
        templates = _TEMPLATES.get(cls)
        if templates is not None:
            return templates
        built: list[_ToolTemplate] = []
        processed: set[str] = set()
        for base_cls in inspect.getmro(cls):
            for attr_name, attr_value in base_cls.__dict__.items():
                if attr_name in processed or not hasattr(attr_value, marker):
                    continue
                if not attr_value.__doc__:
                    attr_value.__doc__ = get_base_method_doc(base_cls, attr_value)  # what ARE does
                tool = build_tool(app, attr_value, None)
                built.append(
                    _ToolTemplate(
                        attr_name=attr_name,
                        function=attr_value,
                        func_name=attr_value.__name__,
                        class_name=tool.class_name,
                        function_description=tool.function_description,
                        args=tuple(tool.args),
                        return_type=tool.return_type,
                        return_description=tool.return_description,
                        write_operation=tool.write_operation,
                    )
                )
                processed.add(attr_name)
        templates = _TEMPLATES[cls] = tuple(built)
    return templates


def _are_built_tools_fixup(app: Any) -> Any:
    """How ARE's `get_tools_with_attribute` of `app`'s class differs from `App`'s: `None` when it
    is `App`'s, a function that applies the difference to the built tools for an override orchestra
    mirrors (`MessagingAppV2`'s description suffix), or False for any other override (and for an
    app whose `get_tools` is not `App`'s): such an app's tools are left to ARE."""
    from are.simulation.apps.app import App
    from are.simulation.apps.messaging_v2 import MessagingAppV2

    cls = type(app)
    if cls.get_tools is not App.get_tools or cls._get_or_initialize_tools is not App._get_or_initialize_tools:
        return False
    override = cls.get_tools_with_attribute
    if override is App.get_tools_with_attribute:
        return None
    if override is MessagingAppV2.get_tools_with_attribute:  # are/simulation/apps/messaging_v2.py:1102-1128

        def messaging_suffix(tools: list[Any]) -> None:
            suffix = _description_suffix(app)
            if not suffix:
                return
            for tool in tools:
                if tool.function_description is not None:
                    tool.function_description = tool.function_description + suffix

        return messaging_suffix
    return False


def build_agent_tools(app: Any) -> list[Any] | None:
    """The `AppTool`s ARE's `app.get_tools()` would build for `app`, from its class's templates:
    the same names, descriptions, arguments, return types, write flags and failure probability, each
    a fresh `AppTool` bound to `app` (ARE's `__call__`, so its event logging, is unchanged).
    Methods set on the instance itself (ARE's second loop) are built by ARE's `build_tool` as before.
    `None` for an app class whose tool building orchestra does not mirror (ARE builds those)."""
    from are.simulation.tool_utils import AppTool, AppToolArg, ToolAttributeName, build_tool

    fixup = _are_built_tools_fixup(app)
    if fixup is False:
        return None
    marker = ToolAttributeName.APP.value
    failure_probability = app.failure_probability
    templates = _class_templates(app)
    tools = [
        AppTool(
            class_name=t.class_name,
            app_name=app.name,
            name=f"{app.name}__{t.func_name}",
            function_description=t.function_description,
            args=[_copy_arg(a) if type(a) is AppToolArg else a for a in t.args],
            class_instance=app,
            function=t.function,
            return_type=t.return_type,
            return_description=t.return_description,
            write_operation=t.write_operation,
            failure_probability=failure_probability,
        )
        for t in templates
    ]
    processed = {t.attr_name for t in templates}
    for attr_name, attr_value in app.__dict__.items():
        if attr_name not in processed and hasattr(attr_value, marker):
            tools.append(build_tool(app, attr_value, failure_probability))
            processed.add(attr_name)
    if fixup is not None:
        fixup(tools)
    return tools


def _copy_arg(arg: Any) -> Any:
    """A shallow copy of an `AppToolArg` (each app's tools own their argument objects, as in ARE)."""
    copy = object.__new__(type(arg))
    copy.__dict__.update(arg.__dict__)
    return copy


def bind_agent_tools(app: Any) -> None:
    """Fill `app`'s agent-tool registry (what `app.get_tools()` returns) from `build_agent_tools`,
    unless ARE already built it. ARE's own `set_failure_probability` / `reset` still empty it."""
    from are.simulation.apps.app import ToolType

    registries = getattr(app, "_tool_registries", None)
    if isinstance(registries, dict) and registries.get(ToolType.APP) is None:
        tools = build_agent_tools(app)
        if tools is not None:
            registries[ToolType.APP] = tools


def scenario_tools(scenario: Any) -> list[Any]:
    """ARE's `scenario.get_tools()` (every agent tool of every app but the internal ones), with
    each app's registry filled by `bind_agent_tools` first."""
    from are.simulation.apps import INTERNAL_APPS

    internal = {app.name for app in INTERNAL_APPS}
    for app in scenario.apps or []:
        if app.name not in internal:
            bind_agent_tools(app)
    return list(scenario.get_tools())


def _variadic_params(tool: Any) -> frozenset[str]:
    """Names of `*args`/`**kwargs` parameters of the tool's method.

    ARE's `build_tool` lists them as ordinary arguments with no default, so a `**kwargs` looks
    like a *required* argument named "kwargs" (the Files / SandboxLocalFileSystem /
    VirtualFileSystem tools). Passing `kwargs={...}` would hand a stray keyword named "kwargs" to
    the underlying file system; the model should never be asked for it.
    """
    func = getattr(tool, "function", None)
    if func is None:
        return frozenset()
    try:
        return _variadic_of(func)
    except TypeError:  # an unhashable callable: not cached
        return _variadic_uncached(func)


def _variadic_uncached(func: Any) -> frozenset[str]:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return frozenset()
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return frozenset(name for name, p in params.items() if p.kind in variadic)


#: A method's signature does not change: one `inspect.signature` per function, not per tool and rollout.
_variadic_of = functools.lru_cache(maxsize=4096)(_variadic_uncached)


def spec_from_app_tool(tool: Any) -> ToolSpec:
    """A `ToolSpec` for one ARE `AppTool`; `*args`/`**kwargs` parameters are left out (see `_variadic_params`).

    A tool built from its class's template (`build_agent_tools`: a plain function, the template's
    arguments) is the same spec in every rollout of every scenario that has that app under that
    name: it is built once per process (`_specs`, keyed by everything the spec is made of but the
    template's arguments, which the function fixes). Any other tool is built each time."""
    function = getattr(tool, "function", None)
    if type(function) is not types.FunctionType or not _template_args(tool):
        return _spec_of(tool)
    key = (function, tool.class_name, tool.app_name, tool.name, tool._public_name, tool._public_description, tool.function_description, tool.write_operation)
    spec = _specs.get(key)
    if spec is None:
        spec = _remember(_specs, key, _spec_of(tool))
    return spec


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> Any:
    """`cache[key] = value` for the per-process spec caches: bounded (emptied when full), under the lock."""
    with _TEMPLATES_LOCK:
        if len(cache) >= _SPECS_MAX:
            cache.clear()
        cache[key] = value
    return value


#: Specs of template-built tools, by what they are made of (see `spec_from_app_tool`). Bounded;
#: its values are immutable (`ToolSpec` is frozen), so rollouts and threads share them.
_specs: dict[tuple[Any, ...], ToolSpec] = {}
_SPECS_MAX = 16384


def _template_args(tool: Any) -> bool:
    """Whether `tool`'s arguments are its class template's (copies of them, unchanged)."""
    templates = _TEMPLATES.get(type(getattr(tool, "class_instance", None)))
    if templates is None:
        return False
    for t in templates:
        if t.function is tool.function:
            return len(t.args) == len(tool.args) and all(a is b or a.__dict__ == b.__dict__ for a, b in zip(t.args, tool.args))
    return False


def _spec_of_template(t: _ToolTemplate, app_name: str, name: str, description: str | None) -> ToolSpec:
    """`_spec_of` of the tool `build_agent_tools` makes from template `t` for app `app_name`."""
    return _spec(name, app_name, t.class_name, description or "", t.args, _variadic_params(t), t.return_type, t.write_operation)


def _spec_of(tool: Any) -> ToolSpec:
    name = tool._public_name or tool.name
    description = tool._public_description or tool.function_description or ""
    return _spec(
        name, tool.app_name, tool.class_name, description, tool.args, _variadic_params(tool), tool.return_type, tool.write_operation, private=tool.name
    )


def _spec(
    name: str,
    app_name: str,
    app_class: str,
    description: str,
    args: Any,
    variadic: frozenset[str],
    return_type: Any,
    writes: bool | None,
    *,
    private: str | None = None,
) -> ToolSpec:
    """The `ToolSpec` of an ARE tool's parts (its method from its private name, `<app>__<method>`)."""
    private = private or name
    return ToolSpec(
        name=name,
        app_name=app_name,
        app_class=app_class,
        method=private.split("__", 1)[1] if "__" in private else private,
        description=description,
        args=tuple(
            ToolArg(
                name=a.name,
                type_hint=a.type_obj,
                type_text=str(a.arg_type),
                description=a.description or "",
                required=not a.has_default,
                default=a.default if a.has_default else None,
            )
            for a in args
            if a.name not in variadic
        ),
        return_type=str(return_type),
        writes=bool(writes),
    )
