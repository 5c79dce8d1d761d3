"""Plausible wrong texts: a text with its facts changed to wrong values of the same kind (the `wrong_answer` perturbation, the judge labelled set's generated negatives)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from orchestra.judging.facts import _ISO_DATE, _WEEKDAY_RE, MONTH_NAMES, MONTHS, WEEKDAY_NAMES, WEEKDAYS, Fact, Gazetteer, _extract, normalize_text


def mutate(text: str, fact: Fact, alternatives: Iterable[str] = ()) -> str | None:
    """`text` with `fact` replaced by a plausible wrong value of the same kind (None if impossible)."""
    a, b = fact.span
    surface = text[a:b]
    wrong = _wrong_surface(fact, surface, list(alternatives))
    if wrong is None or wrong == surface:
        return None
    return text[:a] + wrong + text[b:]


def _bump_digits(s: str) -> str | None:
    """Change the last significant digit of the first number in `s` (keeping its format)."""
    m = re.search(r"\d[\d,]*(?:\.\d+)?", s)
    if not m:
        return None
    num = m.group(0)
    # the units digit of the integer part: "$1,255.56" -> "$1,256.56", "2024" -> "2025"
    int_part_end = num.find(".") if "." in num else len(num)
    idx = int_part_end - 1
    d = int(num[idx])
    new = num[:idx] + str((d + 1) % 10 if d != 9 else 8) + num[idx + 1 :]
    return s[: m.start()] + new + s[m.end() :]


def _wrong_surface(fact: Fact, surface: str, alternatives: list[str]) -> str | None:
    if fact.kind in ("amount", "number", "id") and re.search(r"\d", surface):
        return _bump_digits(surface)
    if fact.kind == "id":
        if "@" in surface:
            return "wrong." + surface
        return surface + "X"
    if fact.kind == "date":
        m = re.search(r"\b(\d{1,2})(?=\D|$)", surface) if not _ISO_DATE.search(surface) else None
        if _ISO_DATE.search(surface):
            y, mo, d = surface.split("-")
            return f"{y}-{mo}-{int(d) % 28 + 1:02d}"
        if m is None:
            return None
        day = int(m.group(1))
        new = str(day + 1 if day < 28 else day - 1)
        s = surface[: m.start()] + new + surface[m.end() :]
        wd = re.match(rf"({_WEEKDAY_RE})", s, re.I)
        if wd:
            idx = WEEKDAYS[wd.group(1).lower().rstrip(".")]
            s = WEEKDAY_NAMES[(idx + 1) % 7] + s[wd.end() :]
        return s
    if fact.kind == "time":
        m = re.search(r"\d{1,2}", surface)
        if m is None:
            return {"noon": "1 pm", "midday": "1 pm", "midnight": "1 am"}.get(surface.lower())
        h = int(m.group(0))
        return surface[: m.start()] + f"{(h + 1) % 24:0{len(m.group(0))}d}" + surface[m.end() :]
    if fact.kind == "month":
        idx = MONTHS.get(surface.lower().rstrip("."), 1)
        return MONTH_NAMES[idx % 12 + 1]
    if fact.kind == "weekday":
        idx = WEEKDAYS.get(surface.lower().rstrip("."), 0)
        return WEEKDAY_NAMES[(idx + 1) % 7]
    if fact.kind == "name":
        norm = normalize_text(surface).strip()
        for alt in alternatives:
            alt_norm = normalize_text(alt).strip()
            if alt_norm and alt_norm != norm and norm not in alt_norm and alt_norm not in norm:
                return alt
        return None
    return None


def wrong_version(text: str, gazetteer: Gazetteer | None = None, alternatives: Iterable[str] = ()) -> tuple[str, list[Fact]] | None:
    """A plausible wrong version of `text`: every fact changed (None when it has no fact).

    Changing every fact (not one) makes the text wrong under any reading, so the `wrong_answer`
    perturbation is wrong for an LLM judge too, not only for the strict one.
    """
    facts = _extract(text, gazetteer)
    if not facts:
        return None
    alts = list(alternatives)
    changed: list[Fact] = []
    out = text
    # every occurrence, right to left, so earlier spans stay valid
    for fact in sorted({f.span: f for f in facts}.values(), key=lambda f: f.span, reverse=True):
        new = mutate(out, fact, alts)
        if new is not None:
            out = new
            changed.append(fact)
    if not changed or out == text:
        return None
    return out, changed
