"""Whether an agent's text carries the facts of the oracle's text, states them as the oracle does,
and contradicts none: the `strict` judge's check of one free-text argument (`check_text`).

How a text states its values (asserted, hedged, negated) is `orchestra.judging.claims`; what a
text says is `orchestra.judging.facts`. An answer to the user that confirms an action the user
asked for need not repeat what the user gave (`is_confirmation`, `needed_facts`).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from orchestra.judging.claims import Claims, Mention, read_claims
from orchestra.judging.facts import (
    _EMAIL,
    _STOPWORDS,
    MONTH_NAMES,
    NUMBER_WORDS,
    WEEKDAY_NAMES,
    Fact,
    Gazetteer,
    TextFacts,
    _extract,
    _stem,
    extract_facts,
    normalize_text,
    read_text,
)


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
        if any(m == month and d == day and (year is None or y is None or y == year) for m, d, y in said.dates):
            return True
        return day in said.days  # "Friday the 18th": the month goes without saying
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


def check_text(oracle_text: Any, agent_text: Any, gazetteer: Gazetteer | None = None, context: str = "", request: str | None = None) -> FactCheck:
    """Accept `agent_text` iff it carries every fact of `oracle_text`, states each as the oracle
    does, and contradicts none.

    * **carries**: every fact of the oracle's text is in the agent's text (`covers`) — except in a
      terse confirmation (`is_confirmation`) answering the user's message of this turn
      (`request`, given for answers to the user only), which needs only `needed_facts`;
    * **states each as the oracle does** (`misstatements`): a fact the oracle asserts is not
      offered only as one of alternatives ("15:00 or 16:00": a hedge), nor negated ("not $2,750
      - it's $2,570": a denial); the text is not unsure of itself ("not sure", "maybe");
    * **contradicts none**: no value of a kind that matters — a person of the universe, a month,
      date, weekday, time, amount, percentage, count, an id shaped like the oracle's, a quoted
      message — that neither the oracle's text nor `context` (the user's messages) has: "the
      email went to Amy Davey" when the oracle's went to Rodney, "plus a $25.00 late fee".
    """
    oracle = "" if oracle_text is None else str(oracle_text)
    agent = "" if agent_text is None else str(agent_text)
    required = extract_facts(oracle, gazetteer)
    if not required:
        return FactCheck(True, [], [], "the oracle's text carries no checkable fact (amount, date, time, id, name): not checked")
    said = read_text(agent)
    confirmation = bool(request) and is_confirmation(agent, said, required, oracle, context, gazetteer)
    needed = needed_facts(required, request, context, gazetteer) if confirmation else required
    missing = [f for f in needed if not covers(said, f) and not _the_user_by_first_name(f, said, gazetteer)]
    claims = read_claims(agent, gazetteer)
    problems = ["missing or wrong: " + ", ".join(f.describe() for f in missing)] if missing else []
    problems += misstatements(required, said, claims, read_claims(oracle, gazetteer), oracle, context)
    conflicts = _conflicts(said, oracle, context, required, gazetteer) + extra_values(agent, claims, oracle, context, required, gazetteer)
    if conflicts:
        problems.append("not in the oracle's text: " + ", ".join(dict.fromkeys(conflicts)))
    if problems:
        return FactCheck(False, required, missing, "; ".join(problems))
    if confirmation and len(needed) < len(required):
        return FactCheck(True, required, [], f"a confirmation of the action the user asked for: {len(needed)} of {len(required)} fact(s) needed, all present")
    return FactCheck(True, required, [], f"all {len(required)} fact(s) present")


def misstatements(required: list[Fact], said: TextFacts, claims: Claims, oracle_claims: Claims, oracle: str, context: str) -> list[str]:
    """How the agent's text misstates facts it does mention: hedged, denied, or unsure of itself."""
    out = []
    hedged = [f for f in required if covers(said, f) and _only_alternatives(f, claims, oracle_claims)]
    hedged_names = _hedged_phrases(claims, oracle, context)
    if hedged or hedged_names:
        out.append("offered only as one of alternatives (a hedge): " + ", ".join([f.describe() for f in hedged] + [repr(p) for p in hedged_names]))
    denied = [f for f in required if covers(said, f) and f not in hedged and _denied(f, claims, oracle_claims)]
    if denied:
        out.append("negated, where the oracle's text asserts it: " + ", ".join(f.describe() for f in denied))
    unsure = [u for u in claims.uncertain if normalize_text(u) not in normalize_text(oracle)]
    if unsure:
        out.append("unsure of itself: " + ", ".join(repr(u.strip()) for u in unsure))
    return out


