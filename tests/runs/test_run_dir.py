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
