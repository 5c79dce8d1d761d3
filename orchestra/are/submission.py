"""ARE's Gaia2 submission format: the trace files `are-benchmark gaia2-run` writes, and ARE's own
reader of a submission folder.

`gaia2-run` (`are/simulation/benchmark/gaia2_submission.py`) writes, per phase and config,
`OUT/<phase>/<config>/hf/<run id>.json` (one ARE trace per rollout, `JsonScenarioExporter`'s
"hf" format) and `OUT/<phase>/<config>/output.jsonl` (one line per rollout: `task_id`,
`trace_id` = the trace's path, `score`, `metadata`). ARE's upload script
(`benchmark/gaia2_upload_script.py`) reads such a folder back (`reconstruct_results_from_output_dir`)
and computes the report (`report_stats.calculate_statistics`); `are-benchmark judge -d
OUT/<phase>/<config>/output.jsonl` re-judges the traces. This module is the door to all three.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchestra.are.imports import import_are


def standard_configs() -> list[str]:
    """The configs of gaia2-run's standard phase, in ARE's order (`CapabilityTag.gaia2_capabilities()`)."""
    import_are()
    from are.simulation.types import CapabilityTag

    return [c.value.lower() for c in CapabilityTag.gaia2_capabilities()]


def config_name(config: str, phase: str) -> str:
    """ARE's upload name of a phase's config (`execution`, `mini_a2a`, `mini_noise`)."""
    import_are()
    from are.simulation.benchmark.hf_config_utils import create_config_name

    return str(create_config_name(config, phase))


def runner_config(*, model: str, agent: str, a2a_app_prop: float, a2a_model: str | None, noise: Any | None) -> Any:
    """ARE's `ScenarioRunnerConfig` for a phase, as gaia2-run fills it (recorded in each trace; its
    hash names the trace files). `noise` is orchestra's `NoiseConfig` (or None)."""
    import_are()
    from are.simulation.scenarios.config import ScenarioRunnerConfig
    from are.simulation.scenarios.utils.scenario_expander import EnvEventsConfig
    from are.simulation.types import ToolAugmentationConfig

    tools = envs = None
    if noise is not None:
        tools = ToolAugmentationConfig(
            tool_failure_probability=noise.tool_failure_probability,
            apply_tool_name_augmentation=noise.apply_tool_name_augmentation,
            apply_tool_description_augmentation=noise.apply_tool_description_augmentation,
        )
        envs = EnvEventsConfig(num_env_events_per_minute=int(noise.env_events_per_minute), env_events_seed=noise.env_events_seed)
    return ScenarioRunnerConfig(
        model=model,
        model_provider=None,
        agent=agent,
        export=True,
        trace_dump_format="hf",
        a2a_app_prop=a2a_app_prop,
        a2a_model=a2a_model,
        tool_augmentation_config=tools,
        env_events_config=envs,
    )


def trace_file_name(scenario_id: str, run_number: int, config: Any) -> str:
    """ARE's trace file name (`scenarios/utils/caching.get_run_id`): `<id>_run_<n>_<config hash>.json`."""
    return f"{scenario_id}_run_{run_number}_{config.get_config_hash()}.json"


def export_trace(
    env: Any,
    scenario: Any,
    scenario_id: str,
    scenario_json: str,
    *,
    config: Any,
    phase_config: str,
    run_number: int,
    a2a: bool,
    success: bool | None,
    exception: str | None,
    hf_metadata: dict[str, str] | None = None,
) -> str:
    """One rollout as ARE's "hf" trace: ARE's exporter on the environment the rollout ran in (the
    completed events, the metadata), around the scenario as its file gives it (ARE's turn wiring
    rewrote the live scenario's DAG). The definition says what gaia2-run's says: run number
    (1-based), config, augmentations, exception; `annotation.validation_decision` the verdict. The
    annotation date, which ARE takes from the wall clock, is 0 (generated files do not depend on
    the date). With `hf_metadata` (a scenario of the HF dataset) the apps are left out, as ARE does:
    its importer fetches them from the hub by that reference."""
    import_are()
    from are.simulation.data_handler.exporter import JsonScenarioExporter
    from are.simulation.scenarios.scenario import ScenarioStatus

    decision = None if success is None else (ScenarioStatus.Valid.value if success else ScenarioStatus.Invalid.value)
    exported = json.loads(
        JsonScenarioExporter().export_to_json(
            env=env,
            scenario=scenario,
            scenario_id=scenario_id,
            runner_config=config,
            model_id=config.model,
            agent_id=config.agent,
            validation_decision=decision,
            export_apps=False,
        )
    )
    trace = json.loads(scenario_json)
    metadata = exported["metadata"]
    definition = {**(trace.get("metadata") or {}).get("definition", {}), **metadata["definition"]}
    definition.update(
        run_number=run_number,
        config=phase_config,
        has_a2a_augmentation=a2a,
        has_tool_augmentation=config.tool_augmentation_config is not None,
        has_env_events_augmentation=config.env_events_config is not None,
        has_exception=exception is not None,
        exception_type="OrchestraError" if exception is not None else None,
        exception_message=exception,
        hf_metadata=hf_metadata,
    )
    metadata["definition"] = definition
    metadata["annotation"]["date"] = 0.0
    trace["metadata"] = metadata
    trace["completed_events"] = exported.get("completed_events") or []
    if hf_metadata is not None:
        trace["apps"] = []
    return json.dumps(trace)


def read_submission(out_dir: Path, *, model: str, provider: str = "unknown") -> dict[str, Any]:
    """A gaia2-run output folder read back by ARE's own upload script
    (`reconstruct_results_from_output_dir`) and ARE's report statistics on it
    (`calculate_statistics`): what `gaia2_upload_script.py` computes and uploads as `computed_stats.json`."""
    import_are()
    from are.simulation.benchmark.gaia2_upload_script import reconstruct_results_from_output_dir
    from are.simulation.benchmark.report_stats import calculate_statistics, combine_results_to_dataframe

    results = reconstruct_results_from_output_dir(str(out_dir), model, provider)
    stats = calculate_statistics(combine_results_to_dataframe(results))
    return {
        "metadata": {"model": model, "model_provider": provider, "report_version": "3.0"},
        "statistics": _plain(stats),
        "run_configurations": sorted(f"{phase}/{config}" for phase, config, *_ in results),
    }


def load_traces(output_jsonl: Path) -> list[tuple[str, int | None, int]]:
    """ARE's benchmark loader on an `output.jsonl` (`setup_scenarios_iterator`, the path
    `are-benchmark judge -d FILE` takes): (scenario id, run number, completed events) per trace
    it could import, sorted."""
    import_are()
    from are.simulation.benchmark.scenario_loader import setup_scenarios_iterator

    loaded = setup_scenarios_iterator(
        dataset_path=str(output_jsonl), dataset_config=None, dataset_split=None, hf=None, hf_revision=None, load_completed_events=True
    )
    return sorted((s.scenario_id, getattr(s, "run_number", None), len(events or [])) for s, events in loaded)


def _plain(value: Any) -> Any:
    """Statistics as plain JSON data (polars/numpy scalars become Python numbers)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):
        return value.item()
    return value
