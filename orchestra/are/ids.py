"""Id determinism: ARE's app seeds, `uuid4` record ids and id sets, made independent of the process and its hash seed."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import random
import threading
import uuid
from collections.abc import Iterator
from typing import Any, TypeGuard

from orchestra.are.imports import import_are


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


def scope_rng_state() -> object | None:
    """Where the open `uuid_scope`'s RNG is in its stream (None outside any scope): a warm start
    (`loading.instantiate`) resumes the stream where the cold start was after the same work, so the
    ids minted after it (ARE's turn-condition actions) are the cold start's."""
    rng = _uuid_rng.get()
    return rng.getstate() if rng is not None else None


def restore_scope_rng_state(state: object | None) -> None:
    """Put the open `uuid_scope`'s RNG where `scope_rng_state` found one (nothing outside a scope or without a state)."""
    rng = _uuid_rng.get()
    if rng is not None and state is not None:
        rng.setstate(state)  # type: ignore[arg-type]


def uuid_shim_installed() -> bool:
    """Whether `uuid.uuid4` is orchestra's scoped function right now (only inside a `uuid_scope`)."""
    return uuid.uuid4 is _scoped_uuid4


def stable_rng(*parts: object) -> random.Random:
    """A `random.Random` seeded from a sha256 of `parts` (never from `hash()`, which varies per process)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


# --------------------------------------------------------------------------------------------
# Sets: lists ARE builds from a `set`, whose order is the process's hash seed's
# --------------------------------------------------------------------------------------------

#: Fields that ARE's messaging apps fill with `list(set(...))`: `ConversationV2.participant_ids`
#: (`are/simulation/apps/messaging_v2.py:88`, in every `ConversationV2(...)`: the conversations
#: `create_group_conversation` makes and the copies `list_recent_conversations` and
#: `list_conversations_by_participant` return) and the legacy `Conversation.participants`
#: (`messaging.py:77`). ARE reads them as sets (membership, set equality, `any`).
SET_VALUED_FIELDS: frozenset[str] = frozenset({"participant_ids", "participants"})
#: Tools (event names) whose return value is `list(<a set>)`: `CalendarApp.get_all_tags` (`calendar.py:372`).
SET_VALUED_RETURNS: frozenset[str] = frozenset({"CalendarApp__get_all_tags"})

_set_valued_classes: dict[type, str] | None = None


def _set_valued_classes_of_are() -> dict[type, str]:
    global _set_valued_classes
    if _set_valued_classes is None:
        import_are()
        from are.simulation.apps.messaging import Conversation
        from are.simulation.apps.messaging_v2 import ConversationV2

        _set_valued_classes = {ConversationV2: "participant_ids", Conversation: "participants"}
    return _set_valued_classes


def is_set_of_strings(value: Any) -> TypeGuard[list[str]]:
    """A list of strings (what a set-valued list is, once checked: sorting it is then safe)."""
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def sort_sets(tool: str | None, value: Any) -> None:
    """Sort, in place, what ARE built from a `set` in the value `tool` returned: the whole list
    (`SET_VALUED_RETURNS`) or the set-valued fields (`SET_VALUED_FIELDS`) of the ARE objects in it
    (an object, or lists, tuples and dict values holding them).

    Their order is the process's string-hash order, so the same actions would show the agent a
    different text (a code agent gets the objects themselves; a conversation's `repr` lists its
    participants) and log a different event in every process. Sorted, they mean the same to ARE
    (it reads them as sets) and are the same everywhere. In place because the value is what the
    agent is about to get; the conversations are copies, or the app's own (in no order ARE relies on).
    """
    if tool in SET_VALUED_RETURNS and is_set_of_strings(value):
        value.sort()
        return
    _sort_fields(value, _set_valued_classes_of_are(), 0)


def _sort_fields(value: Any, classes: dict[type, str], depth: int) -> None:
    if depth > 6:
        return
    attr = classes.get(type(value))
    if attr is not None:
        items = getattr(value, attr, None)
        if is_set_of_strings(items):
            items.sort()
    elif isinstance(value, list | tuple):
        for item in value:
            _sort_fields(item, classes, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            _sort_fields(item, classes, depth + 1)
