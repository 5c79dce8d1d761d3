"""Built-in plugin: OpenTelemetry spans for rollouts, agents, model calls and tool calls, following
the OpenTelemetry GenAI semantic conventions. Off unless a `orchestra.tracing.Tracing` is active
(`orchestra run --trace ...`, or `with Tracing.otlp(...):` in Python).

Span tree of one rollout (one trace per rollout, its root never parented to a caller's span)::

    invoke_workflow {team | policy}            INTERNAL  the rollout: scenario, sample, verdict, reward
    └─ invoke_agent {agent}                    INTERNAL  the main agent's run (all its turns)
       ├─ chat {model}                         CLIENT    one model call (each format retry is one)
       ├─ execute_tool {tool}                  INTERNAL  one tool call
       └─ execute_tool {App}__expert_agent     INTERNAL  a delegation ...
          └─ invoke_agent {sub-agent}          INTERNAL  ... and the app-agent it ran, nested under it
             ├─ chat {model}
             └─ execute_tool {tool}

Names and attributes, and where they come from. Source: the GenAI semantic conventions as released
in `open-telemetry/semantic-conventions-genai` v0.1.0 (`model/gen-ai/spans.yaml`,
`docs/gen-ai/gen-ai-agent-spans.md`, `gen-ai-events.md`, `model/mcp/*.yaml`; status Development;
docs/tracing.md names the commits read). `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_legacy`
(`Tracing.legacy`) gives the names orchestra emitted before (semantic-conventions v1.41): the root
with `gen_ai.workflow.name` and no `gen_ai.agent.name`, `gen_ai.agent.id` on agent spans, no MCP
attributes, no operation on `format_error` spans.

* workflow (the root) — v0.1.0's internal `invoke_agent` span whose operation is
  `invoke_workflow`: span name `invoke_workflow {gen_ai.agent.name}`, kind INTERNAL,
  `gen_ai.operation.name=invoke_workflow`, `gen_ai.agent.name` (the team's name, else the policy
  label), `gen_ai.conversation.id` (`orchestra.tracing.conversation_id(spec)`: derived from the spec,
  the same in every run). The judge's verdict is the conventions' evaluation result: a
  `gen_ai.evaluation.result` span event with `gen_ai.evaluation.name` (the judge: `scripted`,
  `strict`, `llm:<model>`), `gen_ai.evaluation.score.value` (the reward),
  `gen_ai.evaluation.score.label` (`pass` / `fail`) and, with content, `gen_ai.evaluation.explanation`
  (the rationale); the same verdict and reward are also span attributes (`orchestra.verdict`,
  `orchestra.reward`) because backends filter on attributes, not events.
* agent — `invoke_agent {gen_ai.agent.name}`, INTERNAL (the conventions' in-process agent span),
  `gen_ai.operation.name=invoke_agent`, `gen_ai.provider.name`, `gen_ai.agent.name` (the agent's
  name, unique in its rollout: `main`, `Calendar`, `Calendar#2` for a second delegation to the same
  app-agent, ...), no `gen_ai.agent.id` (v0.1.0 removed it from internal agent spans: the agent
  context's own id is `orchestra.agent.id`), `gen_ai.conversation.id` (one id per *rollout*, shared by
  every span of it), `gen_ai.request.model`, and at the end the agent's total
  `gen_ai.usage.input_tokens` / `gen_ai.usage.output_tokens`.
* model call — `chat {gen_ai.request.model}`, CLIENT, `gen_ai.operation.name=chat`,
  `gen_ai.provider.name` (litellm's provider, mapped to the conventions' values: `openai`,
  `anthropic`, `aws.bedrock`, `gcp.vertex_ai`, ...; orchestra's offline models: `orchestra`),
  `gen_ai.request.model`, `gen_ai.response.model`, `gen_ai.usage.input_tokens`,
  `gen_ai.usage.output_tokens`, `gen_ai.usage.reasoning.output_tokens` (when the provider reports
  reasoning tokens; part of the output tokens), `gen_ai.response.finish_reasons`, `gen_ai.request.temperature` /
  `max_tokens` / `stop_sequences` / `seed` when sent, `gen_ai.output.type=json` under constrained
  decoding, `server.address` / `server.port` for an endpoint. Retries are visible as
  `orchestra.model.attempts` (transient failures retried inside the call); a call that failed for
  good has status ERROR, `error.type` (the provider error's class) and the exception recorded.
  With content: `gen_ai.input.messages` / `gen_ai.output.messages` (the conventions' JSON message
  schema, as JSON strings).
* tool call — `execute_tool {gen_ai.tool.name}`, INTERNAL, `gen_ai.operation.name=execute_tool`,
  `gen_ai.tool.name`, `gen_ai.tool.call.id` (when the scaffold has one), `gen_ai.tool.type=function`,
  `gen_ai.tool.description`; a failed outcome sets status ERROR and `error.type` (the exception's
  class, else `tool_error`). With content: `gen_ai.tool.call.arguments` / `gen_ai.tool.call.result`
  and the error text as the status description. A call that came over MCP (`orchestra serve`,
  `orchestra.tracing.mcp_call`) gets the MCP conventions' attributes on the same span, as they ask
  when a GenAI instrumentation already traces the tool: `mcp.method.name=tools/call`,
  `mcp.session.id`, `jsonrpc.request.id`, `mcp.protocol.version`, `network.transport`,
  `network.protocol.name`, and `error.type=tool_error` for a result with `isError`.
* a step the model's output could not be acted on — an unknown tool or unusable arguments (the
  call never reaches a tool), an output that is no action at all, an output asked again (ARE's
  invalid-format retry) — gets a zero-length ERROR span under the agent, after the step's chat span:
  `execute_tool {name}` with `error.type` `unknown_tool` / `bad_arguments` / `refused`, or `format_error` with
  `error.type` `format_error` / `invalid_format_retry` and the custom operation name `format_error`
  (`orchestra.step` is the step's index).
* `error.type` on any span that ended in an error, per the conventions.
* content (messages, arguments, results, the user's task, notification texts, the judge's
  rationale) only with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` or `--trace-content`.

orchestra's own attributes (`orchestra.*`; span timestamps are wall clock, the rollout runs on
the simulated clock): on every span `orchestra.sim.start` (simulated seconds since the scenario
started) and `orchestra.sim.duration_s`; on the workflow `orchestra.scenario.id`,
`orchestra.scenario.source`, `orchestra.sample_index` (the run index), `orchestra.seed`,
`orchestra.policy`, `orchestra.team`, `orchestra.perturbation`, `orchestra.verdict`, `orchestra.reward`,
`orchestra.reward_mode`, `orchestra.judge`, `orchestra.stop_reason`, `orchestra.turns_completed`;
on agents `orchestra.agent.role` / `parent` / `app` / `scaffold` / `steps` / `stop_reason`; on chat and
tool spans `orchestra.agent.name`. Span events on the agent span: `orchestra.run.start` (a run —
a turn of the main agent — starts; with content, a sub-agent's task) and `orchestra.notification`
(each block of environment notifications, user messages or posted messages injected before a
model call, with `orchestra.notification.kind`; with content, the text).

Simulated time of a model call is its clock charge (`ClockConfig.model_seconds`), which the clock
plugin books right after the call returns; a tool span's includes `tool_call_seconds` (this
plugin is registered after the clock plugin, so its wrapper is the outer one) and, for a
delegation, the whole sub-agent run.

Why context variables: each rollout's spans must stay in its own trace at any concurrency.
The rollout wrapper starts a root span (an empty parent context) and sets the rollout's
conversation id in a context variable; anyio tasks copy the context when they start, so
concurrent rollouts never see each other's spans, and the spans of one rollout nest through the
awaits (`start_as_current_span` around the awaited inner call) — which is also how a
delegated app-agent's `invoke_agent` lands under the `execute_tool` span that started it.

`orchestra serve` drives a rollout one HTTP request at a time, each starting without that context:
`start_served` starts the episode's root span when the session is created, `bind_served` ties it to
the rollout, and every later span of that rollout (looked up by the agent's rollout) is parented to
it; `rollout_closed` ends it, with the verdict when the rollout was judged.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import re
import weakref
from collections.abc import Awaitable, Generator, Iterator
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from orchestra.hookspecs import hookimpl
from orchestra.tracing import Tracing, active, conversation_id, current_mcp_call
from orchestra.types import ModelRequest, ModelResponse, StepDecision, StepRecord, ToolCall, ToolOutcome
from orchestra.views import AgentView, RolloutView

if TYPE_CHECKING:  # pragma: no cover
    from opentelemetry.trace import Span, SpanKind

    from orchestra.models import ModelConfig
    from orchestra.record import RolloutRecord
    from orchestra.spec import RolloutSpec

STATE_KEY = "tracing"
#: litellm provider → the conventions' `gen_ai.provider.name` well-known value.
PROVIDER_NAMES = {
    "openai": "openai",
    "text-completion-openai": "openai",
    "anthropic": "anthropic",
    "bedrock": "aws.bedrock",
    "bedrock_converse": "aws.bedrock",
    "azure": "azure.ai.openai",
    "azure_ai": "azure.ai.inference",
    "cohere": "cohere",
    "cohere_chat": "cohere",
    "deepseek": "deepseek",
    "gemini": "gcp.gemini",
    "vertex_ai": "gcp.vertex_ai",
    "vertex_ai_beta": "gcp.vertex_ai",
    "groq": "groq",
    "watsonx": "ibm.watsonx.ai",
    "mistral": "mistral_ai",
    "moonshot": "moonshot_ai",
    "perplexity": "perplexity",
    "xai": "x_ai",
}
_ENV_LINE = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] ", re.MULTILINE)


@dataclass
class _Rollout:
    """What every span of one rollout shares (held in a context variable, never globally)."""

    conversation_id: str
    span: Span | None = None
    epoch_set: bool = False


@dataclass
class _AgentTrace:
    """An agent's span, and how many of its runs already have an `orchestra.run.start` event."""

    span: Span
    runs_seen: int = 0


