"""`orchestra show DIR/NAME` and `orchestra compare DIR_A DIR_B` over real run folders."""

from __future__ import annotations

import json

from orchestra.cli import main


def test_show_a_rollout_and_compare_two_runs(tmp_path, capsys, scenario_path):
    scenario = str(scenario_path("starter_execution_group_chat"))
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["run", "--model", "orchestra/oracle", "--scenarios", scenario, "--runs", "2", "--out", str(a)]) == 0
    assert main(["run", "--model", "orchestra/oracle", "--scenarios", scenario, "--out", str(b), "--decode-rate", "20"]) == 0
    capsys.readouterr()
    assert main(["show", str(a / "starter_execution_group_chat.run1")]) == 0
    out = capsys.readouterr().out
    assert "status: PASS" in out and "MessagingAppV2__create_group_conversation" in out and "agents:" in out
    assert main(["show", str(a / "nope")]) == 2
    assert "no such rollout; rollouts in" in capsys.readouterr().err
    assert main(["compare", str(a), str(b), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["flips"] == [] and {d["capability"] for d in result["capabilities"]} >= {"Execution", "all"}
