"""What plugins and scaffolds may read of an agent, a rollout and the host — typed, read-only by contract.

The hook specifications (`orchestra.hookspecs`) and scaffolds type their arguments with these
protocols. `session` is the real `orchestra.session.Session` and `model` the real `ModelConfig`;
the host, the scaffold and the rollout are described by the few members plugins use, because
their classes (`orchestra.host.Host`, `orchestra.scaffold.Scaffold`, `orchestra.rollout.Rollout`)
sit above the hook contract and importing them here would tie the layers into a circle.
`orchestra.agent.AgentContext` and `orchestra.rollout.Rollout` implement them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from orchestra.types import ActionFormat, AgentLedger, Delegation, StepRecord, ToolOutcome, ToolSpec

if TYPE_CHECKING:  # pragma: no cover - types only
    import pluggy

    from orchestra.models import ModelConfig
    from orchestra.session import Session
    from orchestra.spec import RolloutSpec
    from orchestra.teams.config import TeamConfig
    from orchestra.training import TrainingRecorder
    from orchestra.trajectory import TrajectoryRecorder


class HostView(Protocol):
    """The plugin host as plugins see it: the hooks to call and what plugins registered."""

    @property
    def hook(self) -> pluggy.HookRelay: ...

    @property
    def tools(self) -> dict[str, tuple[ToolSpec, Callable[..., Any]]]:
        """Registered tools: name -> (spec, function)."""
        ...

    @property
    def scaffolds(self) -> dict[str, Callable[..., Any]]: ...

    @property
    def models(self) -> dict[str, Any]:
        """Registered model providers: provider -> litellm handler (or a function returning one)."""
        ...

    def scaffold(self, name: str) -> Callable[..., Any]:
        """The registered scaffold factory `name` (a `PluginError` naming the registered ones otherwise)."""
        ...

    def sandbox(self, name: str) -> Callable[..., Any]:
        """The registered sandbox backend `name` (`orchestra.sandbox`; a `PluginError` naming the registered ones otherwise)."""
        ...


class ScaffoldView(Protocol):
    """What plugins read of an agent's scaffold (offline models answer in its format)."""

    @property
    def action_format(self) -> ActionFormat: ...

    @property
    def tools(self) -> dict[str, ToolSpec]: ...

    def render_output(self, outcome: ToolOutcome) -> str: ...


class RolloutView(Protocol):
    """One rollout as plugins see it: what runs (`spec`, `team`), the world (`session`), who ran."""

    @property
    def spec(self) -> RolloutSpec: ...

    @property
    def session(self) -> Session: ...

    @property
    def host(self) -> HostView: ...

    @property
    def team(self) -> TeamConfig | None:
        """The team this rollout runs (the spec's, sampling seed applied), None for one agent or the oracle."""
        ...

    @property
    def agents(self) -> dict[str, AgentLedger]:
        """Every agent that ran, by its unique name (main first, then sub-agents in start order)."""
        ...

    @property
    def delegations(self) -> list[Delegation]:
        """Every task an agent handed to a sub-agent, in the order they finished."""
        ...

    @property
    def app_agents(self) -> list[str]:
        """The scenario's apps served by app-agents in this rollout, in the order ARE appends them."""
        ...

    @property
    def trajectory(self) -> TrajectoryRecorder:
        """What every agent was asked, answered and did (the agent loop records into it)."""
        ...

    @property
    def training(self) -> TrainingRecorder:
        """The trainable agents' model calls in token ids (the `training` plugin records into it)."""
        ...

    def register_agent(self, ledger: AgentLedger) -> None: ...

    def record_delegation(self, delegation: Delegation) -> None: ...


class AgentView(Protocol):
    """What plugins may read of an agent (`orchestra.agent.AgentContext` implements it)."""

    name: str
    role: str
    parent: str | None
    #: The ARE app an app-agent serves; None for the main agent and generic sub-agents.
    app: str | None
    #: Unique per agent run (tracing's `gen_ai.agent.id`); never part of a record.
    run_id: str
    task: str | None
    max_steps: int
    tools: dict[str, ToolSpec]
    ledger: AgentLedger
    records: list[StepRecord]
    #: Scratch space for plugins, keyed by plugin name (never shared between rollouts).
    state: dict[str, Any]

    @property
    def model(self) -> ModelConfig: ...

    @property
    def scaffold(self) -> ScaffoldView: ...

    @property
    def rollout(self) -> RolloutView: ...

    @property
    def session(self) -> Session:
        """The rollout's world: ARE's environment on the simulated clock."""
        ...

    @property
    def host(self) -> HostView: ...

    @property
    def steps(self) -> int: ...

    @property
    def is_main(self) -> bool: ...
