"""`--noise`, `--tool-failure-probability`, `--env-events-per-minute` and a team file's `noise:`."""

from __future__ import annotations

import argparse
import io
import json
import warnings
from pathlib import Path

import pytest

from orchestra.are.noise import NoiseWarning
from orchestra.cli import main
from orchestra.cli._options import add_noise_options, session_config
from orchestra.config import NoiseConfig, SessionConfig
from orchestra.errors import OneLineWarnings, OrchestraError, one_line_warnings
from orchestra.teams.loading import read_team
from support.helpers import SCENARIOS

GROUP_CHAT = str(SCENARIOS / "corpus" / "execution" / "validation" / "univ_02_exec_group_chat.json")


def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_noise_options(p)
    return p.parse_args(list(argv))


def test_the_flags_make_gaia2s_noise_and_merge_over_a_team_files():
    assert session_config(_args()).noise is None
    assert session_config(_args("--noise")).noise == NoiseConfig()
    assert session_config(_args("--tool-failure-probability", "0.3")).noise == NoiseConfig(tool_failure_probability=0.3)
    team = SessionConfig(noise=NoiseConfig(tool_failure_probability=0.5))
    assert session_config(_args("--env-events-per-minute", "0"), team).noise == NoiseConfig(tool_failure_probability=0.5, env_events_per_minute=0)
    assert session_config(_args("--no-noise"), team).noise is None
    assert session_config(_args(), team).noise == team.noise
    with pytest.raises(OrchestraError, match="--tool-failure-probability: Input should be less than or equal to 1"):
        session_config(_args("--tool-failure-probability", "1.5"))
    with pytest.raises(OrchestraError, match="--no-noise with --env-events-per-minute: choose one"):
        session_config(_args("--no-noise", "--env-events-per-minute", "3"))


NOISE = ("--noise", "--no-noise")
BOOL_BUG = ("--judge-are-bool-bug", "--no-judge-are-bool-bug")


@pytest.mark.parametrize(
    ("command", "switch"),
    [
        (["run", "--team", "oracle", "--scenarios", GROUP_CHAT], NOISE),
        (["replay", GROUP_CHAT], NOISE),
        (["run", "--team", "oracle", "--scenarios", GROUP_CHAT], BOOL_BUG),
        (["replay", GROUP_CHAT], BOOL_BUG),
        (["judge-check", GROUP_CHAT], BOOL_BUG),
        (["gaia2", "--team", "oracle"], BOOL_BUG),
    ],
)
def test_a_switch_and_its_no_form_together_are_a_usage_error(command, switch, capsys):
    """Given both, the last used to win silently; now argparse refuses the pair (exit 2), nothing runs."""
    on, off = switch
    for first, second in ((on, off), (off, on)):
        with pytest.raises(SystemExit) as exc:
            main([*command, first, second])
        assert exc.value.code == 2
        assert f"error: argument {second}: not allowed with argument {first}" in capsys.readouterr().err


def test_a_team_files_session_takes_noise(tmp_path):
    path = tmp_path / "noisy.yaml"
    path.write_text("name: noisy\nmain:\n  scaffold: react\n  model: orchestra/oracle\nsession:\n  noise: true\n")
    assert read_team(path).config.session.noise == NoiseConfig()
    path.write_text("name: noisy\nmain:\n  scaffold: react\n  model: orchestra/oracle\nsession:\n  noise:\n    tool_failure_probability: 0.25\n")
    assert read_team(path).config.session.noise == NoiseConfig(tool_failure_probability=0.25)


def test_replay_under_noise_reports_what_fired_and_reruns_identically(capsys):
    argv = ["replay", GROUP_CHAT, "--noise", "--json"]
    assert main(argv) == 0  # a failed oracle under noise is no harness error
    first = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    noise = first["noise"]
    assert noise["config"] == NoiseConfig().model_dump(mode="json") and noise["augmentation"] is True
    assert noise["tool_failures"] >= 1 and noise["failed_calls"] and noise["env_events_scheduled"] > 0
    assert first["event_log_sha256"] == again["event_log_sha256"] and first["noise"] == again["noise"]
    assert first["status"] == "FAIL"  # the failed call is missing in the judge's count
    assert main(["replay", GROUP_CHAT]) == 0
    out = capsys.readouterr()
    assert "PASS" in out.out and "noise" not in out.out + out.err  # noise off: as before


def test_the_oracle_through_a_scaffold_fails_under_noise(capsys):
    argv = ["run", "--scaffold", "tool_calling", "--model", "orchestra/oracle", "--scenarios", GROUP_CHAT, "--noise", "--tool-failure-probability", "0.5"]
    assert main(argv) == 0
    out = capsys.readouterr()
    line = out.out.strip().splitlines()[-1]
    assert line.split()[:2] == ["univ_02_exec_group_chat", "FAIL"] and "noise: failures=" in line
    assert "noise (p=0.5 env_events/min=10 seed=0): 1 rollout(s)" in out.err


def test_no_augmentation_data_is_one_warning_line_per_file(tmp_path, capsys):
    """The CLI says it as `orchestra: warning: ...`, once per file however many rollouts read it —
    not Python's two-line `file:line: NoiseWarning: ...` plus the source line."""
    data = json.loads(Path(GROUP_CHAT).read_text())
    del data["augmentation"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(data))
    argv = ["run", "--model", "orchestra/oracle", "--scenarios", str(bare), "--runs", "3", "--noise", "--tool-failure-probability", "0", "--no-progress"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if "augmentation" in line and "without" not in line] == [
        f"orchestra: warning: noise: no augmentation data in {bare}"
    ]
    assert "NoiseWarning" not in err and "configure_noise(" not in err


def test_one_line_warnings_leave_other_warnings_to_python_and_restore_the_machinery():
    shown: list[str] = []
    before = warnings.showwarning
    with one_line_warnings():
        assert isinstance(warnings.showwarning, OneLineWarnings)
        warnings.showwarning.fallback = lambda message, *rest: shown.append(f"python: {message}")
        stream = io.StringIO()
        for _ in range(2):
            warnings.showwarning(NoiseWarning("noise: no augmentation data in x.json"), NoiseWarning, "elsewhere.py", 1, stream)
        warnings.showwarning(UserWarning("not ours"), UserWarning, "/some/library.py", 3, stream)
    assert stream.getvalue() == "orchestra: warning: noise: no augmentation data in x.json\n"
    assert shown == ["python: not ours"]
    assert warnings.showwarning is before
