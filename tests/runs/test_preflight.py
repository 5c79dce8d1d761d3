"""Preflight: a batch that cannot run fails once, before its first rollout, in one line."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from orchestra.cli import main
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.runs.preflight import ModelUse, PreflightError, check_model, models_of, preflight, reply_problem
from orchestra.scenario_files import ScenarioFile
from orchestra.spec import RolloutSpec
from orchestra.teams.loading import read_team, team_path
from orchestra_dev.mock_openai import MockServer

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_dead_endpoint_fails_the_whole_command_fast_in_one_line(scenario_path, capsys):
    """Acceptance: nothing listening -> exit 2, one line naming the endpoint, before any scenario
    loads and without a single model call (it used to print PASS after 20 minutes). How fast: no
    timing here (no timed assertions in unit tests); it is one refused connection, never retried."""
    endpoint = f"http://127.0.0.1:{_free_port()}/v1"
    code = main(
        [
            "run",
            "--scaffold",
            "react",
            "--model",
            "openai/x",
            "--endpoint",
            endpoint,
            "--scenarios",
            str(scenario_path("starter_search_lookup")),
            str(scenario_path("starter_time_deadline")),
        ]
    )
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.strip().splitlines() == [
        f"orchestra: error: preflight: agent model openai/x: endpoint {endpoint}: nothing is listening (connection refused)"
    ]


def test_a_live_endpoint_passes_preflight():
    with MockServer(latency=0.0) as server:
        check_model(ModelUse("openai/x", server.base_url, None), Host.create())
    assert (server.model_listings, server.requests) == (1, 1)  # the listing, then one test request


def test_a_dead_endpoint_fails_before_litellm_is_imported(tmp_path, scenario_path):
    """An explicit endpoint answers for itself: checked before litellm's seconds of import (it used
    to cost 4.4 of 6.2 s on an idle machine to say "connection refused"). In a fresh process, as
    the command line runs it."""
    endpoint = f"http://127.0.0.1:{_free_port()}/v1"
    program = (
        "import sys\n"
        "from orchestra.cli import main\n"
        f"code = main(['run', '--model', 'openai/x', '--endpoint', {endpoint!r}, '--scenarios', {str(scenario_path('starter_search_lookup'))!r}])\n"
        "print(code, 'litellm' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.stdout.split() == ["2", "False"], done.stdout + done.stderr
    assert "nothing is listening (connection refused)" in done.stderr


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("invalid_json", "a one-token test request got a malformed reply (HTTP 200): not JSON ('<html>upstream hiccup</html>')"),
        ("http500", "a one-token test request failed: HTTP 500: internal error"),
        ("no_choices", "a one-token test request got a malformed reply (HTTP 200): no `choices` list (keys: id, model, object)"),
    ],
)
def test_a_broken_endpoint_fails_at_preflight_after_one_request(fault, said, scenario_path, capsys):
    """A server that lists its models but answers chat requests with garbage, an HTTP 500 or JSON
    without `choices` used to pass preflight; then every step was retried 5 times, ~21 minutes of
    silence per rollout. Now one test request (a token) fails the batch before any scenario loads."""
    with MockServer(latency=0.0, fault=fault) as server:
        argv = ["run", "--model", "openai/x", "--endpoint", server.base_url, "--scenarios", str(scenario_path("starter_search_lookup"))]
        code = main(argv)
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.strip().splitlines() == [f"orchestra: error: preflight: agent model openai/x: endpoint {server.base_url}: {said}"]
    assert server.requests == 1


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("", "not JSON (an empty body)"),
        ("[1, 2]", "not a JSON object ('[1, 2]')"),
        ('{"choices": []}', "an empty `choices` list"),
        ('{"choices": "no"}', "no `choices` list (keys: choices)"),
        ('{"choices": [{"index": 0}]}', "its first choice has no `message`"),
        ('{"choices": [{"message": {"role": "assistant", "content": "OK"}}]}', None),
    ],
)
def test_what_makes_a_reply_malformed(body, problem):
    assert reply_problem(body) == problem


def test_a_provider_off_the_openai_wire_is_asked_through_litellm(monkeypatch):
    """`ollama_chat/` and the like speak their own wire: the test request goes through the model
    call itself (no retries), and its failure fails the batch."""
    import orchestra.models

    calls = []

    async def failing(config, request, **kwargs):
        calls.append((config.model, config.max_retries, request.max_tokens))
        raise orchestra.models.ModelError("ollama_chat/x: APIConnectionError: boom", permanent=False)

    monkeypatch.setattr(orchestra.models, "complete", failing)
    with MockServer(latency=0.0) as server, pytest.raises(PreflightError, match="a one-token test request failed: ollama_chat/x: APIConnectionError: boom"):
        check_model(ModelUse("ollama_chat/x", server.base_url, None), Host.create())
    assert calls == [("ollama_chat/x", 0, 1)]


@pytest.mark.parametrize(
    ("model", "why"),
    [
        ("nosuchprovider/foo", "unknown provider or model"),
        ("orchestra/nosuch", "unknown offline model orchestra/nosuch"),
        ("orchestra/scripted:/no/such/script.json", "script file /no/such/script.json not found"),
    ],
)
def test_an_unresolvable_model_fails_at_preflight(model, why, scenario_path, capsys):
    code = main(["run", "--model", model, "--scenarios", str(scenario_path("starter_search_lookup"))])
    err = capsys.readouterr().err
    assert code == 2 and why in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_malformed_script_fails_at_preflight(tmp_path, scenario_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code = main(["run", "--model", f"orchestra/scripted:{bad}", "--scenarios", str(scenario_path("starter_search_lookup"))])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and f"{bad}: not valid JSON" in captured.err


def test_a_missing_api_key_fails_at_preflight(scenario_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code = main(["run", "--model", "openai/gpt-4o-mini", "--scenarios", str(scenario_path("starter_search_lookup"))])
    err = capsys.readouterr().err
    assert code == 2 and "no API key (OPENAI_API_KEY not set" in err


def test_a_bad_scenario_file_fails_at_preflight_before_any_rollout(tmp_path, scenario_path, capsys):
    (tmp_path / "z_empty.json").write_text("")
    code = main(["run", "--model", "orchestra/oracle", "--scenarios", str(scenario_path("starter_search_lookup")), str(tmp_path / "z_empty.json")])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and "z_empty.json: empty file" in captured.err


def test_every_bad_scenario_file_is_reported_at_once(tmp_path, scenario_path, capsys):
    """A directory with three bad files: one line each, then the count, in one run (not one per run)."""
    good = scenario_path("starter_search_lookup").read_text()
    (tmp_path / "a_good.json").write_text(good)
    (tmp_path / "b_truncated.json").write_text(good[:200])
    (tmp_path / "c_empty.json").write_text("")
    (tmp_path / "d_no_apps.json").write_text(json.dumps({**json.loads(good), "apps": []}))
    code = main(["run", "--team", str(REPO / "orchestra" / "teams" / "shipped" / "oracle.yaml"), "--scenarios", str(tmp_path), "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2 and captured.out == ""
    assert len(lines) == 4, lines
    assert "b_truncated.json: malformed JSON" in lines[0]
    assert "c_empty.json: empty file" in lines[1]
    assert "d_no_apps.json: no apps" in lines[2]
    assert lines[3] == "preflight: 3 bad scenario files"
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_every_model_of_a_team_is_checked():
    team = read_team(team_path("heterogeneous")).config
    spec = RolloutSpec(scenario="x.json", team=team)
    assert len({u.model for u in models_of(spec)}) >= 2
    broken = team.with_overrides(model=ModelConfig(model="orchestra/scripted:/nowhere.yaml"))
    with pytest.raises(PreflightError, match="/nowhere.yaml not found"):
        preflight([(RolloutSpec(scenario="x.json", team=broken), ScenarioFile(REPO / "scenarios" / "x.json", text=_scenario_text()))], Host.create())


def _scenario_text() -> str:
    return next((REPO / "scenarios").glob("*/validation/starter_search_lookup.json")).read_text()


def test_concurrency_must_be_positive(capsys, scenario_path):
    for bad in ("0", "-3"):
        with pytest.raises(SystemExit):
            main(["run", "--model", "orchestra/oracle", "--concurrency", bad, "--scenarios", str(scenario_path("starter_search_lookup"))])
        assert "must be 1 or more" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["replay", "judge-check"])
def test_a_dead_judge_endpoint_fails_replay_and_judge_check_at_preflight_naming_it(command, scenario_path, capsys):
    endpoint = f"http://127.0.0.1:{_free_port()}/v1"
    code = main([command, str(scenario_path("starter_search_lookup")), "--judge", "llm", "--judge-model", "openai/judge-x", "--judge-endpoint", endpoint])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.strip().splitlines() == [
        f"orchestra: error: preflight: judge model openai/judge-x: endpoint {endpoint}: nothing is listening (connection refused)"
    ]


def test_a_dead_judge_endpoint_in_run_fails_at_preflight_naming_it(scenario_path, capsys):
    endpoint = f"http://127.0.0.1:{_free_port()}/v1"
    argv = ["run", "--model", "orchestra/oracle", "--scenarios", str(scenario_path("starter_search_lookup"))]
    code = main([*argv, "--judge", "llm", "--judge-model", "openai/judge-x", "--judge-endpoint", endpoint])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().splitlines() == [
        f"orchestra: error: preflight: judge model openai/judge-x: endpoint {endpoint}: nothing is listening (connection refused)"
    ]


def test_a_judge_call_that_fails_names_the_judge_model_and_endpoint():
    """Past preflight (the server died mid-run), litellm says only "Connection error.": the error names both."""
    from orchestra.judging.engine import JudgeCallError, JudgeEngine

    endpoint = f"http://127.0.0.1:{_free_port()}/v1"
    engine = JudgeEngine("openai/judge-x", endpoint=endpoint, api_key="none")
    with pytest.raises(JudgeCallError, match=rf"^judge model openai/judge-x at {endpoint}: \w+Error: .*Connection error"):
        engine([{"role": "user", "content": "is this right?"}])


def test_two_files_with_one_scenario_id_are_refused_naming_both(tmp_path, scenario_path, capsys):
    """Both used to run: one `rollouts/NAME.json` overwrote the other and the id counted twice in
    pass@1. Refused at preflight — and with `--no-preflight`, when the run folder opens."""
    text = scenario_path("starter_search_lookup").read_text()
    a, b = tmp_path / "a" / "lookup.json", tmp_path / "b" / "copy.json"
    for path in (a, b):
        path.parent.mkdir()
        path.write_text(text)
    argv = ["run", "--team", "oracle", "--scenarios", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "out")]
    said = (
        f"scenario id 'starter_search_lookup' is in 2 files of the batch: {a} and {b}; their rollouts would overwrite each other "
        "(rollouts/starter_search_lookup.json) and count twice in pass@1"
    )
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(f"orchestra: error: preflight: {said}")
    assert main([*argv, "--no-preflight"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(f"orchestra: error: {said}")
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_a_scenario_without_oracle_events_fails_at_preflight(tmp_path, scenario_path, capsys):
    """ARE's loader finds it only after loading and initializing the scenario, 18-21 s a rollout."""
    data = json.loads(scenario_path("starter_search_lookup").read_text())
    data["events"] = [e for e in data["events"] if e.get("class_name") != "OracleEvent"]
    bare = tmp_path / "no_oracle.json"
    bare.write_text(json.dumps(data))
    code = main(["run", "--model", "orchestra/oracle", "--scenarios", str(bare)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.strip() == f"orchestra: error: preflight: {bare}: the scenario has no oracle events: there is nothing to judge against"
