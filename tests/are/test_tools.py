"""ARE's agent tools built from per-class templates: exactly what ARE's `App.get_tools()` builds."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from are.simulation.apps import ALL_APPS
from are.simulation.apps.app import App
from are.simulation.apps.messaging_v2 import MessagingAppMode, MessagingAppV2
from are.simulation.tool_utils import AppTool, app_tool
from are.simulation.types import EventType

from orchestra.are import loading, tools
from orchestra.session import Session
from support.helpers import REPO

UNIVERSE = REPO / "scenarios/corpus/adaptability/validation/univ_01_adapt_email_reschedule.json"
FIELDS = [f.name for f in dataclasses.fields(AppTool) if f.name != "rng"]


def _same(ours: list[Any], theirs: list[Any]) -> None:
    assert [t.name for t in ours] == [t.name for t in theirs]
    for a, b in zip(ours, theirs, strict=True):
        for name in FIELDS:
            va, vb = getattr(a, name), getattr(b, name)
            if name == "args":
                assert [dataclasses.asdict(x) for x in va] == [dataclasses.asdict(x) for x in vb]
                assert not any(x is y for x, y in zip(va, vb, strict=True)), "each app's tools own their arguments"
            else:
                assert va == vb or va is vb, (a.name, name)
        assert a.class_instance is b.class_instance


def _are_tools(app: Any) -> list[Any]:
    """ARE's own build (the registry emptied first, as `set_failure_probability` does)."""
    app.set_failure_probability(app.failure_probability)
    return app.get_tools()


def test_every_app_of_a_universe_gets_ares_tools():
    scenario = loading.parse_scenario_json(UNIVERSE.read_text(), UNIVERSE)
    scenario.initialize()
    assert {type(app).__name__ for app in scenario.apps} >= {"MessagingAppV2", "VirtualFileSystem", "EmailClientV2"}
    for app in scenario.apps:
        ours = tools.build_agent_tools(app)
        assert ours is not None, type(app).__name__
        _same(ours, _are_tools(app))


@pytest.mark.parametrize("mode", [MessagingAppMode.PHONE_NUMBER, MessagingAppMode.NAME])
def test_messaging_descriptions_carry_ares_suffix_per_instance(mode):
    app = MessagingAppV2()
    app.mode = mode
    deferred = tools.deferred_specs(app)  # before anything builds the registry: the specs of the tools built below
    ours = tools.build_agent_tools(app)
    assert ours is not None and deferred is not None
    assert [spec for _, spec in deferred] == [tools._spec_of(t) for t in ours if t.name not in tools.HIDDEN_AUI_TOOLS]
    _same(ours, _are_tools(app))
    other = MessagingAppV2()
    other.mode = MessagingAppMode.NAME if mode == MessagingAppMode.PHONE_NUMBER else MessagingAppMode.PHONE_NUMBER
    theirs = _are_tools(other)
    assert [t.function_description for t in tools.build_agent_tools(other) or []] == [t.function_description for t in theirs]


def test_failure_probability_and_app_name_are_the_instance_s():
    app = next(cls for cls in ALL_APPS if cls.__name__ == "CalendarApp")(name="MyCalendar")
    app.set_failure_probability(0.25)
    ours = tools.build_agent_tools(app)
    assert ours is not None
    assert {t.failure_probability for t in ours} == {0.25} and all(t.name.startswith("MyCalendar__") for t in ours)
    _same(ours, _are_tools(app))


class _WithInstanceTool(App):
    @app_tool()
    def ping(self) -> str:
        """Answer pong."""
        return "pong"


class _OwnRegistry(App):
    def get_tools_with_attribute(self, attribute: Any, tool_type: Any) -> list[Any]:
        return []


