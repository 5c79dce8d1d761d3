"""`vf-eval orchestra-gaia2 ...`: verifiers v1 imports a taskset id as a top-level module and takes the
Taskset / Task / Harness / Env subclasses it exports through `__all__`; they live in
`orchestra_client.verifiers_v1` (see its docstring for the command line)."""

from orchestra_client.verifiers_v1 import (
    OrchestraEnv,
    OrchestraEnvConfig,
    OrchestraHarnessConfig,
    OrchestraState,
    OrchestraStepHarness,
    OrchestraTask,
    OrchestraTaskData,
    OrchestraTaskset,
    OrchestraTasksetConfig,
)

__all__ = [
    "OrchestraEnv",
    "OrchestraEnvConfig",
    "OrchestraHarnessConfig",
    "OrchestraState",
    "OrchestraStepHarness",
    "OrchestraTask",
    "OrchestraTaskData",
    "OrchestraTaskset",
    "OrchestraTasksetConfig",
]
