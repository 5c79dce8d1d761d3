"""`orchestra judge-check`: the verifier-verification table."""

from __future__ import annotations

import json

from orchestra.cli import main


def test_table_marks_every_cell_as_expected_or_na(capsys, scenario_path):
    code = main(["judge-check", str(scenario_path("starter_time_deadline")), str(scenario_path("starter_ambiguity_clarify"))])
    out = capsys.readouterr().out
    assert code == 0, out
    header, _, *rows = out.splitlines()[:4]
    assert header.split() == ["scenario", "oracle", "wrong_arg", "late", "missing", "extra", "swap", "wrong_answer"]
    time_row = next(r for r in rows if r.startswith("starter_time_deadline"))
    assert time_row.split()[1:3] == ["1.0", "ok"] and time_row.count("0.0 ok") == 4 and time_row.rstrip().endswith("n/a")
    amb_row = next(r for r in rows if r.startswith("starter_ambiguity_clarify"))
    assert amb_row.count("n/a") == 6  # wrong_answer too: the scripted judge does not check free text
    assert "starter_ambiguity_clarify [late]: no oracle action has a timing window" in out


def test_json_has_expectations(capsys, scenario_path):
    assert main(["judge-check", str(scenario_path("starter_execution_group_chat")), "--json"]) == 0
    recs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(recs) == 7
    judged = [r for r in recs if r["status"] in ("PASS", "FAIL")]
    assert all(r["as_expected"] for r in judged)
    assert {r["perturbation"] for r in judged} >= {None, "wrong_arg", "missing", "extra", "swap"}
