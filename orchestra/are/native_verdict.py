"""ARE's own verdict on a recorded trajectory: ARE's exporter and ARE's offline judging path.

orchestra judges online, in its own thread-free driver. To show that this changes nothing about the
verdict, a rollout is exported with ARE's `JsonScenarioExporter` (the trace format
`are-benchmark run` writes), re-imported with ARE's importer *with* its completed events, and
judged by ARE's offline path — what `are-benchmark judge` does (`ScenarioRunner._judge`): ARE's
`preprocess_scenario(..., offline_validation=True)` (ARE's threaded oracle run and a freshly built
judge) followed by `scenario.validate(Environment())` over the recorded event log. Without a judge
model the judge config is ARE's scripted one; with one it is built by ARE's own
`preprocess_scenario_from_config` from a `ScenarioRunnerConfig(judge_engine_config=...)`, i.e.
ARE's `GraphPerEventJudgeConfig` with ARE's `LiteLLMEngine` on that litellm model — exactly
`are-benchmark judge --judge_model MODEL`. Nothing of orchestra's session code runs on this path.

`are_native_verdict` maps orchestra's judge settings onto it: `scripted` is ARE's scripted judge,
`llm` is ARE's LLM judge on the same litellm model (its provider made routable first: litellm
imported as orchestra imports it, and the scripted `orchestra-judge/` models registered), and
`strict`, which ARE lacks, is refused.

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
from orchestra.judging.settings import JudgeConfig


@dataclass
class NativeVerdict:
    success: bool
    rationale: str | None


def export_trace(env: Any, scenario: Any, scenario_id: str, scenario_json: str) -> str:
    """A rollout as an ARE trace: the scenario file plus ARE-exported completed events.

    `env` is ARE's `Environment` the rollout ran in and `scenario` ARE's scenario object. ARE's
    exporter serialises the environment's event log; the scenario part is taken from the original
    file (`scenario_json`) rather than from the live scenario, whose event DAG ARE's turn wiring
    has rewritten (condition events that ARE's importer cannot read back).
    """
    import_are()
    from are.simulation.data_handler.exporter import JsonScenarioExporter

    exported = json.loads(
        JsonScenarioExporter().export_to_json(
            env=env,
            scenario=scenario,
            scenario_id=scenario_id,
            model_id="orchestra",
            agent_id="orchestra",
            export_apps=False,
        )
    )
    trace = json.loads(scenario_json)
    trace["completed_events"] = exported.get("completed_events") or []
    return json.dumps(trace)


def judge_trace(
    trace_json: str,
    *,
    judge_model: str | None = None,
    judge_endpoint: str | None = None,
    max_scenario_duration: int | None = None,
) -> NativeVerdict:
    """Judge a recorded trace exactly as `are-benchmark judge` does: ARE's scripted judge, or with
    `judge_model` ARE's LLM judge on that litellm model (whose provider must already be routable)."""
    import_are()
    from are.simulation.data_handler.importer import JsonScenarioImporter
    from are.simulation.environment import Environment
    from are.simulation.scenarios.scenario_imported_from_json.utils import preprocess_scenario
    from are.simulation.types import EventLog
    from are.simulation.validation import ScriptedGraphPerEventJudgeConfig

    scenario, completed_events, _ = JsonScenarioImporter().import_from_json_to_benchmark(
        json_str=trace_json, apps_to_skip=["SandboxLocalFileSystem"], load_completed_events=True
    )
    if judge_model is not None:
        _are_benchmark_llm_preprocess(scenario, judge_model, judge_endpoint, max_scenario_duration)
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


def _are_benchmark_llm_preprocess(scenario: Any, model: str, endpoint: str | None, max_scenario_duration: int | None) -> None:
    """ARE's own judge set-up for `are-benchmark judge --judge_model M --judge_endpoint E`.

    `preprocess_scenario_from_config` builds `create_judge_engine(LLMEngineConfig(...))` (ARE's
    `LiteLLMEngine`) and `GraphPerEventJudgeConfig(engine=...)` itself. The model string is passed
    whole with provider `local`, which ARE's engine turns into "let litellm route by the model
    string" — the same routing orchestra's judge engine uses.
    """
    from are.simulation.agents.are_simulation_agent_config import LLMEngineConfig
    from are.simulation.scenarios.config import ScenarioRunnerConfig
    from are.simulation.scenarios.scenario_imported_from_json.utils import preprocess_scenario_from_config

    kwargs: dict[str, Any] = {}
    if max_scenario_duration is not None:
        kwargs = {"max_scenario_duration": max_scenario_duration, "max_time_scenario_duration": max_scenario_duration}
    config = ScenarioRunnerConfig(
        judge_engine_config=LLMEngineConfig(model_name=model, provider="local", endpoint=endpoint),
        judge_only=True,
        **kwargs,
    )
    preprocess_scenario_from_config(scenario, config)


def are_native_verdict(trace_json: str, *, max_scenario_duration: int | None = None, judge: JudgeConfig | None = None) -> NativeVerdict:
    """Judge a recorded trace exactly as `are-benchmark judge` does (scripted, or LLM for `llm`)."""
    judge = judge or JudgeConfig()
    if judge.mode == "strict":
        raise OrchestraError("ARE has no strict judge to compare with: use --parity with --judge scripted or --judge llm")
    if judge.mode != "llm":
        return judge_trace(trace_json, max_scenario_duration=max_scenario_duration)
    assert judge.model is not None
    from orchestra.litellm_setup import import_litellm

    import_litellm()
    if judge.model.startswith("orchestra-judge/"):
        from orchestra.judging import script as judge_script

        judge_script.register()
    return judge_trace(trace_json, judge_model=judge.model, judge_endpoint=judge.endpoint, max_scenario_duration=max_scenario_duration)
