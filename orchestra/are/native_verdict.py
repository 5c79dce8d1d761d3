"""ARE's own verdict on an orchestra trajectory, for parity checks.

orchestra judges online, in its own thread-free driver. To show that this changes nothing about the
verdict, a rollout is exported with ARE's `JsonScenarioExporter` (the trace format
`are-benchmark run` writes), re-imported with ARE's importer *with* its completed events, and
judged by ARE's offline path — what `are-benchmark judge` does (`ScenarioRunner._judge`): ARE's
`preprocess_scenario(..., offline_validation=True)` (ARE's threaded oracle run and a freshly built
judge) followed by `scenario.validate(Environment())` over the recorded event log. For the
`scripted` judge the judge config is ARE's scripted one; for the `llm` judge it is built by ARE's
own `preprocess_scenario_from_config` from a `ScenarioRunnerConfig(judge_engine_config=...)`, i.e.
ARE's `GraphPerEventJudgeConfig` with ARE's `LiteLLMEngine` on the same litellm model — exactly
`are-benchmark judge --judge_model MODEL`. ARE has no `strict` judge. Nothing of orchestra's
session code runs on this path.

This is deliberately slow (ARE builds a new judge per call, 3-6 s); it is a checking tool, not
part of a rollout.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from orchestra.are.imports import import_are
from orchestra.are.judge_pool import _no_llm_engine
from orchestra.errors import OrchestraError
from orchestra.judges import JudgeConfig
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


def are_native_verdict(trace_json: str, *, max_scenario_duration: int | None = None, judge: JudgeConfig | None = None) -> NativeVerdict:
    """Judge a recorded trace exactly as `are-benchmark judge` does (scripted, or LLM for `llm`)."""
    import_are()
    from are.simulation.data_handler.importer import JsonScenarioImporter
    from are.simulation.environment import Environment
    from are.simulation.scenarios.scenario_imported_from_json.utils import preprocess_scenario
    from are.simulation.types import EventLog
    from are.simulation.validation import ScriptedGraphPerEventJudgeConfig

    judge = judge or JudgeConfig()
    if judge.mode == "strict":
        raise OrchestraError("ARE has no strict judge to compare with: use --parity with --judge scripted or --judge llm")
    scenario, completed_events, _ = JsonScenarioImporter().import_from_json_to_benchmark(
        json_str=trace_json, apps_to_skip=["SandboxLocalFileSystem"], load_completed_events=True
    )
    if judge.mode == "llm":
        _are_benchmark_llm_preprocess(scenario, judge, max_scenario_duration)
    else:
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


def _are_benchmark_llm_preprocess(scenario: Any, judge: JudgeConfig, max_scenario_duration: int | None) -> None:
    """ARE's own judge set-up for `are-benchmark judge --judge_model M --judge_endpoint E`.

    `preprocess_scenario_from_config` builds `create_judge_engine(LLMEngineConfig(...))` (ARE's
    `LiteLLMEngine`) and `GraphPerEventJudgeConfig(engine=...)` itself. The model string is passed
    whole with provider `local`, which ARE's engine turns into "let litellm route by the model
    string" — the same routing orchestra's judge engine uses.
    """
    from are.simulation.agents.are_simulation_agent_config import LLMEngineConfig
    from are.simulation.scenarios.config import ScenarioRunnerConfig
    from are.simulation.scenarios.scenario_imported_from_json.utils import preprocess_scenario_from_config

    from orchestra.litellm_setup import import_litellm

    import_litellm()
    assert judge.model is not None
    if judge.model.startswith("orchestra-judge/"):
        from orchestra import judge_script

        judge_script.register()
    kwargs: dict[str, Any] = {}
    if max_scenario_duration is not None:
        kwargs = {"max_scenario_duration": max_scenario_duration, "max_time_scenario_duration": max_scenario_duration}
    config = ScenarioRunnerConfig(
        judge_engine_config=LLMEngineConfig(model_name=judge.model, provider="local", endpoint=judge.endpoint),
        judge_only=True,
        **kwargs,
    )
    preprocess_scenario_from_config(scenario, config)
