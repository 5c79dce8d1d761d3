"""`orchestra parity-agent`: bad input gets a clear error; a run reports and exits consistently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestra.cli import main

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "search" / "validation" / "starter_search_lookup.json"


def _policy(tmp_path: Path) -> Path:
    path = tmp_path / "policy.json"
    path.write_text(
        json.dumps(
            [
                'Thought: answer.\nAction:\n{"action": "AgentUserInterface__send_message_to_user", '
                '"action_input": {"content": "INV-2041: $1,280.00, due October 31, 2024. Phone +14155550144."}}<end_action>'
            ]
        )
    )
    return path


def test_missing_policy_file_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parity-agent", str(SCENARIO), "--policy", "/nonexistent/policy.json"]) == 2
    assert "policy file /nonexistent/policy.json not found" in capsys.readouterr().err


def test_bad_max_iterations_is_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["parity-agent", str(SCENARIO), "--policy", str(_policy(tmp_path)), "--max-iterations", "0"])
    assert exc.value.code == 2
    assert "--max-iterations: expected a positive integer, got 0" in capsys.readouterr().err


def test_unknown_source_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parity-agent", str(tmp_path / "nope.json"), "--policy", str(_policy(tmp_path))]) == 2
    assert "nope.json" in capsys.readouterr().err


def test_json_report_and_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    rc = main(["parity-agent", str(SCENARIO), "--policy", str(_policy(tmp_path)), "--json", "--out", str(out)])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(records) == 1
    rec = records[0]
    assert rec["scenario_id"] == "starter_search_lookup"
    assert rec["are"]["success"] is True and rec["are"]["n_requests"] == 1
    assert rc == (0 if rec["identical"] else 1)
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(
        f"starter_search_lookup.{n}"
        for n in ("parity.txt", "parity.json", "are.requests.json", "orchestra.requests.json", "are.events.json", "orchestra.events.json")
    )
    are_requests = json.loads((out / "starter_search_lookup.are.requests.json").read_text())
    assert are_requests[0]["messages"][1]["content"].startswith("[TASK]: \nReceived at: 2024-10-15 07:00:01")


def test_a_bad_scenario_in_a_batch_is_reported_and_the_others_still_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "batch"
    folder.mkdir()
    (folder / "a.json").write_text(SCENARIO.read_text())
    (folder / "b.json").write_text("{broken")
    (folder / "c.json").write_text(SCENARIO.read_text())
    rc = main(["parity-agent", str(folder), "--policy", str(_policy(tmp_path)), "--json"])
    captured = capsys.readouterr()
    records = [json.loads(line) for line in captured.out.splitlines()]
    assert rc == 2
    assert [r["source"].rsplit("/", 1)[-1] for r in records] == ["a.json", "b.json", "c.json"]
    assert records[1]["status"] == "ERROR" and "b.json: malformed JSON" in records[1]["error"]
    assert records[0]["are"]["success"] is True and records[2]["are"]["success"] is True
    assert "b.json: malformed JSON" in captured.err


def test_a_policy_that_runs_out_is_a_clear_error_not_a_prompt_difference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "short.json"
    policy.write_text(json.dumps(['Thought: look.\nAction:\n{"action": "Contacts__search_contacts", "action_input": {"query": "Tom"}}<end_action>']))
    rc = main(["parity-agent", str(SCENARIO), "--policy", str(policy), "--max-iterations", "4", "--json"])
    captured = capsys.readouterr()
    rec = json.loads(captured.out)
    assert rc == 2
    assert rec["policy_failure"].startswith("the policy failed on request 2 (ARE side): PolicyExhausted: the policy's 1 replies are used up")
    # litellm's traceback of the failure (sync in ARE's engine, async in orchestra's client) is not a parity finding
    assert rec["prompts"] == [] and rec["identical"] is True
    assert "starter_search_lookup" in captured.err and "the policy failed on request 2" in captured.err