_ROLLOUT: contextvars.ContextVar[_Rollout | None] = contextvars.ContextVar("orchestra_tracing_rollout", default=None)
#: `orchestra serve`'s episodes: a rollout driven by one HTTP request after another, whose spans are
#: parented to the episode's root span from here (not from a context variable, which each request
#: starts without). Weak: an episode the server dropped takes its entry with it.
_SERVED: weakref.WeakKeyDictionary[Any, tuple[_Rollout, Tracing]] = weakref.WeakKeyDictionary()


# ------------------------------------------------------------------------------------ hooks


@hookimpl(wrapper=True)
def rollout(rollout: RolloutView) -> Generator[None, Awaitable[RolloutRecord], Awaitable[RolloutRecord]]:
    inner = yield
    tracing = active()
    if tracing is None:
        return inner
    return _traced_rollout(tracing, rollout.spec, inner)


@hookimpl(wrapper=True)
def agent_run(agent: AgentView) -> Generator[None, Awaitable[None], Awaitable[None]]:
    inner = yield
    tracing = active()
    if tracing is None:
        return inner
    return _traced_agent(tracing, agent, inner)


@hookimpl(wrapper=True)
def model_call(agent: AgentView, request: ModelRequest) -> Generator[None, Awaitable[ModelResponse], Awaitable[ModelResponse]]:
    inner = yield
    tracing = active()
    if tracing is None:
        return inner
    return _traced_chat(tracing, agent, request, inner)


