"""ARE's judges in orchestra's three modes (`scripted`, `llm`, `strict`), pooled per setting.

* `scripted`: `ScriptedGraphPerEventJudgeConfig`, exactly today's judge (`orchestra.are.judge_pool.JudgePool`).
* `llm`: `JudgeFactory()(GraphPerEventJudgeConfig(engine=...))` — what `are-benchmark run` builds
  in `preprocess_scenario_from_config` — with orchestra's cached litellm `JudgeEngine` in place of
  ARE's `LiteLLMEngine` (same call contract and reply post-processing, plus usage and a cache).
* `strict`: ARE's scripted judge whose per-tool judges, for every tool that has `llm_checker`
  arguments in ARE's registry, are wrapped: ARE's scripted check first, then — where ARE would ask
  an LLM — ARE's own normalized-equality shortcut, then the fact check of
  `orchestra.judging.facts`. The wrapped judges sit inside ARE's matching loop, so count checks,
  causality, timing and the choice of which agent call matches which oracle call stay ARE's.

Each pool builds its first judge (3-6 s: ARE compiles its checkers' prompt templates) and clones it
for concurrent rollouts (`clone_judge`, ~1 ms), as the scripted judge's pool does: the clones share
the per-tool judges and give each rollout its own state — the strict judge's `StrictState`, the LLM
judge's engine (its usage is the rollout's).

Every module-level name here is ARE-free at import; ARE is imported when a judge is built.
"""

from __future__ import annotations

import contextvars
import copy
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from orchestra.are.imports import import_are
from orchestra.are.judge_pool import _JUDGE_ATTRIBUTES, JudgePool, _no_llm_engine, build_scripted_judge, default_judge_pool
from orchestra.judging.settings import JudgeConfig, JudgeUsage

if TYPE_CHECKING:  # the fact checker and the judge engine load when a judge first needs them, not at import
    from orchestra.judging.engine import JudgeEngine
    from orchestra.judging.facts import Gazetteer

SEND_TO_USER = "AgentUserInterface__send_message_to_user"


def hard_checker_types() -> set[str]:
    """ARE's hard (exact-match) checker type names (`CheckerType.hard_checkers`)."""
    import ast

    import_are()
    from are.simulation.validation.constants import CheckerType

    # ARE 1.2.0 stores this list inside a str-Enum member, i.e. as its repr.
    raw = CheckerType.hard_checkers.value
    return set(ast.literal_eval(raw) if isinstance(raw, str) else raw)


def _gazetteer_class() -> type[Gazetteer]:
    from orchestra.judging.facts import Gazetteer

    return Gazetteer


@dataclass
class StrictState:
    """Per-rollout state of a strict judge: the universe's names and the checks made so far."""

    gazetteer: Gazetteer = field(default_factory=lambda: _gazetteer_class()())
    checks: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)

    def record(self, oracle_event: Any, agent_event: Any, arg: str, record: dict[str, Any]) -> None:
        self.checks[(str(oracle_event.event_id), str(agent_event.event_id), arg)] = {
            "oracle_event_id": str(oracle_event.event_id),
            "tool": str(oracle_event.tool_name),
            "arg": arg,
            **record,
        }


@dataclass
class JudgeInfo:
    """What orchestra knows about a judge it built (ARE's judge objects are left as ARE made them)."""

    config: JudgeConfig
    engine: JudgeEngine | None = None
    strict: StrictState | None = None


_INFO: weakref.WeakKeyDictionary[Any, JudgeInfo] = weakref.WeakKeyDictionary()
_SCRIPTED = JudgeConfig()


def info(judge: Any) -> JudgeInfo:
    """The judge's setting (a judge orchestra did not build here is the scripted one)."""
    return _INFO.get(judge) or JudgeInfo(config=_SCRIPTED)


