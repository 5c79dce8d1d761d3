"""Perturbations of the oracle trajectory: "verifying the verifier".

Each perturbation turns the oracle plan into a trajectory the scripted judge must reject. If a
perturbation cannot be expressed for a scenario it is *not applicable* — reported as such, never as
a pass — e.g. `wrong_arg` when every argument of every write is free text the scripted judge does
not check, or `late` when no oracle action has a timing window.

| kind       | what changes                                              | what the judge must catch |
|------------|-----------------------------------------------------------|---------------------------|
| `wrong_arg`| one hard-checked argument of a write gets a wrong value   | tool judge reject         |
| `late`     | one time-checked action happens after its window (+25 s)  | time check                |
| `missing`  | one write (other than the answer to the user) is dropped  | tool-count check          |
| `extra`    | one write (other than the answer to the user) is repeated | tool-count check          |
| `swap`     | a write and the write that depends on it change order     | causality                 |
| `wrong_answer` | an answer to the user gets plausible wrong facts      | free-text check (`strict`, `llm` judges only) |

`wrong_answer` is `n/a` under the `scripted` judge: ARE's scripted judge skips every free-text
argument, so a wrong answer passes it by design (that is what the other modes are for). Under
`strict` it applies where an answer carries a checkable fact; under `llm` to every answer.

`extra` repeats the first write whose repeat the app accepts — not `Cabs__order_ride`, which ARE
refuses while a ride is on-going ("You have an on-going ride."). Should the app still refuse the
repeat at run time, the rollout is `n/a` with the app's error: nothing extra happened to catch.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, replace
from typing import Any

from orchestra.judging.facts import Gazetteer
from orchestra.judging.mutation import wrong_version
from orchestra.oracle.replay import OracleAction, OraclePlan
from orchestra.spec import KINDS, PerturbationKind

__all__ = ["KINDS", "JudgeRules", "NotApplicable", "PerturbationKind", "perturb"]

#: The answer `wrong_answer` gives under the llm judge when the oracle's answer has no fact to change.
UNHELPFUL_ANSWER = "Sorry, I could not find that information."
#: Seconds past ARE's post-event tolerance (25 s) a `late` action is moved to.
LATE_MARGIN_SECONDS = 30.0


class NotApplicable(Exception):
    """The perturbation cannot be expressed for this scenario (the reason is the message)."""


@dataclass(frozen=True)
class JudgeRules:
    """What the scripted judge checks, read from the judge's own config."""

    hard_args: dict[str, dict[str, str]]  # tool class name -> {arg: checker type} for hard checks
    post_tolerance: float
    judge_mode: str = "scripted"  # does the judge check free text? (see `wrong_answer`)
    gazetteer: Gazetteer | None = None  # the scenario's universe names (facts of answers)

    @classmethod
    def from_judge(cls, judge: Any, scenario: Any = None) -> JudgeRules:

        from orchestra.are import judges

        hard = judges.hard_checker_types()
        table = {
            tool: {arg: str(getattr(ct, "value", ct)) for arg, ct in args.items() if str(getattr(ct, "value", ct)) in hard}
            for tool, args in judge.config.per_tool_arg_to_checker_type.items()
        }
        mode = judges.info(judge).config.mode
        gazetteer = judges.judge_gazetteer(judge, scenario) if mode != "scripted" and scenario is not None else None
        return cls(hard_args=table, post_tolerance=float(judge.config.post_event_tolerance_seconds), judge_mode=mode, gazetteer=gazetteer)


def _is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and value.strip().startswith("{{") and value.strip().endswith("}}")


def _side_writes(plan: OraclePlan) -> list[OracleAction]:
    return [a for a in plan.actions if a.writes and not a.is_answer]


def perturb(plan: OraclePlan, kind: PerturbationKind, rules: JudgeRules) -> OraclePlan:
    """Return the perturbed plan, or raise `NotApplicable` saying why it cannot apply."""
    if kind == "wrong_arg":
        return _wrong_arg(plan, rules)
    if kind == "late":
        return _late(plan, rules)
    if kind == "missing":
        return _missing(plan)
    if kind == "extra":
        return _extra(plan)
    if kind == "swap":
        return _swap(plan)
    if kind == "wrong_answer":
        return _wrong_answer(plan, rules)
    raise ValueError(f"unknown perturbation {kind!r}; choose from {', '.join(KINDS)}")


def _wrong_arg(plan: OraclePlan, rules: JudgeRules) -> OraclePlan:
    for action in _side_writes(plan):
        checked = rules.hard_args.get(action.tool_class_name, {})
        for arg, checker in checked.items():
            value = action.args.get(arg)
            if value is None or _is_placeholder(value):
                continue
            wrong = wrong_value(value, checker)
            if wrong is None or wrong == value:
                continue
            new = replace(action, args={**action.args, arg: wrong})
            actions = [new if a is action else a for a in plan.actions]
            return plan.with_actions(actions, f"wrong_arg: {action.event_id}.{arg} = {wrong!r} (was {value!r}, {checker})")
    raise NotApplicable("no write has a hard-checked argument with a literal value (all free text or placeholders)")


