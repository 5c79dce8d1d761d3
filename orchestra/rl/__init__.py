"""Gaia2 as an RL environment: the step API over a rollout (`env`), which scenarios (`selection`)
and batched rollouts against an OpenAI-compatible server (`batches`).

The names below are the package's face, imported on first use (PEP 562): `import orchestra.rl`
loads nothing heavy until a name is read.
"""

from __future__ import annotations

import importlib
from typing import Any

_FACE = {
    "EnvConfig": "env",
    "Episode": "env",
    "GaiaEnv": "env",
    "Observation": "env",
    "MAX_TURNS_STOP": "env",
    "POLICY_MODEL": "env",
    "episode_info": "env",
    "noise_config": "env",
    "record_info": "env",
    "CAPABILITIES": "selection",
    "ScenarioFailure": "selection",
    "one_scenario": "selection",
    "select_scenarios": "selection",
    "rollouts": "batches",
}

__all__ = sorted(_FACE)


def __getattr__(name: str) -> Any:
    module = _FACE.get(name)
    if module is None:
        raise AttributeError(f"module 'orchestra.rl' has no attribute {name!r}")
    return getattr(importlib.import_module(f"orchestra.rl.{module}"), name)
