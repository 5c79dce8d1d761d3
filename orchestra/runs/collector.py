"""Python's cyclic garbage collector while a batch of rollouts runs in this process.

Why: a rollout keeps a world alive for its whole length (ARE's apps, their tools, the event log,
the agent's messages), so almost every object it allocates outlives the collector's young
generations and is promoted to the oldest one. CPython 3.11 sweeps the oldest generation whenever
the promotions reach a quarter of what survived the last sweep, and each sweep traverses every
live container of the process: the imported libraries (litellm's and the tokenizers' tables are
large), the loaded scenario templates, the judges, and every world of the batch. At 256 concurrent
rollouts that was 40 % of a rollout's CPU (`benchmarks/profile_rollout.py`; 7 full sweeps of
0.7 s each per batch of 256).

What changes, only while at least one batch runs (counted across threads and event loops, as
`orchestra.are.gc_pause` counts world loads), and only if the collector is on:

* what is alive when the first batch starts is frozen (`gc.freeze`): the imports, the templates,
  the judges, the caller's own objects — none of it is garbage a batch makes, so no sweep of the
  batch traverses it. It is unfrozen when the last batch ends, so nothing that would have been freed
  is kept. (If something else froze objects before, nothing is frozen or unfrozen here.)
* the oldest generation is not swept on the allocation counters: the batch sweeps it itself,
  once per `interval` finished rollouts (`rollout_finished`, default: the batch's concurrency, at
  least 64), and when the last batch ends if rollouts finished since the last sweep. The young generations run as usual, so short-lived
  cycles are freed as before.

Nothing a rollout computes depends on when the collector runs: records are byte-identical with and
without this (the corpus tests run through it). `ORCHESTRA_BATCH_GC=0` turns it off.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
from collections.abc import Iterator

__all__ = ["BATCH_GC_ENV", "batch_collection", "note_concurrency", "rollout_finished"]

#: `ORCHESTRA_BATCH_GC=0`: leave the collector as it is while batches run.
BATCH_GC_ENV = "ORCHESTRA_BATCH_GC"
#: The oldest generation's threshold while a batch runs: never reached by counting.
_NEVER = 1 << 30
#: Finished rollouts between two sweeps of the oldest generation, at least.
MIN_INTERVAL = 64

_lock = threading.Lock()
_depth = 0
_saved_threshold: tuple[int, int, int] | None = None
_froze = False
_interval = MIN_INTERVAL
_finished = 0


def _enabled() -> bool:
    return os.environ.get(BATCH_GC_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


@contextlib.contextmanager
def batch_collection(concurrency: int = MIN_INTERVAL) -> Iterator[None]:
    """The collector as a batch wants it, inside (see the module doc); nests and overlaps."""
    global _depth, _saved_threshold, _froze, _interval, _finished
    active = _enabled()
    with _lock:
        if active:
            if _depth == 0 and gc.isenabled():
                _saved_threshold = gc.get_threshold()
                gc.set_threshold(_saved_threshold[0], _saved_threshold[1], _NEVER)
                _froze = gc.get_freeze_count() == 0
                if _froze:
                    gc.freeze()
            _interval = max(_interval if _depth else MIN_INTERVAL, concurrency, MIN_INTERVAL)
            _depth += 1
    try:
        yield
    finally:
        if active:
            with _lock:
                _depth -= 1
                last = _depth == 0
                saved, froze, unswept = _saved_threshold, _froze, _finished
                if last:
                    _saved_threshold, _froze, _finished = None, False, 0
            if last and saved is not None:
                if unswept:  # what the batch left since its last sweep, before the frozen part is back in view
                    gc.collect()
                if froze:
                    gc.unfreeze()
                gc.set_threshold(*saved)


def rollout_finished() -> None:
    """A rollout of a running batch ended: every `interval` of them, sweep the oldest generation."""
    global _finished
    with _lock:
        if _saved_threshold is None:
            return
        _finished += 1
        due = _finished >= _interval
        if due:
            _finished = 0
    if due:
        gc.collect()


def note_concurrency(concurrency: int) -> None:
    """A running batch holds up to `concurrency` rollouts at once (a worker learns it per task): sweep no more often than that."""
    global _interval
    with _lock:
        if _depth:
            _interval = max(_interval, concurrency, MIN_INTERVAL)
