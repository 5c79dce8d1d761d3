"""orchestra's extension surface: every hook a plugin can implement, documented like pytest's.

Built-in behaviour (notifications, termination, clock charging, sub-agents, the litellm and
offline models, the session's tools, the three scaffolds, the drivers) is implemented by plugins
over exactly these hooks. The host registers the built-ins first, in the fixed order of
`orchestra.host.BUILTIN_PLUGINS`, then third-party plugins from the `orchestra` entry-point group
(sorted by name), then plugins passed in code. Where order matters below it is pluggy's: the
most recently registered implementation runs first, `tryfirst` / `trylast` override that, and
wrappers (`@hookimpl(wrapper=True)`) run around all of them.

Conventions:

* Registration hooks receive a `register` callable; the host owns the registries.
* `firstresult=True` hooks answer "who handles this?": the first non-None result wins.
* `agent_run`, `model_call`, `tool_call` and `rollout` return *awaitables* (they are async: a
  model call, a tool call that runs a whole sub-agent). Wrap them with `@hookimpl(wrapper=True)`:
  `inner = yield` gives the inner awaitable; return a new awaitable that awaits it::

      @hookimpl(wrapper=True)
      def agent_run(agent):
          inner = yield
          async def traced():
              with tracer.start_as_current_span(f"invoke_agent {agent.name}"):
                  return await inner
          return traced()

The data types are in `orchestra.types` (dependency-free), the views of an agent, a rollout and
the host in `orchestra.views` (typed protocols); this module imports nothing else of orchestra at
run time, so reading it never pulls in the loop, the session or ARE.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pluggy

from orchestra.types import ModelRequest, ModelResponse, StepDecision, StepRecord, ToolCall, ToolOutcome, ToolSpec

if TYPE_CHECKING:  # pragma: no cover - types only
    from orchestra.judging.settings import JudgeConfig
    from orchestra.record import RolloutRecord
    from orchestra.views import AgentView, RolloutView

PROJECT = "orchestra"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# ------------------------------------------------------------------------------ registration


@hookspec
def register_scaffolds(register: Callable[[str, Callable[..., Any]], None]) -> None:
    """Add scaffolds.

    :param register: `register(name, factory)`; `factory(tools: dict[str, ToolSpec], options:
        ScaffoldOptions)` returns an `orchestra.scaffold.Scaffold`. A name registered twice is an error.

    Called once per host, for every plugin; the return value is ignored.
    """


@hookspec
def register_models(register: Callable[[str, Any], None]) -> None:
    """Add model providers.

    :param register: `register(provider, handler)` with a `litellm.CustomLLM` handler, or a
        function without arguments that returns one (called at the first model call, so a plugin
        need not import litellm to register); models are then addressed as `"<provider>/<model>"`
        through litellm like any real API. litellm learns of the providers when a model of the
        host is first called (`orchestra.litellm_setup.register_providers`).

    Called once per host; the return value is ignored.
    """


@hookspec
def register_tools(register: Callable[[ToolSpec, Callable[..., Any]], None]) -> None:
    """Add tools beyond the scenario's apps, offered to every agent by default.

    :param register: `register(spec, fn)`; `fn(**arguments)` runs the tool (synchronously, at the
        simulated now); its return value is the output, an exception a failed outcome.

    Called once per host; the return value is ignored.
    """


@hookspec
def register_judges(register: Callable[[str, Callable[[JudgeConfig], Any]], None]) -> None:
    """Add judges (what `SessionConfig.judge.mode` / `--judge` names).

    :param register: `register(mode, build)`; `build(config: JudgeConfig)` returns a fresh ARE
        judge (a `GraphPerEventJudge`, e.g. from `are.simulation.validation.JudgeFactory`) that the
        session preprocesses the scenario with and validates the rollout by. Judges are pooled per
        setting and reused across rollouts (`initialize_state` resets one), so `build` may be slow.
        The built-ins `scripted`, `strict` and `llm` are registered by the `judges` plugin.

    Called once per host; the return value is ignored.
    """


@hookspec
def register_sandboxes(register: Callable[[str, Callable[..., Any]], None]) -> None:
    """Add sandbox backends for model-written code (the `code` scaffold).

    :param register: `register(name, factory)`; `factory(tools: dict[str, ToolSpec], *, seed: int,
        config: SandboxConfig)` returns an `orchestra.sandbox.Sandbox`. A name registered twice is an error.

    Called once per host; the return value is ignored.
    """


@hookspec
def register_executors(register: Callable[[str, Callable[..., Any]], None]) -> None:
    """Add executors: where a batch's rollouts run (what `--executor` names).

    :param register: `register(name, factory)`; `factory(workers: int | None = None, address: str |
        None = None)` returns an `orchestra.runs.executors.Executor` (`run(batch, host=, judge_pool=,
        concurrency=)` yielding one record per spec as each finishes) and raises an `OrchestraError`
        for an option it has no use for. The built-ins `local`, `process` and `ray` are registered
        by the `executors` plugin. A name registered twice is an error.

    Called once per host; the return value is ignored.
    """


# ------------------------------------------------------------------------------ a rollout


@hookspec(firstresult=True)
def rollout(rollout: RolloutView) -> Awaitable[RolloutRecord] | None:
    """Run one rollout to its record: `orchestra.rollout.execute` calls it.

    :param rollout: the `orchestra.rollout.Rollout`, not started yet (its scenario loads inside):
        `rollout.spec` (serialisable: scenario, policy, clock, judge, seed), `rollout.host`.
    :return: an awaitable `RolloutRecord`.

    The built-in `drivers` plugin implements it (`trylast`) with `Rollout.run()`. Wrap it to
    observe a whole rollout (a tracer's `invoke_workflow` span, a runner's timing). An exception
    a wrapper raises is recorded on the rollout's record (`error`); it never aborts a batch.
    A rollout driven through the step API (`Rollout.open` / `next_request` / `apply`) does not
    go through this hook: its caller is the driver.
    """


@hookspec
def rollout_closed(rollout: RolloutView) -> None:
    """A rollout ended — finished, failed or cancelled: release what a plugin holds for it.

    :param rollout: the rollout (its record may be missing when it failed before finishing).

    Every implementation runs, on every path (`Rollout.close`, called by `execute` and the step
    API's context manager); e.g. a code agent's sandboxes are torn down here. The return value
    is ignored.
    """


@hookspec(firstresult=True)
def agent_run(agent: AgentView) -> Awaitable[None] | None:
    """Run one agent — the main agent, or a sub-agent started by `orchestra.agent.spawn` — to its end.

    :param agent: the agent (`orchestra.agent.AgentContext`); its ledger is filled as it runs.

    The built-in `drivers` plugin implements it (`trylast`) with `orchestra.agent.drive`. Wrap it
    to observe each agent run (a tracer's `invoke_agent` span). A permanent `ModelError` raised
    by the awaitable ends the rollout for the main agent and is a failed tool outcome for a sub-agent.
    """


@hookspec
def agent_tools(agent: AgentView, tools: dict[str, ToolSpec]) -> None:
    """Shape one agent's tool list before its scaffold is built: edit `tools` in place.

    :param agent: the agent being made (`role`, `parent`, `task` tell which; its scaffold is not built yet).
    :param tools: tool name → `ToolSpec`, initially the session's ARE tools plus registered tools
        (a sub-agent: its parent's list). Remove an app's tools, add `<App>__expert_agent`, ...

    Every implementation runs, in plugin order; the return value is ignored. A tool added here
    must be executable: a registered tool, or one a `delegate` implementation claims.
    """


# ------------------------------------------------------------------------------ each step


@hookspec
def pre_step(agent: AgentView) -> list[dict[str, Any]] | None:
    """Messages to inject before the agent's next model call.

    :param agent: the agent about to call its model.
    :return: OpenAI-style `{"role", "content"}` dicts, or None.

    Every implementation's list is injected, in plugin order. The built-in notifications plugin
    turns the agent's mailbox (for the main agent: ARE's user messages and environment
    notifications) into such messages, as ARE's agent does.
    """


@hookspec(firstresult=True)
def model_call(agent: AgentView, request: ModelRequest) -> Awaitable[ModelResponse] | None:
    """Call the agent's model.

    :param agent: the calling agent (`agent.model` is its `ModelConfig`).
    :param request: messages, tools and decoding options the scaffold built.
    :return: an awaitable `ModelResponse`; it raises `ModelError` when the call failed for good.

    The built-in litellm plugin answers (`trylast`); wrap it to trace, inject noise or cache. Only
    the built-in driver calls it: a loop driven from outside gets its responses elsewhere.
    """


@hookspec
def model_response(agent: AgentView, request: ModelRequest, response: ModelResponse) -> None:
    """A model response was accepted by the agent loop (also when a driver outside made the call).

    :param agent: the agent whose call it was.
    :param request: what was asked.
    :param response: what came back, usage included.

    Every implementation runs; the return value is ignored. The built-in clock plugin charges
    the token part of the clock formula here, so the clock moves the same however the loop is driven.
    """


@hookspec(firstresult=True)
def delegate(agent: AgentView, call: ToolCall) -> Awaitable[ToolOutcome] | None:
    """Who handles a call to another agent?

    :param agent: the calling agent.
    :param call: the tool call (e.g. `Calendar__expert_agent(task=...)`).
    :return: an awaitable `ToolOutcome` to take the call (typically `orchestra.agent.spawn(agent,
        task, ...)`), or None to let the next plugin (and finally the session's ARE tools) handle it.
    """


@hookspec(firstresult=True)
def tool_call(agent: AgentView, call: ToolCall) -> Awaitable[ToolOutcome] | None:
    """Execute one tool call.

    :param agent: the calling agent.
    :param call: the call, arguments parsed.
    :return: an awaitable `ToolOutcome` (errors are outcomes, never exceptions).

    The built-in session_tools plugin answers (`trylast`): a registered tool, else `delegate`,
    else the session's ARE app tool. The clock plugin wraps it to charge `tool_call_seconds`.
    """


@hookspec(firstresult=True)
def post_step(agent: AgentView, step: StepRecord) -> StepDecision | None:
    """Should this agent's run end after `step`?

    :param agent: the agent.
    :param step: the iteration that just ended.
    :return: `END_TURN` (ARE's TERMINATED), `PAUSE` (ARE's PAUSED: idle until the next user
        message or notification), `STOP` (the rollout is over for this agent), `RETURN` (a
        sub-agent returned), or None to let the next plugin decide (no decision: continue).

    First non-None decision wins; the built-in termination plugin decides last (`trylast`).
    """