class StrictToolJudge:
    """ARE's per-tool judge for one tool, plus the fact check of its free-text arguments.

    Called by ARE's `AgentEventJudge` exactly like the `MildToolJudge` it wraps:
    `(agent_event, oracle_event, **kwargs) -> bool`.
    """

    def __init__(self, inner: Any, free_text_args: list[str], state: StrictState) -> None:
        self.inner = inner
        self.tool_name = inner.tool_name
        self.judge_type = "strict"
        self.free_text_args = free_text_args
        self.state = state

    def for_state(self, state: StrictState) -> StrictToolJudge:
        """The same check (ARE's judge inside is shared: it is only read) recording into `state`."""
        return StrictToolJudge(self.inner, self.free_text_args, state)

    def __call__(self, agent_event: Any, oracle_event: Any, **kwargs: Any) -> bool | None:
        verdict = self.inner(agent_event, oracle_event, **kwargs)
        if not verdict:
            return verdict
        oracle_args = oracle_event.get_args()
        agent_args = agent_event.get_args()
        # the arguments ARE's soft judge would check: llm_checker args the oracle filled in
        selected = [a for a in self.free_text_args if bool(oracle_args.get(a))]
        tasks = [str(t) for t in kwargs.get("tasks") or [] if str(t).strip()]
        # an answer to the user answers the user's latest message (ARE passes the tasks up to this
        # turn, "" for a turn that starts without one)
        request = tasks[-1] if self.tool_name == SEND_TO_USER and tasks else None
        ok = True
        for arg in selected:
            record = strict_text_verdict(oracle_args.get(arg), agent_args.get(arg), self.state.gazetteer, "\n".join(tasks), request)
            self.state.record(oracle_event, agent_event, arg, record)
            ok = ok and bool(record["ok"])
        return ok


def strict_text_verdict(oracle_value: Any, agent_value: Any, gazetteer: Gazetteer | None, context: str = "", request: str | None = None) -> dict[str, Any]:
    """The strict check of one free-text argument: ARE's normalized-equality shortcut, then facts
    (`request`: for an answer to the user, the user's message of this turn; see `check_text`)."""
    import_are()
    from are.simulation.validation.utils.misc import normalize_arg

    if normalize_arg(agent_value) == normalize_arg(oracle_value):  # what ARE's soft judge does first
        return {"ok": True, "required": [], "missing": [], "note": "equal to the oracle's text (ARE's normalized equality)"}
    from orchestra.judging.fact_check import check_text

    return check_text(_as_text(oracle_value), _as_text(agent_value), gazetteer, context, request).as_dict()


def free_text_registry() -> dict[str, list[str]]:
    """Judged tool name (`<AppClass>__<method>`) -> its free-text (`llm_checker`) arguments in ARE's registry."""
    import_are()
    from are.simulation.validation.constants import TOOL_ARG_CHECKER_TYPE_REGISTRY

    class _Config:
        per_tool_arg_to_checker_type = TOOL_ARG_CHECKER_TYPE_REGISTRY

    return _free_text_args(_Config())


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        import json

        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def _free_text_args(config: Any) -> dict[str, list[str]]:
    """Tool name -> its `llm_checker` arguments, from the judge config's own registry."""
    from are.simulation.validation.constants import CheckerType

    out: dict[str, list[str]] = {}
    for tool, args in config.per_tool_arg_to_checker_type.items():
        free = [arg for arg, checker in args.items() if checker == CheckerType.llm_checker]
        if free:
            out[tool] = free
    return out


def _scenario_gazetteer(scenario: Any, tasks: list[str]) -> Gazetteer:
    """Names in the scenario's universe: app states as the file has them, user/env event args, tasks."""
    states: list[Any] = []
    for app in scenario.serialized_apps or []:
        state = getattr(app, "app_state", None)
        if isinstance(state, str):
            import json

            try:
                state = json.loads(state)
            except ValueError:
                state = None
        if state:
            states.append(state)
    from are.simulation.types import EventType

    for event in scenario.events or []:
        if getattr(event, "event_type", None) in (EventType.ENV, EventType.USER):
            action = getattr(event, "action", None)
            args = getattr(action, "args", None) or {}
            states.append({k: v for k, v in args.items() if k != "self" and isinstance(v, str | dict | list)})
    from orchestra.judging.scenario_names import universe_names

    g = universe_names(states, tasks)
    if scenario.start_time is not None:
        import datetime as dt

        g.year = dt.datetime.fromtimestamp(float(scenario.start_time), tz=dt.UTC).year
    return g


