"""What a scaffold is: the policy's shape around a model — prompt, history, action parsing.

A scaffold never calls the model or the tools itself; the agent loop does, through hooks. It
turns history into a `ModelRequest`, a `ModelResponse` into tool calls, and outcomes back into
history. Scaffolds are registered by name through the `register_scaffolds` hook, built-ins too.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from orchestra.types import ActionFormat, ModelRequest, ModelResponse, ToolCall, ToolOutcome, ToolSpec

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.views import AgentView


class Action:
    """What one model response does, run by the agent loop: tool calls produced one at a time.

    `run()` is a generator that yields each `ToolCall` and receives its `ToolOutcome` (the loop
    executes the call through the `tool_call` hook in between), so an action can decide its next
    call from the previous outcome while it runs — a code agent yields the calls its code makes
    as the code executes. `format_error` is read once the generator ends (or the loop stops it
    because the environment stopped). The default action (`ParsedAction`) yields a fixed list.
    """

    format_error: str | None = None

    def run(self) -> Generator[ToolCall, ToolOutcome, None]:
        raise NotImplementedError


class ParsedAction(Action):
    """The calls a scaffold parsed from the response, executed in order (calls with `error` set
    are reported, not run)."""

    def __init__(self, calls: list[ToolCall], format_error: str | None) -> None:
        self.calls = calls
        self.format_error = format_error

    def run(self) -> Generator[ToolCall, ToolOutcome, None]:
        for call in self.calls:  # noqa: UP028  (not `yield from`: the loop send()s outcomes, a list iterator has no send)
            yield call


class ScaffoldOptions(BaseModel):
    """Options every scaffold understands; scaffolds may accept more (`extra` is allowed)."""

    model_config = ConfigDict(extra="allow")

    constrained: bool = Field(False, description="ask the server to constrain replies to the action schema (small local models need it)")
    constrained_format: str = Field(
        "llama_cpp.server", description="how the server takes a schema: 'llama_cpp.server' (json_object) or 'llama-server' / 'openai' (json_schema)"
    )
    max_observation_chars: int | None = Field(None, gt=0, description="cut tool outputs longer than this; default: the scaffold's (react: no cut, as ARE)")
    max_tokens: int | None = None
    server_stop: bool = Field(False, description="also send the scaffold's stop sequences to the server (ARE cuts client-side and sends none)")


class Scaffold(ABC):
    """Base class: history handling shared by all scaffolds.

    The agent loop (`orchestra.agent`) calls, per run: `new_task`; per iteration: `observe`
    (pre-step messages), `request`, `retry_problem` / `record_retry` (outputs asked again inside
    the iteration), `action` (by default `parse`), `render_output` (right after each call), `record`. Tasks and
    notifications reach every scaffold in ARE's format.

    A subclass gives `name`, `action_format` (`tool_calls`: native tool calls; `react`: ARE's text
    format) and three methods; `register_scaffolds` makes it known (docs/plugins.md has the whole
    package, tested)::

        class TerseScaffold(Scaffold):
            name, action_format = "terse", "tool_calls"

            def system_prompt(self, agent):  # the main agent answers the user; a sub-agent calls final_answer
                return "Use the tools. When done, call " + ("AgentUserInterface__send_message_to_user" if agent.is_main else "final_answer")

            def request(self, agent):
                request = super().request(agent)
                request.tools = [openai_tool(spec) for spec in self.tools.values()]
                return request

            def parse(self, response):
                return (response.tool_calls[:1], None) if response.tool_calls else ([], "Call a tool.")

            def record(self, agent, response, calls, outcomes, format_error):
                ...  # append the assistant turn and each outcome to self.messages
    """

    name: ClassVar[str]
    action_format: ClassVar[ActionFormat]
    #: Tool outputs longer than this are cut (None: never), unless `max_observation_chars` says otherwise.
    default_max_observation_chars: ClassVar[int | None] = 20_000

    def __init__(self, tools: dict[str, ToolSpec], options: ScaffoldOptions | None = None) -> None:
        self.tools = tools
        self.options = options or ScaffoldOptions()
        self.messages: list[dict[str, Any]] = []

    @abstractmethod
    def system_prompt(self, agent: AgentView) -> str: ...

    @abstractmethod
    def parse(self, response: ModelResponse) -> tuple[list[ToolCall], str | None]:
        """The tool calls to execute (calls with `error` set are reported, not run) and a format error."""

    def action(self, agent: AgentView, response: ModelResponse) -> Action:
        """The action `response` asks for. Default: `parse` it into a fixed list of calls;
        override to produce calls while the action runs (see `Action`)."""
        return ParsedAction(*self.parse(response))

    @abstractmethod
    def record(self, agent: AgentView, response: ModelResponse, calls: list[ToolCall], outcomes: list[ToolOutcome], format_error: str | None) -> None:
        """Append the model's turn and what came back to the history."""

    def start(self, agent: AgentView) -> None:
        self.messages = [{"role": "system", "content": self.system_prompt(agent)}]

    def new_task(self, agent: AgentView, task: str) -> None:
        """A run starts: the user messages that started it, joined (ARE's `[TASK]` message; none
        when only the environment spoke)."""
        if task:
            self.messages.append({"role": "user", "content": f"[TASK]: \n{task}\n"})

    def observe(self, messages: list[dict[str, Any]]) -> None:
        self.messages.extend(messages)

    def request(self, agent: AgentView) -> ModelRequest:
        return ModelRequest(messages=list(self.messages), action_format=self.action_format, max_tokens=self.options.max_tokens)

    def forced_response(self, request: ModelRequest) -> ModelResponse | None:
        """A reply to use instead of calling the model (ARE has one quirk of that kind); None: call it."""
        return None

    def retry_problem(self, response: ModelResponse) -> str | None:
        """Why this output is unusable as a whole and must be asked again inside the iteration
        (ARE: neither `Thought:` nor `Action:`); None when it can be parsed."""
        return None

    def record_retry(self, agent: AgentView, response: ModelResponse, problem: str) -> None:
        """An output was asked again: tell the model in the next iteration (ARE logs an error)."""
        self.messages.append({"role": "user", "content": f"ERROR: {problem}"})

    def retry_request(self, agent: AgentView, request: ModelRequest) -> ModelRequest:
        """The request that asks again after an unusable output (`record_retry` ran). Default: the
        same request, as ARE's agent resends its prompt (the error reaches the model in the next
        iteration); a scaffold whose history only grows may rebuild it, so the model sees its own
        reply and the error at once (the trajectory keeps the step's first prompt)."""
        return request

    def exhausted_error(self, response: ModelResponse, attempts: int) -> str:
        """The error after the last allowed retry (ARE raises it whatever that output was)."""
        return f"No usable output after {attempts} attempts."

    def model_error_text(self, exc: BaseException) -> str:
        """A model call that failed for good, as ARE's agent shows an exception."""
        from orchestra.are import agent_format

        return agent_format.are_error_text(exc.__cause__ or exc)

    def record_model_error(self, agent: AgentView, text: str) -> None:
        self.messages.append({"role": "user", "content": f"ERROR: {text}"})

    def record_auto_call(self, agent: AgentView, call: ToolCall, outcome: ToolOutcome) -> None:
        """A call the loop made on the agent's behalf (the max-iterations answer). Default: nothing."""

    def response_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.options.constrained_format == "llama_cpp.server":
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema", "json_schema": {"name": "action", "schema": schema, "strict": True}}

    @property
    def max_observation_chars(self) -> int | None:
        return self.options.max_observation_chars or self.default_max_observation_chars

    def cap(self, text: str) -> str:
        limit = self.max_observation_chars
        if limit is None or len(text) <= limit:
            return text
        return text[:limit] + f"... [truncated {len(text) - limit} chars]"

    def render_output(self, outcome: ToolOutcome) -> str:
        """Tool output as the model sees it (errors separately, by `record`). Called right after
        the call, so a later change to the same app object does not change what the model saw."""
        if outcome.observation is not None:
            return outcome.observation
        return self.cap(_to_text(outcome.output))