@hookimpl(wrapper=True)
def tool_call(agent: AgentView, call: ToolCall) -> Generator[None, Awaitable[ToolOutcome], Awaitable[ToolOutcome]]:
    inner = yield
    tracing = active()
    if tracing is None:
        return inner
    return _traced_tool(tracing, agent, call, inner)


@hookimpl(wrapper=True)
def pre_step(agent: AgentView) -> Generator[None, list[list[dict[str, Any]] | None], list[list[dict[str, Any]] | None]]:
    results = yield
    tracing = active()
    if tracing is not None:
        _note_injected(tracing, agent, results)
    return results


@hookimpl
def post_step(agent: AgentView, step: StepRecord) -> StepDecision | None:
    tracing = active()
    if tracing is not None:
        _note_step_problems(tracing, agent, step)
    return None  # never decides: termination is the termination plugin's


# ------------------------------------------------------------------------------------ spans


async def _traced_rollout(tracing: Tracing, spec: RolloutSpec, inner: Awaitable[RolloutRecord]) -> RolloutRecord:
    from opentelemetry import context as otel_context
    from opentelemetry.trace import SpanKind

    state = _Rollout(conversation_id=conversation_id(spec))
    name, attributes = _root(tracing, spec, state)
    # An empty parent context: a new trace per rollout, whatever span the caller has open.
    with tracing.tracer.start_as_current_span(
        name,
        context=otel_context.Context(),
        kind=SpanKind.INTERNAL,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        state.span = span
        token = _ROLLOUT.set(state)
        try:
            record = await inner
        except BaseException as exc:
            _failed(span, exc)
            raise
        finally:
            _ROLLOUT.reset(token)
        _finish_workflow(tracing, span, record)
        return record


def _root(tracing: Tracing, spec: RolloutSpec, state: _Rollout) -> tuple[str, dict[str, Any]]:
    """The rollout's root span: its name and attributes (v0.1.0's internal `invoke_agent` span with
    operation `invoke_workflow` and `gen_ai.agent.name`; legacy: `gen_ai.workflow.name`)."""
    label = spec.team.name if spec.team is not None else spec.policy
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_workflow",
        ("gen_ai.workflow.name" if tracing.legacy else "gen_ai.agent.name"): label,
        "gen_ai.conversation.id": state.conversation_id,
        "orchestra.policy": spec.policy,
        "orchestra.scenario.id": PurePath(str(spec.scenario)).stem,
        "orchestra.scenario.source": str(spec.scenario),
        "orchestra.sample_index": spec.sample_index,
        "orchestra.sim.start": 0.0,
    }
    if spec.team is not None:
        attributes["orchestra.team"] = spec.team.name
    if spec.seed is not None:
        attributes["orchestra.seed"] = spec.seed
    return f"invoke_workflow {label}", attributes


