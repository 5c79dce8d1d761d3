"""ARE's scripted judge, built once per machine and reused (`JudgePool`): it costs 2-6 s to build
(`build_scripted_judge` keeps the built one for the next process); further judges for concurrent
rollouts are copies of the first that share its read-only parts."""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import os
import pickle
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
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
    """ARE's scripted judge (`ScriptedGraphPerEventJudgeConfig`), as ARE's benchmark builds it —
    or, when this machine built it before, that judge read back from the cache (`judge_cache_path`)."""
    import_are()
    path = judge_cache_path()
    judge = _cached_judge(path) if path is not None else None
    if judge is None:
        judge = _build_scripted_judge()
        if path is not None:
            _store_judge(path, judge)
    return judge


def _build_scripted_judge() -> GraphPerEventJudge:
    from are.simulation.validation import (
        JudgeFactory,
        ScriptedGraphPerEventJudgeConfig,
    )

    return JudgeFactory()(ScriptedGraphPerEventJudgeConfig(engine=_no_llm_engine))


# --------------------------------------------------------------------------------------------
# The built judge, kept between processes
# --------------------------------------------------------------------------------------------

#: `ORCHESTRA_JUDGE_CACHE`: the folder of the built judge (empty: build it in every process).
JUDGE_CACHE_ENV = "ORCHESTRA_JUDGE_CACHE"


def judge_cache_path() -> Path | None:
    """Where the built scripted judge is kept: `$ORCHESTRA_JUDGE_CACHE/` (empty: nowhere), else
    `$XDG_CACHE_HOME/orchestra/` or `~/.cache/orchestra/`, as the scenario facts' cache. Named by
    what the judge is made of — ARE's judging code byte for byte, this module, Python's version —
    so an upgrade of any of them builds (and keeps) a new one.

    Why: building ARE's judge is compiling ~1,800 Jinja templates for its 89 per-tool judges (1.7-
    2.7 s of CPU), in every process that judges: each command, each worker process of
    `--executor process`, each server start — most of a short run. The built judge is plain data
    that pickles (3 MB) and reads back in ~10 ms; none of what it holds depends on the process that
    built it (its engine is this module's `_no_llm_engine`, pickled by name). A judge read back is
    checked as a clone is (`_JUDGE_ATTRIBUTES`); one that cannot be read is built anew."""
    env = os.environ.get(JUDGE_CACHE_ENV)
    if env is not None:
        folder = Path(env) if env else None
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        folder = (Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache") / "orchestra"
    if folder is None:
        return None
    return folder / f"scripted-judge-{_judge_key()}.pickle"


@functools.cache
def _judge_key() -> str:
    """A digest of everything the built judge is made of (see `judge_cache_path`)."""
    import are.simulation.validation as validation

    digest = hashlib.sha256(f"{sys.version_info[:3]}|{pickle.HIGHEST_PROTOCOL}".encode())
    roots = [Path(validation.__file__).parent]
    for root in roots:
        for file in sorted(root.rglob("*.py")):
            digest.update(str(file.relative_to(root)).encode())
            digest.update(file.read_bytes())
    digest.update(Path(__file__).read_bytes())
    try:
        from importlib.metadata import version

        digest.update(version("meta-agents-research-environments").encode())
    except Exception:  # pragma: no cover - not installed as a distribution: the sources still name it
        pass
    return digest.hexdigest()[:24]


def _cached_judge(path: Path) -> Any | None:
    from are.simulation.validation.configs import ScriptedGraphPerEventJudgeConfig
    from are.simulation.validation.judge import GraphPerEventJudge

    try:
        judge = pickle.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except Exception:  # a torn or foreign file: no cache
        return None
    if type(judge) is not GraphPerEventJudge or type(judge.config) is not ScriptedGraphPerEventJudgeConfig or set(vars(judge)) != _JUDGE_ATTRIBUTES:
        return None
    return judge


def _store_judge(path: Path, judge: Any) -> None:
    """Write the judge where the next process finds it (atomically); a cache that cannot be written is no cache."""
    try:
        blob = pickle.dumps(judge, protocol=pickle.HIGHEST_PROTOCOL)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".scripted-judge-", suffix=".tmp")
    except Exception:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


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
