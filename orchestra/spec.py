"""A rollout as data: `RolloutSpec` — what runs, on which scenario, how it is judged.

A spec is plain, serialisable data: a worker process or a Ray task can ship it, a runner can store
it beside its record (`orchestra.record.RolloutRecord.spec`) and resume from it, and two equal
specs run the same rollout. `orchestra.rollout.Rollout` turns one into a running rollout.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from orchestra.config import SessionConfig
from orchestra.models import ModelConfig
from orchestra.teams.config import AgentConfig, TeamConfig

PerturbationKind = Literal["wrong_arg", "late", "missing", "extra", "swap", "wrong_answer"]
KINDS: tuple[PerturbationKind, ...] = ("wrong_arg", "late", "missing", "extra", "swap", "wrong_answer")

__all__ = ["KINDS", "AgentConfig", "OracleConfig", "PerturbationKind", "RolloutSpec", "TeamConfig"]


class OracleConfig(BaseModel):
    """The oracle policy: the scenario's own oracle actions at the oracle's timing, optionally perturbed."""

    model_config = ConfigDict(extra="forbid")

    perturbation: PerturbationKind | None = None
    #: Also judge the trajectory with ARE's own offline harness (slow: ARE builds a judge per call).
    native_parity: bool = False


class RolloutSpec(BaseModel):
    """Everything that determines one rollout, as data: what runs, on which scenario, how it is judged."""

    model_config = ConfigDict(extra="forbid")

    scenario: str = Field(description="the scenario file (or the name a source resolved it to)")
    agent: AgentConfig | None = Field(None, description="one agent; None (and no team): the oracle policy")
    team: TeamConfig | None = Field(None, description="a team (main agent + app-agents); its `main` is the main agent")
    oracle: OracleConfig | None = None
    session: SessionConfig = Field(default_factory=SessionConfig, description="clock, notifications, duration, judge, reward mode")
    seed: int | None = Field(
        None, description="sampling seed: sent to every agent's model (a team's app-agents too) as `seed + sample_index` (OpenAI-style `seed`) when set"
    )
    sample_index: int = Field(0, ge=0, description="which sample of this scenario (several rollouts of one spec)")
    noise_index: int | None = Field(
        None,
        ge=0,
        exclude_if=lambda v: v is None,
        description="which draw of the noise's tool failures (default: `sample_index`); the members of a GRPO group share one "
        "so they meet the same noise while sampling differently",
    )
    are_model_failures: bool = Field(
        False,
        description="ARE's behaviour for parity runs: a rollout whose main agent's model calls all failed is judged like any "
        "other (ARE's loop answers 'Max iterations reached', which the scripted judge may pass); default: it is an ERROR whatever the judge says",
    )

    @model_validator(mode="after")
    def _one_policy(self) -> RolloutSpec:
        given = [name for name, value in (("agent", self.agent), ("team", self.team), ("oracle", self.oracle)) if value is not None]
        if len(given) > 1:
            raise ValueError(f"a rollout runs one policy: an agent, a team or the oracle (got {' and '.join(given)})")
        if not given:
            self.oracle = OracleConfig()
        return self

    @property
    def main_agent(self) -> AgentConfig | None:
        """The agent that talks to the user: the one agent, or the team's main agent."""
        return self.team.main if self.team is not None else self.agent

    @property
    def policy(self) -> str:
        """A short label: `oracle`, `oracle:<perturbation>`, `<scaffold>:<model>` or `team:<name>`."""
        if self.team is not None:
            return f"team:{self.team.name}"
        if self.agent is not None:
            if self.agent.a2a is not None:
                return f"a2a:{self.agent.a2a.url}"
            return f"{self.agent.scaffold}:{self.agent.model.model}"
        assert self.oracle is not None
        return "oracle" + (f":{self.oracle.perturbation}" if self.oracle.perturbation else "")

    @property
    def noise_run(self) -> int:
        """The run index the noise's tool failures are drawn for."""
        return self.sample_index if self.noise_index is None else self.noise_index

    def seeded(self) -> RolloutSpec:
        """This spec with its sampling seed (`seed + sample_index`) in every agent's model, the
        team's app-agents included (an app-agent without a model of its own uses the main agent's,
        seeded too); itself when no seed is set."""
        if self.seed is None:
            return self
        seed = self.seed + self.sample_index

        def seed_model(settings: Any) -> Any:
            if settings.model is None:
                return settings
            model: ModelConfig = settings.model
            return settings.model_copy(update={"model": model.model_copy(update={"extra": {**model.extra, "seed": seed}})})

        if self.team is not None:
            return self.model_copy(update={"team": self.team.map_agents(seed_model)})
        if self.agent is not None:
            return self.model_copy(update={"agent": seed_model(self.agent)})
        return self
