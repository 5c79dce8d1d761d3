"""Built-in plugin: an agent's sandboxed interpreter ends with its run — also on error and Ctrl-C.

The `code` scaffold starts one interpreter per agent (`orchestra.scaffolds.code`); this wrapper
around `agent_run` closes it when that agent's run ends, however it ends (a permanent model
error, a cancelled task, KeyboardInterrupt), and `rollout_closed` closes the main agent's when
the rollout is closed (the step API, where no `agent_run` runs the main agent). The interpreters
are daemon threads / `--die-with-parent` processes, so none outlives the process either.
"""

from __future__ import annotations

from collections.abc import Awaitable, Generator

from orchestra.hookspecs import hookimpl
from orchestra.views import AgentView, RolloutView


@hookimpl(wrapper=True)
def agent_run(agent: AgentView) -> Generator[None, Awaitable[None], Awaitable[None]]:
    inner = yield

    async def run() -> None:
        try:
            await inner
        finally:
            _close(agent.scaffold)

    return run()


@hookimpl
def rollout_closed(rollout: RolloutView) -> None:
    main = getattr(rollout, "main", None)
    if main is not None:
        _close(main.scaffold)


def _close(scaffold: object) -> None:
    close = getattr(scaffold, "close", None)
    if callable(close):
        close()
