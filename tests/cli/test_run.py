"""`orchestra run` as a user runs it."""

from __future__ import annotations

import json

import pytest

from orchestra.cli import main


def test_run_json_with_the_oracle_model(capsys, scenario_path):
    code = main(["run", "--scaffold", "react", "--model", "orchestra/oracle", "--scenarios", str(scenario_path("starter_time_deadline")), "--json"])
    assert code == 0
    rec = json.loads(capsys.readouterr().out)
    for key in ("scenario_id", "success", "reward", "sim_seconds", "event_log_sha256", "steps", "prompt_tokens", "completion_tokens"):
        assert key in rec
    assert rec["success"] and rec["reward"] == 1.0 and rec["steps"] >= 2


def test_run_table_and_unknown_scaffold(capsys, scenario_path):
    assert main(["run", "--model", "orchestra/oracle", "--scenarios", str(scenario_path("starter_search_lookup"))]) == 0
    assert "PASS" in capsys.readouterr().out
    assert main(["run", "--scaffold", "nope", "--model", "orchestra/oracle", "--scenarios", str(scenario_path("starter_search_lookup"))]) == 2
    assert "unknown scaffold 'nope'" in capsys.readouterr().err


def test_concurrent_rollouts_give_the_same_results(capsys):
    assert main(["run", "--model", "orchestra/oracle", "--scenarios", "bundled", "--json"]) == 0
    serial = {r["scenario_id"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert main(["run", "--model", "orchestra/oracle", "--scenarios", "bundled", "--json", "--concurrency", "3"]) == 0
    concurrent = {r["scenario_id"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert serial.keys() == concurrent.keys()
    for sid, r in serial.items():
        assert (r["reward"], r["sim_seconds"], r["event_log_sha256"]) == (
            concurrent[sid]["reward"],
            concurrent[sid]["sim_seconds"],
            concurrent[sid]["event_log_sha256"],
        ), sid


def test_a_filter_that_matches_nothing_is_an_error_not_an_empty_run(capsys, tmp_path):
    out = tmp_path / "out"
    code = main(["run", "--team", "oracle", "--scenarios", "bundled", "--id", "no_such_scenario", "--out", str(out)])
    assert code == 2
    err = capsys.readouterr().err
    assert "no scenario matching --id no_such_scenario in bundled" in err and "Traceback" not in err
    assert not out.exists()  # nothing written for a run that never started
    assert main(["run", "--model", "orchestra/oracle", "--scenarios", "bundled:time", "--capability", "NoSuchTag"]) == 2
    assert "no scenario matching --capability NoSuchTag in bundled:time" in capsys.readouterr().err


def test_limit_must_be_positive(capsys):
    for bad in ("-1", "0"):
        with pytest.raises(SystemExit) as info:
            main(["run", "--team", "oracle", "--scenarios", "bundled", "--limit", bad])
        assert info.value.code == 2
        assert f"argument --limit: must be 1 or more, got {bad}" in capsys.readouterr().err