# ------------------------------------------------------------------------------ orchestra serve


def start_served(spec: RolloutSpec, *, session_id: str) -> _Rollout | None:
    """`orchestra serve`: start the root span of a served episode (when tracing is on), before its
    rollout opens. Use `serving(state)` around what runs the opening, then `bind_served` once the
    rollout exists; `end_served` ends it. None (nothing to do) when tracing is off."""
    tracing = active()
    if tracing is None:
        return None
    from opentelemetry import context as otel_context
    from opentelemetry.trace import SpanKind

    state = _Rollout(conversation_id=conversation_id(spec, session=session_id))
    name, attributes = _root(tracing, spec, state)
    attributes["orchestra.serve.session_id"] = session_id
    state.span = tracing.tracer.start_span(name, context=otel_context.Context(), kind=SpanKind.INTERNAL, attributes=attributes)
    return state


@contextlib.contextmanager
def serving(state: _Rollout | None) -> Iterator[None]:
    """Spans made inside the block (a served episode's opening) nest under `state`'s root span."""
    if state is None or state.span is None:
        yield
        return
    from opentelemetry import context as otel_context
    from opentelemetry.trace import set_span_in_context

    token = _ROLLOUT.set(state)
    attached = otel_context.attach(set_span_in_context(state.span))
    try:
        yield
    finally:
        otel_context.detach(attached)
        _ROLLOUT.reset(token)


def bind_served(state: _Rollout | None, rollout: RolloutView) -> None:
    """The episode's rollout exists: every later span of it (one HTTP request after another) nests under `state`'s root."""
    tracing = active()
    if state is None or tracing is None:
        return
    _SERVED[rollout] = (state, tracing)
    if state.span is not None and not state.epoch_set:
        try:
            session = rollout.session
        except Exception:  # not started: no simulated clock yet
            return
        state.epoch_set = True
        state.span.set_attribute("orchestra.sim.start_epoch", float(session.now - session.elapsed))


def end_served(rollout: RolloutView | None, record: RolloutRecord | None = None, *, state: _Rollout | None = None) -> None:
    """End a served episode's root span (idempotent): with the record's verdict when it was judged,
    without one when the episode was closed unjudged (or failed to open: give `state`)."""
    entry = _SERVED.pop(rollout, None) if rollout is not None else None
    if entry is not None:
        state = entry[0]
    if state is None or state.span is None:
        return
    span, state.span = state.span, None
    tracing = entry[1] if entry is not None else active()
    try:
        if record is not None and tracing is not None:
            _finish_workflow(tracing, span, record)
        elif rollout is not None:
            try:
                span.set_attribute("orchestra.sim.duration_s", float(rollout.session.elapsed))
            except Exception:
                pass
    finally:
        span.end()