def _the_user_by_first_name(fact: Fact, said: TextFacts, gazetteer: Gazetteer | None) -> bool:
    """The user's own full name (a signature, "Caitlin Garcia") is said by the first name ("Caitlin")."""
    if fact.kind != "name" or gazetteer is None or not gazetteer.user or str(fact.key).strip() != normalize_text(gazetteer.user).strip():
        return False
    return f" {str(fact.key).split()[0]} " in said.norm


def _occurrences(claims: Claims, fact: Fact) -> list[Mention]:
    """The mentions of the text that state the oracle's `fact` (each read alone, `covers`)."""
    return [m for m in claims.mentions if (m.kind == fact.kind or (m.kind == "date" and fact.kind in ("weekday", "month"))) and covers(m.said, fact)]


def _only_alternatives(fact: Fact, claims: Claims, oracle_claims: Claims) -> bool:
    """Is `fact` written only as one of alternatives in a statement, where the oracle's text
    states it outright? (Where no single mention states it, it is asserted: not a hedge.)"""
    mine = _occurrences(claims, fact)
    if not mine or not all(m.alternative for m in mine):
        return False
    return not any(m.alternative for m in _occurrences(oracle_claims, fact))


def _hedged_phrases(claims: Claims, oracle: str, context: str) -> list[str]:
    """Names the oracle's text has, offered only against a name that neither it nor the user's
    messages have ("at Cafe Lumiere or at the Harbour Bistro")."""
    said_by_oracle = normalize_text(oracle)
    known = normalize_text(oracle + "\n" + context)
    out = []
    groups: dict[int, list[str]] = {}
    for m in claims.mentions:
        if m.kind == "phrase" and m.group is not None:
            groups.setdefault(m.group, []).append(m.text)
    for members in groups.values():
        ours = [p for p in members if normalize_text(p) in said_by_oracle]
        if ours and any(normalize_text(p) not in known for p in members):
            elsewhere = normalize_text(claims.text).count(normalize_text(ours[0]).strip())
            if elsewhere <= 1:
                out.append(ours[0])
    return out


def _denied(fact: Fact, claims: Claims, oracle_claims: Claims) -> bool:
    """Is `fact` negated somewhere in the agent's text while the oracle's text never negates it?"""
    mine = _occurrences(claims, fact)
    if not any(m.negated for m in mine):
        return False
    return not any(m.negated for m in _occurrences(oracle_claims, fact))


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


# ------------------------------------------------------------------------------------------------
# What an answer to the user must carry: the confirmation rule
# ------------------------------------------------------------------------------------------------

#: A request for information: a question, or "tell me / give me / remind me of" something.
_ASKS = re.compile(
    r"\?"
    r"|\b(?:tell|show|give|send|remind)\s+me\s+(?:of\s+|about\s+)?(?:its|the|their|his|her|what|which|who|whom|how|where|whether)\b"
    r"|\blet\s+me\s+know\s+(?:its|the|their|his|her|what|which|who|whom|how|where|whether)\b",
    re.I,
)
#: A report that the action is done: "Done!", "Sent.", "It's in your calendar", "Roger knows".
_DONE = re.compile(
    r"\b(?:done|all\s+set|sorted|sent|booked|posted|ordered|saved|moved|forwarded|replied|texted|messaged|emailed|added|created|"
    r"cancell?ed|updated|placed|checked\s+out|asked|blocked|deleted|confirmed|scheduled|set\s+up|knows|got\s+(?:it|your)|has\s+(?:it|your|the))\b",
    re.I,
)
#: A report that something is not done: "I couldn't book the cab", "nothing posted yet".
_NOT_DONE = re.compile(r"n['’]t\b|\bnot\b|\bunable\b|\bfailed\b|\bnothing\b|\bno\s+longer\b|\bcannot\b", re.I)
#: A quoted passage of four words or more (a message as sent), its inside in group 1.
_QUOTE = re.compile(r"(?:^|(?<=[\s(:]))['\"‘“]((?:[^'\"‘’“”\n\s]+\s+){3,}[^\"‘’“”\n]*?)['\"’”](?=$|[\s.,;:!?)])")
#: A capitalized word inside a sentence (a proper name), for names the oracle's text does not have.
_PROPER = re.compile(r"(?<=[a-z0-9,;'’)]\s)([A-Z][a-z][\w'’-]*)")
#: Words that carry no content, for the wording a confirmation shares with the oracle's report.
_FUNCTION_WORDS = set(
    "a an the and or but so to of in on at by for with from into as is are was were be been it its it's this that these those "
    "i you he she we they me him her us them my your his our their ll re s ve m d t have has had do does did will would "
    "can could should all there here then than now just also".split()
)


