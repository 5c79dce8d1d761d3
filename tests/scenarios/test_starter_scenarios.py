"""Checks for the starter Gaia2-format scenarios in ``scenarios/`` (built by
``scripts/build_starter_scenarios.py``).

* every file imports with ARE's importer and preprocesses with the scripted judge (clean oracle run);
* the committed files are what the generator produces (``--check``);
* a scripted "perfect agent" that replays the oracle actions through the real agent tools, on a
  thread-free deterministic clock, is accepted by ARE's judge (online turn judging included);
* a few perturbations (missing / extra write, wrong hard-checked argument, early / late action) are
  rejected, and in-tolerance timing is accepted.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402

from are.simulation.data_handler.importer import JsonScenarioImporter  # noqa: E402
from are.simulation.environment import Environment, EnvironmentConfig  # noqa: E402
from are.simulation.notification_system import (  # noqa: E402
    VerboseNotificationSystem,
    VerbosityLevel,
)
from are.simulation.scenarios.scenario_imported_from_json import utils as sc_utils  # noqa: E402
from are.simulation.time_manager import TimeManager  # noqa: E402
from are.simulation.types import CapabilityTag, EnvironmentState, EventType, OracleEvent  # noqa: E402
from are.simulation.validation import JudgeFactory, ScriptedGraphPerEventJudgeConfig  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SCENARIO_DIR = REPO / "scenarios"
FILES = sorted(SCENARIO_DIR.glob("*/validation/*.json"))
BY_ID = {p.stem: p for p in FILES}


def _load_generator():
    spec = importlib.util.spec_from_file_location(
        "build_starter_scenarios", REPO / "scripts" / "build_starter_scenarios.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses need the module registered
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------------------------
# Loading (one judge for the whole session: building it costs seconds, judging milliseconds)
# ---------------------------------------------------------------------------------------------

_JUDGE_CONFIG = ScriptedGraphPerEventJudgeConfig(engine=lambda msgs, **kw: ("", None))
_JUDGE = None


class _CachedJudgeFactory(JudgeFactory):
    def __call__(self, config):
        global _JUDGE
        if _JUDGE is None:
            _JUDGE = super().__call__(config)
        return _JUDGE  # preprocess_scenario calls judge.initialize_state(), which resets it


def load(scenario_id: str, monkeypatch=None):
    """ARE importer + preprocess_scenario (oracle run, judge, online turn triggers)."""
    json_str = BY_ID[scenario_id].read_text(encoding="utf-8")
    sc, _, _ = JsonScenarioImporter().import_from_json_to_benchmark(json_str, load_completed_events=False)
    original = sc_utils.JudgeFactory
    sc_utils.JudgeFactory = _CachedJudgeFactory
    try:
        sc_utils.preprocess_scenario(sc, judge_config=_JUDGE_CONFIG, offline_validation=False)
    finally:
        sc_utils.JudgeFactory = original
    return sc


# ---------------------------------------------------------------------------------------------
# Thread-free deterministic driver + oracle replay agent
# ---------------------------------------------------------------------------------------------


class SimClock(TimeManager):
    def reset(self, start_time=None):
        super().reset(start_time)
        self._now = float(start_time or 0.0)

    def time(self):
        return self._now

    def time_passed(self):
        return self._now - self.start_time

    def pause(self):
        self.is_paused = True

    def resume(self):
        self.is_paused = False

    def add_offset(self, offset):
        self._now += offset

    def set(self, t):
        assert t >= self._now - 1e-9, "clock must not go backwards"
        self._now = max(t, self._now)


def start_env(sc) -> Environment:
    env = Environment(
        EnvironmentConfig(
            start_time=sc.start_time,
            duration=sc.duration,
            time_increment_in_seconds=sc.time_increment_in_seconds,
        ),
        notification_system=VerboseNotificationSystem(VerbosityLevel.MEDIUM),
    )
    env.time_manager = SimClock()
    env.time_manager.reset(env.start_time)
    env.notification_system.initialize(env.time_manager)
    env.delete_all_completed_events()
    env.register_apps(sc.apps)
    env.schedule(sc.events)
    env.get_app("AgentUserInterface").wait_for_user_response = False
    env.state = EnvironmentState.RUNNING
    env.prepare_events_for_start()
    env.tick()
    return env


def tick_at(env, t):
    env.time_manager.set(t)
    env.tick()


@dataclass
class Perturbation:
    skip: set[str] = field(default_factory=set)  # oracle ids the agent does not perform
    args: dict[str, dict[str, Any]] = field(default_factory=dict)  # oracle id -> overridden args
    shift: dict[str, float] = field(default_factory=dict)  # oracle id -> seconds added to its delay
    # extra tool calls: ("before" | "after", oracle id, tool name, kwargs)
    extra: list[tuple[str, str, str, dict[str, Any]]] = field(default_factory=list)


def replay(sc, pert: Perturbation | None = None, horizon: float = 600.0):
    """Play the oracle actions as an agent would: real AppTools, at the oracle's relative delays
    (measured from the *actual* times of the parents in this run), placeholders resolved from this
    run's own return values. Returns ARE's ScenarioValidationResult."""
    pert = pert or Perturbation()
    env = start_env(sc)
    tools = {t.name: t for t in sc.get_tools()}
    oracle = {e.event_id: e for e in sc.events if isinstance(e, OracleEvent)}
    oracle_log = {e.event_id: e for e in sc.oracle_run_event_log}
    done: dict[str, tuple[float, Any]] = {}
    pending = sorted(oracle, key=lambda i: (oracle_log[i].event_time, i))
    end = sc.start_time + horizon

    def known_times():
        times = {e.event_id: e.event_time for e in env.event_log.list_view()}
        times.update({k: v[0] for k, v in done.items()})
        return times

    def resolve(value):
        if isinstance(value, str) and value.startswith("{{") and value.endswith("}}"):
            ref = value[2:-2]
            if ref in done:
                return done[ref][1]
            for e in env.event_log.list_view():
                if e.event_id == ref:
                    return e.metadata.return_value
            raise AssertionError(f"unresolved placeholder {value}")
        return value

    def call(tool: str, kwargs: dict[str, Any]):
        try:
            return tools[tool](**kwargs)
        except Exception as exc:  # an agent would see the error and go on
            return f"ERROR: {exc}"

    while pending and env.state == EnvironmentState.RUNNING:
        now = env.time_manager.time()
        times = known_times()
        ready = []
        for oid in pending:
            parents = [d.event_id for d in oracle[oid].dependencies]
            if all(p in times for p in parents):
                base = max((times[p] for p in parents), default=sc.start_time)
                delay = (oracle[oid].event_relative_time or 0.0) + pert.shift.get(oid, 0.0)
                ready.append((max(base + delay, now), oid))
        t_ready, oid = min(ready) if ready else (math.inf, None)
        t_env = env.get_next_event_time()
        if t_env is not None and t_env <= t_ready and t_env <= end:
            tick_at(env, max(t_env, now))
            continue
        if oid is None or t_ready > end:
            break
        tick_at(env, t_ready)
        pending.remove(oid)
        for when, anchor, tool, extra_kwargs in pert.extra:
            if when == "before" and anchor == oid:
                call(tool, extra_kwargs)
        if oid in pert.skip:
            done[oid] = (t_ready, None)
            continue
        ev = oracle_log[oid]
        kwargs = {k: resolve(v) for k, v in ev.action.args.items() if k != "self"}
        kwargs.update(pert.args.get(oid, {}))
        result = call(f"{ev.action.app.name}__{ev.action.function_name}", kwargs)
        done[oid] = (t_ready, result)
        for when, anchor, tool, extra_kwargs in pert.extra:
            if when == "after" and anchor == oid:
                call(tool, extra_kwargs)
    # let pending turn conditions / ENV events run out a little
    for _ in range(5):
        if env.state != EnvironmentState.RUNNING:
            break
        tick_at(env, env.time_manager.time() + 1)
    return sc.validate(env)


# ---------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------

EXPECTED = {
    # scenario id: (config, capability, turns, oracle events)
    "starter_execution_calendar": ("execution", "Execution", 1, 3),
    "starter_search_lookup": ("search", "Search", 1, 1),
    "starter_adaptability_reply": ("adaptability", "Adaptability", 1, 4),
    "starter_time_deadline": ("time", "Time", 1, 2),
    "starter_execution_group_chat": ("execution", "Execution", 1, 3),
    "starter_multiturn_followup": ("execution", "Execution", 2, 6),
    "starter_ambiguity_clarify": ("ambiguity", "Ambiguity", 1, 1),
}


def test_all_expected_files_present():
    assert set(BY_ID) == set(EXPECTED)


@pytest.mark.parametrize("scenario_id", sorted(EXPECTED))
def test_file_shape(scenario_id):
    path = BY_ID[scenario_id]
    data = json.loads(path.read_text(encoding="utf-8"))
    config, capability, _, _ = EXPECTED[scenario_id]
    assert path.parent.parent.name == config and path.parent.name == "validation"
    assert data["version"] == "are_simulation_v1"
    definition = data["metadata"]["definition"]
    assert definition["scenario_id"] == scenario_id
    assert definition["start_time"] == 1728975600.0
    assert isinstance(definition["seed"], int)
    assert capability in definition["tags"]
    assert all(tag in CapabilityTag.__members__ for tag in definition["tags"])
    contacts = [a for a in data["apps"] if a["name"] == "Contacts"]
    assert len(contacts) == 1 and contacts[0]["class_name"] == "ContactsApp"
    assert sum(c["is_user"] for c in contacts[0]["app_state"]["contacts"].values()) == 1
    assert {a["name"] for a in data["apps"]} >= {"AgentUserInterface", "SystemApp", "Emails", "Calendar"}
    for event in data["events"]:
        if event["action"]["function"] == "send_message_to_agent":
            assert event["event_type"] == "USER"
        for arg in event["action"]["args"]:
            assert arg["value_type"] != "NoneType"
            if arg["value_type"] in ("list", "dict"):
                json.loads(arg["value"])
    assert data["completed_events"] == []


@pytest.mark.parametrize("scenario_id", sorted(EXPECTED))
def test_import_and_preprocess(scenario_id):
    sc = load(scenario_id)
    _, _, turns, n_oracle = EXPECTED[scenario_id]
    assert sc.nb_turns == turns
    assert sum(isinstance(e, OracleEvent) for e in sc.events) == n_oracle
    assert not [e for e in sc.oracle_run_event_log if e.failed()]
    agent = [e for e in sc.oracle_run_event_log if e.event_type == EventType.AGENT]
    assert len(agent) == n_oracle


def test_generator_is_up_to_date(capsys):
    assert _load_generator().check(SCENARIO_DIR) == 0, capsys.readouterr().out


@pytest.mark.parametrize("scenario_id", sorted(EXPECTED))
def test_oracle_replay_is_accepted(scenario_id):
    result = replay(load(scenario_id))
    assert result.success is True, result.rationale


def _app_state(scenario_id: str, app_name: str) -> dict:
    data = json.loads(BY_ID[scenario_id].read_text(encoding="utf-8"))
    return next(a for a in data["apps"] if a["name"] == app_name)["app_state"]


def _calendar_event_id(scenario_id: str, title: str) -> str:
    events = _app_state(scenario_id, "Calendar")["events"]
    return next(k for k, v in events.items() if v["title"] == title)


def _email_id(scenario_id: str, subject: str) -> str:
    inbox = _app_state(scenario_id, "Emails")["folders"]["INBOX"]["emails"]
    return next(e["email_id"] for e in inbox if e["subject"] == subject)


# an existing email, but not the one the ENV event delivers
OTHER_EMAIL = _email_id("starter_adaptability_reply", "Weekend?")
# an existing calendar event, but not the lunch booked in turn 1
YOGA = _calendar_event_id("starter_multiturn_followup", "Yoga class")
ONE_ON_ONE = _calendar_event_id("starter_ambiguity_clarify", "1:1 with Priya")

CASES = [
    # (scenario, perturbation, expected success)
    ("starter_execution_calendar", Perturbation(skip={"oracle_send_email"}), False),
    ("starter_execution_calendar",
     Perturbation(args={"oracle_add_calendar_event": {"start_datetime": "2024-10-17 15:00:00"}}), False),
    ("starter_execution_calendar",
     Perturbation(args={"oracle_add_calendar_event": {"attendees": ["Priya Shah"]}}), False),
    ("starter_execution_calendar",
     Perturbation(args={"oracle_add_calendar_event": {"attendees": ["Priya Shah", "Marcus Lee", "Alex Morgan"]}}),
     True),  # list_attendees tolerates the user's own name
    ("starter_execution_calendar",
     Perturbation(args={"oracle_send_email": {"recipients": ["priya.shah@example.com"]}}), False),
    ("starter_execution_calendar",
     Perturbation(args={"oracle_send_email": {"content": "something else entirely"}}), True),  # llm_checker: skipped
    ("starter_execution_calendar",
     Perturbation(extra=[("after", "oracle_send_email", "Emails__send_email",
                          {"recipients": ["elena.rossi@example.com"], "subject": "x", "content": "y"})]), False),
    ("starter_search_lookup",
     Perturbation(extra=[("before", "oracle_reply", "Emails__send_email",
                          {"recipients": ["tom.becker@example.com"], "subject": "x", "content": "y"})]), False),
    ("starter_adaptability_reply", Perturbation(shift={"oracle_reply_to_email": 40}), False),
    ("starter_adaptability_reply", Perturbation(shift={"oracle_reply_to_email": 20}), True),
    ("starter_adaptability_reply", Perturbation(args={"oracle_reply_to_email": {"email_id": OTHER_EMAIL}}), False),
    ("starter_adaptability_reply",
     Perturbation(args={"oracle_add_calendar_event": {"start_datetime": "2024-10-18 11:00:00",
                                                      "end_datetime": "2024-10-18 12:00:00"}}), False),
    ("starter_adaptability_reply", Perturbation(skip={"oracle_add_calendar_event"}), False),
    ("starter_time_deadline", Perturbation(shift={"oracle_send_message": -175}), False),  # sent at once
    ("starter_time_deadline", Perturbation(shift={"oracle_send_message": -8}), True),
    ("starter_time_deadline", Perturbation(shift={"oracle_send_message": 20}), True),
    ("starter_time_deadline", Perturbation(shift={"oracle_send_message": 40}), False),
    ("starter_time_deadline", Perturbation(args={"oracle_send_message": {"user_id": "+14155550133"}}), False),
    ("starter_execution_group_chat",
     Perturbation(args={"oracle_create_group": {"user_ids": ["+14155550122", "+14155550111"]}}), False),
    ("starter_execution_group_chat", Perturbation(skip={"oracle_send_group_message"}), False),
    ("starter_multiturn_followup",
     Perturbation(args={"oracle_add_lunch": {"end_datetime": "2024-10-19 14:30:00"}}), False),  # turn 1
    ("starter_multiturn_followup", Perturbation(skip={"oracle_delete_lunch"}), False),  # turn 2
    ("starter_multiturn_followup",
     Perturbation(args={"oracle_delete_lunch": {"event_id": YOGA}}), False),
    ("starter_ambiguity_clarify",
     Perturbation(extra=[("before", "oracle_reply", "Calendar__delete_calendar_event",
                          {"event_id": "00000000000000000000000000000000"})]), True),  # failed call: not a write
    ("starter_ambiguity_clarify",
     Perturbation(extra=[("before", "oracle_reply", "Calendar__delete_calendar_event", {"event_id": ONE_ON_ONE})]),
     False),
]


@pytest.mark.parametrize(
    "scenario_id,pert,expected", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_perturbations(scenario_id, pert, expected):
    result = replay(load(scenario_id), pert)
    assert result.success is expected, result.rationale
    if os.environ.get("SHOW_RATIONALE"):
        print(f"\n[{scenario_id}] success={result.success}: {str(result.rationale)[:400]}")
