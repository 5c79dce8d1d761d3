"""The team schema: fallbacks, overrides, and app selection equal to ARE's own Agent2Agent draw."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from orchestra.are.imports import import_are
from orchestra.errors import ScenarioError
from orchestra.models import ModelConfig
from orchestra.teams.config import AppAgentsConfig, TeamConfig, expert_tool_name

#: A corpus scenario with nine candidate apps (Gaia2's app set), and a starter with four.
CORPUS = "scenarios/corpus/search/validation/univ_02_search_party.json"
STARTER = "scenarios/execution/validation/starter_execution_calendar.json"


# ARE's own Agent2Agent draw, run on a scenario as `are-benchmark` does before a run (the reference
# the team's selection is compared with): it only builds ARE's app-agent objects; nothing runs.


def _initialized_scenario(path: str | Path) -> Any:
    """A scenario imported and initialised as a rollout has it (apps loaded, in the scenario's
    order), without the oracle run: all the Agent2Agent draw looks at."""
    from orchestra.are.loading import parse_scenario_json

    scenario = parse_scenario_json(Path(path).read_text(), path)
    try:
        scenario.initialize()
    except Exception as exc:
        raise ScenarioError(path, f"ARE could not initialize the scenario: {type(exc).__name__}: {exc}") from None
    return scenario


def scenario_apps(path: str | Path) -> tuple[list[str], int]:
    """A scenario file's app instance names, in the scenario's order, and its seed — the inputs of
    ARE's Agent2Agent draw (and of `TeamConfig.app_agent_apps`)."""
    scenario = _initialized_scenario(path)
    return [app.name for app in scenario.apps or []], int(scenario.seed or 0)


def are_app_agent_selection(path: str | Path, draws: Sequence[tuple[float, int | None]]) -> list[list[str]]:
    """For each `(proportion, seed)`, the apps ARE's `_apply_a2a_config` replaces by app-agents in
    the scenario at `path`, in the order ARE drew them, with `a2a_app_prop=proportion` and the
    scenario's seed set to `seed` (None: the scenario's own). The scenario is loaded once; its app
    list is put back before each draw (ARE's function only swaps that list: `reset_apps`)."""
    import_are()
    from are.simulation.agents.default_agent.app_agent import AppAgent
    from are.simulation.environment import Environment, EnvironmentConfig
    from are.simulation.notification_system import VerboseNotificationSystem
    from are.simulation.scenario_runner import _apply_a2a_config
    from are.simulation.scenarios.config import ScenarioRunnerConfig
    from are.simulation.types import EnvironmentType

    scenario = _initialized_scenario(path)
    apps, own_seed = list(scenario.apps or []), scenario.seed
    out = []
    for proportion, seed in draws:
        scenario.apps, scenario.seed, scenario.has_a2a_augmentation = list(apps), own_seed if seed is None else seed, False
        config = ScenarioRunnerConfig(model="mock", model_provider="mock", a2a_app_prop=proportion)
        env = Environment(environment_type=EnvironmentType.CLI, config=EnvironmentConfig(), notification_system=VerboseNotificationSystem())
        drawn = _apply_a2a_config(config, scenario, env)
        out.append([app.name for app in drawn.apps or [] if isinstance(app, AppAgent)])
    return out


def team(**app_agents) -> TeamConfig:
    return TeamConfig.model_validate({"name": "t", "main": {"scaffold": "react", "model": "openai/main"}, "app_agents": app_agents or None})


@pytest.mark.parametrize("path", [CORPUS, STARTER])
def test_proportion_selection_equals_ares_apply_a2a_config(path):
    names, scenario_seed = scenario_apps(path)
    assert {"AgentUserInterface", "SystemApp"} <= set(names)
    draws = [(proportion, seed) for seed in (scenario_seed, 7, 2024) for proportion in (0.25, 0.5, 0.9, 1.0)]
    ares = are_app_agent_selection(path, draws)
    seen = set()
    for (proportion, seed), are_apps in zip(draws, ares, strict=True):
        ours = team(proportion=proportion).app_agent_apps(names, seed)
        assert ours == are_apps, (seed, proportion)
        seen.add(tuple(ours))
    assert len(seen) > 4  # the draws differ by seed and proportion: the comparison is not vacuous


