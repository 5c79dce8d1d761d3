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
