"""The `a2a:` setting and the message metadata, without a remote agent."""

from __future__ import annotations

import subprocess
import sys

import pytest

from orchestra.a2a.config import A2AConfig, parse_agent_option
from orchestra.a2a.metadata import A2AMetadata
from orchestra.spec import AgentConfig, RolloutSpec
from support.helpers import REPO


def test_the_agent_option_and_the_config() -> None:
    assert parse_agent_option("a2a:http://127.0.0.1:9999/") == A2AConfig(url="http://127.0.0.1:9999")
    with pytest.raises(ValueError, match="the form is a2a:URL"):
        parse_agent_option("http://127.0.0.1:9999")
    with pytest.raises(ValueError, match="starts with http"):
        A2AConfig(url="ftp://x")
    # one orchestra line each, never pydantic's wording
    with pytest.raises(ValueError) as info:
        parse_agent_option("a2a:")
    assert str(info.value) == "--agent 'a2a:': no URL after a2a: (the agent's base URL, e.g. a2a:http://127.0.0.1:9999)"
    with pytest.raises(ValueError) as info:
        parse_agent_option("a2a:ftp://x")
    assert str(info.value) == "--agent 'a2a:ftp://x': an A2A agent's URL starts with http:// or https:// (got 'ftp://x')"
    # the loopback's host: 127.0.0.1 by default; an any-address listen needs the name the agent reaches it by
    assert A2AConfig(url="http://h:1").loopback_host == "127.0.0.1"
    assert A2AConfig(url="http://h:1", listen_host="0.0.0.0", advertise_host="host.docker.internal").loopback_host == "host.docker.internal"
    with pytest.raises(ValueError, match="give advertise_host too"):
        A2AConfig(url="http://h:1", listen_host="0.0.0.0")
    assert "listen_host" not in A2AConfig(url="http://h:1").model_dump()  # a record without them is unchanged
    spec = RolloutSpec(scenario="x.json", agent=AgentConfig(a2a="http://h:1"))  # type: ignore[arg-type]
    assert spec.policy == "a2a:http://h:1" and spec.agent is not None and spec.agent.model.model == "orchestra/no-model"
    assert RolloutSpec.model_validate_json(spec.model_dump_json()) == spec  # ships to a worker as data


def test_the_metadata_keys() -> None:
    meta = A2AMetadata(
        mcp_url="http://m", model_base_url="http://v/v1", session_id="s", scenario_id="sc", role="app_agent", app="Calendar", turn=1, sim_time=2.5
    )
    wire = meta.wire()
    assert wire == {
        "orchestra.mcp_url": "http://m",
        "orchestra.model_base_url": "http://v/v1",
        "orchestra.session_id": "s",
        "orchestra.scenario_id": "sc",
        "orchestra.role": "app_agent",
        "orchestra.app": "Calendar",
        "orchestra.turn": 1,
        "orchestra.sim_time": 2.5,
    }
    assert A2AMetadata.from_wire({**wire, "other": 1}) == meta
    # a key a later orchestra adds is ignored when reading (writing stays strict)
    assert A2AMetadata.from_wire({**wire, "orchestra.added_later": {"x": 1}}) == meta
    with pytest.raises(ValueError, match="added_later"):
        A2AMetadata(**meta.model_dump(), added_later=1)


def test_nothing_of_a2a_is_imported_until_an_a2a_agent_runs() -> None:
    code = (
        "import sys, orchestra, orchestra.cli.run, orchestra.rollout, orchestra.plugins.drivers, orchestra.teams.loading\n"
        "from orchestra.spec import AgentConfig\n"
        "AgentConfig(a2a='http://h:1')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('a2a', 'uvicorn', 'opentelemetry')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == "[]"


def test_the_cards_own_url_names_the_agent_and_the_options_name_themselves(capsys: pytest.CaptureFixture[str]) -> None:
    from orchestra.a2a.config import A2AConfig
    from orchestra.cli import main

    assert A2AConfig(url="http://127.0.0.1:9/good/.well-known/agent-card.json").url == "http://127.0.0.1:9/good"
    assert main(["run", "--agent", "a2a:http://127.0.0.1:9", "--a2a-timeout", "0", "--scenarios", "bundled", "--no-preflight"]) != 0
    assert main(["run", "--agent", "a2a:http://127.0.0.1:9", "--scaffold", "react", "--scenarios", "bundled", "--no-preflight"]) != 0
    capsys.readouterr()
    # the scaffold's options would be ignored too: refused, naming them (--max-steps is kept: it bounds the agent's steps)
    assert main(["run", "--agent", "a2a:http://127.0.0.1:9", "--constrained", "--scenarios", "bundled", "--no-preflight"]) == 2
    assert "orchestra: error: --constrained: not with --agent a2a:URL (the remote agent runs its own loop" in capsys.readouterr().err
    assert main(["run", "--agent", "a2a:", "--scenarios", "bundled", "--no-preflight"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "orchestra: error: --agent 'a2a:': no URL after a2a: (the agent's base URL, e.g. a2a:http://127.0.0.1:9999)"
    ]
