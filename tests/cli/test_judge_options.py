"""`--judge scripted|llm|strict` and friends, shared by replay, judge-check and run."""

from __future__ import annotations

import json

from orchestra.cli import main


def test_replay_strict_rejects_a_wrong_answer_and_names_the_judge(capsys, scenario_path, tmp_path):
    path = str(scenario_path("starter_search_lookup"))
    assert main(["replay", path, "--judge", "strict", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["success"] is True and rec["judge"] == "strict"
    assert main(["replay", path, "--judge", "strict", "--perturb", "wrong_answer", "--out", str(tmp_path)]) == 0
    line = capsys.readouterr().out
    assert "[wrong_answer]" in line and "FAIL" in line and "judge=strict" in line
    judged = json.loads((tmp_path / "rollouts" / "starter_search_lookup.wrong_answer.json").read_text())["result"]  # a run folder
    assert judged["judge"] == "strict" and judged["judge_checks"][0]["missing"]


def test_wrong_answer_is_na_under_the_default_judge(capsys, scenario_path):
    assert main(["replay", str(scenario_path("starter_search_lookup")), "--perturb", "wrong_answer"]) == 0
    out = capsys.readouterr().out
    assert "N/A" in out and "does not check free text" in out and "judge=" not in out


def test_judge_check_strict_table_has_a_wrong_answer_column(capsys, scenario_path):
    assert main(["judge-check", str(scenario_path("starter_time_deadline")), "--judge", "strict"]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    header, _, row = out.splitlines()[:3]
    assert header.split()[-1] == "wrong_answer" and row.rstrip().endswith("0.0 ok")
    assert "judge: strict" in out


def test_bad_judge_options_are_clear_errors(capsys, scenario_path, tmp_path):
    path = str(scenario_path("starter_search_lookup"))
    assert main(["replay", path, "--judge", "llm"]) == 2
    assert "needs a judge model (--judge-model" in capsys.readouterr().err
    assert main(["replay", path, "--judge-model", "openai/x"]) == 2
    assert "only apply to --judge llm" in capsys.readouterr().err
    assert main(["judge-check", path, "--judge", "strict", "--parity"]) == 2
    assert "ARE has no strict judge" in capsys.readouterr().err
    assert main(["replay", path, "--judge", "llm", "--judge-model", "openai/x", "--judge-max-tokens", "0"]) == 2
    assert "--judge-max-tokens: Input should be greater than 0" in capsys.readouterr().err
    assert main(["replay", path, "--judge", "strict", "--judge-max-tokens", "5"]) == 2
    assert "--judge-max-tokens only apply to --judge llm" in capsys.readouterr().err
    for extra in (["--judge-cache", str(tmp_path)], ["--judge-api-key", "k"], ["--no-judge-cache"]):
        assert main(["replay", path, "--judge", "strict", *extra]) == 2
        assert f"{extra[0]} only apply to --judge llm" in capsys.readouterr().err
    assert main(["replay", path, "--judge", "llm", "--judge-model", "openai/x", "--judge-cache", path]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert main(["replay", path, "--judge", "strict", "--no-judge-are-bool-bug"]) == 2
    assert "only applies to --judge llm" in capsys.readouterr().err
    assert main(["judge-check", path, "--judge", "llm", "--judge-model", "orchestra-judge/x.json", "--no-judge-are-bool-bug", "--parity"]) == 2
    assert "drop --no-judge-are-bool-bug" in capsys.readouterr().err


def test_run_records_the_judge_and_its_usage(capsys, scenario_path, tmp_path):
    script = tmp_path / "judge.json"
    script.write_text(json.dumps({"rules": [], "default": "[[False]] [[Failure]]"}))
    code = main(
        [
            "run",
            "--model",
            "orchestra/oracle",
            "--scenarios",
            str(scenario_path("starter_search_lookup")),
            "--json",
            "--judge",
            "llm",
            "--judge-model",
            f"orchestra-judge/{script}",
            "--judge-cache",
            str(tmp_path / "cache"),
        ]
    )
    rec = json.loads(capsys.readouterr().out)
    assert code == 0 and rec["success"] is True  # the oracle's answer equals the oracle's: no judge-model call
    assert rec["judge"] == f"llm:orchestra-judge/{script}" and rec["judge_usage"]["calls"] == 0


def test_the_bool_bug_opt_out_lets_the_llm_judge_accept_a_correct_paraphrase(capsys, scenario_path, tmp_path):
    script = tmp_path / "judge.json"
    script.write_text(json.dumps({"rules": [], "default": "<subtask>x</subtask> [[True]] [[Success]]"}))
    path = str(scenario_path("starter_search_lookup"))
    base = ["replay", path, "--json", "--judge", "llm", "--judge-model", f"orchestra-judge/{script}", "--judge-cache", str(tmp_path / "cache")]
    # a judge model that accepts everything: ARE's faithful default still rejects a text not equal to the oracle's
    assert main([*base, "--perturb", "wrong_answer"]) == 0
    assert json.loads(capsys.readouterr().out)["success"] is False
    assert main([*base, "--perturb", "wrong_answer", "--no-judge-are-bool-bug"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["success"] is True and rec["judge"] == f"llm:orchestra-judge/{script}+verbatim-bools"


def test_a_judge_model_that_cannot_be_reached_is_an_error_not_a_failed_rollout(capsys, scenario_path, tmp_path, monkeypatch):
    # the same path as an unreachable --judge-endpoint (litellm raises inside ARE's judge), without the network
    path = str(scenario_path("starter_search_lookup"))
    argv = [
        "replay",
        path,
        "--json",
        "--perturb",
        "wrong_answer",
        "--judge",
        "llm",
        "--judge-model",
        f"orchestra-judge/{tmp_path / 'no-such-script.json'}",
        "--no-judge-cache",
        "--out",
        str(tmp_path / "out"),
    ]
    # found at preflight, before any scenario loads: one line
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"orchestra: error: preflight: judge model orchestra-judge/{tmp_path / 'no-such-script.json'}: judge script {tmp_path / 'no-such-script.json'} not found"
    ]
    # a judge that fails after preflight (a server that died mid-run): the rollout is an ERROR, its event log kept
    import orchestra.cli.replay

    monkeypatch.setattr(orchestra.cli.replay, "check_judge", lambda *a, **k: None)
    code = main(argv)
    rec = json.loads(capsys.readouterr().out)
    assert code == 1 and rec["status"] == "ERROR" and "judge" in rec["error"] and "no-such-script.json" in rec["error"]
    kept = json.loads((tmp_path / "out" / "rollouts" / "starter_search_lookup.wrong_answer.json").read_text())
    assert rec["event_log_sha256"] and kept["error"] == rec["error"] and (kept["result"] or kept["partial"])["event_log"]  # the run folder keeps the event log


def test_an_unknown_judge_fails_once_before_any_scenario_loads(capsys, scenario_path):
    for command in (
        ["replay", str(scenario_path("starter_search_lookup"))],
        ["judge-check", str(scenario_path("starter_search_lookup"))],
        ["run", "--model", "orchestra/oracle", "--scenarios", str(scenario_path("starter_search_lookup"))],
    ):
        assert main([*command, "--judge", "delphi"]) == 2
        captured = capsys.readouterr()
        assert "unknown judge 'delphi'; registered: llm, scripted, strict" in captured.err and captured.out == ""


def test_the_option_help_names_what_the_judges_module_defines():
    from orchestra.cli import _options
    from orchestra.judging import settings as judges

    assert (_options.JUDGE_MODES, _options.CACHE_ENV) == (judges.JUDGE_MODES, judges.CACHE_ENV)
