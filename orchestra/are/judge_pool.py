"""ARE's scripted judge, built once per process and reused (`JudgePool`): it costs 3-6 s to build;
further judges for concurrent rollouts are copies of the first that share its read-only parts."""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - import for type checkers only
    from are.simulation.validation.judge import GraphPerEventJudge
from orchestra.are.imports import _import_lock, import_are

# --------------------------------------------------------------------------------------------
# The judge
# --------------------------------------------------------------------------------------------


def _no_llm_engine(messages: Any, **kwargs: Any) -> tuple[str, None]:
    """Judge engine stub: the scripted judge never calls it (it skips `llm_checker` args)."""
    return "", None


def build_scripted_judge() -> GraphPerEventJudge:
    """ARE's scripted judge (`ScriptedGraphPerEventJudgeConfig`), as ARE's benchmark builds it."""
    import_are()
    from are.simulation.validation import (
        JudgeFactory,
        ScriptedGraphPerEventJudgeConfig,
    )

    return JudgeFactory()(ScriptedGraphPerEventJudgeConfig(engine=_no_llm_engine))


#: The attributes of ARE 1.2.0's `GraphPerEventJudge` (`are/simulation/validation/judge.py:238-268`,
#: `base.py:78-81`); a judge with any other set is not cloned (an ARE that changed it is built anew).
_JUDGE_ATTRIBUTES = frozenset({"config", "tracer", "state", "error_logs", "event_judges", "event_filter"})


def clone_scripted_judge(judge: Any) -> Any | None:
    """A second scripted judge that shares `judge`'s per-tool judges, or None when `judge` is not
    the judge this was checked against.

    Why it is cheap and safe: building ARE's judge is building its per-tool judges (89 of them,
    each with a `SoftToolJudge` whose `build_llm_checkers` compiles ~20 Jinja templates: almost all
    of the 3-6 s); none of them is written after its constructor (their `__call__`s only read
    `self`, and the scripted judge never calls the LLM checkers). Everything a rollout writes lives
    in `judge.state` (replaced by `initialize_state`) and `judge.error_logs`: the copy gets its own.
    """
    from are.simulation.validation.configs import ScriptedGraphPerEventJudgeConfig
    from are.simulation.validation.judge import GraphPerEventJudge
    from are.simulation.validation.judge_states import GraphPerEventJudgeState

    if type(judge) is not GraphPerEventJudge or type(judge.config) is not ScriptedGraphPerEventJudgeConfig:
        return None
    if set(vars(judge)) != _JUDGE_ATTRIBUTES:
        return None
    clone = copy.copy(judge)
    clone.state = GraphPerEventJudgeState()
    clone.error_logs = []
    return clone


class JudgePool:
    """ARE judges of one setting (`mode`), built once and reused across scenarios.

    A judge holds one rollout's state while that rollout runs (turn triggers call it online), so
    concurrent rollouts each need their own instance: `acquire()` hands out an idle judge or makes
    a new one. The first is built with `build` (default: ARE's scripted judge); the others are
    `clone(first)` when a `clone` is given (the default pool's: `clone_scripted_judge`, ~1 ms
    instead of seconds), else built too. `initialize_state(scenario)` replaces a judge's state
    completely, which is what makes reuse safe (ARE-NOTES §7.7).
    """

    def __init__(
        self,
        build: Callable[[], Any] | None = None,
        *,
        mode: str = "scripted",
        clone: Callable[[Any], Any | None] | None = None,
    ) -> None:
        self._idle: list[GraphPerEventJudge] = []
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()
        self._builder = build or build_scripted_judge
        self._clone = clone if clone is not None else (clone_scripted_judge if build is None else None)
        self._first: GraphPerEventJudge | None = None
        #: The judge setting's name (`JudgeConfig.mode`) this pool's judges have.
        self.mode = mode
        #: Judges made so far (built or cloned); `clones` of them were clones.
        self.builds = 0
        self.clones = 0

    def _build(self) -> GraphPerEventJudge:
        with self._build_lock:  # a second concurrent rollout waits for the first judge, then clones it
            judge = None
            if self._first is not None and self._clone is not None:
                judge = self._clone(self._first)
            cloned = judge is not None
            if judge is None:
                judge = self._builder()
                if self._first is None:
                    self._first = judge
        with self._lock:
            self.builds += 1
            self.clones += cloned
        return judge

    def warm(self) -> None:
        """Build one judge now (e.g. before timing anything)."""
        judge = self._build()
        with self._lock:
            self._idle.append(judge)

    @contextlib.contextmanager
    def acquire(self) -> Iterator[GraphPerEventJudge]:
        with self._lock:
            judge = self._idle.pop() if self._idle else None
        if judge is None:
            judge = self._build()
        try:
            yield judge
        finally:
            with self._lock:
                self._idle.append(judge)


_default_pool: JudgePool | None = None


def default_judge_pool() -> JudgePool:
    """The process-wide pool (thread-safe; judges are never shared by two live rollouts)."""
    global _default_pool
    with _import_lock:
        if _default_pool is None:
            _default_pool = JudgePool()
    return _default_pool