@hookimpl
def rollout_closed(rollout: RolloutView) -> None:
    """A served episode's rollout closed (finished, or dropped unjudged): its root span ends here,
    with the verdict when `finish()` built a record."""
    if _SERVED and rollout in _SERVED:
        end_served(rollout, getattr(rollout, "record", None))


def _finish_workflow(tracing: Tracing, span: Span, record: RolloutRecord) -> None:
    from opentelemetry.trace import StatusCode

    span.set_attribute("orchestra.scenario.id", record.scenario_id)
    result = record.result
    if record.perturbation:
        span.set_attribute("orchestra.perturbation", record.perturbation)
    if record.not_applicable:  # a perturbation that cannot apply here: no rollout ran
        span.set_attribute("orchestra.not_applicable", record.not_applicable)
    if result is not None:
        span.set_attributes(
            {
                "orchestra.reward_mode": result.reward_mode,
                "orchestra.judge": result.judge,
                "orchestra.stop_reason": result.stop_reason,
                "orchestra.turns_completed": result.turns_completed,
                "orchestra.sim.duration_s": float(result.sim_seconds),
                "gen_ai.usage.input_tokens": result.prompt_tokens,
                "gen_ai.usage.output_tokens": result.completion_tokens,
            }
        )
    if result is not None and result.reward is not None:  # an ERROR has no verdict (`RolloutResult`)
        span.set_attributes({"orchestra.verdict": bool(result.success), "orchestra.reward": float(result.reward)})
        evaluation: dict[str, Any] = {
            "gen_ai.evaluation.name": result.judge,
            "gen_ai.evaluation.score.value": float(result.reward),
            "gen_ai.evaluation.score.label": "pass" if result.success else "fail",
        }
        if tracing.content and result.rationale:
            evaluation["gen_ai.evaluation.explanation"] = result.rationale
        span.add_event("gen_ai.evaluation.result", evaluation)
    if record.error:
        span.set_attribute("error.type", "rollout_error")
        span.set_status(StatusCode.ERROR, record.error if tracing.content or result is None else "rollout_error")


async def _traced_agent(tracing: Tracing, agent: AgentView, inner: Awaitable[None]) -> None:
    from opentelemetry.trace import SpanKind, StatusCode

    session = agent.session
    provider, model = _model_names(tracing, agent.model)
    start = session.elapsed
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": provider,
        "gen_ai.agent.name": agent.name,
        # v0.1.0 has no `gen_ai.agent.id` on internal agent spans (a hosted agent's stable id only)
        ("gen_ai.agent.id" if tracing.legacy else "orchestra.agent.id"): agent.run_id,
        "gen_ai.request.model": model,
        "orchestra.agent.role": agent.role,
        "orchestra.agent.scaffold": agent.ledger.scaffold,
        "orchestra.sim.start": start,
    }
    if agent.parent is not None:
        attributes["orchestra.agent.parent"] = agent.parent
    if agent.app is not None:  # an Agent2Agent app-agent: the ARE app it serves
        attributes["orchestra.agent.app"] = agent.app
    a2a = getattr(agent, "a2a", None)
    if a2a is not None:  # a remote A2A agent plays it: where (its own spans, if it traces, nest under this one)
        attributes["orchestra.agent.a2a_url"] = a2a.url
    rollout_state = _ROLLOUT.get()
    if rollout_state is not None and rollout_state.span is not None and not rollout_state.epoch_set:
        rollout_state.epoch_set = True  # the scenario's simulated start, as epoch seconds
        rollout_state.span.set_attribute("orchestra.sim.start_epoch", float(session.now - session.elapsed))
    with _child_span(tracing, agent, f"invoke_agent {agent.name}", SpanKind.INTERNAL, attributes) as span:
        agent.state[STATE_KEY] = _AgentTrace(span)
        try:
            await inner
        except BaseException as exc:
            _failed(span, exc)
            raise
        finally:
            ledger = agent.ledger
            span.set_attributes(
                {
                    "orchestra.sim.duration_s": float(session.elapsed - start),
                    "gen_ai.usage.input_tokens": ledger.prompt_tokens,
                    "gen_ai.usage.output_tokens": ledger.completion_tokens,
                    "orchestra.agent.steps": ledger.steps,
                    "orchestra.agent.model_calls": ledger.model_calls,
                    "orchestra.agent.tool_calls": ledger.tool_calls,
                }
            )
            if ledger.stop_reason:
                span.set_attribute("orchestra.agent.stop_reason", ledger.stop_reason)
        if agent.ledger.error:
            span.set_attribute("error.type", "agent_error")
            span.set_status(StatusCode.ERROR, agent.ledger.error if tracing.content else "agent_error")
        elif agent.role == "sub" and agent.ledger.answer is None:
            # no exception, but no answer either (its step budget ran out, the environment stopped):
            # `spawn` hands the caller a failed outcome, so the sub-agent's own span is an error too
            kind = agent.ledger.stop_reason or "no_answer"
            span.set_attribute("error.type", kind)
            span.set_status(StatusCode.ERROR, kind)


