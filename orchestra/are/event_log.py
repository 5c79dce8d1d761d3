"""Canonical, hashable form of an ARE event log.

Reproducibility claims need something to compare: `event_log_sha256` hashes a canonical JSON
serialisation of every completed event (time, type, tool, resolved arguments, return value,
exception), each as it was when the event was logged (a later mutation of the same app object does
not rewrite history). Only ARE's own random record ids are canonicalised — the `uuid4()` strings ARE puts in
event ids and AUI message ids, which are fresh in every process. App-generated ids (emails,
calendar events, conversations) come from the apps' seeded RNG (32 hex digits, no dashes) and are
kept verbatim: if they drift, determinism is broken and the hash must say so. Lists that ARE
fills from a `set` (conversation participants, calendar tags) are sorted: their order is the hash seed's.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

from orchestra.are.ids import SET_VALUED_FIELDS, SET_VALUED_RETURNS, is_set_of_strings

_UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def serializable(value: Any) -> Any:
    """ARE's `make_serializable(value)`, the same value for every input, several times faster.

    ARE's asks `is_dataclass`, `isinstance(value, Enum)`, ... of every value of a tool's return (a
    list of contacts is thousands of values), and builds each dataclass's `fields()` anew. This one
    decides once per type which of ARE's branches a value of that type takes (`_kind_of`, ARE's
    order of tests) and hands anything else — a class, an object it would stringify — to ARE's own.
    Every event logged in a rollout goes through it (`DrivenEnvironment`'s snapshots)."""
    tp = type(value)
    kind = _KINDS.get(tp)
    if kind is None:
        kind = _kind_of(tp)
    if kind == _ATOM:
        return value
    if kind == _LIST:
        return [serializable(v) for v in value]
    if kind == _DICT:
        return {str(k): serializable(v) for k, v in value.items()}
    if kind == _DATACLASS:
        return {name: serializable(getattr(value, name)) for name in _FIELDS[tp]}
    if kind == _ENUM:
        return value.value
    from are.simulation.utils.serialization import make_serializable

    return make_serializable(value)


_ATOM, _LIST, _DICT, _DATACLASS, _ENUM, _OTHER = range(6)
#: Per type, which branch of ARE's `make_serializable` its values take (types live as long as the process).
_KINDS: dict[type, int] = {}
#: Per dataclass type, its fields' names in order (`dataclasses.fields`, what ARE iterates).
_FIELDS: dict[type, tuple[str, ...]] = {}


def _kind_of(tp: type) -> int:
    """ARE's tests in ARE's order, for a value of type `tp` (a class itself goes to ARE: `is_dataclass`
    of a class reads the class, not its type)."""
    import dataclasses
    import enum

    if issubclass(tp, type):
        kind = _OTHER
    elif dataclasses.is_dataclass(tp):
        _FIELDS[tp] = tuple(f.name for f in dataclasses.fields(tp))
        kind = _DATACLASS
    elif issubclass(tp, enum.Enum):
        kind = _ENUM
    elif issubclass(tp, list):
        kind = _LIST
    elif issubclass(tp, dict):
        kind = _DICT
    elif tp in (str, int, float, bool, type(None)):
        kind = _ATOM
    else:
        kind = _OTHER
    _KINDS[tp] = kind
    return kind


def _set_order(key: Any, value: Any) -> Any:
    """A list ARE fills from a `set` (`ids.SET_VALUED_FIELDS`, `ids.SET_VALUED_RETURNS`), sorted.

    Sorted before its uuids become tokens, so that the numbering does not follow the hash seed
    either. A rollout's own log has them sorted already (`ids.sort_sets`, when the event is
    logged); this covers a log recorded without orchestra's event log (ARE's own environment:
    `default_agent`).
    """
    return sorted(value) if key in SET_VALUED_FIELDS and is_set_of_strings(value) else value


def canonical_events(events: list[Any], start_time: float, snapshot: Callable[[Any], dict[str, Any] | None] | None = None) -> list[dict[str, Any]]:
    """One JSON-ready dict per ARE `CompletedEvent`, with uuid4 record ids replaced by stable tokens.

    `snapshot(event)` gives an event's arguments, return value and exception as serialised when it
    was logged (`DrivenEnvironment.event_snapshot`); without one (or for an event it does not know)
    they are serialised now — which shows later mutations of the same objects.
    """
    from are.simulation.types import ConditionCheckAction

    tokens: dict[str, str] = {}

    def repl(m: re.Match[str]) -> str:
        return tokens.setdefault(m.group(0), f"uuid-{len(tokens)}")

    def canon(text: str) -> str:
        return _UUID4.sub(repl, text) if "-" in text else text  # a uuid4 has dashes: most strings have none

    def canon_value(value: Any) -> Any:
        if isinstance(value, str):
            return canon(value)
        if isinstance(value, list):
            return [canon_value(v) for v in value]
        if isinstance(value, dict):
            return {canon(str(k)): canon_value(_set_order(k, v) if k in SET_VALUED_FIELDS else v) for k, v in value.items()}
        return value

    out = []
    for ev in events:
        is_condition = isinstance(ev.action, ConditionCheckAction)
        snap = snapshot(ev) if snapshot is not None else None
        if snap is None:
            snap = {
                "args": {} if is_condition else serializable({k: v for k, v in ev.get_args().items() if k != "self"}),
                "return": serializable(ev.metadata.return_value) if ev.metadata else None,
                "exception": str(ev.metadata.exception) if ev.metadata and ev.metadata.exception else None,
            }
        tool = "condition" if is_condition else ev.tool_name
        returned = snap["return"]
        record = {
            "t": round(float(ev.event_time) - start_time, 6),
            "type": getattr(ev.event_type, "value", str(ev.event_type)),
            "id": canon(str(ev.event_id)),
            "tool": tool,
            "args": canon_value(snap["args"]),
            "return": canon_value(sorted(returned) if tool in SET_VALUED_RETURNS and is_set_of_strings(returned) else returned),
            "exception": canon(snap["exception"]) if snap["exception"] else None,
        }
        out.append(record)
    return out


def event_log_sha256(records: list[dict[str, Any]]) -> str:
    blob = json.dumps(records, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()