def test_proportion_zero_and_names():
    names = ["AgentUserInterface", "Calendar", "Emails", "SystemApp", "Contacts", "InternalContacts"]
    assert team(proportion=0.0).app_agent_apps(names, 1) == []
    # all = ARE's a2a_app_prop=1.0: every candidate, in ARE's draw order (the order of the expert tools)
    assert team(apps="all").app_agent_apps(names, 1) == team(proportion=1.0).app_agent_apps(names, 1)
    assert sorted(team(apps="all").app_agent_apps(names, 1)) == ["Calendar", "Contacts", "Emails"]
    assert team(apps=["Contacts", "Calendar", "Shopping"]).app_agent_apps(names, 1) == ["Calendar", "Contacts"]  # scenario order; absent apps skipped
    assert TeamConfig.model_validate({"name": "t", "main": {"model": "m"}}).app_agent_apps(names, 1) == []
    assert expert_tool_name("Calendar") == "Calendar__expert_agent"


def test_app_agent_settings_fall_back_override_then_defaults_then_main():
    t = team(
        apps="all",
        defaults={"scaffold": "tool_calling", "max_steps": 20},
        overrides={"Calendar": {"model": {"model": "openai/cal", "endpoint": "http://h/v1"}, "scaffold_options": {"constrained": True}}},
    )
    cal, mail = t.app_agent("Calendar"), t.app_agent("Emails")
    assert (cal.scaffold, cal.model.model, cal.model.endpoint, cal.max_steps, cal.scaffold_options) == (
        "tool_calling",
        "openai/cal",
        "http://h/v1",
        20,
        {"constrained": True},
    )
    assert (mail.scaffold, mail.model.model, mail.max_steps, mail.scaffold_options) == ("tool_calling", "openai/main", 20, {})
    bare = team(apps="all").app_agent("Emails")
    assert (bare.scaffold, bare.model.model, bare.max_steps) == ("react", "openai/main", 50)  # ARE's app-agent budget


def test_with_overrides_replaces_every_agents_model_and_scaffold():
    t = team(apps="all", defaults={"model": "openai/small", "scaffold": "tool_calling"}, overrides={"Calendar": {"model": "openai/cal"}})
    swapped = t.with_overrides(model="orchestra/oracle")
    assert {swapped.main.model.model, swapped.app_agent("Calendar").model.model, swapped.app_agent("Emails").model.model} == {"orchestra/oracle"}
    assert swapped.app_agent("Emails").scaffold == "tool_calling"  # scaffolds untouched
    both = t.with_overrides(model=ModelConfig(model="openai/x", endpoint="http://e/v1"), scaffold="parallel_tools")
    assert {both.main.scaffold, both.app_agent("Calendar").scaffold, both.app_agent("Emails").scaffold} == {"parallel_tools"}
    assert both.app_agent("Calendar").model.endpoint == "http://e/v1"
    assert t.with_overrides() is t
    # a remote A2A agent runs its own loop: `--scaffold` leaves it alone, `--model` is its proxy's upstream
    remote = TeamConfig.model_validate(
        {"name": "r", "main": {"a2a": "http://h:1"}, "app_agents": {"apps": "all", "overrides": {"Calendar": {"a2a": "http://h:2"}}}}
    )
    swapped = remote.with_overrides(model="orchestra/oracle", scaffold="react")
    assert (
        swapped.main.model_dump(exclude={"a2a", "model"}) == remote.main.model_dump(exclude={"a2a", "model"}) and swapped.main.model.model == "orchestra/oracle"
    )
    assert swapped.app_agents is not None and swapped.app_agents.overrides["Calendar"].scaffold is None
    assert swapped.app_agent("Emails").scaffold == "react"  # orchestra's own app-agents get it


@pytest.mark.parametrize(
    ("app_agents", "message"),
    [
        ({"apps": "all", "proportion": 0.5}, "not both"),
        ({"defaults": {}}, "say which apps become app-agents"),
        ({"apps": ["Calendar", "Calendar"]}, "Calendar listed more than once"),
        ({"apps": ["AgentUserInterface"]}, "AgentUserInterface cannot be an app-agent"),
        ({"proportion": 1.01}, "less than or equal to 1"),
    ],
)
def test_invalid_app_agent_selections(app_agents, message):
    with pytest.raises(ValidationError, match=message):
        AppAgentsConfig.model_validate(app_agents)


def test_a_team_is_plain_data_that_round_trips():
    t = team(proportion=0.5, overrides={"Calendar": {"model": {"model": "openai/x", "api_key": "${KEY}"}}})
    assert TeamConfig.model_validate(t.model_dump()) == t
    assert TeamConfig.model_validate_json(t.model_dump_json()) == t
    assert t.app_agent("Calendar").model.api_key == "${KEY}"  # a reference, expanded only at the model call
