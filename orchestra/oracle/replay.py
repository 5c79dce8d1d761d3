"""Oracle replay: the built-in offline policy.

The oracle plan is read from the scenario itself: ARE's `OracleEvent`s (what the agent should do)
and the oracle run ARE's preprocessing performs (when it happens, relative to its parents). The
replay then acts through the same session tool path any agent uses, at the oracle's timing:

* an action is *ready* once all its parents happened in this run (user/env events in the
  environment's log, oracle actions when the replay executed them);
* it is due at `max(parent times in this run) + delay`, where `delay` is the gap between the action
  and its latest parent in the oracle run — the same relative delay ARE's judge checks;
* until then the replay idles with `SystemApp__wait_for_notification`, like an agent would;
* `{{event_id}}` placeholders in arguments resolve against this run's return values (what a real
  agent reads from a tool's output); only when the referenced event has not happened (a
  perturbation can cause that) does the oracle run's value stand in.

A perturbed plan (see `orchestra.oracle.perturbations`) goes through the very same replay.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from orchestra.session import SEND_TO_USER_TOOL, WAIT_TOOL, Session
from orchestra.types import AgentLedger, ToolOutcome

_PLACEHOLDER = re.compile(r"^\{\{(.*?)\}\}$")


@dataclass(frozen=True)
class OracleAction:
    """One expected agent action, as the oracle performs it."""

    event_id: str
    tool: str  # agent-visible tool name, e.g. "Emails__send_email"
    tool_class_name: str  # judged name, e.g. "EmailClientV2__send_email"
    args: dict[str, Any]  # as written in the scenario (placeholders unresolved)
    oracle_resolved_args: dict[str, Any]  # as resolved in the oracle run
    parents: tuple[str, ...]
    delay: float  # seconds after the latest parent, in the oracle run
    time_checked: bool  # does ARE's judge check this action's timing?
    writes: bool
    turn: int

    @property
    def is_answer(self) -> bool:
        return self.tool_class_name == SEND_TO_USER_TOOL


@dataclass
class OraclePlan:
    scenario_id: str
    actions: list[OracleAction]
    notes: list[str] = field(default_factory=list)

    def with_actions(self, actions: list[OracleAction], note: str) -> OraclePlan:
        return OraclePlan(self.scenario_id, actions, [*self.notes, note])


def _strip_self(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in (args or {}).items() if k != "self"}


def build_plan(session: Session) -> OraclePlan:
    """Read the oracle actions of `session`'s scenario, in oracle-run order."""
    from orchestra.are.loading import oracle_events, oracle_run_agent_events

    sc = session.scenario
    prepared = session.prepared
    oracle_by_id = oracle_events(sc)
    run = prepared.oracle_log
    times = {e.event_id: float(e.event_time) for e in run}
    threshold = float(prepared.judge.config.check_time_threshold_seconds) if prepared.judge else 1.0
    turn_of = sc.event_id_to_turn_idx or {}
    by_class = {(spec.app_class, spec.method): name for name, spec in session.tools.items()}
    by_app = {(spec.app_name, spec.method): name for name, spec in session.tools.items()}

    actions: list[OracleAction] = []
    for ev in oracle_run_agent_events(run):
        if ev.event_id not in oracle_by_id:
            continue
        oe = oracle_by_id[ev.event_id]
        parents = tuple(d.event_id for d in oe.dependencies if not d.event_id.startswith("condition_turn"))
        parent_times = [times[p] for p in parents if p in times] or [float(sc.start_time)]
        delay = float(ev.event_time) - max(parent_times)
        function = ev.function_name()
        tool = by_app.get((ev.app_name(), function)) or by_class.get((ev.app_class_name(), function))
        if tool is None:
            raise ValueError(f"{sc.scenario_id}: oracle action {ev.event_id} uses {ev.tool_name}, which no agent tool exposes")
        actions.append(
            OracleAction(
                event_id=ev.event_id,
                tool=tool,
                tool_class_name=ev.tool_name,
                args=_strip_self(ev.action.args),
                oracle_resolved_args=_strip_self(ev.action.resolved_args or ev.action.args),
                parents=parents,
                delay=max(0.0, delay),
                time_checked=delay > threshold or oe.event_time_comparator is not None,
                writes=bool(session.tools[tool].writes),
                turn=int(turn_of.get(ev.event_id, 0)),
            )
        )
    return OraclePlan(scenario_id=sc.scenario_id, actions=actions)


