"""Agent2Agent teams: a main agent plus app-agents replacing ARE apps, configured in YAML."""

from orchestra.teams.config import AgentConfig, AppAgentsConfig, AppAgentSettings, TeamConfig, expert_tool_name

__all__ = ["AgentConfig", "AppAgentSettings", "AppAgentsConfig", "TeamConfig", "expert_tool_name"]
