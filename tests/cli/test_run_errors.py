"""`orchestra run` never reports a broken model as a good agent: PASS / FAIL / ERROR, the same word in the table and the JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path

from orchestra.cli import main


def _script(tmp_path: Path, entries: list[dict]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(entries))
    return str(path)


def _run(tmp_path: Path, scenario: Path, script: str, *extra: str) -> list[str]:
    return [
        "run",
        "--scaffold",
        "react",
        "--model",
        f"orchestra/scripted:{script}",
        "--max-steps",
        "2",
        "--model-retries",
        "0",
        "--model-backoff",
        "0",
        "--scenarios",
        str(scenario),
        *extra,
    ]


def test_a_rollout_whose_model_calls_all_failed_is_an_error_not_a_pass(tmp_path, capsys, scenario_path):
    # Each call fails after its retries: ARE's loop shows the failure and, at the budget, answers
    # "Max iterations reached" for the agent — which the scripted judge passes on a search scenario.
    script = _script(tmp_path, [{"raise": "APIConnectionError"}] * 2)
    code = main(_run(tmp_path, scenario_path("starter_search_lookup"), script, "--json"))
    rec = json.loads(capsys.readouterr().out)
    assert code == 1 and rec["status"] == "ERROR" and rec["model_calls"] == 0
    assert "every call to the main agent's model failed (2 of 2" in rec["error"] and "APIConnectionError" in rec["error"]
    assert rec["agents"][0]["model_errors"] == 2
    # the table says the same word, in one line
    code = main(_run(tmp_path, scenario_path("starter_search_lookup"), script))
    row = capsys.readouterr().out.strip().splitlines()[0]
    assert code == 1 and row.split()[1] == "ERROR" and "every call to the main agent's model failed" in row


def test_are_behaviour_is_kept_behind_an_explicit_option(tmp_path, capsys, scenario_path):
    script = _script(tmp_path, [{"raise": "APIConnectionError"}] * 2)
    code = main(_run(tmp_path, scenario_path("starter_search_lookup"), script, "--json", "--are-model-failures"))
    rec = json.loads(capsys.readouterr().out)
    assert rec["status"] in ("PASS", "FAIL") and rec["error"] is None and rec["stop_reason"] == "step_budget"
    assert code == 0 or rec["status"] == "FAIL"


def test_a_row_that_reached_the_step_budget_says_so(tmp_path, capsys, scenario_path):
    wait = {"text": 'Thought: wait.\nAction:\n{"action": "SystemApp__get_current_time", "action_input": {}}<end_action>'}
    script = _script(tmp_path, [wait, wait])
    main(_run(tmp_path, scenario_path("starter_search_lookup"), script, "--are-model-failures"))
    row = capsys.readouterr().out.strip().splitlines()[0]
    assert "stop=step_budget" in row


def test_a_malformed_script_is_error_in_the_table_and_the_json(tmp_path, capsys, scenario_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    argv = ["run", "--scaffold", "react", "--model", f"orchestra/scripted:{bad}", "--scenarios", str(scenario_path("starter_search_lookup"))]
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code != 0 and "Traceback" not in captured.err
    recs = [json.loads(line) for line in captured.out.splitlines() if line.strip()]
    assert all(r["status"] == "ERROR" for r in recs)
    assert "not valid JSON" in (recs[0]["error"] if recs else captured.err)


def test_errors_in_a_row_stop_the_run_early_keep_what_finished_and_say_how_to_resume(tmp_path, capsys, scenario_path):
    """A model that died: every rollout ERRORs; after N in a row the run stops instead of going
    through the whole batch, keeps the finished records and prints the command that resumes."""
    script = _script(tmp_path, [{"raise": "APIConnectionError"}] * 2)
    scenarios = [str(scenario_path(s)) for s in ("starter_search_lookup", "starter_time_deadline", "starter_execution_calendar")]
    out = tmp_path / "run"
    argv = _run(tmp_path, Path(scenarios[0]), script, *scenarios[1:], "--out", str(out), "--no-progress")
    code = main([*argv, "--max-consecutive-errors", "2"])
    captured = capsys.readouterr()
    assert code == 1 and len(captured.out.strip().splitlines()) == 2
    last = captured.err.strip().splitlines()[-1]
    assert last.startswith("orchestra: 2 rollouts in a row ended in ERROR (--max-consecutive-errors 2); the last: every call to the main agent's model failed")
    assert last.endswith(
        f"2 of 3 rollout(s) finished, kept in {out / 'results.jsonl'}; resume with: orchestra {' '.join([*argv, '--max-consecutive-errors', '2'])}"
    )
    assert len((out / "results.jsonl").read_text().splitlines()) == 2
    # 0 disables the cap: the whole batch runs (the two ERRORs are run again, as on any resume)
    code = main([*argv, "--max-consecutive-errors", "0"])
    captured = capsys.readouterr()
    assert code == 1 and len(captured.out.strip().splitlines()) == 3 and "in a row" not in captured.err
    assert "3 rollout(s): 0 passed" in captured.err


def test_the_default_cap_on_errors_in_a_row_is_sane():
    from orchestra.cli.run import DEFAULT_MAX_CONSECUTIVE_ERRORS

    assert 3 <= DEFAULT_MAX_CONSECUTIVE_ERRORS <= 20


def test_an_error_has_no_reward_in_any_line_file_or_mean(tmp_path, capsys, scenario_path):
    """The judge passes what ran before the error (ARE's loop answered "Max iterations reached" for
    a model whose calls all failed: reward 1.0): it used to show as `ERROR reward=1.00` and
    `0 passed, mean reward 1.000, 1 error(s)`. Now nothing of orchestra's shows that reward."""
    from orchestra.runs.report import load_run, render
    from orchestra.runs.run_dir import read_results

    script = _script(tmp_path, [{"raise": "APIConnectionError"}] * 2)
    out = tmp_path / "run"
    argv = _run(tmp_path, scenario_path("starter_search_lookup"), script, "--out", str(out), "--no-progress")
    assert main(argv) == 1
    captured = capsys.readouterr()
    row = captured.out.strip().splitlines()[0]
    assert row.split()[1] == "ERROR" and "reward=-" in row and "reward=1" not in row
    assert captured.err.strip().splitlines()[-1] == "1 rollout(s): 0 passed, 0 failed, 1 error(s); no judged rollout (no mean reward)"
    (record,) = read_results(out)
    assert record.status == "ERROR" and record.reward is None
    # nor is it stored as the result's: a script reading `result.reward` must not count it
    assert record.result is not None and record.result.reward is None and record.result.success is None
    assert main([*argv[:-3], "--json"]) == 1
    rec = json.loads(capsys.readouterr().out)
    assert rec["status"] == "ERROR" and rec["reward"] is None and rec["success"] is None
    assert main(["show", str(out / "starter_search_lookup")]) == 0
    shown = capsys.readouterr().out
    assert "no reward (ERROR)" in shown and "reward 1.00" not in shown and "verdict: none (ERROR)" in shown
    page = render(load_run(out), plotly_js="")
    rollouts = page[page.index('<table id="rollouts"') : page.index("</table>", page.index('<table id="rollouts"'))]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", rollouts)
    assert cells[3].endswith("ERROR</span>") and cells[4] == "–"  # status, reward
    assert "reward <b>1.00" not in page and "reward 1.00" not in page


def test_the_mean_reward_is_over_judged_rollouts_only():
    from orchestra.cli._output import totals_line
    from orchestra.record import RolloutRecord

    passed = RolloutRecord.model_validate(json.loads(_judged_line(1.0)))
    errored = passed.model_copy(update={"error": "every call to the main agent's model failed"})
    assert (passed.reward, errored.reward) == (1.0, None)
    assert totals_line([passed, errored]) == "2 rollout(s): 1 passed, 0 failed, 1 error(s); mean reward 1.000 over 1 judged"


def _judged_line(reward: float) -> str:
    result = {
        "scenario_id": "s",
        "source": "s.json",
        "success": reward == 1.0,
        "reward": reward,
        "reward_mode": "binary",
        "rationale": None,
        "turns": [],
        "nb_turns": 1,
        "turns_completed": 1,
        "sim_seconds": 1.0,
        "stop_reason": "done",
        "event_log_sha256": "0",
        "event_log": [],
    }
    return json.dumps({"scenario_id": "s", "source": "s.json", "policy": "agent", "result": result})
