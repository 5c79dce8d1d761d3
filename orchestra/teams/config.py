"""What a team is, as validated data: a main agent plus app-agents that replace ARE apps.

A team file (`orchestra/teams/shipped/*.yaml` or your own, loaded by `orchestra.teams.loading`) is one `TeamConfig`. It is
plain, serialisable data, carried whole in a `RolloutSpec` (`RolloutSpec.team`), so a worker
process can run it and a record says what ran.

Agent2Agent follows ARE 1.2.0 (`scenario_runner._apply_a2a_config`): the candidate apps are the
scenario's apps except `InternalContacts`, `AgentUserInterface` and `SystemApp`; with a
proportion `p`, `int(len(candidates) * p)` of them are chosen by
`random.Random(scenario.seed).sample(candidates, n)`. Each chosen app is served by an app-agent:
the main agent loses that app's tools and gets one `<App>__expert_agent(task)` tool instead.
An app-agent's settings come from its per-app override, then `app_agents.defaults`, then — as
ARE's `a2a_model` falls back to the main model — the main agent's model and scaffold.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from orchestra.a2a.config import A2AConfig, a2a_shorthand
from orchestra.config import DEFAULT_APP_AGENT_MAX_STEPS, DEFAULT_MAX_STEPS, SessionConfig
from orchestra.models import ModelConfig

#: Apps ARE never turns into app-agents (`scenario_runner._apply_a2a_config`).
NEVER_APP_AGENTS = ("InternalContacts", "AgentUserInterface", "SystemApp")
#: The tool the main agent calls to delegate to an app's agent (ARE's `AppAgent.expert_agent`).
EXPERT_TOOL_SUFFIX = "__expert_agent"


def _model_shorthand(value: Any) -> Any:
    """`model: openai/gpt-4o` in a file means `model: {model: openai/gpt-4o}`."""
    return {"model": value} if isinstance(value, str) else value


#: The model behind a remote A2A agent's proxy when none is given: it answers every call with an
#: error naming the fix (the agent brings its own model, or the team / `--model` gives one).
A2A_NO_MODEL = "orchestra/no-model"


class AgentConfig(BaseModel):
    """One agent: which scaffold around which model, and its step budget; or a remote A2A agent (`a2a`)."""

    model_config = ConfigDict(extra="forbid")

    scaffold: str = "tool_calling"
    model: ModelConfig
    max_steps: int = Field(DEFAULT_MAX_STEPS, gt=0, description="whole-scenario step budget (ARE: 80)")
    scaffold_options: dict[str, Any] = Field(default_factory=dict)
    a2a: A2AConfig | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="a remote A2A agent plays this agent (`a2a: URL` or {url, timeout_seconds}); `model` is then the upstream of its model proxy",
    )

    _shorthand = field_validator("model", mode="before")(classmethod(lambda cls, v: _model_shorthand(v)))
    _a2a_shorthand = field_validator("a2a", mode="before")(classmethod(lambda cls, v: a2a_shorthand(v)))

    @model_validator(mode="before")
    @classmethod
    def _a2a_model(cls, data: Any) -> Any:
        """An A2A agent needs no model of its own: its proxy then has none (`A2A_NO_MODEL`)."""
        if isinstance(data, dict) and data.get("a2a") is not None and data.get("model") is None:
            return {**data, "model": A2A_NO_MODEL}
        return data


def expert_tool_name(app: str) -> str:
    """`CalendarApp` → `CalendarApp__expert_agent` (the name ARE's main agent sees)."""
    return f"{app}{EXPERT_TOOL_SUFFIX}"


class AppAgentSettings(BaseModel):
    """An app-agent's model, scaffold and budget; each unset field falls back (override → defaults → main)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scaffold: str | None = Field(None, description="registered scaffold name; default: the main agent's")
    model: ModelConfig | None = Field(None, description="default: the main agent's model (ARE's a2a_model fallback)")
    max_steps: int | None = Field(None, gt=0, description=f"iterations per delegated task (ARE: {DEFAULT_APP_AGENT_MAX_STEPS})")
    scaffold_options: dict[str, Any] | None = None
    a2a: A2AConfig | None = Field(
        None, exclude_if=lambda v: v is None, description="a remote A2A agent serves this app (`a2a: URL`): it gets the task and the app's MCP tools"
    )
    trainable: bool | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="RL: the trainer trains this app-agent too (its model calls go to the trainer's endpoint and into the "
        "episode's training trace); default false: a frozen agent on its own model",
    )

    _shorthand = field_validator("model", mode="before")(classmethod(lambda cls, v: _model_shorthand(v)))
    _a2a_shorthand = field_validator("a2a", mode="before")(classmethod(lambda cls, v: a2a_shorthand(v)))


def _may_be_app_agent(app: str) -> str:
    if app in NEVER_APP_AGENTS:
        raise ValueError(f"{app} cannot be an app-agent (ARE never replaces {', '.join(NEVER_APP_AGENTS)})")
    return app


#: An app named in `apps`: checked item by item, so an error points at the item's line.
AppAgentName = Annotated[str, AfterValidator(_may_be_app_agent)]


def _no_repeats(apps: Any) -> Any:
    if isinstance(apps, list):
        repeated = sorted({a for a in apps if apps.count(a) > 1})
        if repeated:
            raise ValueError(f"{', '.join(repeated)} listed more than once")
    return apps


class AppAgentsConfig(BaseModel):
    """Which apps become app-agents, and how those agents are made."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    apps: Annotated[Literal["all"] | list[AppAgentName] | None, AfterValidator(_no_repeats)] = Field(
        None, description="app names (ARE instance names, e.g. CalendarApp), or 'all' candidates"
    )
    proportion: float | None = Field(None, ge=0.0, le=1.0, description="share of candidate apps, sampled as ARE does from the scenario seed")
    defaults: AppAgentSettings = Field(default_factory=AppAgentSettings)
    overrides: dict[str, AppAgentSettings] = Field(default_factory=dict, description="app name → settings for that app's agent")

    @model_validator(mode="after")
    def _one_selection(self) -> AppAgentsConfig:
        if self.apps is not None and self.proportion is not None:
            raise ValueError("give either 'apps' (names or 'all') or 'proportion', not both")
        if self.apps is None and self.proportion is None:
            raise ValueError("say which apps become app-agents: 'apps' (names or 'all') or 'proportion' (a share, sampled as ARE does)")
        return self

    def select(self, app_names: Sequence[str], seed: int) -> list[str]:
        """The apps of a scenario (its app instance names, in the scenario's order) that become app-agents.

        By proportion this is ARE's own draw, so the same seed picks the same apps, in ARE's draw
        order (the order ARE appends app-agents, so the order of the main agent's expert tools);
        `all` is ARE's `a2a_app_prop=1.0` (every candidate, in that draw order); by name, the named
        apps the scenario has, in scenario order (a team file may name apps some scenarios lack)."""
        candidates = [a for a in app_names if a not in NEVER_APP_AGENTS]
        proportion = 1.0 if self.apps == "all" else self.proportion
        if proportion is not None:
            n = int(len(candidates) * proportion)
            return random.Random(seed).sample(candidates, n) if n > 0 else []
        assert isinstance(self.apps, list)
        return [a for a in candidates if a in self.apps]