def _strict_judge_class() -> type:
    import_are()
    from are.simulation.validation.judge import GraphPerEventJudge

    class StrictGraphPerEventJudge(GraphPerEventJudge):
        """ARE's scripted judge with the free-text arguments fact-checked (see module docstring)."""

        def __init__(self, config: Any, state: StrictState) -> None:
            super().__init__(config)
            from are.simulation.types import EventType

            self.strict_state = state
            agent_judge = self.event_judges[EventType.AGENT]
            for tool, free in _free_text_args(self.config).items():
                if tool in agent_judge.tool_judges:
                    agent_judge.tool_judges[tool] = StrictToolJudge(agent_judge.tool_judges[tool], free, state)

        def initialize_state(self, scenario: Any) -> None:
            super().initialize_state(scenario)
            self.strict_state.checks = {}
            self.strict_state.gazetteer = _scenario_gazetteer(scenario, list(self.state.scenario_tasks))

    return StrictGraphPerEventJudge


#: The LLM judge's engine for the rollout being judged in this thread (`_llm_judge_class`).
_active_engine: contextvars.ContextVar[Any] = contextvars.ContextVar("orchestra_judge_engine", default=None)


class _EngineOfTheJudgeCall:
    """The engine ARE's LLM judge and its checkers hold: it forwards each call to the engine of
    the judge now judging (a context variable its `__call__` sets), so that clones that share the
    checkers each count their own rollout's usage; outside a judge's call, to `default`'s."""

    def __init__(self, default: JudgeEngine) -> None:
        self.default = default

    def __call__(self, messages: list[dict[str, Any]], **kwargs: Any) -> tuple[str, None]:
        engine = _active_engine.get() or self.default
        return engine(messages, **kwargs)

    @property
    def model_name(self) -> str:
        return self.default.model_name


def _llm_judge_class() -> type:
    import_are()
    from are.simulation.validation.judge import GraphPerEventJudge

    class LLMGraphPerEventJudge(GraphPerEventJudge):
        """ARE's `GraphPerEventJudge` (LLM checkers), whose calls go to its own engine (see
        `_EngineOfTheJudgeCall`). ARE judges a turn only through `__call__` (`validate`,
        `trigger_condition`), synchronously: every engine call of a verdict happens inside it."""

        def __call__(self, env: Any) -> Any:
            token = _active_engine.set(info(self).engine)
            try:
                return super().__call__(env)
            finally:
                _active_engine.reset(token)

    return LLMGraphPerEventJudge


_judge_classes: dict[str, type] = {}
_judge_classes_lock = threading.Lock()


def _judge_class(mode: str) -> type:
    with _judge_classes_lock:
        if mode not in _judge_classes:
            _judge_classes[mode] = _strict_judge_class() if mode == "strict" else _llm_judge_class()
        return _judge_classes[mode]


def build_scripted(config: JudgeConfig) -> Any:
    """ARE's scripted judge: tool counts, hard argument checks, causality, timing; no free text."""
    judge = build_scripted_judge()
    _INFO[judge] = JudgeInfo(config=config)
    return judge


def build_strict(config: JudgeConfig) -> Any:
    """ARE's scripted judge with every free-text argument fact-checked (`orchestra.judging.facts`)."""
    import_are()
    from are.simulation.validation import ScriptedGraphPerEventJudgeConfig

    state = StrictState()
    judge = _judge_class("strict")(ScriptedGraphPerEventJudgeConfig(engine=_no_llm_engine), state)
    _INFO[judge] = JudgeInfo(config=config, strict=state)
    return judge


