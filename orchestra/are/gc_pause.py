"""Python's cyclic garbage collector paused while a world is built.

Loading a universe allocates hundreds of thousands of small containers (ARE's apps parse their
states into dicts and dataclasses) and frees almost none of them. Each allocation burst triggers
collections, and the oldest generation's traverses every live object — the loaded universes of
the other rollouts of the process included — so on a process holding a few worlds half of a
member's start was the collector (`benchmarks/bench_group_start.py`: a group of 8 on the 2.6 MB
universe, 1.03 s of member starts → 0.57 s with it paused). Nothing of the collector's semantics
changes: it is paused only for the duration of the load (reference counting still frees what is
dropped), re-enabled when the last concurrent load ends, and never enabled here if it was off.

The collector is per process, so the pause is counted across threads: it is off while any load
runs and back on (if it was on) when none does.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The collector off inside (see the module doc); nests and overlaps across threads."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
