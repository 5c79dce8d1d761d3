"""ARE's own verdict on an orchestra trajectory, judged with orchestra's judge settings.

The ARE part — exporting a rollout with ARE's `JsonScenarioExporter` and judging the trace with
ARE's offline path, as `are-benchmark judge` does — is `orchestra.are.native_verdict`. This half
maps a `JudgeConfig` onto it: `scripted` is ARE's scripted judge, `llm` is ARE's LLM judge on the
same litellm model (its provider made routable first: litellm imported as orchestra imports it,
and the scripted `orchestra-judge/` models registered), and `strict`, which ARE lacks, is refused.
"""

from __future__ import annotations

from orchestra.are.native_verdict import NativeVerdict, judge_trace
from orchestra.errors import OrchestraError
from orchestra.judging.settings import JudgeConfig

__all__ = ["NativeVerdict", "are_native_verdict"]


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