async def _traced_chat(tracing: Tracing, agent: AgentView, request: ModelRequest, inner: Awaitable[ModelResponse]) -> ModelResponse:
    from opentelemetry.trace import SpanKind

    config = agent.model
    provider, model = _model_names(tracing, config)
    start = agent.session.elapsed
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model,
        "orchestra.agent.name": agent.name,
        "orchestra.sim.start": start,
    }
    temperature = request.temperature if request.temperature is not None else config.temperature
    if temperature is not None:
        attributes["gen_ai.request.temperature"] = float(temperature)
    max_tokens = request.max_tokens if request.max_tokens is not None else config.max_tokens
    if max_tokens is not None:
        attributes["gen_ai.request.max_tokens"] = int(max_tokens)
    if request.stop:
        attributes["gen_ai.request.stop_sequences"] = list(request.stop)
    seed = config.extra.get("seed")
    if isinstance(seed, int):
        attributes["gen_ai.request.seed"] = seed
    if request.response_format is not None:
        attributes["gen_ai.output.type"] = "json"
    if config.endpoint:
        parts = urlsplit(config.endpoint)
        if parts.hostname:
            attributes["server.address"] = parts.hostname
            if parts.port is not None:
                attributes["server.port"] = parts.port
    if tracing.content:
        attributes["gen_ai.input.messages"] = json.dumps(_input_messages(request.messages), default=str)
    with _child_span(tracing, agent, f"chat {model}", SpanKind.CLIENT, attributes) as span:
        try:
            response = await inner
        except BaseException as exc:
            _failed(span, exc)
            if hasattr(exc, "permanent"):
                span.set_attribute("orchestra.model.permanent", bool(exc.permanent))
            raise
        usage = response.usage
        span.set_attributes(
            {
                "gen_ai.usage.input_tokens": usage.prompt_tokens,
                "gen_ai.usage.output_tokens": usage.completion_tokens,
                "orchestra.model.attempts": response.attempts,
                # what the clock plugin charges for this response as soon as the loop accepts it
                "orchestra.sim.duration_s": float(agent.session.config.clock.model_seconds(usage.prompt_tokens, usage.completion_tokens)),
            }
        )
        if usage.reasoning_tokens:
            span.set_attribute("gen_ai.usage.reasoning.output_tokens", usage.reasoning_tokens)
        if usage.counted_locally:
            span.set_attribute("orchestra.usage.counted_locally", True)
        if response.model:
            span.set_attribute("gen_ai.response.model", response.model)
        if response.finish_reason:
            span.set_attribute("gen_ai.response.finish_reasons", [response.finish_reason])
        if response.cost_usd:
            span.set_attribute("orchestra.cost_usd", float(response.cost_usd))
        if tracing.content:
            span.set_attribute("gen_ai.output.messages", json.dumps(_output_messages(response), default=str))
        return response


