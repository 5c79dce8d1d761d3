"""Rewards from ARE's scripted judge.

* `binary`: 1.0 if the judge accepts every turn, else 0.0 — exactly ARE's verdict.
* `dense`: a success is still 1.0; a failure earns partial credit in [0, 0.8] from the judge's own
  per-tool comparison of agent writes against oracle writes. Credit is capped at 0.8 so no failing
  rollout can look like a success to an RL learner.

  credit = 0.8 * matched / max(n_oracle_writes, n_agent_writes)

  An oracle write is *matched* when some not-yet-used agent write of the same tool passes ARE's
  tool judge for that tool (the hard argument checks of the scripted judge), ignoring timing and
  causality — those are what the binary verdict already enforces. Dividing by the larger count
  makes extra writes cost as much as missing ones, as the judge's count check does.
"""

from __future__ import annotations

import copy
from typing import Any

DENSE_CAP = 0.8


def dense_credit(prepared: Any, event_log: list[Any]) -> float:
    """Partial credit in [0, DENSE_CAP] for a failed rollout (see module docstring)."""
    from are.simulation.types import EventType

    judge = prepared.judge
    oracle_events = [e for turn in judge.state.turn_to_oracle_events for e in turn if e.event_type == EventType.AGENT]
    agent_events = [e for e in event_log if e.event_type == EventType.AGENT and judge.event_filter(copy.copy(e))]
    if not oracle_events:
        return 0.0
    oracle_returns = {e.event_id: e.metadata.return_value for e in prepared.oracle_log if e.metadata is not None}
    tool_judges = judge.event_judges[EventType.AGENT].tool_judges
    user = judge.state.user_details
    tolerance = [f"{user.first_name} {user.last_name}"] if user is not None else []

    used: set[int] = set()
    matched = 0
    for oracle in oracle_events:
        oracle = _resolve_from_oracle_run(oracle, oracle_returns)
        tool_judge = tool_judges.get(oracle.tool_name)
        if tool_judge is None:
            continue
        for i, agent in enumerate(agent_events):
            if i in used or agent.tool_name != oracle.tool_name:
                continue
            try:
                ok = bool(tool_judge(agent, oracle, tolerance_list_str=tolerance))
            except Exception:  # a checker that cannot compare these values is a non-match
                ok = False
            if ok:
                used.add(i)
                matched += 1
                break
    return round(DENSE_CAP * matched / max(len(oracle_events), len(agent_events)), 6)


def _resolve_from_oracle_run(oracle: Any, oracle_returns: dict[str, Any]) -> Any:
    """Fill `{{event_id}}` placeholders with the oracle run's return values (on a copy)."""
    args = oracle.action.args or {}
    placeholders = {k: v[2:-2] for k, v in args.items() if isinstance(v, str) and v.startswith("{{") and v.endswith("}}")}
    if not placeholders:
        return oracle
    resolved = copy.copy(oracle)
    resolved.action = copy.copy(oracle.action)
    resolved.action.resolved_args = dict(oracle.action.resolved_args or args)
    for key, ref in placeholders.items():
        event_id, *path = ref.split(".")
        if event_id in oracle_returns:
            value = oracle_returns[event_id]
            for part in path:
                value = value.get(part) if isinstance(value, dict) else None
            resolved.action.resolved_args[key] = value
    return resolved
