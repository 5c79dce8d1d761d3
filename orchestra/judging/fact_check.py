"""Whether an agent's text carries the facts of the oracle's text, and contradicts none: the `strict` judge's check of one free-text argument."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from typing import Any

from orchestra.judging.facts import _EMAIL, MONTH_NAMES, WEEKDAY_NAMES, Fact, Gazetteer, TextFacts, extract_facts, normalize_text, read_text


def _name_pattern(norm: str) -> str:
    *head, last = norm.split()
    forms = {last, last + "s", last + "es"}
    if last.endswith("f"):
        forms.add(last[:-1] + "ves")
    if last.endswith("fe"):
        forms.add(last[:-2] + "ves")
    if last.endswith("y"):
        forms.add(last[:-1] + "ies")
    tail = "(?:" + "|".join(re.escape(f) for f in sorted(forms)) + ")"
    return " " + "".join(re.escape(w) + " " for w in head) + tail + " "


def _id_pattern(text: str) -> str:
    """A regex for an id in any spacing/dashing: "INV-3810" ~ "inv 3810" ~ "INV3810", whole token."""
    chunks = re.findall(r"[a-z]+|\d+|[^a-z0-9\s-]", text.lower())
    body = r"[\s_-]*".join(re.escape(c) for c in chunks)
    return rf"(?<![a-z0-9]){body}(?![a-z0-9])"


def covers(said: TextFacts, fact: Fact) -> bool:
    """Does the agent's text (parsed) express this oracle fact?"""
    k = fact.key
    if fact.kind == "number" and fact.context:
        return any(v == k and (ctx & fact.context) for v, ctx in said.counts)
    if fact.kind in ("amount", "number"):
        return k in said.numbers
    if fact.kind == "date":
        month, day, year = k
        return any(m == month and d == day and (year is None or y is None or y == year) for m, d, y in said.dates)
    if fact.kind == "month":
        return k in said.months
    if fact.kind == "weekday":  # "Thursday works": said as a day, not only inside a date
        return k in said.standalone_weekdays
    if fact.kind == "time":
        return k in said.times
    if fact.kind == "id":
        if k in said.ids:
            return True
        if isinstance(k, tuple) or "@" in fact.text or "://" in fact.text:
            return False  # phones, e-mail addresses and URLs: exact (normalized) only
        return re.search(_id_pattern(fact.text), said.lowered) is not None
    if fact.kind == "name":  # plural allowed: "two Stewart Merino Wool Scarves"
        return re.search(_name_pattern(k), said.norm) is not None
    return False


@dataclass
class FactCheck:
    """The strict verdict on one free-text argument."""

    ok: bool
    required: list[Fact]
    missing: list[Fact]
    note: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "required": [f.describe() for f in self.required],
            "missing": [f.describe() for f in self.missing],
            "note": self.note,
        }


def check_text(oracle_text: Any, agent_text: Any, gazetteer: Gazetteer | None = None, context: str = "") -> FactCheck:
    """Accept `agent_text` iff it carries every fact of `oracle_text` and contradicts none.

    A contradiction is a person of the universe named in full, or a month, that neither the
    oracle's text nor `context` (the user's task) mentions: "the email went to Amy Davey" when
    the oracle's went to Rodney, "November bookkeeping" for "October bookkeeping".
    """
    oracle = "" if oracle_text is None else str(oracle_text)
    agent = "" if agent_text is None else str(agent_text)
    required = extract_facts(oracle, gazetteer)
    if not required:
        return FactCheck(True, [], [], "the oracle's text carries no checkable fact (amount, date, time, id, name): not checked")
    said = read_text(agent)
    missing = [f for f in required if not covers(said, f)]
    conflicts = _conflicts(said, oracle, context, required, gazetteer)
    problems = []
    if missing:
        problems.append("missing or wrong: " + ", ".join(f.describe() for f in missing))
    if conflicts:
        problems.append("not in the oracle's text: " + ", ".join(conflicts))
    if problems:
        return FactCheck(False, required, missing, "; ".join(problems))
    return FactCheck(True, required, [], f"all {len(required)} fact(s) present")


def _conflicts(said: TextFacts, oracle: str, context: str, required: list[Fact], gazetteer: Gazetteer | None) -> list[str]:
    out: list[str] = []
    allowed = normalize_text(_EMAIL.sub(" ", oracle + "\n" + context))
    if gazetteer is not None:
        for person in gazetteer.people:
            norm = normalize_text(person)
            if norm in said.norm and norm not in allowed:
                out.append(f"person {person!r}")
    ctx = read_text(context) if context else None
    oracle_said = read_text(oracle)
    known_months = oracle_said.months | (ctx.months if ctx else set())
    if known_months:
        for month in sorted(said.months - known_months):
            out.append(f"month {MONTH_NAMES[month]!r}")
        standalone_ok = oracle_said.standalone_months | (ctx.months if ctx else set())
        for month in sorted((said.standalone_months & known_months) - standalone_ok):
            out.append(f"month {MONTH_NAMES[month]!r} (the oracle's text has it only in a date)")
    known_dates = {(m, d) for m, d, _ in oracle_said.dates} | ({(m, d) for m, d, _ in ctx.dates} if ctx else set())
    if known_dates:
        for m, d in sorted({(m, d) for m, d, _ in said.dates} - known_dates):
            if not any((m2, d2) == (m, d) for m2, d2, _ in oracle_said.dates):
                out.append(f"date {MONTH_NAMES[m]} {d}")
    year = gazetteer.year if gazetteer is not None else None
    known_days = oracle_said.weekdays | (ctx.weekdays if ctx else set())
    for m, d, y in oracle_said.dates:
        full_year = y or year
        if full_year is not None:
            try:
                known_days.add(_dt.date(int(full_year), m, d).weekday())
            except ValueError:
                pass
    if known_days:
        for day in sorted(said.weekdays - known_days):
            out.append(f"weekday {WEEKDAY_NAMES[day]!r}")
    return out