def is_confirmation(agent: str, said: TextFacts, required: list[Fact], oracle: str, context: str, gazetteer: Gazetteer | None) -> bool:
    """Is the agent's text a terse confirmation of the action (docs/judges.md, "Terse
    confirmations")? It says the action is done ("Done!", "Sent.", "Roger knows") and nothing is
    not done, answers an oracle that asks the user nothing, and restates the oracle's report
    with no hole in it.

    A text that restates some details of a kind and not the others (one of two times, a
    place but not the cab type), a message as sent (a quoted passage), or the report's own
    wording (four words, two of them content words, that the user's messages do not have) is a
    report, and a report must be whole: "Booked a cab to Andersonhaven Central Station" may not
    leave out that it is the Default cab. A proper name that neither the oracle's text nor the
    user's messages have makes it a report of something else.
    """
    if "?" in oracle or not _DONE.search(agent) or _NOT_DONE.search(agent) or _QUOTE.search(agent):
        return False  # an oracle that asks the user something is answered by asking it, not by "Done"
    by_kind: dict[str, list[bool]] = {}
    for f in required:
        by_kind.setdefault(_detail_kind(f, gazetteer), []).append(covers(said, f))
    if any(any(covered) and not all(covered) for kind, covered in by_kind.items() if kind != "person"):
        return False  # it restates some of the times (titles, amounts, ...) and not all: a report with a hole
    allowed = normalize_text(oracle + "\n" + context)
    if any(normalize_text(w) not in allowed for w in _PROPER.findall(agent) if not w.isupper()):
        return False
    return not _shared_wording(agent, oracle, context)


def _detail_kind(fact: Fact, gazetteer: Gazetteer | None) -> str:
    """The kind of detail a fact is, for "restates some of them": people apart from other names,
    dates with their weekdays and months."""
    if _is_person(fact, gazetteer):
        return "person"
    return {"weekday": "date", "month": "date"}.get(fact.kind, fact.kind)


def _ngrams(text: str, n: int = 4) -> set[tuple[str, ...]]:
    words = normalize_text(text).split()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def _shared_wording(agent: str, oracle: str, context: str) -> bool:
    """Does the agent's text repeat a run of the oracle's report — four words, two of them content
    words — that the user's own messages do not have?"""
    shared = (_ngrams(agent) & _ngrams(oracle)) - _ngrams(context)
    return any(sum(w not in _FUNCTION_WORDS for w in gram) >= 2 for gram in shared)


def asks_for_information(request: str) -> bool:
    """Does the user's message ask for information (a question, "tell me its rent", "remind me of
    his number"), rather than for an action to be done ("book ..., and tell me once it's booked")?"""
    return bool(_ASKS.search(request or ""))


