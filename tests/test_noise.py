"""Gaia2's noise, reproducible (`orchestra.are.noise`, `SessionConfig.noise`): ARE's semantics for
tool failures, names and descriptions; ARE's own expander for environment events; the same
failures and events on every rerun."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from orchestra.are import noise as are_noise
from orchestra.config import NoiseConfig, SessionConfig
from orchestra.oracle.replay import build_plan, replay
from orchestra.session import SEND_TO_USER_TOOL, Session
from support.helpers import REPO, SCENARIOS

CORPUS = SCENARIOS / "corpus"
GROUP_CHAT = CORPUS / "execution" / "validation" / "univ_02_exec_group_chat.json"
CALENDAR = SCENARIOS / "execution" / "validation" / "starter_execution_calendar.json"
DEADLINE = SCENARIOS / "time" / "validation" / "starter_time_deadline.json"  # 3 minutes: events happen
ARE_MESSAGE = "Calling {name} failed with error: Internal error - Retry again later"
#: Failures only (no events, no renames): isolates the tool-failure draw.
FAILURES_ONLY = dict(apply_tool_name_augmentation=False, apply_tool_description_augmentation=False, env_events_per_minute=0)


def _replayed(path: Path, noise: NoiseConfig | None, judge_pool: Any, run_index: int = 0) -> Any:
    with Session.open(path, SessionConfig(noise=noise), judge_pool=judge_pool, run_index=run_index) as s:
        replay(s, build_plan(s))
        return s.finish()


# ------------------------------------------------------------------ tool failures


def test_failure_draw_is_a_stable_digest_not_hash():
    """The draw depends only on its key: pinned values, and the same in a process with another hash seed."""
    key = ("univ_02_exec_group_chat", 7, 0, "main", 3)
    here = [are_noise.failure_draw(*key[:4], i) for i in range(5)]
    code = f"from orchestra.are.noise import failure_draw; print([failure_draw(*{key[:4]!r}, i) for i in range(5)])"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=REPO).stdout
    assert json.loads(there) == here
    assert len(set(here)) == 5 and all(0 <= u < 1 for u in here)
    # a different agent, run or scenario draws differently
    assert are_noise.failure_draw(*key[:3], "Emails", 3) != here[3]
    assert are_noise.failure_draw(key[0], key[1], 1, "main", 3) != here[3]


def test_a_failed_call_is_ares_failure_before_the_method_runs(judge_pool):
    """p = 1: ARE's exception text (the tool's own template, its ARE name), and no event logged."""
    with Session.open(CALENDAR, SessionConfig(noise=NoiseConfig(tool_failure_probability=1.0, **FAILURES_ONLY)), judge_pool=judge_pool) as s:
        before = len(s.env.event_log())
        outcome = s.execute_tool("Calendar__get_calendar_events_from_to", {"start_datetime": "2024-10-15 00:00:00", "end_datetime": "2024-10-16 00:00:00"})
        assert not outcome.ok and len(s.env.event_log()) == before
        assert outcome.error == "Exception: " + ARE_MESSAGE.format(name="Calendar__get_calendar_events_from_to")
        assert s.app_tools["Calendar__get_calendar_events_from_to"].failure_message_template == ARE_MESSAGE
        report = s.noise_report()
        assert report is not None and report.tool_failures == report.tool_calls_drawn == 1
        assert report.failed_calls[0].model_dump() == {"agent": "main", "call_index": 0, "tool": "Calendar__get_calendar_events_from_to", "sim_seconds": 0.0}


def test_ares_own_noise_fails_the_user_interface_and_system_tools_too(judge_pool):
    """ARE's measured behaviour, hence the default: ARE sets the probability on every app,
    AgentUserInterface and SystemApp included (`send_message_to_user` fails under ARE's noise)."""
    from orchestra.are import loading

    sc = loading.parse_scenario_json(CALENDAR.read_text(), CALENDAR)
    from are.simulation.types import ToolAugmentationConfig

    sc.tool_augmentation_config = ToolAugmentationConfig(tool_failure_probability=1.0)
    sc.initialize()
    tools = {t.name: t for t in sc.get_tools()}
    for name, args in ((SEND_TO_USER_TOOL, {"content": "hi"}), ("SystemApp__get_current_time", {})):
        with pytest.raises(Exception, match="Internal error - Retry again later"):
            tools[name](**args)
    assert NoiseConfig().system_tools_can_fail is True


@pytest.mark.parametrize("can_fail", [True, False])
def test_system_tools_can_fail_is_the_switch(judge_pool, can_fail):
    config = NoiseConfig(tool_failure_probability=1.0, system_tools_can_fail=can_fail, **FAILURES_ONLY)
    with Session.open(CALENDAR, SessionConfig(noise=config), judge_pool=judge_pool) as s:
        answer = s.execute_tool(SEND_TO_USER_TOOL, {"content": "Done."})
        time = s.execute_tool("SystemApp__get_current_time", {})
        app = s.execute_tool("Contacts__get_contacts", {})
        assert (answer.ok, time.ok, app.ok) == (not can_fail, not can_fail, False)


def test_noise_fails_calls_the_same_way_on_every_rerun_and_differently_per_run_index(judge_pool):
    config = NoiseConfig(tool_failure_probability=0.3, **FAILURES_ONLY)
    a, b = (_replayed(GROUP_CHAT, config, judge_pool) for _ in range(2))
    assert a.noise is not None and b.noise is not None
    assert a.event_log_sha256 == b.event_log_sha256 and a.noise == b.noise
    others = [_replayed(GROUP_CHAT, config, judge_pool, run_index=i).noise for i in (1, 2, 3)]
    assert any(o is not None and o.failed_calls != a.noise.failed_calls for o in others)


# ------------------------------------------------------------------ names, descriptions


def test_the_model_sees_the_renamed_tools_and_the_judge_does_not_care(judge_pool):
    data = json.loads(GROUP_CHAT.read_text())
    names, descriptions = data["augmentation"]["tool_names_mapping"], data["augmentation"]["tool_descriptions_mapping"]
    clean = NoiseConfig(tool_failure_probability=0.0, env_events_per_minute=0)
    with Session.open(GROUP_CHAT, SessionConfig(noise=clean), judge_pool=judge_pool) as s:
        tools = s.tools
        assert set(names.values()) <= set(tools) and "Messages__send_message_to_group_conversation" not in tools
        renamed = names["Messages__send_message_to_group_conversation"]
        assert tools[renamed].description == descriptions["Messages__send_message_to_group_conversation"]
        assert SEND_TO_USER_TOOL in tools  # the user interface and the system app keep their names (ARE)
        replay(s, build_plan(s))
        judged = s.finish()
    assert judged.success, judged.rationale
    assert judged.noise is not None and judged.noise.renamed_tools == len(names) and judged.noise.tool_failures == 0


# ------------------------------------------------------------------ environment events


def _expansion(events: list[Any]) -> list[tuple[Any, ...]]:
    out = []
    for e in (e for e in events if str(e.event_id).startswith(are_noise.ENV_EXPANSION_PREFIX)):
        action = e.action
        args = {k: v for k, v in action.args.items() if k != "self"}
        out.append(
            (
                e.event_id,
                e.event_relative_time,
                tuple(d.event_id for d in e.dependencies),
                action.app.name,
                action.function.__name__,
                repr(sorted(args.items())),
            )
        )
    return out


def test_the_environment_events_are_those_ares_expander_adds(judge_pool):
    """ARE alone (importer, EnvEventsConfig(10/min, seed 0), initialize at the benchmark's 1800 s)
    adds exactly the events orchestra's session runs with."""
    from are.simulation.scenarios.utils.scenario_expander import EnvEventsConfig

    from orchestra.are import loading

    sc = loading.parse_scenario_json(GROUP_CHAT.read_text(), GROUP_CHAT)
    sc.duration = 1800
    sc.env_events_config = EnvEventsConfig(num_env_events_per_minute=10, env_events_seed=0)
    sc.initialize()
    theirs = _expansion(sc.events)
    with Session.open(GROUP_CHAT, SessionConfig(noise=NoiseConfig()), judge_pool=judge_pool) as s:
        ours = _expansion(s.scenario.events)
        assert s.prepared.env_events_scheduled == len(ours)
    assert len(theirs) > 50 and ours == theirs


def test_environment_events_run_on_the_simulated_clock_and_the_judge_ignores_them(judge_pool):
    events_only = NoiseConfig(tool_failure_probability=0.0, apply_tool_name_augmentation=False, apply_tool_description_augmentation=False)
    judged = _replayed(DEADLINE, events_only, judge_pool)
    assert judged.success, judged.rationale
    assert judged.noise is not None and judged.noise.env_events > 0 and judged.noise.env_events_scheduled >= judged.noise.env_events
    ran = [e for e in judged.event_log if e["id"].startswith("env_expansion_")]
    assert len(ran) == judged.noise.env_events
    assert _replayed(DEADLINE, events_only, judge_pool).event_log_sha256 == judged.event_log_sha256


def test_a_scenario_without_augmentation_data_says_so(judge_pool, tmp_path):
    data = json.loads(CALENDAR.read_text())
    del data["augmentation"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(data))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        judged = _replayed(bare, NoiseConfig(tool_failure_probability=0.0), judge_pool)
    assert [str(w.message) for w in caught if issubclass(w.category, are_noise.NoiseWarning)] == [f"noise: no augmentation data in {bare}"]
    assert judged.noise is not None and not judged.noise.augmentation and judged.noise.env_events == 0 and judged.success


def _variant(tmp_path: Path, change: Any) -> Path:
    data = json.loads(CALENDAR.read_text())
    change(data["augmentation"])
    path = tmp_path / "variant.json"
    path.write_text(json.dumps(data))
    return path


def _collide(aug: dict[str, Any]) -> None:
    names = aug["tool_names_mapping"]
    names["Calendar__add_calendar_event"] = names["Calendar__delete_calendar_event"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            _collide,
            "augmentation.tool_names_mapping: Calendar__add_calendar_event and Calendar__delete_calendar_event would both be called 'Calendar__cancel_calendar_event'",
        ),
        (
            lambda a: a["tool_names_mapping"].update(Calendar__add_calendar_event="AgentUserInterface__send_message_to_user"),
            "would both be called 'AgentUserInterface__send_message_to_user'",
        ),
        (lambda a: a.update(tool_names_mapping=["x"]), "augmentation.tool_names_mapping must be an object (tool name: text), got list"),
        (
            lambda a: a["tool_names_mapping"].update(Calendar__add_calendar_event=5),
            "augmentation.tool_names_mapping['Calendar__add_calendar_event'] must be a non-empty string, got 5",
        ),
        (
            lambda a: a["tool_descriptions_mapping"].update(Calendar__add_calendar_event=""),
            "augmentation.tool_descriptions_mapping['Calendar__add_calendar_event'] must be a non-empty string",
        ),
        (lambda a: a["tool_names_mapping"].update(Calendar__add_calendar_event="add event!"), "= 'add event!' is not a tool name"),
        (lambda a: a.update(apps={"Messages": {}}), "augmentation.apps must be a list of apps, got dict"),
        (lambda a: a.update(apps=[{"name": "Messages"}]), "augmentation.apps[0] must be an object with a string `name` and an object `app_state`"),
        (
            lambda a: a.update(apps=[{"name": "Messages", "app_state": {}}]),
            "augmentation.apps[0] (Messages): ARE's event expander reads app_state.conversations",
        ),
        (
            lambda a: a.update(apps=[{"name": "Calendar", "app_state": {}}]),
            "augmentation.apps ['Calendar']: ARE's event expander fails on them (ZeroDivisionError",
        ),
    ],
)
def test_malformed_augmentation_is_one_line_naming_the_field(judge_pool, tmp_path, change, expected):
    from orchestra.errors import ScenarioError

    path = _variant(tmp_path, change)
    with pytest.raises(ScenarioError) as caught:
        _replayed(path, NoiseConfig(), judge_pool)
    message = str(caught.value)
    assert str(path) in message and expected in message and "\n" not in message
    # noise off: ARE never reads the block, the file runs clean as before
    assert _replayed(path, None, judge_pool).success


