"""App names as ARE knows them, and ARE's own Agent2Agent app selection (for teams).

A team file names the apps its app-agents serve. Those names are checked against what ARE
itself knows — the app classes it registers (`are.simulation.apps.ALL_APPS`) and the instance
names its judge treats as aliases of them (`validation.constants.APP_ALIAS`: Gaia2 scenarios
name their apps `Calendar`, `Emails`, `Chats`, ...) — never against a hand-written list that
would go stale with ARE.

`are_app_agent_selection` runs ARE's `scenario_runner._apply_a2a_config` on a scenario, as
`are-benchmark` does before a run, and reports which apps ARE turned into app-agents. It only
builds ARE's app-agent objects (with ARE's mock engine); nothing runs. The tests use it to show
that a team's proportion draws exactly ARE's apps for the same seed.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestra.are.imports import import_are
from orchestra.errors import ScenarioError


@functools.cache
def known_app_names() -> frozenset[str]:
    """Every app name ARE knows: its app classes' names and their scenario instance aliases."""
    import_are()
    from are.simulation.apps import ALL_APPS
    from are.simulation.validation.constants import APP_ALIAS

    names = {cls.__name__ for cls in ALL_APPS} - {"App"}  # `App` is the abstract base class
    for canonical, aliases in APP_ALIAS.items():
        names.add(canonical)
        names.update([aliases] if isinstance(aliases, str) else aliases)
    return frozenset(names)


@functools.cache
def app_aliases() -> dict[str, tuple[str, ...]]:
    """ARE's class name → the instance names scenarios give that app (`CalendarApp` → `Calendar`;
    `MessagingAppV2` → `Messages`, `Chats`), from ARE's `APP_ALIAS`."""
    import_are()
    from are.simulation.validation.constants import APP_ALIAS

    return {k: (v,) if isinstance(v, str) else tuple(v) for k, v in APP_ALIAS.items() if v}


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