def needed_facts(required: list[Fact], request: str | None, context: str, gazetteer: Gazetteer | None) -> list[Fact]:
    """The facts of the oracle's text that a terse confirmation (`is_confirmation`) must carry.

    All of them when the user's message of this turn (`request`) asked for information. When it
    asked for an action, the answer confirms the action, and the user needs no telling of what
    the user's own messages (`context`) already say — the details of the action the user gave
    ("Sent!" for "in 3 minutes, text Brittany '...' and tell me once it's sent"; a person the
    oracle names in full is known when the user named them by first name). What the user did not
    give — what was found, proposed, chosen or charged — must still be said: "Done, moved the
    lunch as Stacey asked" does not say the new time.
    """
    if request is None or asks_for_information(request):
        return required
    known = read_text(context)
    names = normalize_text(context)
    firsts = [str(f.key).split()[0] for f in required if _is_person(f, gazetteer)]

    def named_by_first_name(f: Fact) -> bool:  # "text Brittany" names Brittany Tate, unless two people are called Brittany
        first = str(f.key).split()[0]
        return _is_person(f, gazetteer) and f" {first} " in names and firsts.count(first) == 1

    return [f for f in required if not covers(known, f) and not named_by_first_name(f)]


def new_facts(oracle_text: str, context: str, gazetteer: Gazetteer | None = None) -> list[Fact]:
    """The facts of the oracle's text that the user's messages (`context`) do not give: what the
    agent found, proposed or chose (the content of an answer, as opposed to a confirmation)."""
    known = read_text(context)
    return [f for f in extract_facts(oracle_text, gazetteer) if not covers(known, f)]


def _is_person(fact: Fact, gazetteer: Gazetteer | None) -> bool:
    """Is the fact a person of the universe (named in full, or by first or last name)?"""
    if fact.kind != "name" or gazetteer is None:
        return False
    words = f" {str(fact.key).strip()} "
    return any(words in normalize_text(p) for p in gazetteer.people)


# ------------------------------------------------------------------------------------------------
# Values the oracle's text does not have
# ------------------------------------------------------------------------------------------------

_PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(?:%|per\s?cent\b)", re.I)
_RANGE_SPLIT = re.compile(r"\s*(?:-|–|—|\bto\b|\buntil\b|\btill\b)\s*", re.I)
#: First names that are ordinary words: never read as a person on their own.
_WORD_NAMES = {
    "may",
    "will",
    "june",
    "april",
    "august",
    "bill",
    "mark",
    "rose",
    "grace",
    "joy",
    "hope",
    "faith",
    "summer",
    "dawn",
    "amber",
    "pat",
    "sue",
    "art",
}


def extra_values(agent: str, claims: Claims, oracle: str, context: str, required: list[Fact], gazetteer: Gazetteer | None) -> list[str]:
    """Values of the agent's text that neither the oracle's text nor the user's tasks have, of the
    kinds that matter to the user: times, amounts, percentages, counts of a thing the oracle
    counts, ids shaped like one of the oracle's, and people named by first name.

    Alternatives that are reported, not hedged ("Kimberly offered 11:00 or 14:00; I replied that
    11:00 works") are not contradictions: one of them is a fact the text asserts elsewhere.
    """
    known = read_text(oracle + "\n" + context)
    reported = _reported_alternatives(claims, required)
    out: list[str] = []
    for m in claims.mentions:
        if m.group in reported:
            continue
        if m.kind == "time":
            for end in _RANGE_SPLIT.split(m.text):
                times = read_text(end).times if end.strip() else set()
                if times and not times & known.times:
                    out.append(f"time {end.strip()!r}")
        elif m.kind == "amount":
            values = m.said.numbers
            if values and not any(_derivable(v, known.numbers) for v in values):
                out.append(f"amount {m.text!r}")
        elif m.kind == "id":
            key = _id_shape(m.text)
            if key is not None and not (m.said.ids & known.ids) and key in {_id_shape(f.text) for f in required if f.kind == "id"}:
                out.append(f"id {m.text!r}")
    for q in _QUOTE.finditer(agent):  # a message quoted otherwise than it was sent
        if normalize_text(q.group(1)) not in normalize_text(oracle + "\n" + context):
            out.append(f"quote {q.group(1)!r}")
    for pm in _PERCENT.finditer(agent):
        value = Decimal(pm.group(1)).normalize()
        if value not in known.numbers:
            out.append(f"percentage {pm.group(0)!r}")
    out += _other_counts(agent, oracle + "\n" + context)
    if gazetteer is not None:
        out += _first_names(agent, oracle + "\n" + context, gazetteer)
    return out


