"""ARE's own registered scenarios (its demo scenarios), exported to Gaia2 JSON for orchestra's sources."""

from __future__ import annotations

from pathlib import Path

from orchestra.scenario_files import ScenarioFile


def registered_scenarios() -> tuple[list[ScenarioFile], list[tuple[str, str]]]:
    """ARE's own registered scenarios (its demo scenarios), each exported to Gaia2 JSON; any that
    cannot be built or exported is reported with the reason (ARE's loader would drop it)."""
    from orchestra.are.imports import import_are

    import_are()
    from are.simulation.data_handler.exporter import JsonScenarioExporter
    from are.simulation.environment import Environment, EnvironmentConfig
    from are.simulation.scenarios.utils.registry import registry

    files: list[ScenarioFile] = []
    failures: list[tuple[str, str]] = []
    exporter = JsonScenarioExporter()
    for scenario_id in sorted(registry.get_all_scenarios()):
        where = f"are:{scenario_id}"
        try:
            scenario = registry.get_scenario(scenario_id)()
            scenario.initialize()
            env = Environment(EnvironmentConfig(oracle_mode=True, queue_based_loop=True, start_time=scenario.start_time))
            text = exporter.export_to_json(env=env, scenario=scenario, scenario_id=scenario_id)
        except Exception as exc:
            failures.append((where, f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"))
            continue
        files.append(ScenarioFile(Path("are") / f"{scenario_id}.json", text=text))
    return files, failures
