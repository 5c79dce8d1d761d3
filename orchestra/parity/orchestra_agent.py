"""orchestra's side of a parity run: the same policy through orchestra's normal rollout path.

The policy is an ordinary model to orchestra: a plugin registers the `orchestra-parity` litellm
provider through the host's `register_models` hook, and the scaffold's requests go through
`orchestra.models.complete` as any API call would. The clock is set so that time passes as in the
ARE run: one simulated second per model call (ARE's `fixed` generation time), nothing per tool
call (ARE's agent charges none).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from orchestra.are.default_agent import SECONDS_PER_MODEL_CALL
from orchestra.clock import ClockConfig
from orchestra.config import SessionConfig
from orchestra.errors import OrchestraError
from orchestra.hookspecs import hookimpl
from orchestra.parity.policy import (
    PROVIDER,
    PolicyFactory,
    close_channel,
    open_channel,
    provider_handler,
)
from orchestra.parity.trace import AgentTrace, agent_tool_calls, policy_notes
from orchestra.record import RolloutResult
from orchestra.scenario_files import ScenarioFile

if TYPE_CHECKING:  # pragma: no cover - import for type checkers only
    from orchestra.host import Host
    from orchestra.rollout import AgentConfig


class ParityModelPlugin:
    """Registers the policy provider with the host, like any model plugin."""

    @hookimpl
    def register_models(self, register: Callable[[str, Any], None]) -> None:
        register(PROVIDER, provider_handler)  # a factory: litellm is imported at the first call


def parity_session_config(verbosity: str = "medium") -> SessionConfig:
    """A clock that charges `SECONDS_PER_MODEL_CALL` per model call (the policy reports one
    completion token per reply) and nothing per tool call, as ARE's agent in `fixed` mode."""
    clock = ClockConfig(decode_rate_tps=1.0, tool_call_seconds=0.0, time_scale=SECONDS_PER_MODEL_CALL)
    return SessionConfig(clock=clock, notification_verbosity=verbosity)


def judged_rollout(file: ScenarioFile, agent: AgentConfig, *, host: Host, session: SessionConfig, judge_pool: Any = None) -> RolloutResult:
    """One agent (an `AgentConfig`) on `file` through `orchestra.rollout.execute`: the judged result,
    or `OrchestraError` with the record's error when the rollout produced none."""
    import anyio

    from orchestra.rollout import RolloutSpec, execute

    # ARE's loop on failed model calls (`are_model_failures`): ARE's agent keeps looping where orchestra's stops
    spec = RolloutSpec(scenario=str(file.path), agent=agent, session=session, are_model_failures=True)
    record = anyio.run(lambda: execute(spec, host=host, judge_pool=judge_pool, file=file))
    if record.result is None:
        raise OrchestraError(record.error or f"{file.path}: the rollout produced no result")
    return record.result


def run_orchestra_agent(
    file: ScenarioFile,
    policy: PolicyFactory,
    *,
    scaffold: str = "react",
    max_steps: int = 80,
    plugins: Iterable[object] = (),
    judge_pool: Any = None,
    verbosity: str = "medium",
) -> AgentTrace:
    """Run orchestra's `scaffold` with `policy` as the model via `orchestra.rollout.execute`."""
    from orchestra.host import Host
    from orchestra.models import ModelConfig
    from orchestra.rollout import AgentConfig

    host = Host.create([ParityModelPlugin(), *plugins])
    channel = open_channel(policy, "orchestra")
    agent = AgentConfig(scaffold=scaffold, model=ModelConfig(model=f"{PROVIDER}/{channel.model}", backoff_seconds=0.0, max_retries=0), max_steps=max_steps)
    try:
        result = judged_rollout(file, agent, host=host, session=parity_session_config(verbosity), judge_pool=judge_pool)
    finally:
        close_channel(channel)
    return AgentTrace(
        side="orchestra",
        scenario_id=result.scenario_id,
        requests=channel.requests,
        tool_calls=agent_tool_calls(result.event_log),
        success=bool(result.success),
        rationale=result.rationale,
        error=result.error,
        sim_seconds=result.sim_seconds,
        notes=[*policy_notes(channel.requests), f"stop_reason: {result.stop_reason}"],
        event_log=result.event_log,
    )
