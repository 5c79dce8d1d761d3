"""The message metadata orchestra sends a remote A2A agent with every message (documented in docs/agent2agent.md).

A2A's `Message.metadata` is a free JSON object; these keys, all prefixed `orchestra.`, tell the agent
where its tools and its model are. The agent needs only `orchestra.mcp_url`; the rest is optional.
orchestra writes them strictly (`wire()`: only the documented keys); an agent reading them with
`from_wire` ignores keys it does not know, so a later orchestra may add one without breaking it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

PREFIX = "orchestra."


class A2AMetadata(BaseModel):
    """One message's metadata, as sent (`wire()`: the `orchestra.`-prefixed keys)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mcp_url: str = Field(..., description="streamable-HTTP MCP endpoint: the agent's tools (the scenario's, or its app's for an app-agent)")
    model_base_url: str = Field(..., description="OpenAI-compatible base URL (ends in /v1): the session's model, charged to the simulated clock")
    session_id: str = Field(
        ...,
        description="the loopback session this agent plays (also the X-Orchestra-Session value): one per rollout and agent, derived from the "
        "rollout's spec (the same rollout run again has the same id); per-run state is keyed on the A2A context_id, unique per run",
    )
    scenario_id: str = Field(..., description="the scenario's id")
    role: Literal["main", "app_agent"] = Field(..., description="main: the agent under test; app_agent: an expert a team's main agent delegates to")
    app: str | None = Field(None, description="the app an app-agent serves (e.g. CalendarApp)")
    turn: int = Field(..., ge=1, description="the message's turn: 1 the task, 2+ the user's later messages (same A2A context)")
    sim_time: float = Field(..., description="simulated seconds since the scenario's start, when the message was sent")
    traceparent: str | None = Field(None, description="W3C trace context of the span the message is sent under (tracing on), as in the HTTP header")

    def wire(self) -> dict[str, Any]:
        return {PREFIX + key: value for key, value in self.model_dump(exclude_none=True).items()}

    @classmethod
    def from_wire(cls, metadata: dict[str, Any]) -> A2AMetadata:
        """The fields back from a received message's metadata (what an agent built in Python reads).

        Keys this version does not know are ignored, not refused: an agent built on this parser keeps
        working when a later orchestra sends one more key."""
        fields = {key[len(PREFIX) :]: value for key, value in metadata.items() if key.startswith(PREFIX)}
        return cls(**{key: value for key, value in fields.items() if key in cls.model_fields})
