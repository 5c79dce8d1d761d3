"""`A2AConfig`: an agent played by a remote A2A agent (`a2a: URL` in a team file, `--agent a2a:URL`).

Plain pydantic, no `a2a-sdk`: a spec carrying one stays serialisable and importable without the extra.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

#: Seconds the remote agent has to answer one message, by default (`timeout_seconds`).
DEFAULT_TIMEOUT_SECONDS = 600.0
#: Seconds to reach the agent and read its card, by default (`connect_timeout_seconds`).
DEFAULT_CONNECT_TIMEOUT_SECONDS = 10.0
#: The `--agent` prefix that names an A2A agent.
A2A_PREFIX = "a2a:"
#: Where the loopback server (the agent's MCP endpoint and model proxy) listens, by default: this machine only.
DEFAULT_LISTEN_HOST = "127.0.0.1"
#: Listen addresses that are no address a client can connect to: `advertise_host` must name one.
_ANY_ADDRESS = ("0.0.0.0", "::", "")


class A2AConfig(BaseModel):
    """Where the remote agent is, how long orchestra waits for it, and where the agent finds the
    loopback server orchestra starts for it (its tools and model proxy: `listen_host`, `advertise_host`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(..., min_length=1, description="the agent's base URL; its card is at URL/.well-known/agent-card.json")
    timeout_seconds: float = Field(DEFAULT_TIMEOUT_SECONDS, gt=0, description="wall seconds the agent has to answer one message")
    connect_timeout_seconds: float = Field(DEFAULT_CONNECT_TIMEOUT_SECONDS, gt=0, description="wall seconds to connect and read its agent card")
    listen_host: str = Field(
        DEFAULT_LISTEN_HOST,
        exclude_if=lambda v: v == DEFAULT_LISTEN_HOST,
        description="the address the loopback server (the agent's MCP endpoint and model proxy) listens on; 0.0.0.0 for an agent "
        "on another machine or in a container (whoever reaches it can call the session's tools and its model)",
    )
    advertise_host: str | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="the host in the URLs the agent is given (orchestra.mcp_url, orchestra.model_base_url), as the agent reaches this "
        "machine (host.docker.internal, a LAN name); default: listen_host",
    )

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

    @model_validator(mode="after")
    def _reachable(self) -> A2AConfig:
        if self.advertise_host is None and self.listen_host in _ANY_ADDRESS:
            raise ValueError(
                f"listen_host {self.listen_host!r} is no address the agent can connect to: give advertise_host too "
                "(the name or address the agent reaches this machine by)"
            )
        return self

    @property
    def loopback_host(self) -> str:
        """The host written into the agent's URLs (`advertise_host`, else `listen_host`)."""
        return self.advertise_host or self.listen_host


def a2a_shorthand(value: Any) -> Any:
    """`a2a: http://host:9999` in a file means `a2a: {url: http://host:9999}`."""
    return {"url": value} if isinstance(value, str) else value


def parse_agent_option(text: str) -> A2AConfig:
    """`--agent a2a:URL` → the config; a `ValueError` with one line naming the option and the form otherwise."""
    if not text.startswith(A2A_PREFIX):
        raise ValueError(f"--agent {text!r}: the form is a2a:URL (an A2A agent, e.g. a2a:http://127.0.0.1:9999)")
    url = text[len(A2A_PREFIX) :]
    if not url.strip():
        raise ValueError(f"--agent {text!r}: no URL after a2a: (the agent's base URL, e.g. a2a:http://127.0.0.1:9999)")
    try:
        return A2AConfig(url=url)
    except ValidationError as exc:
        raise ValueError(f"--agent {text!r}: {str(exc.errors()[0]['msg']).removeprefix('Value error, ')}") from None
