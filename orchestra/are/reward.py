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

  An answer to the user is matched only when it is not content-free (`answer_has_content`): ARE's
  scripted judge never reads an answer's text, so without this a policy that only answers ("Done.")
  would be paid for every oracle answer — 0.11-0.4 on the bundled scenarios, 0.8 on Search. An
  answer counts when it carries a fact of the oracle's answer that the user's messages do not give
  (what was found), or, when the oracle's answer gives nothing new (it confirms an action), when
  some other oracle write was matched (it confirms work that was done).
"""

from __future__ import annotations

import copy
from typing import Any

DENSE_CAP = 0.8
#: ARE's tool name of the answer to the user.
ANSWER_TOOL = "AgentUserInterface__send_message_to_user"


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
    answers = [e for e in oracle_events if e.tool_name == ANSWER_TOOL]
    for oracle in [e for e in oracle_events if e.tool_name != ANSWER_TOOL] + answers:  # answers last: they may confirm the writes
        oracle = _resolve_from_oracle_run(oracle, oracle_returns)
        tool_judge = tool_judges.get(oracle.tool_name)
        if tool_judge is None:
            continue
        for i, agent in enumerate(agent_events):
            if i in used or agent.tool_name != oracle.tool_name:
                continue
            try:
                ok = bool(tool_judge(agent, oracle, tolerance_list_str=tolerance))
                if ok and oracle.tool_name == ANSWER_TOOL:
                    ok = answer_has_content(prepared, oracle, agent, confirms_work=matched > 0)
            except Exception:  # a checker that cannot compare these values is a non-match
                ok = False
            if ok:
                used.add(i)
                matched += 1
                break
    return round(DENSE_CAP * matched / max(len(oracle_events), len(agent_events)), 6)


def answer_has_content(prepared: Any, oracle: Any, agent: Any, *, confirms_work: bool) -> bool:
    """Is the agent's answer more than content-free, for dense credit (see module docstring)?

    It carries a fact of the oracle's answer that the user's messages up to that turn do not give;
    or the oracle's answer gives nothing new and `confirms_work` (another oracle write was matched).
    """
    from orchestra.are.judges import judge_gazetteer
    from orchestra.judging.fact_check import covers, new_facts
    from orchestra.judging.facts import read_text

    judge = prepared.judge
    turn = judge.state.oracle_event_id_to_turn_idx.get(oracle.event_id, len(judge.state.scenario_tasks))
    context = "\n".join(str(t) for t in judge.state.scenario_tasks[: turn + 1])
    news = new_facts(_content(oracle), context, judge_gazetteer(judge, prepared.scenario))
    if not news:
        return confirms_work
    said = read_text(_content(agent))
    return any(covers(said, f) for f in news)


def _content(event: Any) -> str:
    args = getattr(event.action, "resolved_args", None) or getattr(event.action, "args", None) or {}
    value = args.get("content")
    return "" if value is None else str(value)


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
