"""The plugin host: built-ins as entry points, third-party plugins, validation, listing."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from orchestra.cli import main
from orchestra.hookspecs import hookimpl
from orchestra.host import Host, PluginError
from support.helpers import run_agent_on

#: The built-in plugin set, in registration order (pinned: a stray installed plugin cannot change it).
BUILTIN_ORDER = [
    "agent2agent",
    "builtin_scaffolds",
    "clock",
    "code_agent",
    "drivers",
    "executors",
    "judges",
    "litellm_models",
    "notifications",
    "offline_models",
    "openai_models",
    "sandbox_bwrap",
    "sandbox_wasm",
    "session_tools",
    "subagents",
    "termination",
    "training",
    "tracing",
]
BUILTINS = set(BUILTIN_ORDER)


def test_builtins_are_registered_first_in_a_fixed_order():
    host = Host.create()
    infos = {i.name: i for i in host.plugins()}
    assert host.plugin_names[: len(BUILTIN_ORDER)] == BUILTIN_ORDER
    assert BUILTINS <= set(infos)
    assert all(infos[n].source == "builtin" for n in BUILTINS)
    assert set(host.scaffolds) >= {"react", "tool_calling", "parallel_tools"}
    assert infos["builtin_scaffolds"].registered == {"scaffold": ["react", "tool_calling", "parallel_tools", "code"]}
    assert "orchestra" in host.models
    assert infos["sandbox_wasm"].registered == {"sandbox": ["wasm"]} and infos["sandbox_bwrap"].registered == {"sandbox": ["bwrap"]}


def test_misspelled_hook_fails_loudly():
    class Typo:
        from orchestra.hookspecs import hookimpl

        @hookimpl
        def pre_stpe(self, agent):  # noqa: D401 - deliberately misspelled
            return None

    with pytest.raises(PluginError, match="pre_stpe"):
        Host.create(plugins=[Typo()])

    class WrongArgument:
        @hookimpl
        def pre_step(self, agnet):  # the hook's argument is `agent`
            return None

    with pytest.raises(PluginError, match="WrongArgument.*not a valid orchestra plugin.*agnet") as raised:
        Host.create(plugins=[WrongArgument()], entry_points=False)
    assert "\n" not in str(raised.value)  # one line, as every orchestra error


def _install_fake_distribution(tmp_path, monkeypatch):
    """A third-party package with an `orchestra` entry point, on sys.path like an installed one."""
    pkg = tmp_path / "site"
    (pkg / "orchestra_echo_scaffold").mkdir(parents=True)
    (pkg / "orchestra_echo_scaffold" / "__init__.py").write_text(
        textwrap.dedent('''
        """A third-party scaffold: answers the user at once, through the tool-calling machinery."""
        from orchestra.hookspecs import hookimpl
        from orchestra.scaffolds.tool_calling import ToolCallingScaffold

        CALLS = []

        class EchoScaffold(ToolCallingScaffold):
            name = "echo"

        @hookimpl
        def register_scaffolds(register):
            register("echo", EchoScaffold)

        @hookimpl(wrapper=True)
        def tool_call(agent, call):
            CALLS.append(call.name)
            return (yield)
    ''')
    )
    dist = pkg / "orchestra_echo_scaffold-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: orchestra-echo-scaffold\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[orchestra]\necho = orchestra_echo_scaffold\n")
    monkeypatch.syspath_prepend(str(pkg))
    import importlib

    importlib.invalidate_caches()


def test_third_party_scaffold_runs_end_to_end(tmp_path, monkeypatch, judge_pool, scenario_path):
    _install_fake_distribution(tmp_path, monkeypatch)
    host = Host.create()
    info = {i.name: i for i in host.plugins()}["echo"]
    assert info.source == "orchestra-echo-scaffold 1.0"
    assert info.registered == {"scaffold": ["echo"]} and "tool_call" in info.hooks
    result = run_agent_on(scenario_path("starter_execution_calendar"), model="orchestra/oracle", scaffold="echo", host=host, judge_pool=judge_pool)
    assert result.success and result.reward == 1.0
    assert "Calendar__add_calendar_event" in sys.modules["orchestra_echo_scaffold"].CALLS


def test_allow_list_keeps_third_party_plugins_out(tmp_path, monkeypatch):
    _install_fake_distribution(tmp_path, monkeypatch)
    monkeypatch.setenv("ORCHESTRA_PLUGINS", "")
    host = Host.create()
    assert "echo" not in host.scaffolds and BUILTINS <= {i.name for i in host.plugins()}


def test_unknown_scaffold_is_a_clear_error():
    with pytest.raises(PluginError, match="unknown scaffold 'nope'; registered: .*react"):
        Host.create().scaffold("nope")


def test_plugins_command(capsys):
    assert main(["plugins", "--json"]) == 0
    infos = {i["name"]: i for i in json.loads(capsys.readouterr().out)}
    assert infos["clock"]["hooks"] == ["model_response", "tool_call"]
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "builtin_scaffolds  (builtin)" in out and "registers scaffold: react, tool_calling, parallel_tools, code" in out


def test_inline_plugin_objects_get_stable_names_and_bad_ones_a_clear_error():
    class Tracer:
        @hookimpl
        def pre_step(self, agent):
            return None

    host = Host.create([Tracer(), Tracer()], entry_points=False)
    assert host.plugin_names[-2:] == [
        "test_inline_plugin_objects_get_stable_names_and_bad_ones_a_clear_error.<locals>.Tracer",
        "test_inline_plugin_objects_get_stable_names_and_bad_ones_a_clear_error.<locals>.Tracer#2",
    ]

    class NotAWrapper:
        @hookimpl(wrapper=True)
        def pre_step(self, agent):  # a wrapper must be a generator
            return None

    with pytest.raises(PluginError, match="NotAWrapper.*not a valid orchestra plugin"):
        Host.create([NotAWrapper()], entry_points=False)


class _DropsTheAnswer:
    """A tool-call wrapper that forgets to return what `yield` gave it."""

    @hookimpl(wrapper=True)
    def tool_call(self, agent, call):
        yield


class _ReturnsAnOutcome:
    """A tool-call implementation that returns a value where an awaitable belongs."""

    @hookimpl(tryfirst=True)
    def tool_call(self, agent, call):
        return "an outcome, not an awaitable"


@pytest.mark.parametrize(("plugin", "what"), [(_DropsTheAnswer(), "wrapper returned NoneType"), (_ReturnsAnOutcome(), "implementation returned str")])
def test_a_hook_that_returns_no_awaitable_is_blamed_on_its_own_plugin(plugin, what, judge_pool, scenario_path):
    """Not on the built-in that awaits it later (the error a plugin author would chase the wrong way)."""
    name = type(plugin).__name__
    host = Host.create([plugin], entry_points=False)
    with pytest.raises(AssertionError) as raised:  # the helper asserts the rollout did not fail, with its error
        run_agent_on(scenario_path("starter_execution_calendar"), model="orchestra/oracle", host=host, judge_pool=judge_pool)
    text = str(raised.value)
    assert f"plugin '{name}''s tool_call {what}, not an awaitable" in text and f"raised in plugin '{name}', hook 'tool_call'" in text


def test_a_plugin_passed_in_code_and_installed_too_loads_once(tmp_path, monkeypatch):
    _install_fake_distribution(tmp_path, monkeypatch)
    module = __import__("orchestra_echo_scaffold")
    host = Host.create([module])
    assert host.plugin_names.count("echo") == 1 and "orchestra_echo_scaffold" not in host.plugin_names


def test_an_allow_list_naming_no_installed_plugin_is_an_error(tmp_path, monkeypatch):
    _install_fake_distribution(tmp_path, monkeypatch)
    monkeypatch.setenv("ORCHESTRA_PLUGINS", "ecoh")
    with pytest.raises(PluginError, match="ORCHESTRA_PLUGINS .*names 'ecoh', which no installed plugin is; installed: echo"):
        Host.create()


def test_registering_a_tool_without_a_tool_spec_names_the_plugin():
    class SloppyTools:
        @hookimpl
        def register_tools(self, register):
            register("Notes__jot", lambda: None)

    with pytest.raises(
        PluginError,
        match=r"plugin '.*SloppyTools', hook 'register_tools': register\(spec, fn\) takes an orchestra.types.ToolSpec and a callable; got \(str, function\)",
    ):
        Host.create([SloppyTools()], entry_points=False)