async def _traced_tool(tracing: Tracing, agent: AgentView, call: ToolCall, inner: Awaitable[ToolOutcome]) -> ToolOutcome:
    from opentelemetry.trace import SpanKind, StatusCode

    session = agent.session
    start = session.elapsed
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.type": "function",
        "orchestra.agent.name": agent.name,
        "orchestra.sim.start": start,
    }
    if call.id:
        attributes["gen_ai.tool.call.id"] = call.id
    spec = agent.tools.get(call.name)
    if spec is not None and spec.description:
        attributes["gen_ai.tool.description"] = spec.description
    mcp = None if tracing.legacy else current_mcp_call()
    if mcp is not None:  # a call that came over MCP (`orchestra serve`): the MCP conventions' attributes on the same span
        attributes.update(mcp)
    if tracing.content:
        attributes["gen_ai.tool.call.arguments"] = json.dumps(call.arguments, default=str)
    with _child_span(tracing, agent, f"execute_tool {call.name}", SpanKind.INTERNAL, attributes) as span:
        try:
            outcome = await inner
        except BaseException as exc:
            _failed(span, exc)
            raise
        finally:
            span.set_attribute("orchestra.sim.duration_s", float(session.elapsed - start))
        if tracing.content:
            result = outcome.output if outcome.ok else outcome.error
            span.set_attribute("gen_ai.tool.call.result", result if isinstance(result, str) else json.dumps(result, default=str))
        if not outcome.ok:
            # an MCP `CallToolResult` with `isError`: `tool_error`, as the MCP conventions say
            kind = type(outcome.exception).__name__ if outcome.exception is not None and mcp is None else "tool_error"
            span.set_attribute("error.type", kind)
            span.set_status(StatusCode.ERROR, (outcome.error or kind) if tracing.content else kind)
        return outcome


def _note_step_problems(tracing: Tracing, agent: AgentView, step: StepRecord) -> None:
    """A step whose output could not be acted on is an error in the trace (see the module doc)."""
    from opentelemetry.trace import SpanKind, StatusCode

    problems: list[tuple[str, dict[str, Any], str, str]] = []
    for _, why in step.retries:
        problems.append(("format_error", {}, "invalid_format_retry", why))
    for call in step.calls:
        if call.error is not None:
            kind = "unknown_tool" if call.name not in agent.tools else ("refused" if not call.logged else "bad_arguments")
            tool: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name, "gen_ai.tool.type": "function"}
            if call.id:
                tool["gen_ai.tool.call.id"] = call.id
            problems.append((f"execute_tool {call.name}", tool, kind, call.error))
    if step.format_error is not None:
        problems.append(("format_error", {}, "format_error", step.format_error))
    for name, extra, kind, text in problems:
        attributes: dict[str, Any] = {
            **extra,
            "orchestra.agent.name": agent.name,
            "orchestra.step": step.index,
            "orchestra.sim.start": agent.session.elapsed,
            "orchestra.sim.duration_s": 0.0,
        }
        if not tracing.legacy:  # every span has an operation name (a custom one: no GenAI operation fits an unusable output)
            attributes.setdefault("gen_ai.operation.name", "format_error")
        with _child_span(tracing, agent, name, SpanKind.INTERNAL, attributes) as span:
            span.set_attribute("error.type", kind)
            span.set_status(StatusCode.ERROR, text if tracing.content else kind)


def _note_injected(tracing: Tracing, agent: AgentView, results: list[list[dict[str, Any]] | None]) -> None:
    """Runs and notifications as events on the agent's span (before the model call they precede)."""
    trace = agent.state.get(STATE_KEY)
    if not isinstance(trace, _AgentTrace):
        return
    from orchestra.plugins.notifications import ENV_UPDATES, MESSAGE_UPDATES, USER_UPDATES

    now = float(agent.session.elapsed)
    span = trace.span
    if agent.ledger.runs != trace.runs_seen:
        trace.runs_seen = agent.ledger.runs
        event: dict[str, Any] = {"orchestra.run.index": agent.ledger.runs, "orchestra.sim.time": now}
        if tracing.content and agent.task:
            event["orchestra.content"] = agent.task
        span.add_event("orchestra.run.start", event)
    blocks = {"user": USER_UPDATES, "environment": ENV_UPDATES, "message": MESSAGE_UPDATES}
    for messages in results:
        for message in messages or ():
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content, default=str)
            kind = next((k for k, template in blocks.items() if text.startswith(template.split("{content}")[0])), "injected")
            if kind == "environment":
                # one event per notification: ARE's block has one "[YYYY-mm-dd HH:MM:SS] text" line each
                starts = list(_ENV_LINE.finditer(text))
                for i, match in enumerate(starts):
                    end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
                    body = text[match.end() : end].rstrip().removesuffix("***").rstrip()
                    attrs: dict[str, Any] = {"orchestra.notification.kind": kind, "orchestra.sim.time": now, "orchestra.notification.timestamp": match.group(1)}
                    if tracing.content:
                        attrs["orchestra.content"] = body
                    span.add_event("orchestra.notification", attrs)
                if starts:
                    continue
            attrs = {"orchestra.notification.kind": kind, "orchestra.sim.time": now}
            if tracing.content:
                attrs["orchestra.content"] = text
            span.add_event("orchestra.notification", attrs)


