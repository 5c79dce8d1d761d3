"""Native function calling with several tool calls per model turn, executed in order.

Clock: each call in a batch is charged `tool_call_seconds`, exactly as the seed formula charges
`tool_call_seconds * n_tool_calls` for the turn; the calls run one after another against the
environment, so call k of a batch executes k * tool_call_seconds after the first (its effects,
timestamps and notifications are what the environment would show at that moment). The model's
tokens are charged once for the whole turn, before the first call. This keeps a batch of n calls
exactly as expensive as n single-call turns minus their repeated prompts, which is the saving
parallel calling really buys.
"""

from __future__ import annotations

from orchestra.scaffolds.tool_calling import ToolCallingScaffold


class ParallelToolsScaffold(ToolCallingScaffold):
    name = "parallel_tools"
    parallel = True
