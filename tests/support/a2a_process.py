"""The remote A2A test agent's process as the tests see it (no a2a-sdk import here)."""

from __future__ import annotations

from pathlib import Path


class RemoteAgentProcess:
    """The agent process: its base URL (agents at URL/loop, /hang, /malformed, /drop) and its spans file."""

    def __init__(self, url: str, spans: Path) -> None:
        self.url = url
        self.spans = spans

    def __getitem__(self, name: str) -> str:
        return f"{self.url}/{name}"
