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


def test_show_prints_the_trajectory_as_a_transcript(tmp_path, capsys, scenario_path):
    """A failing scripted model: thoughts, an unknown tool, a format error, a real call with its
    observation and simulated time, the stop reason, the verdict and the judge's rationale."""
    lookup = 'Thought: find the contacts first.\nAction:\n{"action": "Contacts__get_contacts", "action_input": {}}<end_action>'
    unknown = 'Thought: teleport there.\nAction:\n{"action": "Nowhere__teleport", "action_input": {"to": "Paris"}}<end_action>'
    broken = "Thought: oops.\nAction:\n{not json<end_action>"
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": lookup}, {"text": unknown}, {"text": "no idea"}, {"text": broken}]))
    out = tmp_path / "out"
    args = ["run", "--model", f"orchestra/scripted:{script}", "--scaffold", "react", "--max-steps", "3", "--no-progress"]
    assert main([*args, "--scenarios", str(scenario_path("starter_execution_calendar")), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["show", str(out / "starter_execution_calendar")]) == 0
    text = capsys.readouterr().out
    assert "status: FAIL" in text and "stop step_budget" in text
    assert "run 1 at 1.0s, the user wrote:\n      Received at: " in text and "thought:\n        find the contacts first." in text
    assert "call Contacts__get_contacts({}) at " in text and "-> ok:" in text
    assert 'call Nowhere__teleport({"to": "Paris"})' in text and "-> UNKNOWN TOOL:" in text
    assert "output REJECTED" in text and "no idea" in text  # ARE's invalid-format retry, inside the step
    assert "FORMAT ERROR:" in text
    assert "auto at " in text and "Max iterations (3) reached" in text
    assert "verdict: FAIL" in text and "judge rationale:" in text
    assert "main       AgentUserInterface__send_message_to_user" in text  # the event log says who
    assert main(["show", str(out / "starter_execution_calendar"), "--prompts"]) == 0
    prompts = capsys.readouterr().out
    assert "request 0: 2 new message(s)" in prompts and "request 1: request 0's first 2 message(s), then" in prompts
    assert main(["show", str(out)]) == 2
    assert "is a run folder: give one of its rollouts, DIR/NAME: starter_execution_calendar" in capsys.readouterr().err


def test_show_says_which_noise_ran_and_which_calls_it_failed():
    from orchestra.are.noise import FailedCall, NoiseReport
    from orchestra.cli.show import transcript
    from orchestra.config import NoiseConfig
    from orchestra.record import RolloutRecord, RolloutResult
    from orchestra.spec import RolloutSpec

    noise = NoiseReport(
        config=NoiseConfig(),
        augmentation=True,
        renamed_tools=41,
        env_events_scheduled=12,
        env_events=3,
        tool_calls_drawn=5,
        tool_failures=1,
        failed_calls=[FailedCall(agent="main", call_index=3, tool="Messages__send_message", sim_seconds=243.7)],
    )
    spec = RolloutSpec(scenario="a.json")
    result = RolloutResult(
        scenario_id="a", source="a.json", success=False, reward=0.0, reward_mode="binary", rationale=None, turns=[], nb_turns=1,
        turns_completed=1, sim_seconds=250.0, stop_reason="all_turns_completed", event_log_sha256="0", event_log=[], noise=noise,
    )  # fmt: skip
    text = transcript(RolloutRecord(scenario_id="a", source="a.json", policy="p", sample_index=0, spec=spec, result=result))
    assert "noise: failures=1/5 (Messages__send_message) env_events=3 of 12 scheduled  renamed=41" in text
    assert "   243.7  FAILED Messages__send_message (noise: main's call #3)" in text


def test_show_an_error_rollout_says_why_there_is_no_trajectory(tmp_path, capsys, scenario_path):
    """A rollout that ended in ERROR before any agent ran (a scenario whose oracle calls a tool the
    app lacks): its error, and no claim that the trajectory was left out of the file show read."""
    scenario = json.loads(scenario_path("starter_execution_group_chat").read_text())
    broken = tmp_path / "broken_group_chat.json"
    broken.write_text(json.dumps(scenario).replace('"send_message_to_user"', '"send_message_to_userX"', 1))
    out = tmp_path / "out"
    assert main(["run", "--model", "orchestra/oracle", "--scenarios", str(broken), "--out", str(out), "--no-progress", "--no-preflight"]) == 1  # 1: an ERROR
    capsys.readouterr()
    assert main(["show", str(out / "broken_group_chat")]) == 0
    text = capsys.readouterr().out
    assert "status: ERROR" in text and "send_message_to_userX" in text
    assert "agents: none (the rollout ended before any agent ran)" in text
    assert "(no trajectory: the rollout ended in ERROR before any agent ran)" in text
    assert "records in results.jsonl leave it out" not in text


def test_compare_says_when_two_runs_share_no_scenario_and_names_every_setting_that_differs(tmp_path, capsys, scenario_path):
    """Two runs with no scenario in common used to print `+100.0` beside "no scenario changed" (exit
    0); runs at time scale 1 and 8 printed the same label. Now: no overlap is said (exit 1), only
    the overlap is compared, and each differing setting is listed with both values."""
    lookup, deadline = str(scenario_path("starter_search_lookup")), str(scenario_path("starter_time_deadline"))
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    oracle = ["run", "--model", "orchestra/oracle", "--no-progress"]
    assert main([*oracle, "--scenarios", lookup, "--out", str(a)]) == 0
    assert main([*oracle, "--scenarios", deadline, "--out", str(b)]) == 0
    assert main([*oracle, "--scenarios", lookup, deadline, "--out", str(c), "--time-scale", "8"]) == 0
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 1
    text = capsys.readouterr().out
    assert "no scenario in common (judged in both runs): nothing to compare" in text
    assert "+100.0" not in text and "no scenario changed" not in text
    assert "only in A (not compared): starter_search_lookup" in text and "only in B (not compared): starter_time_deadline" in text
    assert main(["compare", str(a), str(c)]) == 0
    text = capsys.readouterr().out
    assert "settings that differ (1):\n  configuration.session.clock.time_scale: 1.0 (A), 8.0 (B)\n" in text
    assert "over the 1 scenario(s) both runs judged:" in text and "only in B (not compared): starter_time_deadline" in text
    assert main(["compare", str(a), str(c), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["overlap"] == 1 and result["settings"] == [{"path": "configuration.session.clock.time_scale", "a": "1.0", "b": "8.0"}]
    assert {d["capability"]: (d["a"], d["b"]) for d in result["capabilities"]}["all"] == (1.0, 1.0)  # the overlap only