def test_a_mapping_for_a_tool_the_scenario_lacks_is_harmless(judge_pool, tmp_path):
    path = _variant(tmp_path, lambda a: a["tool_names_mapping"].update(Nope__missing="Nope__other"))
    judged = _replayed(path, NoiseConfig(tool_failure_probability=0.0), judge_pool)
    assert judged.success and judged.noise is not None and judged.noise.renamed_tools > 0


@pytest.mark.parametrize("field", ["tool_failure_probability", "env_events_per_minute"])
@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_noise_rates_must_be_finite(field, value):
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="finite number"):
        NoiseConfig(**{field: value})


def test_noise_off_runs_clean(judge_pool):
    judged = _replayed(CALENDAR, None, judge_pool)
    assert judged.success and judged.noise is None
    assert not any(e["id"].startswith("env_expansion_") for e in judged.event_log)


# ------------------------------------------------------------------ settings


def test_noise_true_in_a_session_is_gaia2s_noise():
    assert SessionConfig.model_validate({"noise": True}).noise == NoiseConfig()
    assert SessionConfig.model_validate({"noise": False}).noise is None
    gaia2 = NoiseConfig()
    assert (gaia2.tool_failure_probability, gaia2.env_events_per_minute, gaia2.env_events_seed) == (0.1, 10.0, 0)
    assert gaia2.apply_tool_name_augmentation and gaia2.apply_tool_description_augmentation


