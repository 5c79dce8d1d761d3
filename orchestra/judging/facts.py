"""Facts in free text: what a text says (amounts, dates, times, ids, names), read leniently.

The `strict` judge mode checks the free-text arguments ARE would hand to an LLM (the answer to the
user, email and message bodies, titles, locations) without one: the *facts* the oracle's text
carries must appear in the agent's text, in any wording or format. A fact is

| kind      | examples in the oracle's text                    | the same fact in an agent's text            |
|-----------|--------------------------------------------------|---------------------------------------------|
| `amount`  | `$165.99`, `€1,172.38`, `£103.70`                | `165.99`, `165.99 EUR`, `USD 165.99`        |
| `number`  | `54 cab rides`, `2 x`, `zip code 2929`           | `54`, `two`                                 |
| `date`    | `Friday, October 18`, `Oct 18, 2024`, `2024-10-18` | `18 October`, `10/18`, `Oct. 18th`        |
| `month`   | `September 2024`                                 | `Sept`, `2024-09-...`                       |
| `weekday` | `Thursday works for me`                          | `Thu`                                       |
| `time`    | `15:00`, `3 pm`, `08:30`                         | `3pm`, `3:00 PM`, `15h00`, `8:30 am`        |
| `id`      | `INV-3810`, e-mail addresses, URLs, phone numbers, file names, `AUTUMN11`, `Room 4B` | same id, case, spaces and dashes aside |
| `name`    | names of entities of the scenario's universe (contacts, products, listings, events, ...) and short quoted titles | same name, case, accents and punctuation aside |

Amounts ignore the currency (the issue's "165.99", "$165.99", "165.99 EUR" are one amount). A date
without a year in the agent's text matches the oracle's date with a year; an explicit other year
does not. A time written without am/pm and an hour <= 12 matches both readings.

Everything here is pure Python (no ARE, no LLM) and deterministic. Whether an agent's text carries
the oracle's facts is `orchestra.judging.fact_check`; plausible wrong versions of a text (the
`wrong_answer` perturbation) are `orchestra.judging.mutation`; a scenario's universe names (the
gazetteer) are read by `orchestra.judging.scenario_names`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

FactKind = Literal["amount", "number", "date", "month", "weekday", "time", "id", "name"]

MONTHS = {
    "january": 1,
    "jan": 1,
    "february": 2,
    "feb": 2,
    "march": 3,
    "mar": 3,
    "april": 4,
    "apr": 4,
    "may": 5,
    "june": 6,
    "jun": 6,
    "july": 7,
    "jul": 7,
    "august": 8,
    "aug": 8,
    "september": 9,
    "sept": 9,
    "sep": 9,
    "october": 10,
    "oct": 10,
    "november": 11,
    "nov": 11,
    "december": 12,
    "dec": 12,
}
MONTH_NAMES = ["", "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
WEEKDAYS = {
    "monday": 0,
    "mon": 0,
    "tuesday": 1,
    "tue": 1,
    "tues": 1,
    "wednesday": 2,
    "wed": 2,
    "thursday": 3,
    "thu": 3,
    "thur": 3,
    "thurs": 3,
    "friday": 4,
    "fri": 4,
    "saturday": 5,
    "sat": 5,
    "sunday": 6,
    "sun": 6,
}
WEEKDAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
NUMBER_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "a dozen": 12,
    "a couple of": 2,
    "both": 2,
    "single": 1,
    "once": 1,
    "twice": 2,
}

_MONTH_RE = r"(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_WEEKDAY_RE = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues|tue|wed|thurs|thur|thu|fri|sat|sun)\.?"
_ORD = r"(?:st|nd|rd|th)?"
_MER = r"(a\.?m\.?|p\.?m\.?)"
_CURRENCY_PRE = r"(?:[$£€¥]|usd|eur|gbp|us\$)"
_CURRENCY_POST = r"(?:usd|eur|gbp|dollars?|euros?|pounds?|bucks|[$£€])"
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_UNITS = r"(?:ml|l|g|kg|cm|mm|km|gb|tb|mb|oz|lb|lbs|in|ft)"

_URL = re.compile(r"https?://[^\s<>()'\"]+[^\s<>()'\".,;:!?]")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"(?<![\w+])\+?\d[\d ().-]{6,}\d(?!\w)")
_PATH = re.compile(r"(?<![\w/])(?:/[\w.-]+)+/?|\b[\w-]+\.(?:pdf|docx?|txt|csv|xlsx?|png|jpe?g|pptx?|md|json|zip)\b", re.I)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})(?:/(\d{2,4}))?\b")
_DATE_MD = re.compile(rf"(?:\b({_WEEKDAY_RE}),?\s+)?\b({_MONTH_RE})\s+(\d{{1,2}}){_ORD}\b(?:,?\s+(\d{{4}})\b)?", re.I)
_DATE_DM = re.compile(rf"(?:\b({_WEEKDAY_RE}),?\s+)?(?:the\s+)?\b(\d{{1,2}}){_ORD}(?:\s+of)?\s+({_MONTH_RE})(?![a-z])(?:,?\s+(\d{{4}})\b)?", re.I)
_MONTH_YEAR = re.compile(rf"\b({_MONTH_RE})(?:\s+(\d{{4}}))?(?![a-z])", re.I)
_WEEKDAY = re.compile(rf"\b({_WEEKDAY_RE})(?![a-z])", re.I)
_TIME_RANGE_MER = re.compile(rf"\b(\d{{1,2}})(?::(\d{{2}}))?\s*(?:-|–|to|until|till)\s*(\d{{1,2}})(?::(\d{{2}}))?\s*{_MER}(?![a-z])", re.I)
_TIME_MER = re.compile(rf"\b(\d{{1,2}})(?::(\d{{2}}))?\s*{_MER}(?![a-z])", re.I)
_TIME_COLON = re.compile(r"\b(\d{1,2})(?::|h)(\d{2})\b(?!:\d)")
_TIME_H = re.compile(r"\b(\d{1,2})h\b")
_TIME_WORDS = re.compile(r"\b(noon|midday|midnight)\b", re.I)
_RATIO = re.compile(r"\b\d+:\d\b")
_AMOUNT_PRE = re.compile(rf"{_CURRENCY_PRE}\s?({_NUM})(?!\d)", re.I)
_AMOUNT_POST = re.compile(rf"(?<![\w.,])({_NUM})\s?{_CURRENCY_POST}(?![a-z])", re.I)
_UNIT_QTY = re.compile(rf"\b(\d+(?:\.\d+)?)\s?({_UNITS})\b", re.I)
_CODE = re.compile(r"\b(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Za-z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\b")
_NUMBER = re.compile(rf"(?<![\w.])({_NUM})(?![\w]|\.\d)")
_SIZES = {
    "xxs": "xxs",
    "xs": "xs",
    "s": "s",
    "m": "m",
    "l": "l",
    "xl": "xl",
    "xxl": "xxl",
    "small": "s",
    "medium": "m",
    "large": "l",
    "extra large": "xl",
    "extra-large": "xl",
}
_SIZE = re.compile(r"\b(?:size|wears|wear)\s+(?:an?\s+|in\s+)?(XXS|XS|S|M|L|XL|XXL|xxs|xs|s|m|l|xl|xxl|small|medium|large|extra[- ]large)\b", re.I)
_STOPWORDS = {"of", "the", "a", "an", "your", "my", "in", "at", "on", "and", "x", "for", "to", "with", "is", "are", "was", "were"}
#: A cab's service type said as such ("Default cab", "Premium ride"): a fact, although the bare
#: words are ordinary words (`_STOP_NAMES`); booking a Premium cab is not booking a Default one.
_CAB_SERVICE = re.compile(r"\b(Default|Premium|Van)(?=\s+(?:cab|ride|taxi|car)s?\b)")
# Agent-side formats only (what an agent may write; the oracle's facts are parsed as before):
_TIME_DOT_MER = re.compile(rf"\b(\d{{1,2}})\.(\d{{2}})\s*{_MER}(?![a-z])", re.I)  # "3.15 pm"
_HOUR_WORDS = {w: i + 1 for i, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split())}
_PAST_WORDS = {"five": 5, "ten": 10, "quarter": 15, "a quarter": 15, "twenty": 20, "twenty-five": 25, "twenty five": 25, "half": 30}
_SPOKEN_TIME = re.compile(
    r"\b(?:(a quarter|quarter|half|twenty[- ]five|twenty|ten|five)\s+(past|to)\s+)?"
    rf"(\d{{1,2}}|{'|'.join(_HOUR_WORDS)})\b(\s+o['’]clock)?"
    rf"(?:\s+(?:in\s+the\s+(morning|afternoon|evening)|(at\s+night)|{_MER}(?![a-z])))?",
    re.I,
)
#: "1.234,50 €", "1 234,50 EUR", "€ 12,50": a decimal comma, unambiguous only next to the euro
_EU_AMOUNT = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:[. ]\d{3})+,\d{2}|\d+,\d{2})\s?(?:€|eur\b|euros?\b)|(?:€|\beur)\s?(\d{1,3}(?:[. ]\d{3})+,\d{2}|\d+,\d{2})(?![\d,])",
    re.I,
)
#: A day of the month without a month, after a weekday or "the": "Friday the 18th", "Saturday 19th".
_DAY_ONLY = re.compile(rf"(?:\b{_WEEKDAY_RE},?\s+(?:the\s+)?|\bthe\s+)(\d{{1,2}})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?{_MONTH_RE})", re.I)
_DOT_DATE = re.compile(r"\b(\d{1,2})\.(\d{1,2})\.(\d{4}|\d{2})\b")  # "15.10.2024": day first


def _spoken_times(m: re.Match[str]) -> list[int]:
    """ "quarter past three", "half past eight in the evening", "3 o'clock": said in words."""
    past, direction, hour, oclock, part, night, mer = m.groups()
    if not (past or oclock):
        return []  # a bare number is not a time
    h = int(hour) if hour.isdigit() else _HOUR_WORDS[hour.lower()]
    if not 1 <= h <= 12:
        return []
    offset = _PAST_WORDS[" ".join(past.lower().replace("-", " ").split()).replace("twenty five", "twenty-five")] if past else 0
    minutes = h * 60 + (-offset if direction and direction.lower() == "to" else offset)
    minutes %= 12 * 60
    if mer:
        pm = mer.lower().startswith("p")
    elif part or night:
        pm = bool(night) or part.lower() in ("afternoon", "evening")
    else:
        return [minutes, minutes + 12 * 60]
    return [minutes + (12 * 60 if pm else 0)]


_QUOTED = re.compile(r"(?:(?<=^)|(?<=[\s(:]))['\"‘“]([^'\"‘’“”\n]{2,60}?)['\"’”](?=$|[\s.,;:!?)])")


@dataclass(frozen=True)
class Fact:
    """One checkable fact: its kind, how the oracle wrote it, and its normalized value."""

    kind: FactKind
    text: str
    key: Any
    span: tuple[int, int] = (0, 0)
    #: For small numbers (< 100): the words that follow ("2 bedrooms" -> {"bedroom"}), since a
    #: count is only the same fact when it counts the same thing ("which one" is not "1 bedroom").
    context: frozenset[str] = frozenset()

    def describe(self) -> str:
        return f"{self.kind} {self.text!r}"


def normalize_text(text: str) -> str:
    """Lowercase, accents stripped, punctuation as spaces, single spaces (for name matching)."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = re.sub(r"[’'`]s\b", "", text)  # possessive: "Amanda's" ~ "Amanda"
    text = re.sub(r"[^a-z0-9]+", " ", text)
    return f" {text.strip()} "


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", "")).normalize()
    except InvalidOperation:
        return None


def _id_key(text: str) -> str:
    return re.sub(r"[^a-z0-9@.:/_+-]", "", text.lower()).strip(".")


def _phone_key(text: str) -> str | None:
    digits = re.sub(r"\D", "", text)
    return digits[-9:] if len(digits) >= 8 else None


def _time_minutes(hour: str, minute: str | None, mer: str | None) -> list[int]:
    h, m = int(hour), int(minute or 0)
    if m > 59 or h > 24:
        return []
    if mer:
        if h > 12 or h == 0:
            return []
        pm = mer.lower().startswith("p")
        h = (h % 12) + (12 if pm else 0)
        return [h * 60 + m]
    if h == 24:
        h = 0
    return [h * 60 + m]


class _Spans:
    """Character spans already consumed by a more specific fact."""

    def __init__(self) -> None:
        self.taken: list[tuple[int, int]] = []

    def free(self, a: int, b: int) -> bool:
        return all(b <= x or a >= y for x, y in self.taken)

    def take(self, a: int, b: int) -> None:
        self.taken.append((a, b))


@dataclass
class Gazetteer:
    """Names of entities that exist in a scenario's universe (normalized), for `name` facts."""

    names: set[str] = field(default_factory=set)
    max_words: int = 1
    #: Full names of the universe's people other than the user, as written (plausible wrong names).
    people: list[str] = field(default_factory=list)
    #: The scenario's year (weekdays of dates written without one).
    year: int | None = None
    #: The user's own full name (a signature or a greeting naming the user names no one else).
    user: str | None = None

    @classmethod
    def of(cls, names: Iterable[str]) -> Gazetteer:
        g = cls()
        for n in names:
            g.add(n)
        return g

    def add(self, name: str) -> None:
        if "," in name:  # an address: each part is a name ("51 Kelly-Hay Cove" -> "Kelly-Hay Cove")
            for part in name.split(","):
                part = re.sub(r"^\s*(?:(?:apt|suite|unit|flat|no)\.?\s*)?\d+\w*\.?\s*", "", part.strip(), flags=re.I)
                self._add_one(part)
            return
        self._add_one(name)

    def _add_one(self, name: str) -> None:
        norm = normalize_text(name).strip()
        if len(norm) < 3 or not re.search(r"[a-z]", norm) or norm in _STOP_NAMES:
            return
        if not any(c.isupper() for c in name):
            return  # "dentist appointment": wording, not a name
        self.names.add(norm)
        self.max_words = max(self.max_words, len(norm.split()))


#: Universe strings that are ordinary words, never names worth checking.
_STOP_NAMES = {
    "the",
    "and",
    "you",
    "your",
    "for",
    "with",
    "from",
    "home",
    "work",
    "inbox",
    "sent",
    "draft",
    "drafts",
    "trash",
    "male",
    "female",
    "other",
    "none",
    "null",
    "true",
    "false",
    "user",
    "single",
    "married",
    "yes",
    "new",
    "default",
    "premium",
    "van",
    "friend",
    "family",
    "coworker",
    "documents",
    "downloads",
    "today",
    "tomorrow",
}


def extract_facts(text: str, gazetteer: Gazetteer | None = None) -> list[Fact]:
    """The checkable facts of an oracle text, in text order, each value once."""
    return _dedupe(_extract(text, gazetteer))


def _extract(text: str, gazetteer: Gazetteer | None) -> list[Fact]:
    """Every fact occurrence (a value written twice appears twice), most specific parse first."""
    if not isinstance(text, str) or not text.strip():
        return []
    facts: list[Fact] = []
    spans = _Spans()

    def add(kind: FactKind, m: re.Match[str], key: Any, group: int = 0) -> None:
        a, b = m.span(group)
        if key is None or not spans.free(a, b):
            return
        spans.take(a, b)
        facts.append(Fact(kind, m.group(group), key, (a, b)))

    for m in _URL.finditer(text):
        add("id", m, _id_key(m.group(0)).rstrip("/"))
    for m in _EMAIL.finditer(text):
        add("id", m, m.group(0).lower())
    for m in _ISO_DATE.finditer(text):
        add("date", m, (int(m.group(2)), int(m.group(3)), int(m.group(1))))
    for m in _PHONE.finditer(text):
        if m.group(0).startswith("+") or len(re.sub(r"\D", "", m.group(0))) >= 9:
            add("id", m, ("phone", _phone_key(m.group(0))))
    for m in _PATH.finditer(text):
        add("id", m, _id_key(m.group(0)).rstrip("/"))
    for rx, mon_g, day_g in ((_DATE_MD, 2, 3), (_DATE_DM, 3, 2)):
        for m in rx.finditer(text):
            month = MONTHS.get(m.group(mon_g).lower().rstrip("."))
            day = int(m.group(day_g))
            if month and 1 <= day <= 31:
                add("date", m, (month, day, int(m.group(4)) if m.group(4) else None))
    for m in _TIME_RANGE_MER.finditer(text):
        if spans.free(*m.span()):
            mer = m.group(5)
            for h, mi, _g in ((m.group(1), m.group(2), 1), (m.group(3), m.group(4), 3)):
                for t in _time_minutes(h, mi, mer):
                    facts.append(Fact("time", m.group(0), t, m.span()))
            spans.take(*m.span())
    for m in _TIME_MER.finditer(text):
        for t in _time_minutes(m.group(1), m.group(2), m.group(3)):
            add("time", m, t)
    for m in _TIME_COLON.finditer(text):
        for t in _time_minutes(m.group(1), m.group(2), None):
            add("time", m, t)
    for m in _TIME_WORDS.finditer(text):
        add("time", m, 0 if m.group(1).lower() == "midnight" else 720)
    for m in _RATIO.finditer(text):
        add("id", m, m.group(0))
    for m in _AMOUNT_PRE.finditer(text):
        add("amount", m, _decimal(m.group(1)))
    for m in _AMOUNT_POST.finditer(text):
        add("amount", m, _decimal(m.group(1)))
    for m in _UNIT_QTY.finditer(text):
        add("id", m, f"{_decimal(m.group(1))}{m.group(2).lower()}")
    if gazetteer is not None:
        for fact in _name_facts(text, gazetteer, spans):
            facts.append(fact)
    for m in _CAB_SERVICE.finditer(text):
        add("name", m, m.group(1).lower(), 1)
    for m in _CODE.finditer(text):
        token = m.group(0)
        if re.fullmatch(r"\d+-[a-z]+", token):  # "2-bedroom": a number, the word is wording
            continue
        add("id", m, _id_key(token).replace("-", ""))
    for m in _MONTH_YEAR.finditer(text):
        if not spans.free(*m.span()):
            continue
        word = m.group(1)
        if word.lower().rstrip(".") == "may" and not word[0].isupper():
            continue
        if len(word.rstrip(".")) <= 3 and not word[0].isupper():
            continue
        add("month", m, MONTHS[word.lower().rstrip(".")], 1)
        if m.group(2):
            add("number", m, Decimal(m.group(2)), 2)
    for m in _WEEKDAY.finditer(text):
        word = m.group(1)
        if len(word.rstrip(".")) <= 4 and not word[0].isupper():
            continue  # "sat", "sun", "wed" as words
        add("weekday", m, WEEKDAYS[word.lower().rstrip(".")])
    for m in _NUMBER.finditer(text):
        value = _decimal(m.group(1))
        if value is None or not spans.free(*m.span(1)):
            continue
        spans.take(*m.span(1))
        facts.append(Fact("number", m.group(1), value, m.span(1), _following_words(text, m.end(1)) if value < 100 else frozenset()))
    for m in _SIZE.finditer(text):
        if m.group(1).isupper():
            add("id", m, ("size", _SIZES[m.group(1).lower()]), 1)
    facts.sort(key=lambda f: (f.span, f.kind, str(f.key)))
    return facts


def _stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def _following_words(text: str, end: int, n: int = 3) -> frozenset[str]:
    words = re.findall(r"[A-Za-z]+", text[end : end + 60])
    return frozenset(_stem(w) for w in words[:n] if w.lower() not in _STOPWORDS)


def _dedupe(facts: list[Fact]) -> list[Fact]:
    seen: set[tuple[str, str]] = set()
    out = []
    for f in facts:
        k = (f.kind, repr(f.key))
        if k not in seen:
            seen.add(k)
            out.append(f)
    return out


def _name_facts(text: str, gazetteer: Gazetteer, spans: _Spans) -> list[Fact]:
    """Universe names and short quoted titles in `text` (longest first, non-overlapping)."""
    out: list[Fact] = []
    for m in _QUOTED.finditer(text):
        inner = m.group(1).strip()
        words = inner.split()
        if 1 <= len(words) <= 5 and not re.search(r"[!?]|[.,;:]\s", inner) and spans.free(*m.span(1)):
            spans.take(*m.span(1))
            out.append(Fact("name", inner, normalize_text(inner).strip(), m.span(1)))
    tokens = [(m.group(0), m.start(), m.end()) for m in re.finditer(r"[^\W_]+(?:[’'][^\W_]+)*", text)]
    i = 0
    while i < len(tokens):
        found = None
        for n in range(min(gazetteer.max_words, len(tokens) - i), 0, -1):
            a, b = tokens[i][1], tokens[i + n - 1][2]
            surface = text[a:b]
            norm = normalize_text(surface).strip()
            if norm in gazetteer.names and spans.free(a, b):
                # a one-word name must look like a name in the oracle's text (capitalized, not a number)
                if (n == 1 and not surface[:1].isupper()) or not any(c.isupper() for c in surface):
                    continue
                found = (n, a, b, surface, norm)
                break
        if found:
            n, a, b, surface, norm = found
            spans.take(a, b)
            out.append(Fact("name", surface, norm, (a, b)))
            i += n
        else:
            i += 1
    return out


# ------------------------------------------------------------------------------------------------
# What an agent's text says
# ------------------------------------------------------------------------------------------------


@dataclass
class TextFacts:
    """Every value an agent's text expresses, leniently parsed (all readings of ambiguous forms)."""

    norm: str
    numbers: set[Decimal]
    dates: set[tuple[int, int, int | None]]
    months: set[int]
    weekdays: set[int]
    times: set[int]
    ids: set[Any]
    lowered: str
    counts: list[tuple[Decimal, frozenset[str]]] = field(default_factory=list)
    standalone_weekdays: set[int] = field(default_factory=set)
    standalone_months: set[int] = field(default_factory=set)
    #: days of the month said without a month: "Friday the 18th", "the 19th"
    days: set[int] = field(default_factory=set)


def read_text(text: str) -> TextFacts:
    """Parse an agent's text into the sets `covers` checks oracle facts against."""
    text = text if isinstance(text, str) else str(text)
    low = unicodedata.normalize("NFKC", text)
    dates: set[tuple[int, int, int | None]] = set()
    times: set[int] = set()
    ids: set[Any] = set()
    months: set[int] = set()
    weekdays: set[int] = set()
    numbers: set[Decimal] = set()
    masked = low
    for m in _URL.finditer(low):
        ids.add(_id_key(m.group(0)).rstrip("/"))
    for m in _EMAIL.finditer(low):
        ids.add(m.group(0).lower())
    for m in _PHONE.finditer(low):
        key = _phone_key(m.group(0))
        if key:
            ids.add(("phone", key))
    for m in _PATH.finditer(low):
        ids.add(_id_key(m.group(0)).rstrip("/"))
    for m in _ISO_DATE.finditer(low):
        dates.add((int(m.group(2)), int(m.group(3)), int(m.group(1))))
        months.add(int(m.group(2)))
        masked = masked.replace(m.group(0), " ")
    for m in _SLASH_DATE.finditer(low):
        a, b = int(m.group(1)), int(m.group(2))
        year = int(m.group(3)) if m.group(3) else None
        if year is not None and year < 100:
            year += 2000
        for mo, d in ((a, b), (b, a)):
            if 1 <= mo <= 12 and 1 <= d <= 31:
                dates.add((mo, d, year))
                months.add(mo)
    for m in _DOT_DATE.finditer(low):
        d, mo, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if 1 <= mo <= 12 and 1 <= d <= 31:
            dates.add((mo, d, y + 2000 if y < 100 else y))
            months.add(mo)
            masked = masked.replace(m.group(0), " ")
    date_spans: list[tuple[int, int]] = []
    for rx, mon_g, day_g in ((_DATE_DM, 3, 2), (_DATE_MD, 2, 3)):
        for m in rx.finditer(low):
            month = MONTHS.get(m.group(mon_g).lower().rstrip("."))
            # "Wed 16 Oct 3-4 pm": the month of "16 Oct" is not also the month of an "Oct 3"
            if month and not any(a < m.start(mon_g) < b for a, b in date_spans):
                dates.add((month, int(m.group(day_g)), int(m.group(4)) if m.group(4) else None))
                date_spans.append(m.span())
    days = {int(m.group(1)) for m in _DAY_ONLY.finditer(low) if 1 <= int(m.group(1)) <= 31}

    def in_date(span: tuple[int, int]) -> bool:
        return any(a <= span[0] and span[1] <= b for a, b in date_spans)

    standalone_months: set[int] = set()
    standalone_weekdays: set[int] = set()
    for m in _MONTH_YEAR.finditer(low):
        month = MONTHS[m.group(1).lower().rstrip(".")]
        months.add(month)
        if not in_date(m.span(1)):
            standalone_months.add(month)
    for m in _WEEKDAY.finditer(low):
        day = WEEKDAYS[m.group(1).lower().rstrip(".")]
        weekdays.add(day)
        if not in_date(m.span(1)):
            standalone_weekdays.add(day)
    for m in _TIME_RANGE_MER.finditer(low):
        times.update(_time_minutes(m.group(1), m.group(2), m.group(5)))
        times.update(_time_minutes(m.group(3), m.group(4), m.group(5)))
    for m in _TIME_MER.finditer(low):
        times.update(_time_minutes(m.group(1), m.group(2), m.group(3)))
    for rx in (_TIME_COLON,):
        for m in rx.finditer(low):
            for t in _time_minutes(m.group(1), m.group(2), None):
                times.add(t)
                if t < 13 * 60:
                    times.add(t + 12 * 60)
            masked = masked.replace(m.group(0), " ")
    for m in _TIME_H.finditer(low):
        times.update(_time_minutes(m.group(1), None, None))
    for m in _TIME_WORDS.finditer(low):
        times.add(0 if m.group(1).lower() == "midnight" else 720)
    for m in _TIME_DOT_MER.finditer(low):
        times.update(_time_minutes(m.group(1), m.group(2), m.group(3)))
        masked = masked.replace(m.group(0), " ")
    for m in _SPOKEN_TIME.finditer(low):
        spoken = _spoken_times(m)
        times.update(spoken)
        if spoken:
            masked = masked.replace(m.group(0), " ")
    for m in _EU_AMOUNT.finditer(low):
        raw = m.group(1) or m.group(2)
        value = _decimal(raw.replace(".", "").replace(" ", "").replace(",", "."))
        if value is not None:
            numbers.add(value)
        masked = masked.replace(m.group(0), " ")
    for m in _RATIO.finditer(low):
        ids.add(m.group(0))
    for m in _UNIT_QTY.finditer(low):
        ids.add(f"{_decimal(m.group(1))}{m.group(2).lower()}")
    for m in _CODE.finditer(low):
        ids.add(_id_key(m.group(0)).replace("-", ""))
    for m in _SIZE.finditer(low):
        ids.add(("size", _SIZES[m.group(1).lower()]))
    counts: list[tuple[Decimal, frozenset[str]]] = []
    for m in re.finditer(rf"(?<![\w.])({_NUM})(?!\.\d)", masked):
        value = _decimal(m.group(1))
        if value is not None:
            numbers.add(value)
            counts.append((value, _following_words(masked, m.end(1))))
    lowered = f" {low.lower()} "
    for m in re.finditer(
        r"(?<![a-z])(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[- ](one|two|three|four|five|six|seven|eight|nine)(?![a-z])", lowered
    ):
        value = Decimal(NUMBER_WORDS[m.group(1)] + NUMBER_WORDS[m.group(2)])
        numbers.add(value)
        counts.append((value, _following_words(lowered, m.end())))
    for word, n in NUMBER_WORDS.items():
        for m in re.finditer(rf"(?<![a-z-]){word}(?![a-z])", lowered):
            numbers.add(Decimal(n))
            counts.append((Decimal(n), _following_words(lowered, m.end())))
    for date in dates:
        months.add(date[0])
    names_text = _EMAIL.sub(" ", _URL.sub(" ", low))  # "carter.dowd@..." does not name Carter Dowd
    return TextFacts(
        normalize_text(names_text), numbers, dates, months, weekdays, times, ids, low.lower(), counts, standalone_weekdays, standalone_months, days
    )