def wrong_value(value: Any, checker: str) -> Any:
    """A value of the same type and format that the hard checker must reject."""
    if checker == "datetime_checker" and isinstance(value, str):
        try:
            t = _dt.datetime.strptime(value, "%Y-%m-%d %H:%M:%S")
        except ValueError:
            return None
        return (t + _dt.timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, list):
        if len(value) >= 2:
            return value[:-1]  # a valid call with one item missing
        if checker == "list_attendees_checker":
            return [*value, "Zed Nobody"]
        if value and isinstance(value[0], str) and "@" in value[0]:
            return [f"wrong.{value[0]}", *value[1:]]
        return [*value, "wrong-extra-item"]
    if isinstance(value, str):
        if checker == "phone_number_checker":
            digits = [c for c in value if c.isdigit()]
            if not digits:
                return None
            last = str((int(digits[-1]) + 1) % 10)
            idx = max(i for i, c in enumerate(value) if c.isdigit())
            return value[:idx] + last + value[idx + 1 :]
        if "@" in value:
            return f"wrong.{value}"
        return f"{value} (wrong)"
    return None


def _late(plan: OraclePlan, rules: JudgeRules) -> OraclePlan:
    for action in plan.actions:
        if action.time_checked:
            delay = action.delay + rules.post_tolerance + LATE_MARGIN_SECONDS
            new = replace(action, delay=delay)
            actions = [new if a is action else a for a in plan.actions]
            return plan.with_actions(
                actions, f"late: {action.event_id} at +{delay:.0f}s after its parent (window ends at +{action.delay + rules.post_tolerance:.0f}s)"
            )
    raise NotApplicable("no oracle action has a timing window (every delay <= ARE's 1 s threshold, no comparator)")


def _missing(plan: OraclePlan) -> OraclePlan:
    writes = _side_writes(plan)
    if not writes:
        raise NotApplicable("the only write is the answer to the user")
    dropped = writes[0]
    actions = [a for a in plan.actions if a is not dropped]
    # Children of the dropped action must not wait for it forever: re-hang them on its parents.
    actions = [
        replace(a, parents=tuple(p for p in a.parents if p != dropped.event_id) + (dropped.parents if dropped.event_id in a.parents else ())) for a in actions
    ]
    return plan.with_actions(actions, f"missing: {dropped.event_id} ({dropped.tool}) dropped")


#: The `extra` duplicate's event id suffix (a rollout reads whether the app accepted it).
EXTRA_SUFFIX = "__extra"
#: Writes whose immediate repeat the app itself refuses, so nothing extra would happen (judged name -> why).
REFUSES_REPEAT = {"CabApp__order_ride": 'a second ride cannot be ordered while one is on-going ("You have an on-going ride.")'}


def _extra(plan: OraclePlan) -> OraclePlan:
    writes = _side_writes(plan)
    if not writes:
        raise NotApplicable("the only write is the answer to the user (an extra answer is allowed by the judge)")
    repeatable = [w for w in writes if w.tool_class_name not in REFUSES_REPEAT]
    if not repeatable:
        why = "; ".join(sorted({f"{w.tool}: {REFUSES_REPEAT[w.tool_class_name]}" for w in writes}))
        raise NotApplicable(f"the app refuses a repeat of every write ({why}): nothing extra would happen")
    original = repeatable[0]
    dup = replace(original, event_id=f"{original.event_id}{EXTRA_SUFFIX}", parents=(original.event_id,), delay=0.0, time_checked=False)
    idx = plan.actions.index(original)
    actions = [*plan.actions[: idx + 1], dup, *plan.actions[idx + 1 :]]
    return plan.with_actions(actions, f"extra: {original.event_id} ({original.tool}) performed twice")


def _swap(plan: OraclePlan) -> OraclePlan:
    writes = {a.event_id: a for a in _side_writes(plan)}
    for child in writes.values():
        for parent_id in child.parents:
            parent = writes.get(parent_id)
            if parent is None:
                continue
            # The child runs first, hung on the parent's parents; the parent then follows the child.
            new_child = replace(child, parents=parent.parents, delay=parent.delay)
            new_parent = replace(parent, parents=(child.event_id,), delay=0.0)
            actions = []
            for a in plan.actions:
                if a is parent:
                    actions.append(new_child)
                elif a is child:
                    actions.append(new_parent)
                else:
                    actions.append(a)
            return plan.with_actions(actions, f"swap: {child.event_id} performed before {parent.event_id}, which it depends on")
    raise NotApplicable("no write depends on another write")


def _wrong_answer(plan: OraclePlan, rules: JudgeRules) -> OraclePlan:
    """The first answer to the user with a checkable fact gets every fact changed (see `wrong_version`)."""
    if rules.judge_mode == "scripted":
        raise NotApplicable("the scripted judge does not check free text (ARE skips every llm_checker argument); use --judge strict or llm")
    answers = [a for a in plan.actions if a.is_answer and isinstance(a.args.get("content"), str) and a.args["content"].strip()]
    if not answers:
        raise NotApplicable("no answer to the user with a text")
    alternatives = (list(rules.gazetteer.people) if rules.gazetteer is not None else []) or ["Jordan Blake"]
    for action in answers:
        text = action.args["content"]
        wrong = wrong_version(text, rules.gazetteer, alternatives)
        if wrong is None:
            continue
        new_text, changed = wrong
        new = replace(action, args={**action.args, "content": new_text})
        actions = [new if a is action else a for a in plan.actions]
        facts = ", ".join(f.describe() for f in changed[::-1])
        return plan.with_actions(actions, f"wrong_answer: {action.event_id}.content with wrong {facts}: {new_text!r}")
    if rules.judge_mode == "strict":
        raise NotApplicable("no answer to the user carries a checkable fact (amount, date, time, id, name)")
    action = answers[0]
    new = replace(action, args={**action.args, "content": UNHELPFUL_ANSWER})
    actions = [new if a is action else a for a in plan.actions]
    return plan.with_actions(actions, f"wrong_answer: {action.event_id}.content = {UNHELPFUL_ANSWER!r} (its text carries no checkable fact)")