# ------------------------------------------------------------------ the bundled corpus


def _oracle_model_specs(files: list[Any], session: SessionConfig) -> list[Any]:
    from orchestra.models import ModelConfig
    from orchestra.runs.runner import specs_for
    from orchestra.spec import AgentConfig

    agent = AgentConfig(scaffold="tool_calling", model=ModelConfig(model="orchestra/oracle"))
    return specs_for(files, agent=agent, session=session)


def _run(specs: list[Any], judge_pool: Any, concurrency: int = 1) -> dict[str, Any]:
    import anyio

    from orchestra.runs.runner import execute_all

    async def go() -> list[Any]:
        return [r async for r in execute_all(specs, judge_pool=judge_pool, concurrency=concurrency)]

    return {r.scenario_id: r for r in anyio.run(go)}


def test_concurrent_rollouts_under_noise_equal_serial_ones(judge_pool):
    from orchestra.scenario_files import resolve

    files = resolve([GROUP_CHAT, CALENDAR, CORPUS / "time" / "validation" / "univ_00_time_text_in_3min.json"])
    specs = _oracle_model_specs(files, SessionConfig(noise=NoiseConfig(tool_failure_probability=0.3)))
    serial, concurrent = _run(specs, judge_pool), _run(specs, judge_pool, concurrency=3)
    for sid, record in serial.items():
        other = concurrent[sid]
        assert record.result is not None and other.result is not None and record.result.noise is not None
        assert (record.result.event_log_sha256, record.result.noise) == (other.result.event_log_sha256, other.result.noise), sid


