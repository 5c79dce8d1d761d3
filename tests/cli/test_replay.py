"""`orchestra replay` as a user runs it."""

from __future__ import annotations

import json

import pytest

from orchestra.cli import main
from orchestra.record import RolloutRecord
from orchestra.runs.run_dir import read_results
from support.helpers import SCENARIOS


def test_replay_prints_one_line_per_scenario(capsys, scenario_path):
    code = main(["replay", str(scenario_path("starter_execution_calendar")), str(scenario_path("starter_time_deadline"))])
    out = capsys.readouterr()
    assert code == 0
    lines = out.out.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].split()[:3] == ["starter_execution_calendar", "PASS", "reward=1.00"]
    assert "sim=" in lines[1] and "2 rollout(s): 2 passed" in out.err


def test_replay_json_fields(capsys, scenario_path):
    assert main(["replay", str(scenario_path("starter_search_lookup")), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    for key in ("scenario_id", "success", "reward", "sim_seconds", "event_log_sha256"):
        assert key in rec
    assert rec["success"] is True and rec["reward"] == 1.0 and len(rec["event_log_sha256"]) == 64


def test_replay_perturbed_with_out_dir(capsys, tmp_path, scenario_path):
    code = main(["replay", str(scenario_path("starter_execution_group_chat")), "--perturb", "swap", "--reward-mode", "dense", "--out", str(tmp_path)])
    assert code == 0
    line = capsys.readouterr().out
    assert "[swap]" in line and "FAIL" in line
    record = RolloutRecord.model_validate_json((tmp_path / "rollouts" / "starter_execution_group_chat.swap.json").read_text())
    assert record.result is not None and record.trajectory is not None
    events = record.result.event_log
    assert {"USER", "AGENT"} <= {e["type"] for e in events}
    assert record.result.success is False and record.result.rationale and 0.0 <= record.result.reward <= 0.8
    # the oracle policy made every agent event; nobody made the others
    assert record.trajectory.event_agents == ["oracle" if e["type"] == "AGENT" else None for e in events]


def test_replay_and_run_write_the_same_run_folder_format(capsys, tmp_path, scenario_path):
    source = str(scenario_path("starter_search_lookup"))
    replayed, ran = tmp_path / "replay", tmp_path / "run"
    assert main(["replay", source, "--out", str(replayed)]) == 0
    assert main(["run", "--model", "orchestra/oracle", "--scenarios", source, "--out", str(ran), "--no-progress"]) == 0
    capsys.readouterr()
    for folder in (replayed, ran):
        assert {p.name for p in folder.iterdir()} >= {"manifest.json", "results.jsonl", "rollouts"}
        (line,) = read_results(folder)
        whole = RolloutRecord.model_validate_json((folder / "rollouts" / "starter_search_lookup.json").read_text())
        assert line.trajectory is None and whole.trajectory is not None  # compact lines, whole files
        assert line.model_dump(exclude={"trajectory"}) == whole.model_dump(exclude={"trajectory"})
        assert main(["show", str(folder / "starter_search_lookup")]) == 0
        assert "status: PASS" in capsys.readouterr().out
    # the replay resumes like a run: nothing left to do, the same folder
    before = (replayed / "results.jsonl").read_bytes()
    assert main(["replay", source, "--out", str(replayed)]) == 0
    assert (replayed / "results.jsonl").read_bytes() == before and "PASS" in capsys.readouterr().out


def test_bad_file_is_reported_and_the_batch_goes_on(capsys, tmp_path, scenario_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code = main(["replay", str(bad), str(scenario_path("starter_search_lookup"))])
    out = capsys.readouterr().out
    assert code == 1
    assert "ERROR" in out and "bad.json: malformed JSON" in out
    assert "starter_search_lookup" in out and "PASS" in out


def test_missing_source_is_one_clear_error(capsys):
    assert main(["replay", "no/such/dir"]) == 2
    assert "no/such/dir: no such file or folder" in capsys.readouterr().err


def test_whole_bundled_folder(capsys):
    assert main(["replay", str(SCENARIOS)]) == 0


@pytest.mark.parametrize("command", ["replay", "judge-check"])
def test_a_filter_that_matches_nothing_is_an_error_not_an_empty_table(command, capsys):
    assert main([command, "bundled", "--id", "no_such_scenario"]) == 2
    err = capsys.readouterr().err
    assert "no scenario matching --id no_such_scenario in bundled" in err and "Traceback" not in err
