"""ARE's scripted judge, built once per process and reused (`JudgePool`): it costs 3-6 s to build."""

from __future__ import annotations

import contextlib
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


class JudgePool:
    """ARE judges of one setting (`mode`), built once and reused across scenarios.

    A judge holds one rollout's state while that rollout runs (turn triggers call it online), so
    concurrent rollouts each need their own instance: `acquire()` hands out an idle judge or builds
    a new one with `build` (default: ARE's scripted judge). `initialize_state(scenario)` replaces a
    judge's state completely, which is what makes reuse safe (ARE-NOTES §7.7).
    """

    def __init__(self, build: Callable[[], Any] | None = None, *, mode: str = "scripted") -> None:
        self._idle: list[GraphPerEventJudge] = []
        self._lock = threading.Lock()
        self._builder = build or build_scripted_judge
        #: The judge setting's name (`JudgeConfig.mode`) this pool's judges have.
        self.mode = mode
        self.builds = 0

    def _build(self) -> GraphPerEventJudge:
        judge = self._builder()
        with self._lock:
            self.builds += 1
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
