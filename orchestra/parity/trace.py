"""What one agent run did and saw, as the parity harness compares it (both sides the same type)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from orchestra.parity.policy import ModelRequestRecord


@dataclass
class AgentToolCall:
    """One agent event of the environment's log (nested app calls included, as ARE logs them)."""

    t: float
    tool: str
    args: dict[str, Any]
    error: str | None = None


@dataclass
class AgentTrace:
    """What one agent run did and saw: the comparable record of a parity run."""

    side: str  # "ARE" or "orchestra"
    scenario_id: str
    requests: list[ModelRequestRecord]
    tool_calls: list[AgentToolCall]
    success: bool
    rationale: str | None
    error: str | None = None
    sim_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    event_log: list[dict[str, Any]] = field(default_factory=list)


def policy_notes(requests: list[ModelRequestRecord]) -> list[str]:
    """Say where the policy itself failed (ran out of replies, raised): such runs compare nothing useful after it."""
    failed = [(i, r.error) for i, r in enumerate(requests) if r.error]
    if not failed:
        return []
    i, error = failed[0]
    return [f"the policy failed on request {i + 1} ({len(failed)} failed request(s) in all): {error}"]


def agent_tool_calls(records: list[dict[str, Any]]) -> list[AgentToolCall]:
    """The AGENT events of a canonical event log (`orchestra.are.event_log.canonical_events`)."""
    return [AgentToolCall(t=r["t"], tool=r["tool"], args=r["args"], error=r["exception"]) for r in records if r["type"] == "AGENT"]
