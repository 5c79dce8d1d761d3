"""How a text states each value it mentions: asserted, offered as one of alternatives, or negated.

`facts.read_text` says *which* values a text mentions; a careful reader also asks *how*:

* **alternatives** — "15:00 or 16:00", "54 (maybe 45)", "October 12 or 21", "Scott Jones or
  Scott Patel", "11:00-11:30, or maybe 11:30-12:00": the value is offered as one of several, in a
  statement. A value written *only* that way is not asserted (a hedge). In a question ("Friday
  the 18th or Saturday the 19th?") alternatives are a question, not a hedge;
* **negated** — a negation before the value in its clause ("not $2,750", "can't do 15:00",
  "isn't with Philip Taylor", "no longer at 12:30"), or a value denied after it ("Thursday
  doesn't work", "the receipts were not moved"). A value written *only* negated is denied;
* **uncertain** — the text says it is unsure ("not sure", "unclear", "maybe", "about $1,890"):
  a hedge whatever its values.

Everything here is pure Python, deterministic, and reads one text at a time; whether a hedge or a
denial is *wrong* (the oracle's text asserts that value) is `orchestra.judging.fact_check`'s call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from orchestra.judging.facts import (
    _DOT_DATE,
    _EU_AMOUNT,
    _SLASH_DATE,
    _SPOKEN_TIME,
    _TIME_DOT_MER,
    Fact,
    FactKind,
    Gazetteer,
    TextFacts,
    _extract,
    _spoken_times,
    normalize_text,
    read_text,
)

#: Where a clause ends, for the reach of a negation: sentence and clause punctuation, a dash
#: between spaces, and the conjunctions that start a new claim ("not X but Y", "X, so Y").
_CLAUSE_END = re.compile(
    r"[.!?;](?=\s|$)|:(?=\s|$)|,(?=\s)|[()\[\]\n]|(?<=\s)[-–—]+(?=\s)"
    r"|(?<=\s)(?:but|so|and|while|whereas|because|then|instead|though|although|which|where)(?=\s)",
    re.I,
)
#: A negation, reaching a few words on in its clause (`_REACH`): "not", "n't", "no longer", "never".
_NEGATION = re.compile(r"\b(?:not|no\s+longer|never|nor|neither)\b|n['’]t\b", re.I)
#: A negation of the one value right after it: "instead of 12:30", "rather than Friday".
_NEGATION_OF_NEXT = re.compile(r"\b(?:instead\s+of|rather\s+than)\s+(?:the\s+)?$", re.I)
#: How far a negation reaches: "didn't go for Sunday", "I didn't post in the Shannon team chat"
#: (words between), and only the next word or two for a person ("didn't message Alex", not
#: "didn't work for Elena", which denies the slot, not Elena).
_REACH, _REACH_PERSON = 4, 1
#: A value denied after it, within its clause: "Thursday doesn't work", "X was not moved".
_DENIED_AFTER = re.compile(
    r"^\s*(?:\w+\s+)?(?:(?:is|was|were|are|has|have|had|did|does|do|could|can|would|will|should)\s+not\b|(?:is|was|were|are|has|have|had|did|does|do|could|ca|would|wo|should)n['’]t\b)",
    re.I,
)
#: Between two values, the words that offer the second as an alternative to the first.
_ALTERNATIVE_GAP = re.compile(
    r"^[\s,]*(?:\(\s*)?(?:either\s+)?(?:or(?:\s+(?:maybe|perhaps|possibly|else))?|maybe|perhaps|possibly)\s+(?:(?:a|an|the|at|on|in|by|until|to|for|from)\s+)*$",
    re.I,
)
#: The same, when the second value is a name that is no name of the universe ("Cafe Lumiere or
#: at the Harbour Bistro"): a capitalized phrase after the "or".
_ALTERNATIVE_NAME = re.compile(
    r"^[\s,]*(?:\(\s*)?or(?:\s+(?:maybe|perhaps|possibly))?\s+(?:(?:a|an|the|at|on|in|by|to|with|for|from)\s+)*((?:[A-Z][\w'’-]+)(?:\s+[A-Z][\w'’-]+)*)"
)
#: "a Premium or a Van cab": a cab's service type that the oracle-side parser only reads before "cab".
_CAB_ALTERNATIVE = re.compile(r"\b(Default|Premium|Van)\s+or\s+(?:an?\s+)?(Default|Premium|Van)\s+(?:cab|ride|taxi|car)s?\b")
#: A size offered as an alternative: "M or L".
_SIZE_ALTERNATIVE = re.compile(r"\b(XXS|XS|S|M|L|XL|XXL)\s+or\s+(XXS|XS|S|M|L|XL|XXL)\b")
#: Two proper names offered as alternatives inside a sentence: "Cafe Lumiere or at the Harbour Bistro".
_PHRASE_ALTERNATIVE = re.compile(r"\b([A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)*)\s+or\s+(?:(?:at|in|on|to|with|the|a|an)\s+)*([A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)*)")
#: Ranges are one value ("11:00-11:30", "08:00 to 16:00"), so "11:00-11:30, or maybe 11:30-12:00"
#: offers one range against another.
_RANGE_GAP = re.compile(r"^\s*(?:-|–|—|to|until|till)\s*$", re.I)
#: The text says it is unsure of what it states.
_UNCERTAIN = re.compile(
    r"\b(?:not|n['’]t)\s+(?:(?:completely|entirely|quite|totally|100%|really|fully)\s+)?(?:sure|certain|clear)\b"
    r"|\bunclear\b|\bunsure\b|\bmaybe\b|\bperhaps\b|\bpossibly\b|\bprobably\b|\bone\s+of\s+(?:those|them|these|the\s+two)\b|\bor\s+so\b"
    r"|\bI\s+(?:think|believe|guess)\b"
    r"|\b(?:about|around|approximately|roughly|circa|some)\s+(?=[$£€¥]?\d)",
    re.I,
)
_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?]+(?=\s|$)|\n|$)")


@dataclass(frozen=True)
class Mention:
    """One value as a text writes it, and how it is stated."""

    kind: str
    text: str
    span: tuple[int, int]
    negated: bool = False
    #: where the alternatives it is one of start, in a statement ("15:00 or 16:00"); None if none
    group: int | None = None
    question: bool = False
    #: what to read the value from: the mention, and for a number the words after it ("4 minutes")
    reading: str = ""

    @property
    def alternative(self) -> bool:
        return self.group is not None

    @cached_property
    def said(self) -> TextFacts:
        return read_text(self.reading or self.text)


@dataclass
class Claims:
    """Every value a text mentions, each with how it is stated, plus whether the text is unsure."""

    text: str
    mentions: list[Mention]
    #: the uncertainty markers of the text's statements ("not sure", "maybe", "about $1,890")
    uncertain: list[str]


def _sentences(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_question) of each sentence."""
    out = []
    for m in _SENTENCE.finditer(text):
        if m.group(0).strip():
            out.append((m.start(), m.end(), m.group(0).rstrip().endswith("?")))
    return out


