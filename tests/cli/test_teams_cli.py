"""`orchestra teams check|list` and `orchestra run --team` as a user runs them."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml

from orchestra.cli import main
from orchestra.teams.catalog import shipped_teams

SECRET = "sk-team-test-0123456789-never-in-outputs"


@pytest.fixture
def solo(tmp_path: Path) -> Path:
    """A team without app-agents: its main agent on the oracle, a secret, and its own session settings."""
    path = tmp_path / "solo.yaml"
    path.write_text(
        textwrap.dedent("""\
        name: solo
        description: one agent, by reference to a secret
        main:
          scaffold: react
          model:
            model: orchestra/oracle
            api_key: ${TEAM_CLI_SECRET}
        session:
          reward_mode: dense
          clock: {decode_rate_tps: 25}
        """)
    )
    return path


def test_check_passes_every_shipped_team_and_warns_about_unset_secrets(capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    files = [str(p) for p in shipped_teams()]
    assert len(files) == 7
    assert main(["teams", "check", *files]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 7 and all(line.startswith("OK    ") for line in lines)
    oracle = next(line for line in lines if "oracle.yaml" in line)
    assert "main: react orchestra/oracle" in oracle and "app-agents: all apps -> as main" in oracle
    het = next(line for line in lines if "heterogeneous.yaml" in line)
    assert "main: react openai/gpt-4o" in het and "tool_calling openai/local @ http://127.0.0.1:8000/v1" in het
    assert "orchestra/teams/shipped/react.yaml:8: main.model.api_key: environment variable OPENAI_API_KEY is not set" in err
    assert "oracle.yaml" not in err  # the offline team needs no secret
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    assert main(["teams", "check", "react"]) == 0  # a shipped team by name
    assert "warning" not in capsys.readouterr().err


def test_check_reports_each_bad_file_and_exits_2(capsys, tmp_path, solo):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\napp_agents:\n  apps: [Calendar]\n  defaults: {scaffold: tool_calling}\nmain:\n  model: m\n  scaffold: reactt\n")
    assert main(["teams", "check", str(solo), str(bad)]) == 2
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"OK    {solo}: team solo | main: react orchestra/oracle | no app-agents",
        f"FAIL  {bad}:7: main.scaffold: unknown scaffold 'reactt' (registered: code, parallel_tools, react, tool_calling)",
    ]
    bad.write_text("name: bad\napp_agents:\n  apps: [Calendarr]\nmain:\n  model: m\n  scaffold: reactt\n")
    assert main(["teams", "check", str(bad)]) == 2
    lines = capsys.readouterr().out.splitlines()  # every problem, in file order
    assert lines[0].startswith(f"FAIL  {bad}:3:10: app_agents.apps[0]: unknown app 'Calendarr'; did you mean 'Calendar'?")
    assert lines[1].startswith(f"      {bad}:6: main.scaffold: unknown scaffold 'reactt'") and len(lines) == 2
    assert "Traceback" not in err and "2 team file(s): 1 ok, 1 invalid" in err


def test_check_shows_the_remote_a2a_agents(capsys, tmp_path):
    """`a2a URL` for each agent a remote A2A agent plays (with its proxy's model when it has one), never a scaffold that does not run."""
    main_a2a = tmp_path / "main.yaml"
    main_a2a.write_text("name: m\nmain: {a2a: 'http://h:1/'}\n")
    override = tmp_path / "override.yaml"
    override.write_text("name: o\nmain: {model: orchestra/oracle}\napp_agents:\n  apps: [Calendar]\n  overrides:\n    Calendar: {a2a: 'http://h:2'}\n")
    defaults = tmp_path / "defaults.yaml"
    defaults.write_text("name: d\nmain: {model: orchestra/oracle}\napp_agents:\n  apps: [Calendar]\n  defaults: {a2a: 'http://h:3', model: openai/gpt-4o}\n")
    assert main(["teams", "check", str(main_a2a), str(override), str(defaults)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("team m | main: a2a http://h:1 | no app-agents"), lines
    assert lines[1].endswith("app-agents: Calendar -> as main | overrides: Calendar -> a2a http://h:2 (model proxy: orchestra/oracle)"), lines
    assert lines[2].endswith("app-agents: Calendar -> a2a http://h:3 (model proxy: openai/gpt-4o)"), lines


def test_check_says_when_an_app_list_is_empty(capsys, tmp_path):
    empty = tmp_path / "empty_apps.yaml"
    empty.write_text("name: e\nmain: {model: orchestra/oracle}\napp_agents: {apps: []}\n")
    assert main(["teams", "check", str(empty)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"OK    {empty}: team e | main: tool_calling orchestra/oracle | app-agents: none (apps: [] replaces no app) -> as main"
    ]


def test_list_names_the_shipped_teams(capsys):
    assert main(["teams", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("oracle", "react", "tool_calling", "parallel_tools", "all_app_agents", "heterogeneous"):
        assert any(line.startswith(f"{name} ") for line in out.splitlines()), name


def test_run_team_never_writes_the_secret_and_keeps_the_teams_session(capsys, tmp_path, solo, scenario_path, monkeypatch):
    monkeypatch.setenv("TEAM_CLI_SECRET", SECRET)
    out_dir = tmp_path / "out"
    scenario = str(scenario_path("starter_time_deadline"))
    trace = tmp_path / "trace.jsonl"
    assert (
        main(
            [
                "run",
                "--team",
                str(solo),
                "--scenarios",
                scenario,
                "--judge",
                "strict",
                "--json",
                "--out",
                str(out_dir),
                "--trace",
                f"jsonl:{trace}",
                "--trace-content",
            ]
        )
        == 0
    )
    stdout, stderr = capsys.readouterr()
    rec = json.loads(stdout)
    assert rec["policy"] == "team:solo" and rec["success"] and rec["judge"] == "strict"
    assert rec["reward_mode"] == "dense"  # from the team file: --reward-mode was not given
    files = sorted(str(p.relative_to(out_dir)) for p in out_dir.rglob("*") if p.is_file())
    assert files == ["manifest.json", "results.jsonl", "rollouts/starter_time_deadline.json", "summary.json", "team.yaml"]
    assert trace.read_text().count("\n") > 3  # spans with content were written
    for text in [stdout, stderr, trace.read_text()] + [p.read_text() for p in out_dir.rglob("*") if p.is_file()]:
        assert SECRET not in text
    used = yaml.safe_load((out_dir / "team.yaml").read_text())
    assert used["main"]["model"]["api_key"] == "${TEAM_CLI_SECRET}"
    assert used["session"]["clock"]["decode_rate_tps"] == 25.0 and used["session"]["judge"]["mode"] == "strict"
    assert used["session"]["reward_mode"] == "dense"

    # what the user gives does override the file, and the team.yaml written runs again
    again = tmp_path / "again"
    assert (
        main(
            [
                "run",
                "--team",
                str(out_dir / "team.yaml"),
                "--scenarios",
                scenario,
                "--reward-mode",
                "binary",
                "--decode-rate",
                "40",
                "--json",
                "--out",
                str(again),
            ]
        )
        == 0
    )
    rec = json.loads(capsys.readouterr().out)
    assert rec["reward_mode"] == "binary" and rec["judge"] == "strict"
    used = yaml.safe_load((again / "team.yaml").read_text())
    assert used["session"]["clock"]["decode_rate_tps"] == 40.0 and used["session"]["reward_mode"] == "binary"


def test_run_team_refuses_to_start_without_its_secret(capsys, solo, scenario_path, monkeypatch):
    monkeypatch.delenv("TEAM_CLI_SECRET", raising=False)
    assert main(["run", "--team", str(solo), "--scenarios", str(scenario_path("starter_time_deadline"))]) == 2
    err = capsys.readouterr().err
    assert f"{solo}:7: main.model.api_key: environment variable TEAM_CLI_SECRET is not set" in err
    assert "Traceback" not in err


def test_run_team_model_override_runs_an_api_team_offline(capsys, tmp_path, scenario_path, monkeypatch):
    monkeypatch.delenv("TEAM_CLI_UNSET", raising=False)
    api = tmp_path / "api.yaml"
    api.write_text("name: api\nmain:\n  scaffold: react\n  model: {model: openai/gpt-4o, api_key: '${TEAM_CLI_UNSET}'}\n")
    args = ["run", "--team", str(api), "--scenarios", str(scenario_path("starter_search_lookup")), "--json"]
    assert main([*args, "--model", "orchestra/oracle", "--scaffold", "tool_calling"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["success"] and rec["policy"] == "team:api"
    assert (rec["agents"][0]["model"], rec["agents"][0]["scaffold"]) == ("orchestra/oracle", "tool_calling")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-steps", "5"], "--max-steps: not with --team"),
        (["--constrained"], "--constrained: not with --team"),
        (["--endpoint", "http://127.0.0.1:1/v1"], "--endpoint / --api-key with --team need --model"),
        (["--scaffold", "nope", "--model", "orchestra/oracle"], "unknown scaffold 'nope'"),
    ],
)
def test_run_team_rejects_options_that_would_be_ignored(capsys, solo, args, message):
    assert main(["run", "--team", str(solo), "--scenarios", "bundled", *args]) == 2
    assert message in capsys.readouterr().err


def test_run_needs_a_team_or_a_model(capsys):
    assert main(["run", "--scenarios", "bundled"]) == 2
    assert "give --team FILE, or --model" in capsys.readouterr().err


def test_run_with_an_invalid_team_file_exits_2_with_the_located_error(capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nmain:\n  model: orchestra/oracle\napp_agents:\n  proportion: 2\n")
    assert main(["run", "--team", str(bad), "--scenarios", "bundled"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:5: app_agents.proportion: must be between 0 and 1" in err and "Traceback" not in err


MAIN_SCRIPT = """\
- text: "Thought: ask the calendar's agent.\\nAction:\\n{\\"action\\": \\"Calendar__expert_agent\\", \\"action_input\\": {\\"task\\": \\"List my events on 2024-10-15.\\"}}<end_action>"
- text: "Thought: answer.\\nAction:\\n{\\"action\\": \\"AgentUserInterface__send_message_to_user\\", \\"action_input\\": {\\"content\\": \\"Done.\\"}}<end_action>"
"""
CALENDAR_SCRIPT = """\
- tool_calls: [{name: Calendar__get_calendar_events_from_to, arguments: {start_datetime: "2024-10-15 00:00:00", end_datetime: "2024-10-16 00:00:00"}}]
- tool_calls: [{name: final_answer, arguments: {answer: "You have two events."}}]
"""


def test_run_team_with_an_app_agent_end_to_end(capsys, tmp_path, scenario_path):
    """A react main agent delegating to a tool_calling Calendar agent, each on its own scripted model."""
    (tmp_path / "main.yaml").write_text(MAIN_SCRIPT)
    (tmp_path / "calendar.yaml").write_text(CALENDAR_SCRIPT)
    team = tmp_path / "team.yaml"
    team.write_text(
        textwrap.dedent(f"""\
        name: scripted
        main:
          scaffold: react
          model: orchestra/scripted:{tmp_path / "main.yaml"}
        app_agents:
          apps: [Calendar]
          overrides:
            Calendar:
              scaffold: tool_calling
              model: orchestra/scripted:{tmp_path / "calendar.yaml"}
        """)
    )
    out_dir = tmp_path / "out"
    scenario = str(scenario_path("starter_execution_calendar"))
    assert main(["run", "--team", str(team), "--scenarios", scenario, "--json", "--out", str(out_dir)]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["status"] in ("PASS", "FAIL") and rec["policy"] == "team:scripted"
    agents = {a["name"]: a for a in rec["agents"]}
    assert (agents["main"]["scaffold"], agents["Calendar"]["scaffold"], agents["Calendar"]["app"]) == ("react", "tool_calling", "Calendar")
    assert agents["Calendar"]["model"].endswith("calendar.yaml") and agents["Calendar"]["answer"] == "You have two events."
    record = json.loads((out_dir / "rollouts" / "starter_execution_calendar.json").read_text())  # the whole record, its spec included
    assert record["spec"]["team"]["name"] == "scripted"
    [delegation] = record["result"]["delegations"]
    assert (delegation["tool"], delegation["task"], delegation["answer"]) == ("Calendar__expert_agent", "List my events on 2024-10-15.", "You have two events.")
    assert yaml.safe_load((out_dir / "team.yaml").read_text())["app_agents"]["apps"] == ["Calendar"]


def test_the_offline_oracle_team_runs_first_time(capsys, tmp_path, scenario_path):
    """`orchestra run --team oracle`: no key, no server; the main agent delegates, the app-agents act."""
    scenario = str(scenario_path("starter_execution_calendar"))
    assert main(["run", "--team", "oracle", "--scenarios", scenario, "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["success"] and rec["reward"] == 1.0 and rec["policy"] == "team:oracle"
    apps = {a["app"] for a in rec["agents"] if a["role"] == "sub"}
    assert "Calendar" in apps and rec["delegations"] and all(d["ok"] for d in rec["delegations"])


@pytest.mark.parametrize("scaffold", ["react", "tool_calling", "parallel_tools"])
def test_one_option_runs_the_all_app_agents_team_with_any_scaffold(capsys, scenario_path, scaffold, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the oracle replaces every model: no key needed
    scenario = str(scenario_path("starter_execution_group_chat"))
    assert main(["run", "--team", "all_app_agents", "--model", "orchestra/oracle", "--scaffold", scaffold, "--scenarios", scenario, "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["success"] and rec["delegations"]
    assert {(a["scaffold"], a["model"]) for a in rec["agents"]} == {(scaffold, "orchestra/oracle")}  # both roles


def test_the_heterogeneous_team_runs_offline_with_its_models_swapped_for_the_oracle(capsys, scenario_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    scenario = str(scenario_path("starter_execution_calendar"))
    assert main(["run", "--team", "heterogeneous", "--model", "orchestra/oracle", "--scenarios", scenario, "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["success"] and rec["delegations"]
    roles = {(a["role"], a["scaffold"]) for a in rec["agents"]}
    assert roles == {("main", "react"), ("sub", "tool_calling")}  # the file's scaffolds, constrained app-agents included
