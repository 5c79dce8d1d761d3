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


def test_nothing_of_a2a_is_imported_until_an_a2a_agent_runs() -> None:
    code = (
        "import sys, orchestra, orchestra.cli.run, orchestra.rollout, orchestra.plugins.drivers, orchestra.teams.loading\n"
        "from orchestra.spec import AgentConfig\n"
        "AgentConfig(a2a='http://h:1')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('a2a', 'uvicorn', 'opentelemetry')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == "[]"


def test_the_cards_own_url_names_the_agent_and_the_options_name_themselves() -> None:
    from orchestra.a2a.config import A2AConfig
    from orchestra.cli import main

    assert A2AConfig(url="http://127.0.0.1:9/good/.well-known/agent-card.json").url == "http://127.0.0.1:9/good"
    assert main(["run", "--agent", "a2a:http://127.0.0.1:9", "--a2a-timeout", "0", "--scenarios", "bundled", "--no-preflight"]) != 0
    assert main(["run", "--agent", "a2a:http://127.0.0.1:9", "--scaffold", "react", "--scenarios", "bundled", "--no-preflight"]) != 0