def _clause_start(text: str, pos: int) -> int:
    start = 0
    for m in _CLAUSE_END.finditer(text, 0, pos):
        if m.end() <= pos:
            start = m.end()
    return start


def _clause_end(text: str, pos: int) -> int:
    m = _CLAUSE_END.search(text, pos)
    return m.start() if m else len(text)


def _agent_formats(text: str) -> list[Fact]:
    """Values in the formats only an agent's text is read in (`facts.read_text`): "half past
    eight", "3.15 pm", "1.234,50 €", "18/10", "15.10.2024" — each one value, whatever the
    oracle-side parser makes of its pieces."""
    out = [Fact("time", m.group(0), None, m.span()) for m in _SPOKEN_TIME.finditer(text) if _spoken_times(m)]
    formats: tuple[tuple[re.Pattern[str], FactKind], ...] = ((_TIME_DOT_MER, "time"), (_EU_AMOUNT, "amount"), (_DOT_DATE, "date"), (_SLASH_DATE, "date"))
    for rx, kind in formats:
        out += [Fact(kind, m.group(0), None, m.span()) for m in rx.finditer(text)]
    return out


def _units(text: str, facts: list[Fact]) -> list[tuple[str, tuple[int, int]]]:
    """(kind, span) of each value, one per span, a value written in an agent's format over the
    pieces inside it; adjacent times joined by a range dash are one unit."""
    wide = [f.span for f in facts if f.key is None]  # `_agent_formats`
    by_span: dict[tuple[int, int], str] = {f.span: f.kind for f in facts if f.key is None}
    for f in facts:
        if f.key is not None and not any(f.span[0] < b and a < f.span[1] for a, b in wide):
            by_span.setdefault(f.span, f.kind)
    units = sorted(((k, s) for s, k in by_span.items()), key=lambda u: u[1])
    merged: list[tuple[str, tuple[int, int]]] = []
    for kind, span in units:
        if merged and merged[-1][0] == kind == "time" and _RANGE_GAP.match(text[merged[-1][1][1] : span[0]]):
            merged[-1] = (kind, (merged[-1][1][0], span[1]))
        else:
            merged.append((kind, span))
    return merged


_ALT_KINDS = {"number", "amount", "date", "time", "weekday", "month", "id"}


def _compatible(a: str, b: str) -> bool:
    """Can `b` be an alternative to `a`? The same kind, or a bare number standing for a value
    ("October 12 or 21", "3 or 4 pm")."""
    return a == b or (a in _ALT_KINDS and b in _ALT_KINDS and "number" in (a, b))