@pytest.mark.slow
def test_noise_on_every_bundled_scenario(judge_pool):
    """Under Gaia2's noise, through a scaffold with the oracle model: every scenario has its tools
    renamed, environment events scheduled and its calls drawn; failures and events fire (on 44 of
    the 51 short oracle trajectories when measured; the other 7 make 2-7 calls in at most 67 s);
    the pass rate drops below 1.0; a rerun (concurrent) gives the same event logs. The oracle
    replay still runs everywhere and reports its failed calls."""
    from orchestra.runs.runner import execute_sources_sync
    from orchestra.scenario_files import resolve

    session = SessionConfig(noise=NoiseConfig())
    specs = _oracle_model_specs(resolve(["bundled"]), session)
    first, again = _run(specs, judge_pool), _run(specs, judge_pool, concurrency=4)
    assert len(first) == 51
    for sid, record in first.items():
        result = record.result
        assert record.error is None and result is not None and result.noise is not None, (sid, record.error)
        noise = result.noise
        assert noise.augmentation and noise.renamed_tools > 0 and noise.env_events_scheduled > 0 and noise.tool_calls_drawn > 0, sid
        rerun = again[sid].result
        assert rerun is not None and (rerun.event_log_sha256, rerun.noise) == (result.event_log_sha256, noise), sid
    reports = [r.result.noise for r in first.values() if r.result is not None and r.result.noise is not None]
    assert sum(n.tool_failures + n.env_events > 0 for n in reports) >= 40
    assert sum(n.tool_failures for n in reports) > 0 and sum(n.env_events for n in reports) > 0
    passed = sum(r.result is not None and r.result.success for r in first.values())
    assert passed < len(first)
    replayed = execute_sources_sync(["bundled"], session=session, judge_pool=judge_pool)
    assert all(r.error is None and r.result is not None and r.result.noise is not None for r in replayed)
    failed = [r for r in replayed if r.result is not None and r.result.noise is not None and r.result.noise.tool_failures]
    assert failed and all(len(r.result.noise.failed_calls) == r.result.noise.tool_failures for r in failed if r.result and r.result.noise)