class TeamConfig(BaseModel):
    """A team: the main agent, its app-agents, and how the rollout is run and judged."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(..., min_length=1, description="the team's name (trace and report label)")
    description: str = ""
    main: AgentConfig = Field(..., description="the agent that talks to the user")
    app_agents: AppAgentsConfig | None = Field(None, description="apps served by app-agents; none: a one-agent team")
    session: SessionConfig = Field(default_factory=SessionConfig, description="clock rates, notification verbosity, judge, reward mode")
    plugins: list[str] = Field(default_factory=list, description="extra plugin modules to load ('package.module' or 'package.module:object')")

    def trainable(self, app: str) -> bool:
        """Whether `app`'s agent is trained with the main agent (its override, then the defaults; default no)."""
        if self.app_agents is None:
            return False
        for layer in (self.app_agents.overrides.get(app), self.app_agents.defaults):
            if layer is not None and layer.trainable is not None:
                return layer.trainable
        return False

    def app_agent(self, app: str) -> AgentConfig:
        """The resolved settings of `app`'s agent: its override, then the defaults, then the main agent's."""
        assert self.app_agents is not None
        layers = [self.app_agents.overrides.get(app), self.app_agents.defaults]

        def pick(field: str, fallback: Any) -> Any:
            for layer in layers:
                value = getattr(layer, field) if layer is not None else None
                if value is not None:
                    return value
            return fallback

        return AgentConfig(
            scaffold=pick("scaffold", self.main.scaffold),
            model=pick("model", self.main.model),
            max_steps=pick("max_steps", DEFAULT_APP_AGENT_MAX_STEPS),
            scaffold_options=pick("scaffold_options", {}),
            a2a=pick("a2a", None),
        )

    def agent_settings(self) -> Iterator[tuple[str, AgentConfig | AppAgentSettings]]:
        """Every agent setting of the team, labelled as in the file: `main`, `app_agents.defaults`,
        `app_agents.overrides.<app>` (the one walk over a team's agents)."""
        yield "main", self.main
        if self.app_agents is not None:
            yield "app_agents.defaults", self.app_agents.defaults
            for app, settings in self.app_agents.overrides.items():
                yield f"app_agents.overrides.{app}", settings

    def map_agents(self, change: Callable[[Any], Any]) -> TeamConfig:
        """This team with `change` applied to every agent setting (see `agent_settings`); `change`
        returns a setting of the type it was given."""
        main = change(self.main)
        app_agents = self.app_agents
        if app_agents is not None:
            app_agents = app_agents.model_copy(
                update={
                    "defaults": change(app_agents.defaults),
                    "overrides": {app: change(s) for app, s in app_agents.overrides.items()},
                }
            )
        return self.model_copy(update={"main": main, "app_agents": app_agents})

    def with_overrides(self, *, model: ModelConfig | str | None = None, scaffold: str | None = None) -> TeamConfig:
        """This team with every agent's model and/or scaffold replaced (`orchestra run --team F --model M`):
        e.g. a heterogeneous team with its models swapped for `orchestra/oracle`, run offline. A remote
        A2A agent keeps its own loop: only its model (its proxy's upstream) is replaced."""
        if model is None and scaffold is None:
            return self
        model_config = ModelConfig(model=model) if isinstance(model, str) else model
        agent_update = {k: v for k, v in (("model", model_config), ("scaffold", scaffold)) if v is not None}
        remote_update = {k: v for k, v in agent_update.items() if k != "scaffold"}
        return self.map_agents(lambda settings: settings.model_copy(update=remote_update if settings.a2a is not None else agent_update))

    def app_agent_apps(self, app_names: Sequence[str], seed: int) -> list[str]:
        """The apps of one scenario that become app-agents (see `AppAgentsConfig.select`)."""
        return self.app_agents.select(app_names, seed) if self.app_agents is not None else []
