"""Team files: every invalid file gives one located error; shipped teams load; secrets stay references."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.teams.catalog import shipped_root, shipped_teams, team_path
from orchestra.teams.config import TeamConfig
from orchestra.teams.loading import TeamError, load_team, read_team, redacted

SHIPPED = ("react", "tool_calling", "parallel_tools", "code", "all_app_agents", "heterogeneous", "oracle")


@pytest.fixture(scope="module")
def host():
    return Host.create()


@pytest.fixture
def write(tmp_path: Path):
    def _write(text: str, name: str = "team.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    return _write


def hosted(plugins):
    """The scaffolds of the host the command line builds for a team (its plugins registered)."""
    return Host.create(plugins).scaffolds


def problems(path: Path, host: Host) -> list[str]:
    with pytest.raises(TeamError) as info:
        read_team(path, scaffolds=lambda plugins: (host if not plugins else Host.create(plugins)).scaffolds)
    assert isinstance(info.value, OrchestraError)  # the CLI turns it into exit 2, no traceback
    assert str(info.value) == "\n".join(info.value.problems)
    return [p.removeprefix(f"{path}") for p in info.value.problems]


GOOD = """
    name: good
    main:
      scaffold: react
      model: orchestra/oracle
    app_agents:
      apps: [Calendar, Emails]
      defaults: {scaffold: tool_calling}
      overrides:
        Calendar:
          scaffold: parallel_tools
    """


def test_a_valid_file_loads_with_its_fallbacks(write, host):
    team = load_team(write(GOOD), scaffolds=lambda plugins: host.scaffolds)
    assert team.name == "good" and team.main.scaffold == "react" and team.main.model.model == "orchestra/oracle"
    assert team.app_agent("Calendar").scaffold == "parallel_tools"
    assert team.app_agent("Emails").scaffold == "tool_calling"
    assert team.app_agent("Emails").model.model == "orchestra/oracle"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("name: x\nmain: [a\n", ":3:1: YAML syntax error: while parsing a flow sequence (line 2, column 7): expected ',' or ']'", id="yaml-syntax"),
        pytest.param("name: x\nmain:\n  model: m\n\tscaffold: react\n", ":4:1: YAML syntax error:", id="yaml-tab"),
        pytest.param("", ": the file is empty; a team needs at least `name:` and `main:`", id="empty"),
        pytest.param("# only a comment\n", ": the file is empty", id="only-comment"),
        pytest.param("- name: x\n- main: y\n", ":1: the top level must be a mapping (name:, main:, ...), got a list", id="top-level-list"),
        pytest.param("just text\n", ":1: the top level must be a mapping (name:, main:, ...), got a str", id="top-level-scalar"),
        pytest.param("name: x\nmain: {model: m}\nname: y\n", ":3: name: duplicate key (first given on line 1)", id="duplicate-key"),
        pytest.param(
            "name: x\nmain:\n\tmodel: m\n",
            ":3:1: YAML syntax error: while scanning for the next token: found character '\\t' that cannot start any token "
            "(YAML indents with spaces, never tabs)",
            id="yaml-tab-hint",
        ),
        pytest.param("name: x\nmain:\n  model:\n", ":3: main.model: missing: every agent needs a model", id="model-null"),
        pytest.param(
            "name: x\nmain: orchestra/oracle\n",
            ":2: main: expected a mapping (keys: scaffold, model, max_steps, scaffold_options, a2a), got 'orchestra/oracle'; e.g. main: {model: orchestra/oracle}",
            id="main-as-a-model-string",
        ),
        pytest.param(
            "name: x\nmain: {model: m}\napp_agents:\n  apps: all\n  defaults: tool_calling\n",
            ":5: app_agents.defaults: expected a mapping (keys: scaffold, model, max_steps, scaffold_options, a2a, trainable), got 'tool_calling'",
            id="defaults-not-a-mapping",
        ),
        pytest.param(
            "name: x\nmain: {model: m}\napp_agents:\n  apps: all\n  overrides: [Calendar]\n",
            ":5: app_agents.overrides: expected a mapping, got ['Calendar']",
            id="overrides-a-list",
        ),
        pytest.param(
            "name: x\nmain: {model: m}\napp_agents:\n  apps: [1, Calendar]\n",
            ":4:10: app_agents.apps[0]: Input should be a valid string, got 1",
            id="apps-list-with-a-number",
        ),
        pytest.param(
            "name: x\nmain:\n  model: m\n  scafold: react\n",
            ":4: main.scafold: unknown key 'scafold'; did you mean 'scaffold'? (valid keys here: scaffold, model, max_steps, scaffold_options, a2a)",
            id="typo-main",
        ),
        pytest.param(
            "name: x\nmain: {model: m}\napp_agents:\n  apps: all\n  overrides:\n    Calendar:\n      modle: openai/x\n",
            ":7: app_agents.overrides.Calendar.modle: unknown key 'modle'; did you mean 'model'?",
            id="typo-override",
        ),
        pytest.param("name: x\nmian: {model: m}\n", ":2: mian: unknown key 'mian'; did you mean 'main'?", id="typo-top"),
        pytest.param(
            "name: x\nmain:\n  model: m\n  api_key: ${K}\n",
            ":4: main.api_key: unknown key 'api_key'; 'api_key' is a model setting: write it under `model:`",
            id="model-setting-misplaced",
        ),
        pytest.param("name: x\nmain:\n  scaffold: react\n", ":2: main.model: missing: every agent needs a model (a litellm model string", id="missing-model"),
        pytest.param(
            "name: x\nmain:\n  model: {endpoint: http://h/v1}\n", ":3: main.model.model: missing: every agent needs a model", id="missing-model-in-mapping"
        ),
        pytest.param("main: {model: m}\n", ":1: name: missing (required)", id="missing-name"),
        pytest.param(
            "name: x\nmain: {model: m}\napp_agents:\n  proportion: 1.5\n",
            ":4: app_agents.proportion: must be between 0 and 1 (the share of candidate apps served by app-agents), got 1.5",
            id="proportion-above-1",
        ),
        pytest.param(
            "name: x\nmain: {model: m}\napp_agents:\n  proportion: -0.1\n", ":4: app_agents.proportion: must be between 0 and 1", id="proportion-negative"
        ),
        pytest.param(
            "name: x\nmain: {model: m}\napp_agents:\n  apps: all\n  proportion: 0.5\n",
            ":3: app_agents: give either 'apps' (names or 'all') or 'proportion', not both",
            id="both-apps-and-proportion",
        ),
        pytest.param(
            "name: x\nmain: {model: m}\napp_agents:\n  defaults: {scaffold: react}\n",
            ":3: app_agents: say which apps become app-agents: 'apps' (names or 'all') or 'proportion'",
            id="neither-apps-nor-proportion",
        ),
        pytest.param(
            "name: x\nmain: {model: m}\napp_agents: {apps: al}\n", ":3: app_agents.apps: expected 'all' or a list of app names, got 'al'", id="apps-not-all"
        ),
        pytest.param(
            "name: x\nmain: {model: m}\napp_agents:\n  apps: [Calendar, SystemApp]\n",
            ":4:20: app_agents.apps[1]: SystemApp cannot be an app-agent (ARE never replaces InternalContacts, AgentUserInterface, SystemApp)",
            id="never-app-agent",
        ),
        pytest.param(
            "name: x\nmain: {model: m}\napp_agents:\n  apps:\n    - Calendar\n    - Emails\n    - Calendar\n",
            ":4: app_agents.apps: Calendar listed more than once",
            id="app-listed-twice",
        ),
        pytest.param("name: x\nmain: {model: m, max_steps: 0}\n", ":2: main.max_steps: Input should be greater than 0, got 0", id="max-steps-zero"),
        pytest.param(
            "name: x\nmain: {a2aa: 'http://h:1'}\n",  # only the misspelling: an A2A agent needs no model, so no `main.model: missing`
            ":2: main.a2aa: unknown key 'a2aa'; did you mean 'a2a'?",
            id="typo-a2a",
        ),
        pytest.param(
            "name: x\nmain:\n  a2a: 'http://h:1'\n  scaffold: react\n",
            ":4: main.scaffold: not allowed beside a2a (a remote A2A agent runs its own loop, so no scaffold of orchestra's applies",
            id="scaffold-beside-a2a",
        ),
        pytest.param(
            "name: x\nmain: {model: m}\nsession:\n  clock: {decode_rate: 20}\n",
            ":4: session.clock.decode_rate: unknown key 'decode_rate'; did you mean 'decode_rate_tps'?",
            id="typo-session-clock",
        ),
        pytest.param(
            "name: x\nmain:\n  model: {model: m, api_key: '${OPENAI_API_KEY'}\n",
            ":3: main.model.api_key: malformed environment reference in '${OPENAI_API_KEY'",
            id="malformed-secret",
        ),
        pytest.param(
            "name: x\nmain:\n  model: {model: m, api_key: sk-abc123}\n",
            ":3: main.model.api_key: an API key written into a team file; secrets come only from the environment: write api_key: ${NAME}",
            id="literal-secret",
        ),
    ],
)
def test_each_invalid_file_gives_one_located_error(write, host, text, expected):
    found = problems(write(text), host)
    assert len(found) == 1, found
    assert found[0].startswith(expected), found[0]


def test_unknown_scaffolds_are_reported_for_main_defaults_and_overrides(write, host):
    found = problems(
        write("""
        name: x
        main:
          scaffold: reactt
          model: m
        app_agents:
          apps: all
          defaults:
            scaffold: tool_caling
          overrides:
            CalendarApp:
              scaffold: reactt
        """),
        host,
    )
    registered = "(registered: code, parallel_tools, react, tool_calling)"
    assert found == [
        f":3: main.scaffold: unknown scaffold 'reactt' {registered}",
        f":8: app_agents.defaults.scaffold: unknown scaffold 'tool_caling' {registered}",
        f":11: app_agents.overrides.CalendarApp.scaffold: unknown scaffold 'reactt' {registered}",
    ]


def test_a_remote_a2a_agent_takes_no_scaffold_or_scaffold_options(write, host):
    """Refused wherever the agent is remote — its own `a2a:`, or `app_agents.defaults.a2a` inherited;
    `max_steps` is kept (it bounds the steps the record counts)."""
    found = problems(
        write("""
        name: x
        main: {model: orchestra/oracle}
        app_agents:
          apps: [Calendar, Emails]
          defaults: {a2a: 'http://h:1', max_steps: 5}
          overrides:
            Calendar:
              scaffold_options: {constrained: true}
            Emails:
              a2a: 'http://h:2'
              scaffold: react
        """),
        host,
    )
    assert found == [
        ":8: app_agents.overrides.Calendar.scaffold_options: not allowed beside a2a (app_agents.defaults.a2a plays this app-agent: a remote A2A "
        "agent runs its own loop, so no scaffold of orchestra's applies; its `model` is the upstream of its model proxy)",
        ":11: app_agents.overrides.Emails.scaffold: not allowed beside a2a (a remote A2A agent runs its own loop, so no scaffold of orchestra's "
        "applies; its `model` is the upstream of its model proxy)",
    ]
    # a scaffold for the apps orchestra plays, beside a remote one, is fine
    team = load_team(
        write(
            "name: x\nmain: {model: m, scaffold: react}\napp_agents:\n  apps: all\n  defaults: {scaffold: code}\n  overrides:\n    Calendar: {a2a: 'http://h:1', max_steps: 3}\n"
        )
    )
    assert team.app_agent("Calendar").max_steps == 3 and team.app_agent("Emails").scaffold == "code"


def test_unknown_app_names_are_checked_against_the_apps_are_knows(write, host):
    found = problems(
        write("""
        name: x
        main: {model: m}
        app_agents:
          apps: [Calendar, Emailz]
          overrides:
            Calendar: {scaffold: react}
            Calender: {scaffold: react}
            Chats: {scaffold: react}
            SystemApp: {scaffold: react}
        """),
        host,
    )
    assert found[0].startswith(":4:20: app_agents.apps[1]: unknown app 'Emailz'; did you mean 'Emails'? (apps ARE knows: ")
    # ARE's class names and the instance names Gaia2 scenarios use are both known
    for name in ("CalendarApp", "Calendar", "EmailClientV2", "Emails", "Chats", "Messages", "RentAFlat", "Cabs"):
        assert f" {name}," in found[0] or f" {name})" in found[0]
    assert found[1].startswith(":7: app_agents.overrides.Calender: unknown app 'Calender'; did you mean 'Calendar'?")
    assert found[2] == ":8: app_agents.overrides.Chats: override for 'Chats', which is not in app_agents.apps (it would never apply)"
    assert found[3].startswith(":9: app_agents.overrides.SystemApp: SystemApp cannot be an app-agent")
    assert len(found) == 4


def test_known_app_names_come_from_are():
    from orchestra.are.app_names import known_app_names

    names = known_app_names()
    assert {"CalendarApp", "Calendar", "EmailClientV2", "Emails", "MessagingAppV2", "Chats", "Files", "VirtualFileSystem"} <= names
    assert "App" not in names  # ARE's abstract base class is not an app a scenario has


def test_a_plugin_that_cannot_be_imported(write, host):
    found = problems(write("name: x\nmain: {model: m}\nplugins:\n  - orchestra.plugins.clock\n  - no_such_package.plugin\n"), host)
    assert found == [":5:5: plugins[1]: cannot import plugin 'no_such_package.plugin': ModuleNotFoundError: No module named 'no_such_package'"]


def test_a_plugin_that_raises_on_import(write, host, tmp_path, monkeypatch):
    (tmp_path / "broken_team_plugin.py").write_text("raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = problems(write("name: x\nmain: {model: m}\nplugins: [broken_team_plugin]\n"), host)
    assert found == [":3:11: plugins[0]: cannot import plugin 'broken_team_plugin': RuntimeError: boom"]


PLUGIN = """
from orchestra.hookspecs import hookimpl


