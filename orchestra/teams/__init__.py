"""Agent2Agent teams: a main agent plus app-agents replacing ARE apps, configured in YAML.

The schema's names are imported on first use (PEP 562), so importing a light submodule
(`orchestra.teams.catalog`, for `orchestra teams list`) does not import the schema.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - import for type checkers only
    from orchestra.teams.config import AgentConfig, AppAgentsConfig, AppAgentSettings, TeamConfig, expert_tool_name

__all__ = ["AgentConfig", "AppAgentSettings", "AppAgentsConfig", "TeamConfig", "expert_tool_name"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("orchestra.teams.config"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
