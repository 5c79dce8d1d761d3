"""`run_parity`: ARE's default agent and an orchestra scaffold on one scenario, same policy, compared.

Each side runs with a fresh instance of the policy (`orchestra.parity.policy`): ARE's side first
(`orchestra.parity.are_agent`), then orchestra's (`orchestra.parity.orchestra_agent`); the two
traces are compared by `orchestra.parity.compare`, with the machine's time span of both runs as the
window in which a timestamp counts as a wall-clock leak.
"""

from __future__ import annotations

import time
from typing import Any

from orchestra.parity.are_agent import run_are_agent
from orchestra.parity.compare import ParityReport, WallClockWindow, compare
from orchestra.parity.orchestra_agent import judged_rollout, parity_session_config, run_orchestra_agent
from orchestra.parity.policy import PolicyFactory, as_factory
from orchestra.scenario_files import ScenarioFile


def record_oracle_policy(file: ScenarioFile, *, judge_pool: Any = None, max_steps: int = 80) -> list[str]:
    """An oracle-derived policy: the replies orchestra's `orchestra/oracle` model gives the `react`
    scaffold on this scenario, recorded on the parity clock (one second per model call)."""
    from orchestra.hookspecs import hookimpl
    from orchestra.host import Host
    from orchestra.models import ModelConfig
    from orchestra.rollout import AgentConfig
    from orchestra.types import ModelResponse, Usage

    replies: list[str] = []

    class Recorder:
        @hookimpl(wrapper=True, trylast=True)
        def model_call(self, agent: Any, request: Any) -> Any:
            inner = yield

            async def record() -> ModelResponse:
                response: ModelResponse = await inner
                replies.append(response.text or "")
                response.usage = Usage(0, 1)  # the parity clock: one second per call
                return response

            return record()

    host = Host.create([Recorder()])
    agent = AgentConfig(scaffold="react", model=ModelConfig(model="orchestra/oracle"), max_steps=max_steps)
    judged_rollout(file, agent, host=host, session=parity_session_config(), judge_pool=judge_pool)
    return replies


def run_parity(
    file: ScenarioFile,
    policy: PolicyFactory | list[str] | str,
    *,
    max_iterations: int | None = None,
    scaffold: str = "react",
    plugins: tuple[object, ...] = (),
    judge_pool: Any = None,
) -> ParityReport:
    """Run ARE's default agent and orchestra's `scaffold` on `file` with `policy`; compare.

    `policy` is a factory (see `orchestra.parity.policy`), a list of replies, or `"oracle"` for the
    replies orchestra's oracle model gives (recorded once, then played to both agents).
    """
    if policy == "oracle":
        factory = as_factory(record_oracle_policy(file, judge_pool=judge_pool))
    elif isinstance(policy, list):
        factory = as_factory(policy)
    else:
        factory = policy  # type: ignore[assignment]
    start = time.time()
    are = run_are_agent(file.text, str(file.path), factory, max_iterations=max_iterations)
    orch = run_orchestra_agent(file, factory, scaffold=scaffold, max_steps=max_iterations or 80, plugins=plugins, judge_pool=judge_pool)
    window = WallClockWindow(start, time.time())
    return compare(are, orch, source=str(file.path), window=window)