def _judge_engine(config: JudgeConfig) -> JudgeEngine:
    from orchestra.judging.engine import JudgeEngine

    assert config.model is not None  # JudgeConfig requires a model for mode llm
    return JudgeEngine(
        config.model,
        endpoint=config.endpoint,
        api_key=config.api_key,
        cache_dir=config.resolved_cache_dir(),
        max_tokens=config.max_tokens,
        are_bool_bug=config.are_bool_bug,
    )


def build_llm(config: JudgeConfig) -> Any:
    """ARE's `GraphPerEventJudge` with its LLM checkers, as `are-benchmark run` builds it
    (`JudgeFactory` maps `GraphPerEventJudgeConfig` to that class; here, to a subclass that only
    routes the engine calls), on orchestra's cached litellm engine (`orchestra.judging.engine.JudgeEngine`)."""
    import_are()
    from are.simulation.validation import GraphPerEventJudgeConfig

    engine = _judge_engine(config)
    judge = _judge_class("llm")(GraphPerEventJudgeConfig(engine=_EngineOfTheJudgeCall(engine)))
    _INFO[judge] = JudgeInfo(config=config, engine=engine)
    return judge


def clone_judge(judge: Any) -> Any | None:
    """A second strict or LLM judge for a concurrent rollout, sharing `judge`'s per-tool judges,
    or None when `judge` is not one this was checked against (the pool then builds one).

    As `judge_pool.clone_scripted_judge`: ARE's per-tool judges are never written after their
    constructor, and a rollout's writes go to `state` and `error_logs`, which the clone gets new.
    What orchestra adds per rollout is new too: the strict judge's `StrictState` (its wrapped
    per-tool judges are re-made around it: a dict of 89 entries, and the AGENT event judge that
    holds it, copied), the LLM judge's engine (same settings and cache; its own usage).
    """
    import_are()
    from are.simulation.types import EventType
    from are.simulation.validation.judge_states import GraphPerEventJudgeState

    details = _INFO.get(judge)
    if details is None:
        return None
    clone: Any
    kind, attributes = type(judge), set(vars(judge))
    if details.strict is not None and kind is _judge_classes.get("strict") and attributes == _JUDGE_ATTRIBUTES | {"strict_state"}:
        state = StrictState()
        agent_judge = copy.copy(judge.event_judges[EventType.AGENT])
        agent_judge.tool_judges = {name: t.for_state(state) if isinstance(t, StrictToolJudge) else t for name, t in agent_judge.tool_judges.items()}
        clone = copy.copy(judge)
        clone.strict_state = state
        clone.event_judges = {**judge.event_judges, EventType.AGENT: agent_judge}
        _INFO[clone] = JudgeInfo(config=details.config, strict=state)
    elif details.engine is not None and kind is _judge_classes.get("llm") and attributes == _JUDGE_ATTRIBUTES:
        clone = copy.copy(judge)
        _INFO[clone] = JudgeInfo(config=details.config, engine=_judge_engine(details.config))
    else:
        return None
    clone.state = GraphPerEventJudgeState()
    clone.error_logs = []
    return clone


#: The built-in judges by mode (registered by the built-in `judges` plugin like any other).
BUILTIN_JUDGES: dict[str, Callable[[JudgeConfig], Any]] = {"scripted": build_scripted, "strict": build_strict, "llm": build_llm}


def build_judge(config: JudgeConfig) -> Any:
    """A fresh built-in ARE judge for `config` (3-6 s: ARE compiles its checkers' prompt templates)."""
    if config.mode not in BUILTIN_JUDGES:
        raise ValueError(f"{config.mode!r} is not a built-in judge ({', '.join(BUILTIN_JUDGES)}); a plugin's judge is built by its host")
    return BUILTIN_JUDGES[config.mode](config)


