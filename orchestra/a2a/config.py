"""`A2AConfig`: an agent played by a remote A2A agent (`a2a: URL` in a team file, `--agent a2a:URL`).

Plain pydantic, no `a2a-sdk`: a spec carrying one stays serialisable and importable without the extra.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: Seconds the remote agent has to answer one message, by default (`timeout_seconds`).
DEFAULT_TIMEOUT_SECONDS = 600.0
#: Seconds to reach the agent and read its card, by default (`connect_timeout_seconds`).
DEFAULT_CONNECT_TIMEOUT_SECONDS = 10.0
#: The `--agent` prefix that names an A2A agent.
A2A_PREFIX = "a2a:"


class A2AConfig(BaseModel):
    """Where the remote agent is and how long orchestra waits for it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(..., min_length=1, description="the agent's base URL; its card is at URL/.well-known/agent-card.json")
    timeout_seconds: float = Field(DEFAULT_TIMEOUT_SECONDS, gt=0, description="wall seconds the agent has to answer one message")
    connect_timeout_seconds: float = Field(DEFAULT_CONNECT_TIMEOUT_SECONDS, gt=0, description="wall seconds to connect and read its agent card")

    @field_validator("url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"an A2A agent's URL starts with http:// or https:// (got {value!r})")
        value = value.rstrip("/")
        card = "/.well-known/agent-card.json"
        if value.endswith(card):  # the card's own URL, as a card resolver prints it: the agent is what precedes it
            value = value[: -len(card)].rstrip("/")
        return value


def a2a_shorthand(value: Any) -> Any:
    """`a2a: http://host:9999` in a file means `a2a: {url: http://host:9999}`."""
    return {"url": value} if isinstance(value, str) else value


def parse_agent_option(text: str) -> A2AConfig:
    """`--agent a2a:URL` → the config (a `ValueError` naming the form otherwise)."""
    if not text.startswith(A2A_PREFIX):
        raise ValueError(f"--agent {text!r}: the form is a2a:URL (an A2A agent, e.g. a2a:http://127.0.0.1:9999)")
    return A2AConfig(url=text[len(A2A_PREFIX) :])
