"""ARE's side of a parity run: ARE's real default agent (`orchestra.are.default_agent`) with the
scripted policy as its model, through the `orchestra-parity` litellm provider."""

from __future__ import annotations

from orchestra.are.default_agent import run_are_default_agent
from orchestra.parity.policy import PROVIDER, PolicyFactory, close_channel, open_channel
from orchestra.parity.trace import AgentTrace, agent_tool_calls, policy_notes


def run_are_agent(
    text: str,
    source: str,
    policy: PolicyFactory,
    *,
    max_iterations: int | None = None,
    notification_verbosity: str = "medium",
) -> AgentTrace:
    """Run ARE's default agent with `policy` as its model; return what it saw and did."""
    channel = open_channel(policy, "are")
    try:
        run = run_are_default_agent(
            text,
            source,
            model=channel.model,
            provider=PROVIDER,
            max_iterations=max_iterations,
            notification_verbosity=notification_verbosity,
        )
    finally:
        close_channel(channel)
    return AgentTrace(
        side="ARE",
        scenario_id=run.scenario_id,
        requests=channel.requests,
        tool_calls=agent_tool_calls(run.event_log),
        success=run.success,
        rationale=run.rationale,
        error=run.error,
        sim_seconds=run.sim_seconds,
        notes=[*policy_notes(channel.requests), *run.notes],
        event_log=run.event_log,
    )
