"""Shared helpers for tests that run agents (not a test module)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from orchestra.config import SessionConfig
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.record import RolloutResult
from orchestra.rollout import AgentConfig, Rollout, RolloutSpec, execute
from orchestra.scenario_files import read_scenario_file

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "scenarios"
#: The seven hand-built starter scenarios (the corpus lives in scenarios/corpus/).
STARTER = sorted(p for p in SCENARIOS.glob("*/validation/starter_*.json"))


def scenario(name: str) -> Path:
    matches = [p for p in STARTER if p.stem == name]
    assert matches, f"bundled scenario {name} not found under {SCENARIOS}"
    return matches[0]


def open_rollout(
    scenario: Path | str,
    *,
    model: str = "orchestra/oracle",
    scaffold: str = "tool_calling",
    host: Host | None = None,
    judge_pool: Any = None,
    max_steps: int = 80,
    session_config: SessionConfig | None = None,
) -> Rollout:
    """A started one-agent rollout (`Rollout.open`): use it as a context manager."""
    agent = AgentConfig(scaffold=scaffold, model=ModelConfig(model=model), max_steps=max_steps)
    spec = RolloutSpec(scenario=str(scenario), agent=agent, session=session_config or SessionConfig())
    return Rollout.open(spec, host=host or Host.create(entry_points=False), judge_pool=judge_pool)


def write_script(tmp_path: Path, entries: list[dict[str, Any]], name: str = "script.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(entries))
    return str(path)


def run_agent_on(
    scenario: Path,
    *,
    model: str,
    scaffold: str = "tool_calling",
    host: Host | None = None,
    judge_pool: Any = None,
    max_steps: int = 80,
    session_config: SessionConfig | None = None,
    backoff_seconds: float = 0.0,
    scaffold_options: dict[str, Any] | None = None,
    endpoint: str | None = None,
) -> RolloutResult:
    agent = AgentConfig(
        scaffold=scaffold,
        model=ModelConfig(model=model, endpoint=endpoint, backoff_seconds=backoff_seconds),
        max_steps=max_steps,
        scaffold_options=scaffold_options or {},
    )
    host = host or Host.create()

    file = read_scenario_file(scenario)
    spec = RolloutSpec(scenario=str(file.path), agent=agent, session=session_config or SessionConfig())

    async def go() -> RolloutResult:
        record = await execute(spec, host=host, judge_pool=judge_pool, file=file)
        assert record.result is not None, record.error
        return record.result

    return anyio.run(go)
