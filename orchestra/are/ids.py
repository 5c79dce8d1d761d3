"""Id determinism: ARE's app seeds and `uuid4` record ids, made independent of the process and its hash seed."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import random
import threading
import uuid
from collections.abc import Iterator
from typing import Any


def stable_app_seed(seed: int, app_name: str) -> int:
    """ARE seeds each app with `hash(f"{seed}_{name}")`, which differs per process. Use sha256."""
    digest = hashlib.sha256(f"{seed}_{app_name}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def reseed_apps(scenario: Any) -> None:
    """Give every app of `scenario` a process-independent RNG (after every (soft) reset)."""
    for app in scenario.apps or []:
        app.seed = stable_app_seed(int(scenario.seed or 0), app.name)
        app.rng = random.Random(app.seed)


#: The RNG `uuid.uuid4` draws from while orchestra is inside ARE on behalf of a rollout.
_uuid_rng: contextvars.ContextVar[random.Random | None] = contextvars.ContextVar("orchestra_uuid_rng", default=None)
_stdlib_uuid4 = uuid.uuid4
_uuid_shim_lock = threading.Lock()
#: How many `uuid_scope`s are open right now, in all threads (the shim is installed while > 0).
_uuid_scopes = 0


def _scoped_uuid4() -> uuid.UUID:
    rng = _uuid_rng.get()
    if rng is None:
        return _stdlib_uuid4()
    return uuid.UUID(int=rng.getrandbits(128), version=4)


@contextlib.contextmanager
def uuid_scope(rng: random.Random) -> Iterator[None]:
    """Make `uuid.uuid4` draw from `rng` during one synchronous call into ARE, and only then.

    ARE mints ids with `uuid.uuid4()` (Shopping order ids, AUI message ids, dataclass defaults,
    event-record ids), which would make the same actions give different ids — and different
    observations — in every process. ARE reads the function from the `uuid` module at each call,
    so it is replaced only while at least one scope is open (a process-wide count under a lock)
    and the stdlib's own function is put back when the last scope closes: between a rollout's
    calls into ARE — while a model is awaited, in other libraries, after the rollout —
    `uuid.uuid4` is the stdlib's. The RNG is a context variable, so concurrent rollouts in
    threads or tasks never share one, and a call from a thread outside any scope that happens
    while another thread's scope is open still gets the stdlib's random uuid.

    Why not something else: ARE has no id-factory seam, and swapping `uuid` in ARE's module
    namespaces would be patching ARE; wrapping the process-wide function for the duration of
    orchestra's own synchronous calls is the narrowest change that makes the ids reproducible.
    """
    global _uuid_scopes
    with _uuid_shim_lock:
        if _uuid_scopes == 0:
            uuid.uuid4 = _scoped_uuid4
        _uuid_scopes += 1
    token = _uuid_rng.set(rng)
    try:
        yield
    finally:
        _uuid_rng.reset(token)
        with _uuid_shim_lock:
            _uuid_scopes -= 1
            if _uuid_scopes == 0:
                uuid.uuid4 = _stdlib_uuid4


def uuid_shim_installed() -> bool:
    """Whether `uuid.uuid4` is orchestra's scoped function right now (only inside a `uuid_scope`)."""
    return uuid.uuid4 is _scoped_uuid4


def stable_rng(*parts: object) -> random.Random:
    """A `random.Random` seeded from a sha256 of `parts` (never from `hash()`, which varies per process)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))
