"""`orchestra replay` as a user runs it."""

from __future__ import annotations

import json

import pytest

from helpers import SCENARIOS
from orchestra.cli import main


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
    events = json.loads((tmp_path / "starter_execution_group_chat.swap.events.json").read_text())
    judge = json.loads((tmp_path / "starter_execution_group_chat.swap.judge.json").read_text())
    assert {"USER", "AGENT"} <= {e["type"] for e in events}
    assert judge["success"] is False and judge["rationale"] and 0.0 <= judge["reward"] <= 0.8


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