@dataclass
class ReplayRecord:
    event_id: str
    tool: str
    args: dict[str, Any]
    sim_time: float
    ok: bool
    error: str | None


def replay(session: Session, plan: OraclePlan, *, max_steps: int = 1000, ledger: AgentLedger | None = None) -> list[ReplayRecord]:
    """Drive `session` through `plan`; stops when the session is done or the plan is exhausted.

    Every tool call (waits included) is booked on `ledger` when given: the oracle's line of the record."""
    done_at: dict[str, float] = {}
    outputs: dict[str, Any] = {}
    pending = list(plan.actions)
    records: list[ReplayRecord] = []
    steps = 0
    while pending and not session.done and steps < max_steps:
        steps += 1
        session.notifications()  # the oracle knows what to do; it reads nothing
        seen = env_events(session)
        happened = {**{k: t for k, (t, _) in seen.items()}, **done_at}
        ready = [a for a in pending if all(p in happened for p in a.parents)]
        if not ready:
            _idle(session, None, ledger)
            continue
        due = [(max([happened[p] for p in a.parents] or [session.env.start_time]) + a.delay, i, a) for i, a in enumerate(ready)]
        target, _, action = min(due, key=lambda d: (d[0], d[1]))
        if target > session.now + 1e-9:
            _idle(session, target, ledger)
            continue
        args = resolve_args(action, {**{k: v for k, (_, v) in seen.items()}, **outputs})
        outcome = _call(session, ledger, action.tool, args)
        pending.remove(action)
        done_at[action.event_id] = outcome.sim_time
        outputs[action.event_id] = outcome.output
        records.append(ReplayRecord(action.event_id, action.tool, args, outcome.sim_time, outcome.ok, outcome.error))
    return records


def env_events(session: Session) -> dict[str, tuple[float, Any]]:
    """User/env events that already ran in this session: id -> (time, return value)."""
    return {
        e.event_id: (float(e.event_time), e.metadata.return_value if e.metadata else None)
        for e in session.env.event_log()
        if e.event_type.value in ("USER", "ENV")
    }


def _call(session: Session, ledger: AgentLedger | None, name: str, args: dict[str, Any]) -> ToolOutcome:
    """One call through the session's hand-driven API, booked on the oracle's ledger."""
    outcome = session.call_tool(name, args)
    if ledger is not None:
        ledger.tool_calls += 1
        ledger.sim_seconds += session.config.clock.tool_seconds(1)  # what the call cost, as an agent's ledger books it
    return outcome


def _idle(session: Session, until: float | None, ledger: AgentLedger | None) -> None:
    """Wait like an agent would: until `until`, or until the next thing happens."""
    nxt = session.env.next_event_time()
    horizon = until if until is not None else nxt
    if horizon is None:
        end = session.env.end_time
        horizon = end if end is not None else session.now + 60
    if nxt is not None:
        horizon = min(horizon, nxt)
    timeout = max(1, math.ceil(horizon - session.now))
    _call(session, ledger, WAIT_TOOL, {"timeout": timeout})


def resolve_args(action: OracleAction, outputs: dict[str, Any]) -> dict[str, Any]:
    """Resolve `{{id}}` / `{{id.key}}` against this run; fall back to the oracle run's value."""
    resolved: dict[str, Any] = {}
    for name, value in action.args.items():
        m = _PLACEHOLDER.match(value.strip()) if isinstance(value, str) else None
        if m is None:
            resolved[name] = value
            continue
        ref, *path = m.group(1).split(".")
        if ref in outputs:
            v: Any = outputs[ref]
            for key in path:
                v = v.get(key) if isinstance(v, dict) else None
            resolved[name] = v
        else:
            resolved[name] = action.oracle_resolved_args.get(name, value)
    return resolved
