"""Gaia2's three phases and what runs in each: the main agent alone (standard, noise) or every app
served by an app-agent (agent2agent); noise only in the noise phase.
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestra.config import NoiseConfig, SessionConfig
from orchestra.gaia2.sources import MINI, STANDARD_CONFIGS
from orchestra.spec import AgentConfig
from orchestra.teams.config import AppAgentsConfig, TeamConfig


@dataclass(frozen=True)
class Phase:
    name: str
    configs: tuple[str, ...]
    #: ARE's `a2a_app_prop`: 1.0 makes every app an app-agent.
    a2a_app_prop: float = 0.0
    noise: bool = False


PHASES = (
    Phase("standard", STANDARD_CONFIGS),
    Phase("agent2agent", (MINI,), a2a_app_prop=1.0),
    Phase("noise", (MINI,), noise=True),
)


def phase_policy(phase: Phase, *, team: TeamConfig | None, agent: AgentConfig | None) -> tuple[TeamConfig | None, AgentConfig | None]:
    """The team or agent a phase runs: standard and noise run the main agent alone (ARE's
    `a2a_app_prop=0`); agent2agent makes every app an app-agent (`a2a_app_prop=1.0`), with the
    team's app-agent settings (defaults, overrides) when it has some, else the main agent's."""
    if phase.a2a_app_prop > 0:
        if team is not None:
            existing = team.app_agents
            app_agents = AppAgentsConfig(apps="all", defaults=existing.defaults, overrides=existing.overrides) if existing else AppAgentsConfig(apps="all")
            return team.model_copy(update={"app_agents": app_agents}), None
        assert agent is not None
        return TeamConfig(name=f"{agent.scaffold}+app-agents", main=agent, app_agents=AppAgentsConfig(apps="all")), None
    if team is not None:
        return team.model_copy(update={"app_agents": None}), None
    return None, agent


def phase_session(phase: Phase, base: SessionConfig) -> SessionConfig:
    """Noise only in the noise phase: the base's noise settings when it has some, else Gaia2's defaults."""
    if phase.noise:
        return base.model_copy(update={"noise": base.noise or NoiseConfig()})
    return base.model_copy(update={"noise": None})
