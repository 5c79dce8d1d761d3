"""A run folder (`orchestra.runs.run_dir.RunDir`): each rollout's whole record in rollouts/NAME.json,
its compact line (no trajectory) in results.jsonl."""

from __future__ import annotations

import json

from orchestra.record import RolloutRecord
from orchestra.runs.run_dir import RunDir, read_results
from orchestra.trajectory import AgentTrajectory, Trajectory


def test_keep_writes_the_whole_record_then_its_compact_line(tmp_path):
    trajectory = Trajectory(stop_reason="all_turns_completed", agents=[AgentTrajectory(name="main", role="main")], event_agents=[None, "main"])
    record = RolloutRecord(scenario_id="s1", source="s1.json", policy="react:m", sample_index=2, trajectory=trajectory)
    run_dir = RunDir(tmp_path)
    path = run_dir.keep(record)
    assert path == tmp_path / "rollouts" / "s1.run2.json" and not list((tmp_path / "rollouts").glob("*.tmp"))
    whole = RolloutRecord.model_validate_json(path.read_text())
    assert whole == record and whole.trajectory == trajectory
    line = json.loads((tmp_path / "results.jsonl").read_text())
    assert "trajectory" not in line and line == record.compact()
    (back,) = read_results(tmp_path)
    assert back.trajectory is None and back.model_dump(exclude={"trajectory"}) == record.model_dump(exclude={"trajectory"})


def test_a_resume_with_other_plugins_is_refused_and_an_older_folder_still_resumes(tmp_path, scenario_path):
    """Plugins can change what an agent sees (a tool, a prompt): one folder holds one setup."""
    import pytest

    from orchestra.errors import OrchestraError
    from orchestra.runs.run_dir import MANIFEST, Manifest
    from orchestra.scenario_files import read_scenario_file
    from orchestra.spec import RolloutSpec

    file = read_scenario_file(scenario_path("starter_search_lookup"))
    batch = [(RolloutSpec(scenario=str(file.path)), file)]
    RunDir(tmp_path).open(batch, plugins={"tallies": "orchestra-tallies 0.1"})
    with pytest.raises(OrchestraError, match=r"holds a run made with other plugins \(plugins.tallies: \"orchestra-tallies 0.1\" before, null now\)"):
        RunDir(tmp_path).open(batch, plugins={})
    RunDir(tmp_path).open(batch, plugins={"tallies": "orchestra-tallies 0.1"})  # the same plugins: resumes
    older = Manifest.model_validate_json((tmp_path / MANIFEST).read_text()).model_copy(update={"plugins": None})
    (tmp_path / MANIFEST).write_text(older.model_dump_json())
    RunDir(tmp_path).open(batch, plugins={})  # a folder from before plugins were recorded resumes as it did
    assert Manifest.model_validate_json((tmp_path / MANIFEST).read_text()).plugins is None
