"""Scenario -> Gaia2 JSON with ARE's own API and exporter, plus the fix-ups ARE 1.2.0 needs.

Every scenario is a :class:`CorpusScenario` (an ARE ``Scenario``): its apps are loaded from the
universe's states with each app class's own ``load_state`` in ``init_and_populate_apps``, its events
are captured with ``EventRegisterer.capture_mode()`` in ``build_events_flow``, and
``JsonScenarioExporter`` serializes it. The export is then patched (ARE-NOTES §1.7):

a. user messages are ``USER`` events (capture mode builds ``ENV`` ones);
b. list/dict oracle arguments are stored as JSON (the exporter writes ``str(list)``);
c. ``None`` arguments become ``null``/``null`` (the exporter writes ``"None"``/``"NoneType"``);

and the remaining wall-clock / uuid4 / tmpdir values are pinned, the ``Files`` tree is put in
sorted order, and the universe's ``augmentation`` block is attached. The exported app states are
checked to be exactly the universe's (what ``load_state`` read is what ``get_state`` wrote).
"""

from __future__ import annotations

import ast
import copy
import json
import random
from collections.abc import Callable
from typing import Any

from orchestra_dev.corpus.universe import START_TIME, Universe, hid

CLASSES: dict[str, Any] = {}


def _app_classes() -> dict[str, Any]:
    if not CLASSES:
        from are.simulation.apps import ALL_APPS

        CLASSES.update({cls.__name__: cls for cls in ALL_APPS})
    return CLASSES


def make_apps(states: list[dict[str, Any]]) -> list[Any]:
    from are.simulation.apps.agent_user_interface import AgentUserInterface
    from are.simulation.apps.system import SystemApp

    apps = [AgentUserInterface(), SystemApp(name="SystemApp")]
    classes = _app_classes()
    for entry in states:
        app = classes[entry["class_name"]](name=entry["name"])
        app.load_state(copy.deepcopy(entry["app_state"]))
        apps.append(app)
    return apps


class Flow:
    """What a template writes with: typed wrappers over ARE's event builders."""

    def __init__(self, scenario: Any, universe: Universe, rng: random.Random):
        self.sc = scenario
        self.u = universe
        self.rng = rng
        self.events: list[Any] = []

    def app(self, name: str) -> Any:
        return self.sc.get_app(name)

    def _add(self, event: Any) -> Any:
        self.events.append(event)
        return event

    def user(self, eid: str, content: str, parent: Any = None, delay: float = 1) -> Any:
        """USER-typed ``send_message_to_agent`` (fix-up a)."""
        from are.simulation.types import EventType

        aui = self.app("AgentUserInterface")
        return self._add(aui.send_message_to_agent(content=content).with_type(EventType.USER).with_id(eid).depends_on(parent, delay_seconds=delay))

    def oracle(self, eid: str, call: Any, parents: Any, delay: float = 1, less_than: bool = False) -> Any:
        """An expected agent action, ``delay`` seconds after its latest parent."""
        from are.simulation.types import EventTimeComparator

        event = call.oracle().with_id(eid).depends_on(parents, delay_seconds=delay)
        if less_than:
            event.event_time_comparator = EventTimeComparator.LESS_THAN
        return self._add(event)

    def env(self, eid: str, call: Any, parent: Any, delay: float) -> Any:
        """An environment event: exactly one parent, a USER/ENV event or an oracle ``send_message_to_user``.

        Hung on an answer to the user, the event starts the next turn (ARE re-hangs it on that turn's
        trigger condition, same delay); any other oracle parent is refused here, as ARE refuses it when
        it builds the turn triggers (an environment never waits on an agent action).
        """
        from are.simulation.types import OracleEvent

        if isinstance(parent, (list, tuple)):
            raise ValueError(f"ENV event {eid}: exactly one parent allowed, got {len(parent)}")
        if parent is None:
            raise ValueError(f"ENV event {eid}: needs a parent (a USER/ENV event or an answer to the user)")
        if isinstance(parent, OracleEvent) and getattr(parent.action_desc, "function", None) != "send_message_to_user":
            raise ValueError(f"ENV event {eid}: its parent {parent.event_id} is an agent action; only an answer to the user may be")
        return self._add(call.with_id(eid).depends_on(parent, delay_seconds=delay))

    def answer(self, eid: str, content: str, parents: Any, delay: float = 1) -> Any:
        aui = self.app("AgentUserInterface")
        return self.oracle(eid, aui.send_message_to_user(content=content), parents, delay)


def scenario_class():
    """The ARE ``Scenario`` subclass (built lazily: importing ARE is slow)."""
    global _SCENARIO_CLASS
    try:
        return _SCENARIO_CLASS
    except NameError:
        pass
    from are.simulation.scenarios.scenario import Scenario
    from are.simulation.types import EventRegisterer

    class CorpusScenario(Scenario):
        start_time: float | None = START_TIME
        duration: float | None = None  # as in Gaia2 files; ARE's benchmark sets 1800 s (420 s for Time)

        def init_and_populate_apps(self, *args: Any, **kwargs: Any) -> None:
            self.apps = make_apps(self.corpus_universe.app_states())

        def build_events_flow(self) -> None:
            flow = Flow(self, self.corpus_universe, random.Random(int(hid("flow", self.scenario_id), 16) % (2**32)))
            with EventRegisterer.capture_mode():
                self.corpus_template(flow, self.corpus_universe)
            self.events = flow.events

    _SCENARIO_CLASS = CorpusScenario
    return CorpusScenario