_pools: dict[tuple[Any, ...], JudgePool] = {}
_pools_lock = threading.Lock()


def judge_pool_for(config: JudgeConfig, build: Callable[[JudgeConfig], Any] | None = None) -> JudgePool:
    """The process-wide pool of judges for a setting, built by `build` (default: the built-in judge
    of `config.mode`). ARE's scripted judge keeps the one process-wide pool of `orchestra.are.judge_pool`."""
    build = build or BUILTIN_JUDGES.get(config.mode)
    if build is None:
        raise ValueError(f"no judge {config.mode!r}: built-in judges are {', '.join(BUILTIN_JUDGES)}; a plugin's judge needs its host")
    if build is build_scripted:
        return default_judge_pool()

    def make() -> Any:
        judge = build(config)
        if judge not in _INFO:  # a plugin's judge: its verdicts are labelled with its own mode
            _INFO[judge] = JudgeInfo(config=config)
        return judge

    with _pools_lock:
        key = (config.pool_key(), id(build))
        if key not in _pools:
            _pools[key] = new_judge_pool(config, make) if build in (build_strict, build_llm) else JudgePool(make, mode=config.mode)
        return _pools[key]


def new_judge_pool(config: JudgeConfig, build: Callable[[], Any] | None = None) -> JudgePool:
    """A new pool of the built-in judge of `config.mode`: built once, cloned for concurrent
    rollouts (`clone_judge`; the scripted judge: `clone_scripted_judge`). `judge_pool_for` keeps
    one per setting for the process; this one is the caller's (benchmarks, tests)."""
    if config.mode == "scripted":
        return JudgePool()
    if config.mode not in BUILTIN_JUDGES:
        raise ValueError(f"{config.mode!r} is not a built-in judge ({', '.join(BUILTIN_JUDGES)})")
    return JudgePool(build or (lambda: BUILTIN_JUDGES[config.mode](config)), mode=config.mode, clone=clone_judge)


def pool_mode(pool: JudgePool) -> str:
    return pool.mode


def usage_snapshot(judge: Any) -> JudgeUsage | None:
    engine = info(judge).engine
    return engine.usage.model_copy() if engine is not None else None


@dataclass
class VerdictDetails:
    """What a session records about the judge behind a verdict."""

    label: str
    usage: JudgeUsage | None
    checks: list[dict[str, Any]]
    note: str | None


def verdict_details(judge: Any, usage_before: JudgeUsage | None, success: bool) -> VerdictDetails:
    """Label, usage of this rollout, strict checks and a rationale note, read after judging."""
    details = info(judge)
    engine = details.engine
    usage = engine.usage.minus(usage_before) if engine is not None and usage_before is not None else None
    checks: list[dict[str, Any]] = []
    note = None
    if details.strict is not None:
        checks = [details.strict.checks[k] for k in sorted(details.strict.checks)]
        failed = [c for c in checks if not c["ok"]]
        unchecked = [c for c in checks if c["ok"] and not c["required"] and "no checkable fact" in c["note"]]
        if not success and failed:
            note = "strict: " + "; ".join(f"{c['oracle_event_id']}.{c['arg']}: {c['note']}" for c in failed)
        elif success and unchecked:
            note = "strict: " + "; ".join(f"{c['oracle_event_id']}.{c['arg']}: {c['note']}" for c in unchecked)
    return VerdictDetails(label=details.config.label, usage=usage, checks=checks, note=note)


def strict_gazetteer(judge: Any) -> Gazetteer | None:
    state = info(judge).strict
    return state.gazetteer if state is not None else None


def judge_gazetteer(judge: Any, scenario: Any) -> Gazetteer:
    """The universe names for a scenario (the strict judge's own, else computed)."""
    g = strict_gazetteer(judge)
    if g is not None:
        return g
    return _scenario_gazetteer(scenario, list(getattr(judge.state, "scenario_tasks", []) or []))
