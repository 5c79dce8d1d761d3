"""The names of a scenario's universe (contacts, products, listings, events, quoted titles): the gazetteer the strict judge reads names with."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable, Mapping
from typing import Any

from orchestra.judging.facts import _QUOTED, Gazetteer


def universe_names(app_states: Iterable[Mapping[str, Any]], extra_texts: Iterable[str] = ()) -> Gazetteer:
    """Names of entities in a scenario's apps (contacts, products, listings, events, chats, ...).

    `app_states` are the `app_state` objects of the scenario file's apps; `extra_texts` are texts
    (the user's tasks) whose short quoted titles become names too ('Book club').
    """
    g = Gazetteer()
    wanted = {"first_name", "last_name", "name", "title", "location", "city_living", "job", "brand", "address", "subject"}

    def walk(node: Any, depth: int = 0) -> None:
        if depth > 12:
            return
        if isinstance(node, dict):
            first, last = node.get("first_name"), node.get("last_name")
            if isinstance(first, str) and isinstance(last, str):
                g.add(f"{first} {last}")
                if not node.get("is_user") and first and last:
                    g.people.append(f"{first} {last}")
                elif node.get("is_user") and first:
                    g.user = f"{first} {last}".strip()
            for k, v in node.items():
                if isinstance(v, str) and k in wanted and len(v) <= 80:
                    g.add(v)
                elif k == "options" and isinstance(v, dict):  # a product variant's options: {"Color": "Navy"}
                    for option in v.values():
                        if isinstance(option, str) and len(option) <= 40:
                            g.add(option)
                elif isinstance(v, dict | list):
                    walk(v, depth + 1)
        elif isinstance(node, list):
            for v in node:
                walk(v, depth + 1)

    for state in app_states:
        walk(state)
    g.people = sorted(set(g.people))
    for text in extra_texts:
        for m in _QUOTED.finditer(text or ""):
            inner = m.group(1).strip()
            if 1 <= len(inner.split()) <= 5 and not re.search(r"[!?]|[.,;:]\s", inner):
                g.add(inner)
    return g


def user_tasks(raw: Mapping[str, Any]) -> list[str]:
    """The user's messages to the agent in a scenario file (ARE's `send_message_to_agent` events)."""
    out = []
    for event in raw.get("events") or []:
        action = event.get("action") or {}
        if event.get("event_type") == "USER" and action.get("function") == "send_message_to_agent":
            for arg in action.get("args") or []:
                if arg.get("name") == "content" and isinstance(arg.get("value"), str):
                    out.append(arg["value"])
    return out


def scenario_gazetteer(raw: Mapping[str, Any]) -> Gazetteer:
    """The universe names of a Gaia2-format scenario file (parsed JSON): its apps' states, the
    arguments of its user/environment events (a listing that appears mid-scenario is a name too),
    and the short quoted titles of the user's tasks."""
    states: list[Any] = [app.get("app_state") or {} for app in raw.get("apps") or []]
    for event in raw.get("events") or []:
        if event.get("event_type") in ("ENV", "USER"):
            for arg in (event.get("action") or {}).get("args") or []:
                value = arg.get("value")
                if isinstance(value, str) and value[:1] in "{[":
                    try:
                        import json

                        states.append(json.loads(value))
                    except ValueError:
                        pass
                elif isinstance(value, dict | list):
                    states.append(value)
    g = universe_names(states, user_tasks(raw))
    start = (raw.get("metadata") or {}).get("definition", {}).get("start_time")
    if isinstance(start, int | float):
        g.year = _dt.datetime.fromtimestamp(float(start), tz=_dt.UTC).year
    return g
