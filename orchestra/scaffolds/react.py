"""ReAct with one JSON action per step — ARE's default agent, byte for byte in what the model sees.

The model writes `Thought: ...` then `Action:` and a JSON blob `{"action": <tool>, "action_input":
{...}}` ending with `<end_action>`; it never writes the observation. Everything the model reads
is what ARE's default agent (`are_simulation_react_json_agent` in `ARESimulationAgent`,
are/simulation/agents/default_agent/) would show it, produced by ARE's own code where ARE has a
function for it:

* the system prompt: ARE's JSON ReAct prompt, filled in ARE's order, tool list rendered by ARE's
  tool-box template over `AppToolAdapter`s, then ARE's `"{content}\\n"` message template; a
  sub-agent (role "sub", e.g. an Agent2Agent app-agent) gets ARE's app-agent prompt instead
  (`DEFAULT_ARE_SIMULATION_APP_AGENT_REACT_JSON_SYSTEM_PROMPT`: no notifications, date or scenario
  prompt; its tools, ARE's `FinalAnswerTool` last);
* the output: `True`/`False` lowercased in the whole text and cut at `<end_action>` /
  `Observation:` client-side, as ARE's `LiteLLMEngine` does (no stop sequences are sent unless
  `server_stop`); stored as the assistant message `"<output>\\n"`;
* an output with neither `Thought:` nor `Action:` is asked again inside the iteration (up to 10
  times; each rejected output is reported as ARE's `InvalidActionAgentError`, never stored as an
  assistant message); parsing is ARE's `JsonActionExecutor` (`extract_action`, `parse_json_blob`:
  `\\"` becomes `'`, `\"\"\"...\"\"\"` becomes `'...'`, first `{` to last `}`, code fences dropped);
* observations `"[OUTPUT OF STEP i] Observation:\\n***\\n<str(output).strip() or 'No observation'>\\n***\\n"`
  with no cut (`max_observation_chars` is an option), errors as ARE's `ErrorLog`
  (`Error: <Class>\\nException: ...\\nCategory: ...`) in ARE's ERROR template, a failed tool call
  with the tool's description appended, an unknown tool as "unknown tool X, should be instead one
  of [...]"; `i` counts observations and errors, as ARE numbers them.

With `constrained=True` the server is asked to emit the JSON blob only — an object
`{"thought", "action", "action_input"}` restricted to the real tools and their argument schemas —
which small local models need; such a reply is rewritten to `Thought: ...\\nAction:\\n{...}` before
ARE's parsing (the one place this scaffold departs from ARE's format, on request).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from orchestra.are import agent_format
from orchestra.scaffold import Scaffold
from orchestra.tool_schemas import parameters_schema
from orchestra.types import ActionFormat, ModelRequest, ModelResponse, ToolCall, Usage

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.session import ToolOutcome
    from orchestra.views import AgentView

STOP_SEQUENCES = list(agent_format.ARE_STOP_SEQUENCES)


class ReactScaffold(Scaffold):
    name = "react"
    action_format: ClassVar[ActionFormat] = "react"
    default_max_observation_chars: ClassVar[int | None] = None

    def __init__(self, tools: Any, options: Any = None) -> None:
        super().__init__(tools, options)
        self.are_tools: dict[str, Any] = {}
        self.templates: dict[str, str] = {}
        self.output_step = 0  # ARE's `id_output_step`: observations and errors so far

    # ---- the prompt ----
    def start(self, agent: AgentView) -> None:
        session = agent.session
        extra = {name: spec for name, spec in self.tools.items() if name not in session.app_tools}
        app_tools = {name: tool for name, tool in session.app_tools.items() if name in self.tools}
        self.are_tools = agent_format.are_agent_tools(app_tools, extra)
        self.templates = agent_format.are_message_templates()
        self.output_step = 0
        self.messages = [{"role": "system", "content": self.templates["system_prompt"].format(content=self.system_prompt(agent))}]

    def system_prompt(self, agent: AgentView) -> str:
        if not agent.is_main:  # a sub-agent (an Agent2Agent app-agent): ARE's app-agent prompt
            return agent_format.are_app_agent_react_system_prompt(self.are_tools)
        s = agent.session
        return agent_format.are_react_system_prompt(s.env, s.scenario, self.are_tools)

    def new_task(self, agent: AgentView, task: str) -> None:
        if task:
            self.messages.append({"role": "user", "content": self.templates["task"].format(content=task)})

    def request(self, agent: AgentView) -> ModelRequest:
        req = super().request(agent)
        if self.options.server_stop:
            req.stop = list(STOP_SEQUENCES)
        if self.options.constrained:
            req.response_format = self.response_format(self.action_schema())
        return req

    def action_schema(self) -> dict[str, Any]:
        branches = [
            {
                "type": "object",
                "properties": {"thought": {"type": "string"}, "action": {"const": name}, "action_input": parameters_schema(spec)},
                "required": ["thought", "action", "action_input"],
            }
            for name, spec in self.tools.items()
        ]
        return {"anyOf": branches} if len(branches) > 1 else branches[0]

    # ---- the output, as ARE's engine returns it ----
    def output_text(self, response: ModelResponse) -> str:
        text = response.text or ""
        if self.options.constrained:
            text = _constrained_to_react(text)
        text = text.replace("False", "false").replace("True", "true")
        for stop in STOP_SEQUENCES:
            text = text.split(stop)[0]
        return text

    def forced_response(self, request: ModelRequest) -> ModelResponse | None:
        last = request.messages[-1]["content"] if request.messages else ""
        if isinstance(last, str) and "ERROR" in last and "candidates" in last:
            return ModelResponse(text=agent_format.are_force_retry_output(), tool_calls=[], usage=Usage(), model="are-force-retry")
        return None

    def retry_problem(self, response: ModelResponse) -> str | None:
        text = self.output_text(response)
        if "Action:" not in text and "Thought:" not in text:
            return agent_format.are_error_text(agent_format.are_invalid_format_error(text))
        return None

    def record_retry(self, agent: AgentView, response: ModelResponse, problem: str) -> None:
        self._error(problem)

    def exhausted_error(self, response: ModelResponse, attempts: int) -> str:
        return agent_format.are_error_text(agent_format.are_retries_exhausted_error(attempts, self.output_text(response)))

    def record_model_error(self, agent: AgentView, text: str) -> None:
        self._error(text)

    # ---- parsing, with ARE's JsonActionExecutor ----
    def parse(self, response: ModelResponse) -> tuple[list[ToolCall], str | None]:
        text = self.output_text(response)
        try:
            name, action_input = agent_format.are_parse_action(text)
        except Exception as exc:
            return [], agent_format.are_error_text(exc)
        if not name:
            return [], agent_format.are_error_text(agent_format.are_json_parsing_error("Error: error parsing the tool_name in the action."))
        if name not in self.are_tools:
            error = agent_format.are_error_text(agent_format.are_unknown_tool_error(name, list(self.are_tools)))
            # never run; the arguments are kept for the record (the trajectory shows what the model asked)
            arguments = action_input if isinstance(action_input, dict) else {}
            return [ToolCall(name=name, arguments=arguments, id=f"step-{name}", error=error)], None
        arguments, problem = self._arguments(name, action_input)
        if problem is not None:
            return [ToolCall(name=name, arguments={}, id=f"step-{name}", error=problem)], None
        return [ToolCall(name=name, arguments=arguments, id=f"step-{name}")], None

    def _arguments(self, name: str, action_input: Any) -> tuple[dict[str, Any], str | None]:
        """ARE calls `tool(**action_input)`, `tool(action_input)` for a string, `tool()` when falsy."""
        if not action_input:
            return {}, None
        if isinstance(action_input, dict):
            return action_input, None
        tool = self.are_tools[name]
        if isinstance(action_input, str):
            spec = self.tools.get(name)
            if spec is not None and spec.args:
                return {spec.args[0].name: action_input}, None  # ARE binds it to the first parameter
            exc: BaseException = TypeError("too many positional arguments")  # inspect's bind, inside ARE's event wrapper
        elif getattr(type(tool), "__str__") is not getattr(object, "__str__"):  # noqa: B009  (mypy: comparing the methods themselves)
            # ARE's `tool(**action_input)` fails before the call, and Python's message names the
            # callable by `str(tool)` (ARE's `Tool.__repr__`: name and description). Unpacking into a
            # stand-in with the same `str` gives Python's exact text, and never runs the tool.
            exc = _unpacking_error(str(tool), action_input)
        else:  # a plugin tool (no ARE counterpart): a stable text without the object's address
            cls = type(tool)
            exc = TypeError(f"{cls.__module__}.{cls.__qualname__} object argument after ** must be a mapping, not {type(action_input).__name__}")
        return {}, agent_format.are_error_text(agent_format.are_tool_execution_error(exc, tool))

    # ---- history, as ARE's build_history_from_logs renders it ----
    def render_output(self, outcome: ToolOutcome) -> str:
        if outcome.observation is not None:
            return outcome.observation
        content = str(outcome.output)
        return self.cap(content.strip()) if content else "No observation"

    def record(self, agent: AgentView, response: ModelResponse, calls: list[ToolCall], outcomes: list[ToolOutcome], format_error: str | None) -> None:
        self.messages.append({"role": "assistant", "content": self.templates["llm_output"].format(content=self.output_text(response))})
        if format_error:
            self._error(format_error)
        for call, outcome in zip(calls, outcomes):
            if outcome.ok:
                self._observation(outcome.observation if outcome.observation is not None else self.render_output(outcome))
            else:
                self._error(call.error if call.error is not None else self._tool_error(outcome))

    def record_auto_call(self, agent: AgentView, call: ToolCall, outcome: ToolOutcome) -> None:
        if outcome.ok:
            self._observation(outcome.observation or self.render_output(outcome))
        else:
            self._error(self._tool_error(outcome))

    def _tool_error(self, outcome: ToolOutcome) -> str:
        tool = self.are_tools.get(outcome.name)
        cause: BaseException | str = outcome.exception if outcome.exception is not None else (outcome.error or "failed")
        if tool is None:
            return agent_format.are_error_text(cause if isinstance(cause, BaseException) else RuntimeError(cause))
        return agent_format.are_error_text(agent_format.are_tool_execution_error(cause, tool))

    def _observation(self, content: str) -> None:
        self.output_step += 1
        self.messages.append({"role": "user", "content": self.templates["observation"].format(i=self.output_step, content=content)})

    def _error(self, content: str) -> None:
        self.output_step += 1
        self.messages.append({"role": "user", "content": self.templates["error"].format(i=self.output_step, content=content)})


def _constrained_to_react(text: str) -> str:
    """A constrained reply (the JSON blob alone, with a "thought") in ARE's `Thought:`/`Action:` form."""
    try:
        blob = json.loads(text)
    except json.JSONDecodeError:
        return text
    if not isinstance(blob, dict) or "action" not in blob:
        return text
    thought = str(blob.pop("thought", "") or "")
    return f"Thought: {thought}\nAction:\n{json.dumps(blob)}<end_action>"


class _NamedCallable:
    """Does nothing when called; `str()` is the given name (what Python's `**` error quotes)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return self.name

    def __call__(self, **kwargs: Any) -> None:
        return None


def _unpacking_error(name: str, value: Any) -> TypeError:
    """The TypeError Python raises for `<callable named name>(**value)`, value not a mapping."""
    try:
        _NamedCallable(name)(**value)
    except TypeError as exc:
        return exc
    raise ValueError(f"{type(value).__name__} is a mapping; only a non-mapping action_input fails")