def _to_text(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def render_tool_list(tools: dict[str, ToolSpec]) -> str:
    """A compact tool list in the layout of ARE's tool-box template (non-ARE scaffolds). The same
    specs (the objects: `ToolSpec`s are frozen, and shared by the rollouts of a scenario) render
    once per process: every rollout's system prompt holds this text."""
    key = tuple((name, id(spec)) for name, spec in tools.items())
    with _rendered_lock:
        found = _rendered.get(key)
        if found is not None:
            _rendered.move_to_end(key)
            return found[1]
    text = _render_tool_list(tools)
    with _rendered_lock:
        _rendered[key] = (tuple(tools.values()), text)  # the specs kept alive: no other object takes their ids
        while len(_rendered) > 64:
            _rendered.popitem(last=False)
    return text


_rendered: OrderedDict[tuple[tuple[str, int], ...], tuple[tuple[ToolSpec, ...], str]] = OrderedDict()
_rendered_lock = threading.Lock()


def _render_tool_list(tools: dict[str, ToolSpec]) -> str:
    lines = []
    for spec in tools.values():
        inputs = {a.name: {"description": a.description, "type": a.type_text} for a in spec.args}
        lines.append(f"- {spec.name}: {spec.description}\n    Takes inputs: {inputs}\n    Returns an output of type: {spec.return_type}")
    return "\n".join(lines)
