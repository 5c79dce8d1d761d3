"""What the training-trace tests share with the process they start (no dev-server import here)."""

from __future__ import annotations

from typing import Any

from orchestra.models import ModelConfig
from orchestra.openai_client import TOKEN_REQUEST
from orchestra.runs.runner import specs_for
from orchestra.spec import AgentConfig, RolloutSpec


def policy(base_url: str, scaffold: str = "tool_calling", max_steps: int = 4) -> AgentConfig:
    """The policy on a loopback server that sends token ids (`MockServer(token_ids=True)`)."""
    return AgentConfig(scaffold=scaffold, model=ModelConfig(model="openai/policy", endpoint=base_url, api_key="x", extra=TOKEN_REQUEST), max_steps=max_steps)


def batch(base_url: str, files: list[Any]) -> list[tuple[RolloutSpec, Any]]:
    return specs_for(files, agent=policy(base_url, max_steps=3), seed=7)


def traces(records: list[Any]) -> dict[str, str]:
    """Each episode's training trace as JSON text, by scenario and sample."""
    return {f"{r.scenario_id}.{r.sample_index}": r.training.model_dump_json() for r in records if r.training is not None}