# ------------------------------------------------------------------------------------ helpers


@contextlib.contextmanager
def _child_span(tracing: Tracing, agent: AgentView, name: str, kind: SpanKind, attributes: dict[str, Any]) -> Iterator[Span]:
    """A span of `agent`'s rollout, current for the block, with the rollout's conversation id.

    Inside `orchestra run` the rollout's state is in the context and the span nests under the
    current one. A served episode's request (`orchestra serve`) starts without either: the state
    is looked up by the agent's rollout, and the span is parented to the episode's root span."""
    state = _ROLLOUT.get()
    parent = None
    token = None
    rollout = getattr(agent, "rollout", None) if state is None and _SERVED else None
    if rollout is not None:
        entry = _SERVED.get(rollout)
        if entry is not None and entry[0].span is not None:
            from opentelemetry.trace import set_span_in_context

            state = entry[0]
            parent = set_span_in_context(entry[0].span)
            token = _ROLLOUT.set(state)  # spans made inside this one (a delegation's) see the state too
    if state is not None:
        attributes["gen_ai.conversation.id"] = state.conversation_id
    try:
        with tracing.tracer.start_as_current_span(
            name, context=parent, kind=kind, attributes=attributes, record_exception=False, set_status_on_exception=False
        ) as span:
            yield span
    finally:
        if token is not None:
            _ROLLOUT.reset(token)


def _failed(span: Span, exc: BaseException) -> None:
    """Record an exception the conventions' way: status ERROR, `error.type`, the exception event."""
    from opentelemetry.trace import StatusCode

    cause = exc.__cause__ if exc.__cause__ is not None else exc
    span.set_attribute("error.type", type(cause).__name__)
    span.record_exception(exc)
    span.set_status(StatusCode.ERROR, type(cause).__name__)


def _model_names(tracing: Tracing, config: ModelConfig) -> tuple[str, str]:
    """`gen_ai.provider.name` and `gen_ai.request.model` for a litellm model string (cached per Tracing)."""
    key = f"{config.model}\x00{config.endpoint or ''}"
    cached = tracing.model_names.get(key)
    if cached is not None:
        return cached
    model_string: str = config.model
    provider, model = "", model_string
    try:
        from orchestra.litellm_setup import import_litellm

        model, provider, _, _ = import_litellm().get_llm_provider(model=model_string, api_base=config.endpoint)
    except Exception:  # an unknown provider: the prefix before the first "/", as litellm would route it
        prefix, sep, rest = model_string.partition("/")
        provider, model = (prefix, rest) if sep else ("", model_string)
    names = (PROVIDER_NAMES.get(provider, provider or "unknown"), model)
    tracing.model_names[key] = names
    return names


def _input_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-style chat messages in the conventions' input-messages schema (role + typed parts)."""
    out = []
    for m in messages:
        parts: list[dict[str, Any]] = []
        content = m.get("content")
        if m.get("role") == "tool":
            parts.append({"type": "tool_call_response", "id": m.get("tool_call_id", ""), "response": content})
        elif isinstance(content, str) and content:
            parts.append({"type": "text", "content": content})
        elif isinstance(content, list):
            parts.extend(
                {"type": "text", "content": p.get("text", "")} if isinstance(p, dict) and p.get("type") == "text" else {"type": "generic", "content": p}
                for p in content
            )
        for tc in m.get("tool_calls") or ():
            fn = tc.get("function", {}) if isinstance(tc, dict) else {}
            parts.append(
                {"type": "tool_call", "id": tc.get("id", "") if isinstance(tc, dict) else "", "name": fn.get("name", ""), "arguments": fn.get("arguments")}
            )
        out.append({"role": m.get("role", "user"), "parts": parts})
    return out


def _output_messages(response: ModelResponse) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if response.text:
        parts.append({"type": "text", "content": response.text})
    parts.extend({"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments} for c in response.tool_calls)
    return [{"role": "assistant", "parts": parts, "finish_reason": response.finish_reason or "stop"}]
