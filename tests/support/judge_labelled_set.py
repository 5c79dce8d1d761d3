"""The judge labelled set: agent texts for every free-text check of the bundled scenarios, labelled.

Built from data, so a new scenario is covered by appending to `tests/data/judge_labels.yaml`:

* **generated** from each bundled scenario's own oracle texts, for every free-text argument ARE's
  judge would send to an LLM (ARE's registry) whose oracle text carries a checkable fact:
  - `politeness` (correct, message bodies only): the oracle's text wrapped in a greeting and an
    offer of more help;
  - `wrong_value` (wrong): one fact (every occurrence) changed to a plausible wrong value;
  - `missing_fact` (wrong): one fact (every occurrence) deleted;
  - `other_question` (wrong, answers only): another scenario's answer;
  - `unhelpful` (wrong, answers only): "I have no idea, sorry.";
* **hand-written** in the YAML file: `paraphrase` (correct: other wording, formats, politeness) and
  `hand_wrong` (wrong: a wrong value, a missing fact, an answer to a different question).

`judge_items(judge, items)` judges each text with a built ARE judge's own per-tool judge for that
tool (the `MildToolJudge` of `llm`, the wrapped one of `strict`), the agent's call being the
oracle's call with only that argument changed — the free-text part of the judge, in isolation —
and the user's messages up to that action's turn as ARE passes them (`tasks=`). Used by
tests/judging/test_labels.py and benchmarks/judge_agreement.py. The review file
(`review_items`, `tests/data/judge_labels_review.yaml`) is loaded apart, never into `labelled_set`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from orchestra.judging.facts import Gazetteer, _extract
from orchestra.judging.mutation import mutate
from orchestra.judging.scenario_names import scenario_gazetteer, user_tasks
from orchestra.scenario_files import resolve

LABELS_FILE = Path(__file__).resolve().parents[1] / "data" / "judge_labels.yaml"
#: Written after the strict checker was finished and never used to tune it (reported apart).
HELDOUT_FILE = Path(__file__).resolve().parents[1] / "data" / "judge_labels_heldout.yaml"
#: The adversarial review set (issue #28 finding 18): 255 texts written blind to the judge's rules,
#: each with a shape (hedge, negation, extra_wrong, confirmation, confirmation_wrong, paraphrase).
#: Reported apart from the two files above; split by scenario (`review_part`) into a part the judge
#: was tuned on and a held-out part that was only measured.
REVIEW_FILE = Path(__file__).resolve().parents[1] / "data" / "judge_labels_review.yaml"
REVIEW_SHAPES = {
    "hedge": "wrong",
    "negation": "wrong",
    "extra_wrong": "wrong",
    "confirmation_wrong": "wrong",
    "confirmation": "correct",
    "paraphrase": "correct",
}
ANSWER_TOOL = "AgentUserInterface__send_message_to_user"
UNHELPFUL = "I have no idea, sorry."
CORRECT_KINDS = ("paraphrase", "politeness")
WRONG_KINDS = ("wrong_value", "missing_fact", "other_question", "unhelpful", "hand_wrong")


@dataclass(frozen=True)
class FreeText:
    """One free-text argument of one oracle action of a bundled scenario."""

    scenario_id: str
    event_id: str
    tool: str  # judged name, <AppClass>__<method>
    arg: str
    oracle_text: str
    oracle_args: dict[str, Any]
    event_time: float
    task: str  # every user message of the scenario
    gazetteer: Gazetteer
    #: the user's messages up to this action's turn, as ARE's judge passes them (`tasks=`)
    tasks: tuple[str, ...] = ()


@dataclass(frozen=True)
class LabelItem:
    target: FreeText
    text: str
    label: str  # "correct" | "wrong"
    kind: str
    source: str  # "generated" | "hand" | "heldout"


def _typed(arg: dict[str, Any]) -> Any:
    value, kind = arg.get("value"), (arg.get("value_type") or "")
    if value is None:
        return None
    if kind.startswith(("list", "dict")) and isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def free_texts(sources: Iterable[str] = ("bundled",), registry: dict[str, list[str]] | None = None) -> list[FreeText]:
    """Every free-text argument (per ARE's registry) of every oracle action in `sources`."""
    if registry is None:
        from orchestra.are.judges import free_text_registry

        registry = free_text_registry()
    out = []
    for file in resolve(list(sources)):
        raw = json.loads(file.text)
        sid = raw["metadata"]["definition"]["scenario_id"]
        start = float(raw["metadata"]["definition"]["start_time"])
        classes = {a.get("name"): a.get("class_name") or a.get("name") for a in raw.get("apps") or []}
        gazetteer = scenario_gazetteer(raw)
        task = "\n".join(user_tasks(raw))
        turn_tasks = _tasks_by_event(raw)
        for event in raw.get("events") or []:
            action = event.get("action") or {}
            if event.get("class_name") != "OracleEvent" or not action:
                continue
            app, function = action.get("app"), action.get("function")
            tool = f"{classes.get(app, app)}__{function}"
            free = registry.get(tool) or registry.get(f"{app}__{function}") or []
            args = {a["name"]: _typed(a) for a in action.get("args") or [] if a.get("name") != "self"}
            for arg in free:
                value = args.get(arg)
                if isinstance(value, str) and value.strip() and not value.strip().startswith("{{"):
                    when = start + float(event.get("event_relative_time") or 0)
                    out.append(FreeText(sid, event["event_id"], tool, arg, value, args, when, task, gazetteer, turn_tasks[event["event_id"]]))
    return out


def _tasks_by_event(raw: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """Each event's user messages up to its turn: the user's `send_message_to_agent` events among
    its ancestors (`dependencies`), in file order — ARE's `tasks[: turn + 1]`."""
    events = {e["event_id"]: e for e in raw.get("events") or []}
    order = {eid: i for i, eid in enumerate(events)}

    def is_task(e: dict[str, Any]) -> bool:
        return e.get("event_type") == "USER" and (e.get("action") or {}).get("function") == "send_message_to_agent"

    out: dict[str, tuple[str, ...]] = {}
    for eid in events:
        seen, stack = set(), [eid]
        while stack:
            for dep in events.get(stack.pop(), {}).get("dependencies") or []:
                if dep not in seen:
                    seen.add(dep)
                    stack.append(dep)
        tasks = [events[d] for d in sorted(seen, key=order.__getitem__) if d in events and is_task(events[d])]
        out[eid] = tuple(str(a.get("value")) for e in tasks for a in (e.get("action") or {}).get("args") or [] if a.get("name") == "content")
    return out


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    for a, b in sorted(spans, reverse=True):
        text = text[:a] + text[b:]
    return " ".join(text.split())


def _restated(fact: Any, facts: list[Any]) -> bool:
    """Is the fact's value also stated by another fact of the text? Then deleting this mention
    does not remove it ("Rodney" next to "Rodney Jensen", "October" next to "October 31")."""
    from orchestra.judging.facts import normalize_text

    mine = normalize_text(fact.text)
    for other in facts:
        if other.span == fact.span or (other.kind, repr(other.key)) == (fact.kind, repr(fact.key)):
            continue
        if mine.strip() and mine in normalize_text(other.text.replace("@", " ").replace(".", " ")):
            return True
        if fact.kind == "month" and other.kind == "date" and other.key[0] == fact.key:
            return True
        if fact.kind == "date" and other.kind == "date" and other.key[:2] == fact.key[:2]:
            return True
        if fact.kind == "number" and other.kind == "date" and other.key[2] is not None and other.key[2] == int(fact.key):
            return True
    return False


def generated_items(targets: list[FreeText]) -> list[LabelItem]:
    items: list[LabelItem] = []
    answers = [t for t in targets if t.tool == ANSWER_TOOL]
    for t in targets:
        facts = _extract(t.oracle_text, t.gazetteer)
        if not facts:
            continue
        if t.arg == "content":  # a message; a greeting around a title or an address is no longer correct
            items.append(LabelItem(t, f"Hi! {t.oracle_text} Let me know if there is anything else I can do.", "correct", "politeness", "generated"))
        by_key: dict[tuple[str, str], list[Any]] = {}
        for f in facts:
            by_key.setdefault((f.kind, repr(f.key)), []).append(f)
        for occurrences in by_key.values():
            wrong = t.oracle_text
            for f in sorted(occurrences, key=lambda f: f.span, reverse=True):
                changed = mutate(wrong, f, t.gazetteer.people)
                wrong = changed if changed is not None else wrong
            if wrong != t.oracle_text:
                items.append(LabelItem(t, wrong, "wrong", "wrong_value", "generated"))
            missing = _without(t.oracle_text, [f.span for f in occurrences])
            if missing and missing != t.oracle_text and not _restated(occurrences[0], facts):
                items.append(LabelItem(t, missing, "wrong", "missing_fact", "generated"))
        if t.tool == ANSWER_TOOL:
            others = [a for a in answers if a.scenario_id != t.scenario_id]
            if others:
                other = others[(answers.index(t)) % len(others)]
                items.append(LabelItem(t, other.oracle_text, "wrong", "other_question", "generated"))
            items.append(LabelItem(t, UNHELPFUL, "wrong", "unhelpful", "generated"))
    return items


def hand_items(targets: list[FreeText], path: Path = LABELS_FILE, source: str = "hand") -> list[LabelItem]:
    entries = yaml.safe_load(path.read_text()) or []
    index = {(t.scenario_id, t.event_id, t.arg): t for t in targets}
    items = []
    for i, entry in enumerate(entries):
        key = (entry.get("scenario"), entry.get("event"), entry.get("arg", "content"))
        if key not in index:
            raise ValueError(f"{path}: entry {i} names {key}, which is no free-text argument of a bundled scenario")
        t = index[key]
        items += [LabelItem(t, text, "correct", "paraphrase", source) for text in entry.get("correct") or []]
        items += [LabelItem(t, text, "wrong", "hand_wrong", source) for text in entry.get("wrong") or []]
    return items


def review_part(scenario_id: str, scenario_ids: list[str]) -> str:
    """`"tune"` or `"heldout"`: the review file's scenarios in sorted order, alternately (fixed
    before any judge change; whole scenarios, so a held-out text never shares its oracle text with
    a tuned one)."""
    return "tune" if sorted(set(scenario_ids)).index(scenario_id) % 2 == 0 else "heldout"


def review_items(targets: list[FreeText], path: Path = REVIEW_FILE) -> list[LabelItem]:
    """The review file's texts, `kind` = the text's shape, `source` = `review-tune`/`review-heldout`.

    Each text is `{text, shape}`; the label follows from the list it is in (`correct:`/`wrong:`),
    and a shape that contradicts it is a clear error.
    """
    entries = yaml.safe_load(path.read_text()) or []
    index = {(t.scenario_id, t.event_id, t.arg): t for t in targets}
    scenario_ids = [e.get("scenario") for e in entries]
    items = []
    for i, entry in enumerate(entries):
        key = (entry.get("scenario"), entry.get("event"), entry.get("arg", "content"))
        if key not in index:
            raise ValueError(f"{path}: entry {i} names {key}, which is no free-text argument of a bundled scenario")
        source = f"review-{review_part(entry['scenario'], scenario_ids)}"
        for label in ("correct", "wrong"):
            for j, obj in enumerate(entry.get(label) or []):
                shape = obj.get("shape") if isinstance(obj, dict) else None
                if not isinstance(obj, dict) or not isinstance(obj.get("text"), str) or REVIEW_SHAPES.get(shape) != label:
                    raise ValueError(
                        f"{path}: entry {i} {label}[{j}]: want {{text, shape}} with a {label} shape ({', '.join(k for k, v in REVIEW_SHAPES.items() if v == label)}), got {obj!r}"
                    )
                items.append(LabelItem(index[key], obj["text"], label, shape, source))
    return items


def review_set(sources: Iterable[str] = ("bundled",)) -> list[LabelItem]:
    """The review file's items (both parts; `source` says which)."""
    return review_items(free_texts(sources))


def labelled_set(sources: Iterable[str] = ("bundled",)) -> tuple[list[FreeText], list[LabelItem]]:
    targets = free_texts(sources)
    return targets, hand_items(targets) + hand_items(targets, HELDOUT_FILE, "heldout") + generated_items(targets)


@dataclass
class _Event:
    """The minimum of ARE's `CompletedEvent` a per-tool judge reads."""

    event_id: str
    tool_name: str
    event_time: float
    args: dict[str, Any]

    def get_args(self) -> dict[str, Any]:
        return dict(self.args)


def judge_items(judge: Any, items: list[LabelItem]) -> list[bool]:
    """Each item's verdict from `judge`'s own per-tool judge (see module docstring)."""
    from are.simulation.types import EventType

    from orchestra.are import judges

    tool_judges = judge.event_judges[EventType.AGENT].tool_judges
    strict = judges.info(judge).strict
    out = []
    for item in items:
        t = item.target
        if strict is not None:
            strict.gazetteer = t.gazetteer
        oracle = _Event(t.event_id, t.tool, t.event_time, t.oracle_args)
        agent = _Event(f"agent-{t.event_id}", t.tool, t.event_time, {**t.oracle_args, t.arg: item.text})
        verdict = tool_judges[t.tool](agent, oracle, tasks=list(t.tasks or (t.task,)), user_details=None, tolerance_list_str=[])
        out.append(bool(verdict))
    return out


def judge_script_for(items: list[LabelItem]) -> dict[str, Any]:
    """A scripted judge model that replies with each item's label (a perfect judge model).

    Rules are keyed on the agent's argument line ("content: <text>"); the rule matched earliest in the prompt wins (ARE's
    prompts show the agent's text before the oracle's), longest first on ties; every other prompt
    (ARE's subtask extractor, tone and signature checkers) gets the accepting default.
    """
    yes, no = "[[True]] [[Success]]", "[[False]] [[Failure]]"
    texts: dict[str, str] = {}
    for item in items:  # ARE shows a call's arguments as "<arg>: <value>" lines
        texts[f"{item.target.arg}: {item.text}"] = yes if item.label == "correct" else no
    rules = [{"contains": text, "reply": reply} for text, reply in sorted(texts.items(), key=lambda kv: -len(kv[0]))]
    return {"rules": rules, "pick": "earliest", "default": "<subtask>Answer the user's request.</subtask> " + yes}


@dataclass
class Agreement:
    judge: str
    n: int
    agree: int
    false_accepts: int
    false_rejects: int
    wrong_total: int
    correct_total: int
    paraphrase_accepted: int
    paraphrase_total: int

    @property
    def rate(self) -> float:
        return self.agree / self.n if self.n else 0.0


def agreement(name: str, items: list[LabelItem], verdicts: list[bool]) -> Agreement:
    fa = sum(1 for i, v in zip(items, verdicts) if i.label == "wrong" and v)
    fr = sum(1 for i, v in zip(items, verdicts) if i.label == "correct" and not v)
    para = [(i, v) for i, v in zip(items, verdicts) if i.kind == "paraphrase"]
    return Agreement(
        judge=name,
        n=len(items),
        agree=len(items) - fa - fr,
        false_accepts=fa,
        false_rejects=fr,
        wrong_total=sum(i.label == "wrong" for i in items),
        correct_total=sum(i.label == "correct" for i in items),
        paraphrase_accepted=sum(v for _, v in para),
        paraphrase_total=len(para),
    )