@hookimpl
def register_scaffolds(register):
    from orchestra.scaffolds.react import ReactScaffold

    register("team_test_scaffold", ReactScaffold)
"""


def test_a_scaffold_registered_by_the_teams_own_plugin_is_known(write, tmp_path, monkeypatch):
    (tmp_path / "team_scaffold_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    text = "name: x\nmain: {model: m, scaffold: team_test_scaffold}\nplugins: [team_scaffold_plugin]\n"
    team = read_team(write(text), scaffolds=hosted)  # the host the command line builds: Host.create(the team's plugins)
    assert team.config.main.scaffold == "team_test_scaffold"
    assert [getattr(p, "__name__", None) for p in team.plugins] == ["team_scaffold_plugin"]
    with pytest.raises(TeamError, match="unknown scaffold 'team_test_scaffold'"):
        read_team(write(text.replace("plugins: [team_scaffold_plugin]\n", "")), scaffolds=hosted)


def test_a_folder_is_not_mistaken_for_a_missing_file(tmp_path):
    (tmp_path / "team.yaml").mkdir()
    with pytest.raises(TeamError) as info:
        read_team(tmp_path / "team.yaml")
    assert info.value.problems == [f"{tmp_path / 'team.yaml'}: is a folder, not a team file (give the .yaml file itself)"]


def test_a_file_that_is_not_utf8_names_the_line_and_column(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: x\ndescription: caf\u00e9\nmain: {model: m}\n".encode("latin-1"))
    with pytest.raises(TeamError) as info:
        read_team(path)
    assert info.value.problems == [f"{path}:2:17: the file is not UTF-8 (byte 0xe9 cannot be decoded); save it as UTF-8"]


def test_a_plugin_the_host_rejects_gets_a_one_line_error(write, tmp_path, monkeypatch):
    (tmp_path / "bad_signature_plugin.py").write_text(
        "from orchestra.hookspecs import hookimpl\n\n\n@hookimpl\ndef delegate(agent, call, extra):\n    return None\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TeamError) as info:
        read_team(write("name: x\nmain: {model: m}\nplugins: [bad_signature_plugin]\n"), scaffolds=hosted)
    [problem] = info.value.problems
    assert "\n" not in problem
    assert problem.endswith(
        ":3: plugins: the host could not be built with this team's plugins: plugin 'bad_signature_plugin' is not a valid orchestra "
        "plugin: Plugin 'bad_signature_plugin' for hook 'delegate'; hookimpl definition: delegate(agent, call, extra); "
        "Argument(s) {'extra'} are declared in the hookimpl but can not be found in the hookspec"
    ), problem


def test_a_missing_file_names_the_shipped_teams(tmp_path):
    with pytest.raises(TeamError, match=r"no_such\.yaml: no such team file \(shipped teams, usable by name: all_app_agents, code, heterogeneous, oracle"):
        read_team(tmp_path / "no_such.yaml")


def test_secrets_stay_references_and_unset_ones_are_listed(write, host, monkeypatch):
    monkeypatch.setenv("TEAM_TEST_KEY", "sk-value-never-shown")
    monkeypatch.delenv("TEAM_TEST_UNSET", raising=False)
    team = read_team(
        write("""
        name: x
        main:
          model:
            model: openai/gpt-4o
            api_key: ${TEAM_TEST_KEY}
        app_agents:
          apps: all
          defaults:
            model:
              model: openai/local
              endpoint: http://${TEAM_TEST_UNSET}:8000/v1
        """),
        scaffolds=lambda plugins: host.scaffolds,
    )
    assert team.config.main.model.api_key == "${TEAM_TEST_KEY}"
    assert "sk-value-never-shown" not in team.config.model_dump_json() + redacted(team.config)
    assert [(s.var, s.path, s.line, s.is_set) for s in team.secrets] == [
        ("TEAM_TEST_KEY", "main.model.api_key", 5, True),
        ("TEAM_TEST_UNSET", "app_agents.defaults.model.endpoint", 11, False),
    ]
    with pytest.raises(TeamError) as info:
        team.require_secrets()
    assert str(info.value) == f"{team.path}:11: app_agents.defaults.model.endpoint: environment variable TEAM_TEST_UNSET is not set"
    # a team whose models are all replaced (`run --team F --model orchestra/oracle`) needs none of them
    team.require_secrets(team.config.with_overrides(model="orchestra/oracle"))


def test_redacted_yaml_loads_back_as_the_same_team(write, host, tmp_path):
    team = load_team(write(GOOD), scaffolds=lambda plugins: host.scaffolds)
    masked = team.with_overrides(model=team.main.model.model_copy(update={"api_key": "sk-literal"}))
    text = redacted(masked)
    assert "sk-literal" not in text and "api_key: '***'" in text
    again = load_team(write(redacted(team), "again.yaml"), scaffolds=lambda plugins: host.scaffolds)
    assert again == team


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_team_loads(name, host):
    path = team_path(name)
    assert path == shipped_root() / f"{name}.yaml"
    team = load_team(path, scaffolds=lambda plugins: host.scaffolds)
    assert team.name == name and team.description
    assert team.app_agents is not None


def test_the_shipped_set_is_exactly_the_documented_one():
    assert sorted(p.stem for p in shipped_teams()) == sorted(SHIPPED)
    readme = (shipped_root() / "README.md").read_text()
    for name in SHIPPED:
        assert f"`{name}.yaml`" in readme


def test_shipped_teams_have_the_promised_shapes(host):
    teams = {name: load_team(team_path(name), scaffolds=lambda plugins: host.scaffolds) for name in SHIPPED}
    for scaffold in ("react", "tool_calling", "parallel_tools", "code"):
        team = teams[scaffold]
        assert team.main.scaffold == scaffold and team.app_agents is not None and team.app_agents.apps == "all"
        assert team.app_agent("Calendar").scaffold == scaffold
        assert team.main.model.api_key == "${OPENAI_API_KEY}"
    a2a = teams["all_app_agents"]
    assert a2a.app_agents is not None and a2a.app_agents.proportion == 1.0
    # one field changes both roles
    for scaffold in ("react", "tool_calling", "parallel_tools"):
        changed = TeamConfig.model_validate(a2a.model_dump() | {"main": a2a.main.model_dump() | {"scaffold": scaffold}})
        assert changed.app_agent("Emails").scaffold == scaffold and changed.app_agent("Emails").model == a2a.main.model
    het = teams["heterogeneous"]
    assert het.main.model.model != het.app_agent("Calendar").model.model
    assert het.app_agent("Calendar").model.endpoint and het.app_agent("Calendar").scaffold_options.get("constrained") is True
    oracle = teams["oracle"]
    assert {oracle.main.model.model, oracle.app_agent("Contacts").model.model} == {"orchestra/oracle"}
    assert not [s for s in read_team(team_path("oracle"), scaffolds=lambda plugins: host.scaffolds).secrets]


def test_the_llm_judges_key_is_a_reference_too(write, host, monkeypatch):
    from orchestra.teams.loading import with_judge_key

    monkeypatch.delenv("TEAM_JUDGE_KEY", raising=False)
    team = read_team(
        write("""
        name: x
        main: {model: orchestra/oracle}
        session:
          judge: {mode: llm, model: openai/gpt-4o-mini, api_key: "${TEAM_JUDGE_KEY}"}
        """),
        scaffolds=lambda plugins: host.scaffolds,
    )
    with pytest.raises(TeamError, match=r"team\.yaml:4: session\.judge\.api_key: environment variable TEAM_JUDGE_KEY is not set"):
        team.require_secrets(team.config)
    monkeypatch.setenv("TEAM_JUDGE_KEY", "sk-judge-secret")
    session = with_judge_key(team.config.session)
    assert session.judge.api_key == "sk-judge-secret" and team.config.session.judge.api_key == "${TEAM_JUDGE_KEY}"
    assert "sk-judge-secret" not in session.model_dump_json() + repr(session)


def test_an_are_class_name_where_scenarios_use_another_name_is_a_warning(write, host):
    team = read_team(
        write("""
        name: x
        main: {model: m}
        app_agents:
          apps: [CalendarApp, Emails, MessagingAppV2]
          overrides:
            CalendarApp: {scaffold: react}
        """),
        scaffolds=lambda plugins: host.scaffolds,
    )
    assert [w.removeprefix(str(team.path)) for w in team.warnings] == [
        ":4:10: app_agents.apps[0]: 'CalendarApp' is ARE's class name; Gaia2 scenarios name this app 'Calendar' "
        "(app names are matched against each scenario's app names, as in its tool names)",
        ":4:31: app_agents.apps[2]: 'MessagingAppV2' is ARE's class name; Gaia2 scenarios name this app 'Messages' / 'Chats' "
        "(app names are matched against each scenario's app names, as in its tool names)",
        ":6: app_agents.overrides.CalendarApp: 'CalendarApp' is ARE's class name; Gaia2 scenarios name this app 'Calendar' "
        "(app names are matched against each scenario's app names, as in its tool names)",
    ]
    assert read_team(write(GOOD), scaffolds=lambda plugins: host.scaffolds).warnings == []
