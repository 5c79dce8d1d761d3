"""ARE's own verdict on an orchestra trajectory, for parity checks.

orchestra judges online, in its own thread-free driver. To show that this changes nothing about the
verdict, a rollout is exported with ARE's `JsonScenarioExporter` (the trace format
`are-benchmark run` writes), re-imported with ARE's importer *with* its completed events, and
judged by ARE's offline path — what `are-benchmark judge` does (`ScenarioRunner._judge`): ARE's
`preprocess_scenario(..., offline_validation=True)` (ARE's threaded oracle run and a freshly built
judge) followed by `scenario.validate(Environment())` over the recorded event log. The only
substitution is the judge config: ARE's scripted judge instead of its LLM judge, since there is no
LLM offline. Nothing of orchestra's session code runs on this path.

This is deliberately slow (ARE builds a new judge per call, 3-6 s); it is a checking tool, not
part of a rollout.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from orchestra.are_adapter import _no_llm_engine, import_are
from orchestra.session import Session


@dataclass
class NativeVerdict:
    success: bool
    rationale: str | None


def export_trace(session: Session, scenario_json: str) -> str:
    """The rollout as an ARE trace: the scenario file plus ARE-exported completed events.

    ARE's exporter serialises the environment's event log; the scenario part is taken from the
    original file rather than from the live scenario, whose event DAG ARE's turn wiring has
    rewritten (condition events that ARE's importer cannot read back).
    """
    import_are()
    from are.simulation.data_handler.exporter import JsonScenarioExporter

    exported = json.loads(
        JsonScenarioExporter().export_to_json(
            env=session.env.env,
            scenario=session.scenario,
            scenario_id=session.scenario_id,
            model_id="orchestra",
            agent_id="orchestra",
            export_apps=False,
        )
    )
    trace = json.loads(scenario_json)
    trace["completed_events"] = exported.get("completed_events") or []
    return json.dumps(trace)


def are_native_verdict(trace_json: str, *, max_scenario_duration: int | None = None) -> NativeVerdict:
    """Judge a recorded trace exactly as `are-benchmark judge` does, with ARE's scripted judge."""
    import_are()
    from are.simulation.data_handler.importer import JsonScenarioImporter
    from are.simulation.environment import Environment
    from are.simulation.scenarios.scenario_imported_from_json.utils import preprocess_scenario
    from are.simulation.types import EventLog
    from are.simulation.validation import ScriptedGraphPerEventJudgeConfig

    scenario, completed_events, _ = JsonScenarioImporter().import_from_json_to_benchmark(
        json_str=trace_json, apps_to_skip=["SandboxLocalFileSystem"], load_completed_events=True
    )
    preprocess_scenario(
        scenario,
        judge_config=ScriptedGraphPerEventJudgeConfig(engine=_no_llm_engine),
        max_scenario_duration=max_scenario_duration,
        offline_validation=True,
    )
    env = Environment()
    env.event_log = EventLog.from_list_view(completed_events)
    result: Any = scenario.validate(env)
    success = bool(result.success)
    return NativeVerdict(success=success, rationale=None if success else str(result.rationale))