def _fix_oracle_arg(arg: dict[str, Any], *, ensure_ascii: bool = False) -> None:
    vtype = arg.get("value_type")
    if vtype == "NoneType":  # fix-up c
        arg["value"] = None
        arg["value_type"] = None
    elif vtype in ("list", "dict") and arg.get("value") is not None:  # fix-up b
        arg["value"] = json.dumps(ast.literal_eval(arg["value"]), ensure_ascii=ensure_ascii)


def apply_exporter_fixups(data: dict[str, Any], *, ensure_ascii: bool = False) -> dict[str, Any]:
    """Pin what ARE 1.2.0's exporter leaves wall-clock or uuid4-dependent, and apply its fix-ups.

    Shared by the corpus and the starter-scenario generators (ARE-NOTES §1.7): fix-up (b) list/dict
    oracle args exported as `str(value)`, (c) `None` defaults exported as "None"/"NoneType"; (a) every
    `send_message_to_agent` must already be a USER event. Also pins the annotation date and the
    non-oracle action ids, so reruns are byte-identical.
    """
    data["metadata"]["annotation"]["date"] = 0.0
    for event in data["events"]:
        action = event.get("action") or {}
        if event["class_name"] == "OracleEvent":
            for arg in action.get("args") or []:
                _fix_oracle_arg(arg, ensure_ascii=ensure_ascii)
        elif action:
            action["action_id"] = f"{action['app']}.{action['function']}-{event['event_id']}"
        if action.get("function") == "send_message_to_agent":
            assert event["event_type"] == "USER", event["event_id"]
        for arg in action.get("args") or []:
            assert arg.get("value_type") != "NoneType", (event["event_id"], arg)
    return data


def canonical_files(state: dict[str, Any]) -> dict[str, Any]:
    def node(n: dict[str, Any]) -> dict[str, Any]:
        if n.get("type") == "directory":
            return {"name": n["name"], "type": "directory", "children": sorted((node(c) for c in n.get("children", [])), key=lambda c: c["name"])}
        return {"name": n["name"], "type": n["type"]}

    return {"files": node(state["files"])}


def export_scenario(
    universe: Universe, scenario_id: str, capability: str, template: Callable[[Flow, Universe], None], augmentation: dict[str, Any]
) -> dict[str, Any]:
    from are.simulation.data_handler.exporter import JsonScenarioExporter
    from are.simulation.environment import Environment, EnvironmentConfig
    from are.simulation.types import CapabilityTag

    cls = scenario_class()
    scenario = cls(
        scenario_id=scenario_id,
        seed=int(hid("seed", scenario_id), 16) % 1_000_000_007,
        tags=(CapabilityTag.Universe, CapabilityTag[capability]),
    )
    scenario.corpus_universe = universe
    scenario.corpus_template = template
    scenario.initialize()
    env = Environment(EnvironmentConfig(oracle_mode=True, queue_based_loop=True, start_time=scenario.start_time))
    data = json.loads(JsonScenarioExporter().export_to_json(env=env, scenario=scenario, scenario_id=scenario_id))

    apply_exporter_fixups(data)

    expected = {a["name"]: a for a in universe.app_states()}
    for app in data["apps"]:
        if app["name"] == "Files":
            app["app_state"] = canonical_files(app["app_state"])
        if app["name"] in expected:
            got = json.loads(json.dumps(app["app_state"], sort_keys=True))
            if got != expected[app["name"]]["app_state"] or app["class_name"] != expected[app["name"]]["class_name"]:
                raise AssertionError(f"{scenario_id}: exported {app['name']} state differs from the universe's")
    data["augmentation"] = augmentation
    return data


def render(data: dict[str, Any]) -> str:
    """Canonical text: sorted keys, one line (like Gaia2's own files), trailing newline."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False) + "\n"


def augmentation_block(universe: Universe) -> dict[str, Any]:
    """``augmentation``: extra app states for distractor events + tool renames/paraphrases."""
    apps = make_apps(universe.app_states())
    tools_by_app = {}
    modes = {}
    for app in apps:
        if app.name in ("AgentUserInterface", "SystemApp"):
            continue
        tools_by_app[app.name] = [t.name.split("__", 1)[1] for t in app.get_tools()]
        if app.__class__.__name__ == "MessagingAppV2":
            modes[app.name] = app.mode.value
    names, descriptions = universe.tool_maps(tools_by_app, modes)
    return {
        "apps": universe.augmentation_apps,
        "tool_names_mapping": names,
        "tool_descriptions_mapping": descriptions,
    }