#: A value found in a text: (kind, span, group of alternatives or None, surface if not the span's text).
_Found = tuple[str, tuple[int, int], int | None, str | None]


def read_claims(text: str, gazetteer: Gazetteer | None = None) -> Claims:
    """Every value `text` mentions (the oracle-side parser of `facts`, on this text) and how each is stated."""
    text = text if isinstance(text, str) else str(text)
    units = _units(text, _extract(text, gazetteer) + _agent_formats(text))
    found = _special_alternatives(text, _chained_alternatives(text, units))
    sentences = _sentences(text)

    def question_at(pos: int) -> bool:
        return any(a <= pos < b and q for a, b, q in sentences)

    out = []
    for kind, (a, b), grp, surface in found:
        q = question_at(a)
        reading = " ".join([text[a:b], *re.findall(r"[A-Za-z]+", text[b : _clause_end(text, b)])[:3]]) if kind == "number" else ""
        out.append(Mention(kind, surface or text[a:b], (a, b), _negated(text, a, b, kind, gazetteer), None if q else grp, q, reading))
    uncertain = [m.group(0) for m in _UNCERTAIN.finditer(text) if not question_at(m.start())]
    return Claims(text, sorted(out, key=lambda x: x.span), uncertain)


def _chained_alternatives(text: str, units: list[tuple[str, tuple[int, int]]]) -> list[_Found]:
    """The units, each with its chain of alternatives ("A or B (or C)", named by where it starts),
    plus a capitalized phrase offered against a name ("Elena Rossi (or Tom Becker, ...)")."""
    group: dict[int, int] = {}
    extra: list[_Found] = []
    for i in range(len(units) - 1):
        (k1, s1), (k2, s2) = units[i], units[i + 1]
        if _compatible(k1, k2) and _ALTERNATIVE_GAP.match(text[s1[1] : s2[0]]) and text[s1[0] : s1[1]].lower() != text[s2[0] : s2[1]].lower():
            group[i + 1] = group.setdefault(i, s1[0])
    for i, (kind, span) in enumerate(units):
        m = _ALTERNATIVE_NAME.match(text[span[1] :]) if kind == "name" and i not in group else None
        nxt = units[i + 1][1][0] if i + 1 < len(units) else len(text)
        if m and span[1] + m.end(1) <= nxt:
            group[i] = span[0]
            extra.append(("name", (span[1] + m.start(1), span[1] + m.end(1)), span[0], None))
    return [(kind, span, group.get(i), None) for i, (kind, span) in enumerate(units)] + extra


def _special_alternatives(text: str, found: list[_Found]) -> list[_Found]:
    """Alternatives the oracle-side parser cannot see whole: cab types and sizes ("a Premium or a
    Van cab", "M or L") in place of what it read there, and two proper names ("at Cafe Lumiere or
    at the Harbour Bistro") where it read nothing."""
    for rx, word in ((_CAB_ALTERNATIVE, "{} cab"), (_SIZE_ALTERNATIVE, "size {}")):
        for m in rx.finditer(text):
            found = [x for x in found if not (x[1][0] < m.end() and m.start() < x[1][1])]
            found += [("name" if rx is _CAB_ALTERNATIVE else "id", m.span(g), m.start(), word.format(m.group(g))) for g in (1, 2)]
    for m in _PHRASE_ALTERNATIVE.finditer(text):
        if m.start() > _clause_start(text, m.start()) and not any(x[1][0] < m.end() and m.start() < x[1][1] for x in found):
            found += [("phrase", m.span(g), m.start(1), None) for g in (1, 2)]
    return found


def _negated(text: str, a: int, b: int, kind: str, gazetteer: Gazetteer | None) -> bool:
    """Is the value at text[a:b] negated: a negation shortly before it in its clause ("not $2,750",
    "can't do 15:00"), "instead of" right before it, or denied right after it ("Thursday doesn't
    work"; not for people: "Joe couldn't make 11" denies the time, not Joe)."""
    person = kind == "name" and gazetteer is not None and _is_person(text[a:b], gazetteer)
    if _NEGATION_OF_NEXT.search(text[max(0, a - 20) : a]):
        return True
    before = text[_clause_start(text, a) : a]
    for m in _NEGATION.finditer(before):
        if len(re.findall(r"[\w'’]+", before[m.end() :])) <= (_REACH_PERSON if person else _REACH):
            return True
    if person:
        return False
    return bool(_DENIED_AFTER.match(text[b : _clause_end(text, b)]))


def _is_person(surface: str, gazetteer: Gazetteer) -> bool:
    norm = normalize_text(surface)
    return any(norm in normalize_text(p) for p in gazetteer.people)