def test_instance_level_tools_are_built_as_ares():
    app = _WithInstanceTool()

    @app_tool()
    def echo(text: str) -> str:
        """Echo the text.

        :param text: what to echo
        """
        return text

    app.echo = echo  # type: ignore[attr-defined]
    ours = tools.build_agent_tools(app)
    assert ours is not None and [t.name for t in ours] == ["_WithInstanceTool__ping", "_WithInstanceTool__echo"]
    _same(ours, _are_tools(app))


def test_an_app_class_with_its_own_tool_building_is_left_to_are():
    app = _OwnRegistry()
    assert tools.build_agent_tools(app) is None
    tools.bind_agent_tools(app)
    assert app.get_tools() == []


def test_templates_are_built_once_per_class():
    first, second = _WithInstanceTool(name="a"), _WithInstanceTool(name="b")
    tools.build_agent_tools(first)
    templates = tools._TEMPLATES[_WithInstanceTool]
    tools.build_agent_tools(second)
    assert tools._TEMPLATES[_WithInstanceTool] is templates
    [a], [b] = tools.build_agent_tools(first), tools.build_agent_tools(second)
    assert (a.name, b.name) == ("a__ping", "b__ping") and a.class_instance is first and b.class_instance is second


def test_a_session_s_tools_call_through_ares_apptool_and_log_the_event(judge_pool):
    with Session.open(UNIVERSE, judge_pool=judge_pool) as s:
        spec, tool = s._tools["Calendar__get_calendar_events_from_to"]
        assert isinstance(tool, tools.DeferredTool)  # not built until called
        tool = s.app_tools[spec.name]
        assert isinstance(tool, AppTool) and tool.class_instance in s.scenario.apps
        before = len(s.env.event_log())
        outcome = s.call_tool(spec.name, {"start_datetime": "2024-10-15 00:00:00", "end_datetime": "2024-10-16 00:00:00"})
        assert outcome.error is None
        logged = s.env.event_log()[before:]
        assert [e.tool_name for e in logged if e.event_type == EventType.AGENT] == ["CalendarApp__get_calendar_events_from_to"]


def _eager(scenario: Any) -> dict[str, Any]:
    """The session's tools as they were built before deferral: every app's `AppTool`s, each's spec."""
    out = {}
    for tool in tools.scenario_tools(scenario):
        if tool.name not in tools.HIDDEN_AUI_TOOLS:
            spec = tools._spec_of(tool)
            out[spec.name] = (spec, tool)
    return out


SMALLEST = min((p for p in (REPO / "scenarios").rglob("*.json") if p.name != "manifest.json"), key=lambda p: (p.stat().st_size, str(p)))


@pytest.mark.parametrize("path", [SMALLEST, UNIVERSE], ids=lambda p: p.stem)
def test_deferred_tools_have_the_specs_and_order_of_built_ones_and_build_the_same_apptools(path):
    deferred = loading.parse_scenario_json(path.read_text(), path)
    deferred.initialize()
    built = loading.parse_scenario_json(path.read_text(), path)
    built.initialize()
    ours, theirs = tools.agent_tools(deferred), _eager(built)
    assert list(ours) == list(theirs)
    assert [spec for spec, _ in ours.values()] == [spec for spec, _ in theirs.values()]
    assert any(isinstance(t, tools.DeferredTool) for _, t in ours.values())
    resolved = [tools.resolve(t) for _, t in ours.values()]
    for a, b in zip(resolved, [t for _, t in theirs.values()], strict=True):
        assert a.name == b.name and type(a.class_instance) is type(b.class_instance) and a.function_description == b.function_description


def test_an_app_with_an_instance_tool_or_a_built_registry_is_not_deferred():
    app = _WithInstanceTool()
    app.echo = app_tool()(lambda text: text)  # type: ignore[attr-defined]
    assert tools.deferred_specs(app) is None
    plain = _WithInstanceTool()
    assert tools.deferred_specs(plain) is not None
    plain.get_tools()  # ARE built its registry (as the augmentation does)
    assert tools.deferred_specs(plain) is None
