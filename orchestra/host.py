"""The plugin host: a pluggy `PluginManager` plus the registries plugins fill.

Load order (as tox 4 does it): the built-in plugins, in the fixed order of `BUILTIN_PLUGINS`
(modules of `orchestra.plugins`, which use only the public hooks, like any third party), then
third-party plugins from the `orchestra` entry-point group sorted by name, then plugins passed in
code; then `check_pending()`, so a misspelled hook implementation fails loudly instead of being
ignored. The built-in set does not depend on what is installed (tests pin it).

`ORCHESTRA_PLUGINS` (comma-separated entry-point names) is an allow-list for third-party plugins;
`ORCHESTRA_PLUGINS=""` loads built-ins only (reproducible test runs, whatever is installed).
Each `Host` has its own manager and registries: nothing global, many hosts per process are fine.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Any

import pluggy

from orchestra import hookspecs
from orchestra.errors import OrchestraError

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.are.judge_pool import JudgePool
    from orchestra.judging.settings import JudgeConfig

ENTRY_POINT_GROUP = "orchestra"
BUILTIN_DIST = "orchestra-agents"
#: The built-in plugins, registered first and in this order (name, module).
BUILTIN_PLUGINS: tuple[tuple[str, str], ...] = (
    ("agent2agent", "orchestra.plugins.agent2agent"),
    ("builtin_scaffolds", "orchestra.plugins.builtin_scaffolds"),
    ("clock", "orchestra.plugins.clock"),
    ("code_agent", "orchestra.plugins.code_agent"),
    ("drivers", "orchestra.plugins.drivers"),
    ("executors", "orchestra.plugins.executors"),
    ("judges", "orchestra.plugins.judges"),
    ("litellm_models", "orchestra.plugins.litellm_models"),
    ("notifications", "orchestra.plugins.notifications"),
    ("offline_models", "orchestra.plugins.offline_models"),
    ("openai_models", "orchestra.plugins.openai_models"),
    ("sandbox_bwrap", "orchestra.plugins.sandbox_bwrap"),
    ("sandbox_wasm", "orchestra.plugins.sandbox_wasm"),
    ("session_tools", "orchestra.plugins.session_tools"),
    ("subagents", "orchestra.plugins.subagents"),
    ("termination", "orchestra.plugins.termination"),
    ("training", "orchestra.plugins.training"),
    # last: its wrappers are the outermost (a tool span includes the clock's charge)
    ("tracing", "orchestra.plugins.tracing"),
)


class PluginError(OrchestraError):
    """A plugin could not be loaded, or registered something invalid."""


@dataclass
class PluginInfo:
    name: str
    source: str  # "builtin", "<distribution> <version>", or "inline"
    hooks: list[str] = field(default_factory=list)
    registered: dict[str, list[str]] = field(default_factory=dict)


class Host:
    """Owns the plugin manager and what plugins registered: scaffolds, model providers, tools, judges, sandboxes, executors."""

    def __init__(self, pm: pluggy.PluginManager, sources: dict[str, str]) -> None:
        self.pm = pm
        self.hook = pm.hook
        self._sources = sources
        self.scaffolds: dict[str, Callable[..., Any]] = {}
        self.models: dict[str, Any] = {}
        self.tools: dict[str, tuple[Any, Callable[..., Any]]] = {}
        self.judges: dict[str, Callable[[JudgeConfig], Any]] = {}
        self.sandboxes: dict[str, Callable[..., Any]] = {}
        self.executors: dict[str, Callable[..., Any]] = {}
        self._registered: dict[str, dict[str, list[str]]] = {}
        self._collect()

    @classmethod
    def create(cls, plugins: Iterable[object] = (), *, entry_points: bool = True, trace: bool = False, allow: Iterable[str] | None = None) -> Host:
        """A host with the built-ins, the entry-point plugins (those named in `allow` when given,
        else in `ORCHESTRA_PLUGINS` when set, else all) and `plugins`, in that order."""
        pm = pluggy.PluginManager(hookspecs.PROJECT)
        pm.add_hookspecs(hookspecs)
        sources: dict[str, str] = {}
        if allow is None and (env := os.environ.get("ORCHESTRA_PLUGINS")) is not None:
            allow = env.split(",")
        allowed = None if allow is None else {n.strip() for n in allow if n.strip()}
        for name, module in BUILTIN_PLUGINS:
            pm.register(importlib.import_module(module), name=name)
            sources[name] = "builtin"
        installed = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
        third_party = [ep for ep in installed if (ep.dist.name if ep.dist is not None else "?") != BUILTIN_DIST]
        if entry_points and allowed and (unknown := sorted(allowed - {ep.name for ep in third_party})):
            # an allow-list entry that matches nothing is a typo, not a wish to load less: say so
            names = ", ".join(ep.name for ep in third_party) or "none"
            raise PluginError(f"ORCHESTRA_PLUGINS (or allow=) names {', '.join(map(repr, unknown))}, which no installed plugin is; installed: {names}")
        for ep in third_party:
            dist = ep.dist.name if ep.dist is not None else "?"
            if not entry_points or (allowed is not None and ep.name not in allowed):
                continue
            if pm.has_plugin(ep.name):
                raise PluginError(f"plugin {ep.name!r} ({ep.value}, from {dist}) has the name of a plugin already registered")
            try:
                plugin = ep.load()
            except Exception as exc:
                raise PluginError(f"plugin {ep.name!r} ({ep.value}, from {dist}) failed to load: {type(exc).__name__}: {exc}") from exc
            try:
                pm.register(plugin, name=ep.name)
            except pluggy.PluginValidationError as exc:
                raise PluginError(f"plugin {ep.name!r} ({ep.value}, from {dist}) is not a valid orchestra plugin: {_one_line(exc)}") from exc
            sources[ep.name] = f"{dist} {ep.dist.version if ep.dist else ''}".strip()
        for plugin in plugins:
            if pm.is_registered(plugin):  # installed as an entry point too: loaded once, under that name
                continue
            # a module by its name, an instance by its class (never pluggy's default, the object's
            # id(), which differs in every process and says nothing in `orchestra plugins` or errors)
            base = getattr(plugin, "__name__", None) or type(plugin).__qualname__
            name, n = base, 1
            while pm.has_plugin(name):
                n += 1
                name = f"{base}#{n}"
            try:
                registered = pm.register(plugin, name=name)
            except pluggy.PluginValidationError as exc:
                raise PluginError(f"plugin {name!r} is not a valid orchestra plugin: {_one_line(exc)}") from exc
            if registered is not None:
                sources[registered] = "inline"
        try:
            pm.check_pending()
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"a plugin implements an unknown hook: {_one_line(exc)}") from exc
        for plugin in pm.get_plugins():
            _attribute_errors(pm, plugin)
        if trace or os.environ.get("ORCHESTRA_TRACE_HOOKS") == "1":
            pm.trace.root.setwriter(lambda msg: print(msg, end=""))
            pm.enable_tracing()
        return cls(pm, sources)

    def _collect(self) -> None:
        """Run the registration hooks plugin by plugin, so each registration is attributed.

        Model providers are only collected here: litellm learns of them at the first model call
        (`orchestra.models.complete(..., providers=host.models)`), so building a host (as
        `orchestra plugins` does) imports no litellm.
        """
        for plugin in self._ordered_plugins():
            name = self.pm.get_name(plugin) or repr(plugin)
            record = self._registered.setdefault(name, {})
            others = [p for p in self.pm.get_plugins() if p is not plugin]

            def reg(kind: str, table: dict[str, Any], key: str, value: Any, _record: dict[str, list[str]] = record, _name: str = name) -> None:
                if key in table:
                    raise PluginError(f"plugin {_name!r} registers {kind} {key!r}, which another plugin already registered")
                table[key] = value
                _record.setdefault(kind, []).append(key)

            self.pm.subset_hook_caller("register_scaffolds", others)(register=lambda n, f: reg("scaffold", self.scaffolds, n, f))
            self.pm.subset_hook_caller("register_models", others)(register=lambda p, h: reg("model provider", self.models, p, h))

            def tool(spec: Any, fn: Any, _name: str = name) -> None:
                from orchestra.types import ToolSpec

                if not isinstance(spec, ToolSpec) or not callable(fn):
                    got = f"{type(spec).__name__}, {type(fn).__name__}"
                    raise PluginError(
                        f"plugin {_name!r}, hook 'register_tools': register(spec, fn) takes an orchestra.types.ToolSpec and a callable; got ({got})"
                    )
                reg("tool", self.tools, spec.name, (spec, fn))

            self.pm.subset_hook_caller("register_tools", others)(register=tool)
            self.pm.subset_hook_caller("register_judges", others)(register=lambda mode, build: reg("judge", self.judges, mode, build))
            self.pm.subset_hook_caller("register_sandboxes", others)(register=lambda n, f: reg("sandbox", self.sandboxes, n, f))
            self.pm.subset_hook_caller("register_executors", others)(register=lambda n, f: reg("executor", self.executors, n, f))

    @property
    def plugin_names(self) -> list[str]:
        """Plugin names in registration order: the built-ins (fixed order), entry points, inline."""
        return list(self._sources)

    def third_party(self) -> dict[str, str]:
        """The plugins beside the built-ins, by name: their distribution and version, or "inline"
        (what a run folder's manifest records, so a resume with other plugins is refused)."""
        return {name: source for name, source in self._sources.items() if source != "builtin"}

    def _ordered_plugins(self) -> list[object]:
        return [p for p in (self.pm.get_plugin(n) for n in self._sources) if p is not None]

    def scaffold(self, name: str) -> Callable[..., Any]:
        try:
            return self.scaffolds[name]
        except KeyError:
            raise PluginError(f"unknown scaffold {name!r}; registered: {', '.join(sorted(self.scaffolds)) or 'none'}") from None

    def judge_builder(self, mode: str) -> Callable[[JudgeConfig], Any]:
        """The registered judge `mode` builds its judges with (`PluginError` naming the registered ones otherwise)."""
        try:
            return self.judges[mode]
        except KeyError:
            raise PluginError(f"unknown judge {mode!r}; registered: {', '.join(sorted(self.judges)) or 'none'}") from None

    def judge_pool(self, config: JudgeConfig) -> JudgePool:
        """The process-wide pool of judges for `config`, built by the plugin that registered its mode."""
        from orchestra.are.judges import judge_pool_for

        return judge_pool_for(config, self.judge_builder(config.mode))

    def sandbox(self, name: str) -> Callable[..., Any]:
        try:
            return self.sandboxes[name]
        except KeyError:
            raise PluginError(f"unknown sandbox {name!r}; registered: {', '.join(sorted(self.sandboxes)) or 'none'}") from None

    def executor(self, name: str, *, workers: int | None = None, address: str | None = None) -> Any:
        """The registered executor `name`, built with `workers` and `address` (an `orchestra.runs.executors.Executor`)."""
        try:
            factory = self.executors[name]
        except KeyError:
            raise PluginError(f"unknown executor {name!r}; registered: {', '.join(sorted(self.executors)) or 'none'}") from None
        return factory(workers=workers, address=address)

    def plugins(self) -> list[PluginInfo]:
        out = []
        for plugin in self.pm.get_plugins():
            name = self.pm.get_name(plugin) or repr(plugin)
            hooks = sorted(caller.name for caller in (self.pm.get_hookcallers(plugin) or []))
            out.append(PluginInfo(name=name, source=self._sources.get(name, "inline"), hooks=hooks, registered=self._registered.get(name, {})))
        return sorted(out, key=lambda p: (p.source != "builtin", p.name))


def _one_line(exc: BaseException) -> str:
    """pluggy's validation messages span lines; an error of orchestra's is one (its lines joined by "; ")."""
    return "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())


# ------------------------------------------------------------------------------ attributing errors

#: The note an exception gets from the innermost hook implementation it passed through.
ATTRIBUTION_PREFIX = "raised in plugin "


def _note(exc: BaseException, plugin: str, hook: str) -> None:
    """Name the plugin and hook an exception came from (the first, innermost one wins)."""
    if not any(n.startswith(ATTRIBUTION_PREFIX) for n in getattr(exc, "__notes__", [])):
        exc.add_note(f"{ATTRIBUTION_PREFIX}{plugin!r}, hook {hook!r}")


def _attribute_errors(pm: pluggy.PluginManager, plugin: object) -> None:
    """Wrap each of `plugin`'s hook implementations so an exception it raises — also later, from the
    awaitable it returned — carries the plugin's and the hook's names (`orchestra.rollout.describe`
    puts them in the record's error). Registration hooks run before this and raise `PluginError`s of
    their own. Wrappers (`wrapper=True`) are attributed for what they raise themselves only: what
    an inner implementation raised has its note already."""
    name = pm.get_name(plugin) or type(plugin).__qualname__
    for caller in pm.get_hookcallers(plugin) or []:
        for impl in caller.get_hookimpls():
            if impl.plugin is plugin:  # HookImpls are this manager's own: each is wrapped once
                setattr(impl, "function", _attributed(impl.function, name, caller.name))  # noqa: B010  (pluggy types it Final; it is a plain slot)


class _AttributedAwaitable:
    """An implementation's awaitable whose exceptions name the plugin (`close()` reaches the inner one,
    so a wrapper that discards it unawaited closes it, as it would the bare coroutine)."""

    __slots__ = ("_inner", "_plugin", "_hook")

    def __init__(self, inner: Any, plugin: str, hook: str) -> None:
        self._inner, self._plugin, self._hook = inner, plugin, hook

    def __await__(self) -> Generator[Any, Any, Any]:
        try:
            return (yield from self._inner.__await__())
        except Exception as exc:
            _note(exc, self._plugin, self._hook)
            raise

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()


#: The hooks whose implementations return an awaitable (or None: "not mine"). A built-in always
#: answers the first four, so a wrapper of one of them that returns None has dropped the answer.
AWAITABLE_HOOKS = frozenset({"rollout", "agent_run", "model_call", "tool_call"})  # `delegate`: checked where it is awaited, per call
ALWAYS_ANSWERED = frozenset({"rollout", "agent_run", "model_call", "tool_call"})


def _not_awaitable(result: Any, plugin: str, hook: str, *, wrapper: bool) -> TypeError | None:
    """The error for an implementation of an awaitable hook that returned something else, named for
    its plugin (awaiting it later would blame whichever plugin awaits it)."""
    if hook not in AWAITABLE_HOOKS or inspect.isawaitable(result):
        return None
    if result is None and not (wrapper and hook in ALWAYS_ANSWERED):
        return None
    what = "wrapper" if wrapper else "implementation"
    fix = "return the awaitable `yield` gave it (or an awaitable of its own)" if wrapper else "return an awaitable (e.g. a coroutine) or None"
    return TypeError(f"plugin {plugin!r}'s {hook} {what} returned {type(result).__name__}, not an awaitable: it must {fix}")


def _attributed(fn: Callable[..., Any], plugin: str, hook: str) -> Callable[..., Any]:
    def settle(result: Any, *, wrapper: bool = False) -> Any:
        if (wrong := _not_awaitable(result, plugin, hook, wrapper=wrapper)) is not None:
            raise wrong
        return _AttributedAwaitable(result, plugin, hook) if inspect.isawaitable(result) else result

    if inspect.isgeneratorfunction(fn):  # a wrapper: `result = yield`, then return or raise

        @functools.wraps(fn)
        def attributed_wrapper(*args: Any) -> Any:
            try:
                return settle((yield from fn(*args)), wrapper=True)
            except Exception as exc:
                _note(exc, plugin, hook)
                raise

        return attributed_wrapper

    @functools.wraps(fn)
    def attributed(*args: Any) -> Any:
        try:
            return settle(fn(*args))
        except Exception as exc:
            _note(exc, plugin, hook)
            raise

    return attributed
