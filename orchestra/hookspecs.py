"""orchestra's extension surface: every hook a plugin can implement, on one screen.

Built-in behaviour (notifications, termination, clock charging, litellm models, the session's
tools, the three scaffolds) is implemented by plugins over exactly these hooks, registered through
the same `orchestra` entry-point group third-party plugins use.

Conventions:

* Registration hooks receive a `register` callable; the host owns the registries.
* `firstresult=True` hooks answer "who handles this?": the first non-None result wins.
* `model_call` and `tool_call` return *awaitables* (model calls are async; a tool call may run a
  whole sub-agent). Wrap them with `@hookimpl(wrapper=True)`: `inner = yield` gives the inner
  awaitable; return a new awaitable that awaits it, e.g.::

      @hookimpl(wrapper=True)
      def model_call(agent, request):
          inner = yield
          async def timed():
              response = await inner
              ...  # look at / replace the response
              return response
          return timed()

  Wrappers are where the clock charges time, tracing opens spans, noise injects failures and
  caches answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.agent import AgentContext, StepDecision, StepRecord
    from orchestra.types import ModelRequest, ModelResponse, ToolCall
    from orchestra.session import ToolOutcome

PROJECT = "orchestra"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_scaffolds(register: Callable[[str, Callable[..., Any]], None]) -> None:
    """Add scaffolds: `register(name, factory)`; `factory(tools, options)` returns a `Scaffold`."""


@hookspec
def register_models(register: Callable[[str, Any], None]) -> None:
    """Add model providers: `register(provider, handler)` with a `litellm.CustomLLM` handler.

    Models are then addressed as `"<provider>/<model>"` through litellm like any real API.
    """


@hookspec
def register_tools(register: Callable[[Any, Callable[..., Any]], None]) -> None:
    """Add agent tools beyond the scenario's apps: `register(spec: ToolSpec, fn(**arguments))`."""


@hookspec
def pre_step(agent: AgentContext) -> list[dict[str, Any]] | None:
    """Messages to inject before the model is called (OpenAI-style `{"role", "content"}` dicts).

    Every implementation's list is injected, in plugin order. The notifications plugin turns
    queued user messages and environment notifications into such messages, as ARE's agent does.
    """


@hookspec(firstresult=True)
def post_step(agent: AgentContext, step: StepRecord) -> StepDecision | None:
    """Should this agent stop after `step`? First non-None decision wins.

    Return a `StepDecision`: `stop` (the rollout is over for this agent), `end_turn` (the run
    ended a turn, ARE's TERMINATED), `pause` (the run ends until the next user message or
    notification, ARE's PAUSED), or None to let the next plugin decide (no plugin deciding
    means: continue the run).
    """


@hookspec(firstresult=True)
def delegate(agent: AgentContext, call: ToolCall) -> Awaitable[ToolOutcome] | None:
    """Who handles a call to another agent? Return an awaitable outcome to take the call.

    Used by Agent2Agent teams: an app-agent plugin claims `<App>__expert_agent` calls.
    """


@hookspec(firstresult=True)
def model_call(agent: AgentContext, request: ModelRequest) -> Awaitable[ModelResponse]:
    """Call the agent's model. The built-in litellm plugin implements it; wrap it to observe."""


@hookspec(firstresult=True)
def tool_call(agent: AgentContext, call: ToolCall) -> Awaitable[ToolOutcome]:
    """Execute one tool call. The built-in session plugin implements it (after `delegate`)."""
