"""How a rollout is run — the settings the session, the agent loop and team files share.

A small module on purpose: the session (`orchestra.session`), the agent loop (`orchestra.agent`)
and team files (`orchestra.teams.config`) all import it, and it imports nothing of theirs, so none
of them needs another just for a setting or a budget.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from orchestra.clock import ClockConfig
from orchestra.judging.settings import JudgeConfig

#: ARE's default agent budget (`max_iterations=80`), counted over the whole scenario.
DEFAULT_MAX_STEPS = 80
#: A sub-agent's default budget (its own, not the main agent's).
DEFAULT_SUB_AGENT_MAX_STEPS = 20
#: ARE's default app-agent budget (`ARESimulationReactAppAgentConfig.max_iterations`).
DEFAULT_APP_AGENT_MAX_STEPS = 50
#: The tool a sub-agent returns through (added to sub-agents' tools by the built-in `subagents` plugin).
FINAL_ANSWER_TOOL = "final_answer"

RewardMode = Literal["binary", "dense"]


class NoiseConfig(BaseModel):
    """Gaia2's noise augmentation, made reproducible (ARE's `ToolAugmentationConfig` and
    `EnvEventsConfig`; ARE-NOTES §8). The defaults are Gaia2's `--noise` / `noise` phase
    (ARE's `create_noise_configs()`): p = 0.1 on every app tool, names and descriptions from the
    scenario's `augmentation` data, 10 environment events per minute with seed 0.

    Tool failures draw from a generator seeded by a SHA-256 digest of (scenario id, scenario seed,
    run index, agent, call index), not ARE's `Random(None)`, so a rerun fails the same calls
    (`orchestra.are.noise`). An environment-event rate of 0 adds none (ARE's expander would still
    add one message burst per conversation). `docs/noise.md` has the details."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool_failure_probability: float = Field(0.1, ge=0.0, le=1.0, allow_inf_nan=False, description="ARE's ToolAugmentationConfig.tool_failure_probability")
    apply_tool_name_augmentation: bool = True
    apply_tool_description_augmentation: bool = True
    system_tools_can_fail: bool = Field(True, description="ARE applies the probability to every app, AgentUserInterface and SystemApp included")
    env_events_per_minute: float = Field(10.0, ge=0.0, allow_inf_nan=False, description="ARE's EnvEventsConfig.num_env_events_per_minute")
    env_events_seed: int = 0


class SessionConfig(BaseModel):
    """How a rollout is run. Everything that changes a reward is in here, so it can be recorded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    clock: ClockConfig = Field(default_factory=ClockConfig)
    notification_verbosity: Literal["low", "medium", "high"] = "medium"
    reward_mode: RewardMode = "binary"
    duration: float | None = Field(None, gt=0, description="Scenario duration in simulated seconds; default: ARE's cap (420 s Time, else 1800 s).")
    judge: JudgeConfig = Field(default_factory=JudgeConfig, description="scripted (default) | llm | strict | a plugin's judge; see orchestra.judging.settings")
    noise: NoiseConfig | None = Field(None, description="Gaia2's noise (tool failures, environment events); None runs clean; true: Gaia2's defaults")

    @field_validator("noise", mode="before")
    @classmethod
    def _noise_switch(cls, value: Any) -> Any:
        """`noise: true` (a team file, an RL environment's argument) is Gaia2's noise; `false` is none."""
        if value is True:
            return NoiseConfig()
        if value is False:
            return None
        return value
