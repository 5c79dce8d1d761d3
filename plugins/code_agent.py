"""Built-in plugin: an agent's sandboxed interpreter ends with its run — also on error and Ctrl-C.

The `code` scaffold starts one interpreter per agent (`orchestra.scaffolds.code`); this wrapper
around `agent_run` closes it when that agent's run ends, however it ends (a permanent model
error, a cancelled task, KeyboardInterrupt). A loop driven from outside (`AgentStepper`) closes
it with `agent.scaffold.close()`; the interpreters are daemon threads / `--die-with-parent`
processes, so none outlives the process either.
"""

from __future__ import annotations

from collections.abc import Awaitable, Generator

from orchestra.hookspecs import hookimpl
from orchestra.views import AgentView


@hookimpl(wrapper=True)
def agent_run(agent: AgentView) -> Generator[None, Awaitable[None], Awaitable[None]]:
    inner = yield

    async def run() -> None:
        try:
            await inner
        finally:
            close = getattr(agent.scaffold, "close", None)
            if callable(close):
                close()

    return run()
