"""The team schema: fallbacks, overrides, and app selection equal to ARE's own Agent2Agent draw."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from orchestra.are.app_names import are_app_agent_selection, scenario_apps
from orchestra.models import ModelConfig
from orchestra.teams.config import AppAgentsConfig, TeamConfig, expert_tool_name

#: A corpus scenario with nine candidate apps (Gaia2's app set), and a starter with four.
CORPUS = "scenarios/corpus/search/validation/univ_02_search_party.json"
STARTER = "scenarios/execution/validation/starter_execution_calendar.json"


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
    assert (cal.scaffold, cal.model.model, cal.model.endpoint, cal.max_steps, cal.scaffold_options) == ("tool_calling", "openai/cal", "http://h/v1", 20, {"constrained": True})
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
