"""orchestra: teams of LLM agents inside Meta's Agents Research Environments (ARE) and Gaia2.

The names a user needs, in one place (each imported on first use, PEP 562, so `import orchestra`
stays cheap: no pydantic model, no ARE, no litellm until a name is read)::

    import orchestra

    spec = orchestra.RolloutSpec(scenario="scenarios/time/validation/starter_time_deadline.json",
                                 team=orchestra.load_team("oracle"))
    record = orchestra.execute_sync(spec)          # judged by ARE's judge, on the simulated clock
    print(record.status, record.result.reward)

Importing this package has no side effect beyond one: it sets `LITELLM_LOCAL_MODEL_COST_MAP=True`
unless the variable is already set, so that no later `import litellm` (ours or ARE's) reaches for
the network. ARE itself is imported lazily, by `orchestra.are`, the first time a scenario is loaded.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__version__ = "0.1.0"

#: The public face: name -> the module that defines it.
_FACE: dict[str, str] = {
    # a rollout: what runs, running it, what it produced
    "RolloutSpec": "orchestra.spec",
    "AgentConfig": "orchestra.spec",
    "TeamConfig": "orchestra.teams.config",
    "SessionConfig": "orchestra.config",
    "NoiseConfig": "orchestra.config",
    "ClockConfig": "orchestra.clock",
    "JudgeConfig": "orchestra.judging.settings",
    "ModelConfig": "orchestra.models",
    "Rollout": "orchestra.rollout",
    "execute": "orchestra.rollout",
    "execute_sync": "orchestra.rollout",
    "RolloutRecord": "orchestra.record",
    "load_team": "orchestra.teams.loading",
    "resolve": "orchestra.scenario_files",
    # batches, Gaia2, RL
    "specs_for": "orchestra.runs.runner",
    "run_into": "orchestra.runs.batch",
    "run_gaia2": "orchestra.gaia2.protocol",
    "GaiaEnv": "orchestra.rl.env",
    "EnvConfig": "orchestra.rl.env",
    # extending
    "Host": "orchestra.host",
    "hookimpl": "orchestra.hookspecs",
    "Scaffold": "orchestra.scaffold",
    "ScaffoldOptions": "orchestra.scaffold",
    "OrchestraError": "orchestra.errors",
}

__all__ = ["__version__", *sorted(_FACE)]


def __getattr__(name: str) -> Any:
    module = _FACE.get(name)
    if module is None:
        raise AttributeError(f"module 'orchestra' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # read once: later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_FACE])