def _reported_alternatives(claims: Claims, required: list[Fact]) -> set[int | None]:
    """Groups of alternatives one of which the text asserts elsewhere (a report of options), plus
    None (a mention that is no alternative)."""
    out: set[int | None] = set()
    for f in required:
        mine = _occurrences(claims, f)
        if any(not m.alternative for m in mine):
            out.update(m.group for m in mine if m.alternative)
    out.discard(None)
    return out


def _derivable(value: Decimal, known: set[Decimal]) -> bool:
    """Is the amount one the oracle or the task has, or a unit price or a total of them (
    "two scarves at $39 each" for "$78")?"""
    if value in known:
        return True
    for k in known:
        if k > 0 and any((value * n).normalize() == k for n in range(2, 13)):
            return True
    amounts = sorted(known)
    return any((a + b).normalize() == value for i, a in enumerate(amounts) for b in amounts[i + 1 :])


def _id_shape(text: str) -> str | None:
    """An id's shape: what kind of code it is ("INV-3810" -> "A-9", "4B" -> "9A"; e-mail, URL, phone, file)."""
    t = text.strip()
    if "@" in t:
        return "email"
    if "://" in t:
        return "url"
    if re.fullmatch(r"\+?[\d ().-]{8,}", t):
        return "phone"
    if "/" in t or re.search(r"\.\w{2,4}$", t):
        return "file"
    if not (re.search(r"\d", t) and re.search(r"[A-Za-z]", t)):
        return None
    return re.sub(r"(?:A)+", "A", re.sub(r"(?:9)+", "9", re.sub(r"[A-Za-z]", "A", re.sub(r"\d", "9", t))))


_COUNT_WORDS = {w: n for w, n in NUMBER_WORDS.items() if " " not in w and n <= 20 and w not in ("once", "twice", "single", "both")}


def _counts(text: str) -> set[tuple[Decimal, str]]:
    """(number, the noun it counts) of each small count in `text`: "2 bedrooms", "three
    listings", "14 of your contacts" (digits the oracle-side parser reads as a number, not as part
    of a date, time, amount or id; number words one to twenty)."""
    out = set()
    for f in _extract(text, None):
        if f.kind == "number" and f.key == f.key.to_integral_value() and 0 < f.key < 100:
            words = [w for w in re.findall(r"[A-Za-z]+", text[f.span[1] : f.span[1] + 40]) if w.lower() not in _STOPWORDS]
            if words:
                out.add((f.key, _stem(words[0])))
    for m in re.finditer(rf"(?<![\w-])({'|'.join(_COUNT_WORDS)})\s+(?:of\s+(?:the|your|my|their)\s+)?([A-Za-z]+)", text, re.I):
        out.add((Decimal(_COUNT_WORDS[m.group(1).lower()]), _stem(m.group(2))))
    return out


def _other_counts(agent: str, known_text: str) -> list[str]:
    """A count of something the oracle or the task counts, by another number ("3 bedrooms" where
    the listing has 2, "15 of your contacts" for 14) that they never give for that thing."""
    known = _counts(known_text)
    out = []
    for value, noun in sorted(_counts(agent)):
        same_thing = {v for v, n in known if n == noun}
        if same_thing and value not in same_thing:
            out.append(f"count {value} {noun}")
    return out


def _first_names(agent: str, allowed_text: str, gazetteer: Gazetteer) -> list[str]:
    """People of the universe named by first name only whom neither the oracle nor the tasks name."""
    allowed = normalize_text(allowed_text)
    user_first = normalize_text(gazetteer.user or "").split()[:1]
    full = normalize_text(agent)
    out = []
    firsts = sorted({p.split()[0] for p in gazetteer.people if p.split()})
    named_in_full = {p.split()[0] for p in gazetteer.people if normalize_text(p) in full}  # the full-name rule's
    for first in firsts:
        norm = normalize_text(first)
        if norm.strip() in _WORD_NAMES or norm.split()[:1] == user_first or norm in allowed or first in named_in_full:
            continue
        if re.search(rf"(?<![\w-]){re.escape(first)}(?![\w-])", agent) and norm in full:
            out.append(f"person {first!r}")
    return out
