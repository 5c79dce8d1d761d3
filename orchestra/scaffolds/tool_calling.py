"""Native function calling: the model answers with `tool_calls`; one call per step.

Tools are passed as OpenAI function schemas generated from ARE's app tool signatures
(`orchestra.tool_schemas` — ARE's own `to_open_ai()` is not a valid JSON Schema). The system
prompt keeps ARE's general and environment instructions (tools, notification policy, date); a
sub-agent's (role "sub", e.g. an Agent2Agent app-agent) is ARE's app-agent frame instead — ARE's
general instructions, its own sub-agent rules (answer through `final_answer`) and ARE's environment
instructions with ARE's app-agent hints, without notification policy or date.

With `constrained=True` (small local models behind llama.cpp & co.) no native tools are sent:
the server is asked to emit `{"name": <tool>, "arguments": {...}}` JSON restricted to the real
tools and argument schemas, which this scaffold turns into the same tool calls.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from orchestra.are import agent_format
from orchestra.config import FINAL_ANSWER_TOOL
from orchestra.scaffold import Scaffold, render_tool_list
from orchestra.tool_schemas import action_union_schema, openai_tool
from orchestra.types import ModelRequest, ModelResponse, ToolCall, ToolSpec

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.session import ToolOutcome
    from orchestra.views import AgentView

ANSWER_TOOL = "AgentUserInterface__send_message_to_user"
INSTRUCTIONS = """You are an expert assistant who solves tasks by calling tools (functions).

Rules:
- Every reply must call {how}. Plain text replies are not seen by anyone.
- To talk to the user, call {answer} — only when the task is fully done, or to ask for a needed clarification.
- Use the exact tool names and argument names of the tool descriptions; arguments must be valid JSON.
- Tool results come back as messages; never invent them."""
#: A sub-agent's instructions (an Agent2Agent app-agent, or any agent started by `spawn`): it
#: answers the agent that gave it the task, through `final_answer`, not the user.
SUB_AGENT_INSTRUCTIONS = """You are an expert assistant who solves tasks by calling tools (functions).

Rules:
- Every reply must call {how}. Plain text replies are not seen by anyone.
- When the task is done — or you cannot do more — call {answer} with your answer; the agent that gave you the task reads only that.
- Use the exact tool names and argument names of the tool descriptions; arguments must be valid JSON.
- Tool results come back as messages; never invent them."""


class ToolCallingScaffold(Scaffold):
    name = "tool_calling"
    action_format = "tool_calls"
    parallel: ClassVar[bool] = False

    #: (names and ids of the tools, their `tools[]` entries, the specs kept alive so the ids stay theirs)
    _tools_cache: tuple[tuple[tuple[str, int], ...], list[dict[str, Any]], list[ToolSpec]] | None = None

    def system_prompt(self, agent: AgentView) -> str:
        how = "one or more tools (they run in order)" if self.parallel else "exactly one tool"
        tool_list = render_tool_list(self.tools)
        if not agent.is_main:  # ARE's app-agent frame: its hints, no notifications, date or scenario prompt
            instructions = SUB_AGENT_INSTRUCTIONS.format(how=how, answer=FINAL_ANSWER_TOOL)
            return agent_format.are_app_agent_system_prompt(agent_instructions=instructions, tool_descriptions=tool_list)
        s = agent.session
        return agent_format.are_system_prompt(
            s.env, s.scenario, agent_instructions=INSTRUCTIONS.format(how=how, answer=ANSWER_TOOL), tool_descriptions=tool_list
        )

    @property
    def answer_tool(self) -> str:
        """How this agent ends its work: the user's tool, or `final_answer` for a sub-agent."""
        return FINAL_ANSWER_TOOL if FINAL_ANSWER_TOOL in self.tools and ANSWER_TOOL not in self.tools else ANSWER_TOOL

    def request(self, agent: AgentView) -> ModelRequest:
        req = super().request(agent)
        if self.options.constrained:
            union = action_union_schema(list(self.tools.values()), allow_text_reply=False)
            schema = union
            if self.parallel:
                schema = {"type": "object", "properties": {"calls": {"type": "array", "items": union, "minItems": 1}}, "required": ["calls"]}
            req.response_format = self.response_format(schema)
        else:
            req.tools = self._openai_tools()
            req.tool_choice = "auto"
            req.parallel_tool_calls = self.parallel
        return req

    def _openai_tools(self) -> list[dict[str, Any]]:
        """The `tools[]` of a request, built once per set of tools (a JSON schema per tool costs
        about half a millisecond: rebuilding them at every step was most of a step's overhead)."""
        key = tuple((name, id(spec)) for name, spec in self.tools.items())
        cached = self._tools_cache
        if cached is None or cached[0] != key:
            cached = (key, [openai_tool(spec) for spec in self.tools.values()], list(self.tools.values()))
            self._tools_cache = cached
        return list(cached[1])

    def parse(self, response: ModelResponse) -> tuple[list[ToolCall], str | None]:
        calls = list(response.tool_calls)
        if not calls and response.text and self.options.constrained:
            calls, error = _calls_from_json(response.text)
            if error:
                return [], error
        if not calls:
            how = f"to answer the user call {ANSWER_TOOL}" if self.answer_tool == ANSWER_TOOL else f"to finish call {FINAL_ANSWER_TOOL}"
            return [], f"You replied with text only. Call a tool; {how}."
        for i, call in enumerate(calls):
            if not call.id:
                call.id = f"call_{i}"
        if not self.parallel and len(calls) > 1:
            for extra in calls[1:]:
                extra.error = "Only one tool call per step: this call was not executed. Call it again in the next step if needed."
                extra.logged = False
        return calls, None

    def retry_problem(self, response: ModelResponse) -> str | None:
        """A reply with no usable call at all is asked again inside the iteration, as ARE asks
        again for an output with neither `Thought:` nor `Action:` (same budget semantics)."""
        calls, error = self.parse(response)
        return error if not calls else None

    def record_retry(self, agent: AgentView, response: ModelResponse, problem: str) -> None:
        """A reply with no usable call, asked again: the model sees its own reply, then why (it is
        not dropped: the next prompt extends what the model sampled, as a trainer needs)."""
        self.messages.append(self._assistant_message(response, []))
        self.messages.append({"role": "user", "content": f"ERROR: {problem}"})

    def retry_request(self, agent: AgentView, request: ModelRequest) -> ModelRequest:
        """Asked again with the reply and its error in the history (the next prompt extends it)."""
        return self.request(agent)

    def record(self, agent: AgentView, response: ModelResponse, calls: list[ToolCall], outcomes: list[ToolOutcome], format_error: str | None) -> None:
        if format_error:
            self.messages.append(self._assistant_message(response, []))
            self.messages.append({"role": "user", "content": f"ERROR: {format_error}"})
            return
        if self.options.constrained:  # plain-text transcript: chat templates of small models drop tool roles
            self.messages.append({"role": "assistant", "content": response.text or json.dumps([{"name": c.name, "arguments": c.arguments} for c in calls])})
            for call, outcome in zip(calls, outcomes):
                self.messages.append({"role": "user", "content": f"Result of {call.name}:\n{self._result_text(outcome)}"})
            return
        self.messages.append(self._assistant_message(response, calls))
        for call, outcome in zip(calls, outcomes):
            self.messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": self._result_text(outcome)})

    @staticmethod
    def _assistant_message(response: ModelResponse, calls: list[ToolCall]) -> dict[str, Any]:
        """The model's turn as it wrote it: its content as sent (`""` stays `""`), its reasoning, and
        each call's arguments as its own text (never re-serialized)."""
        message: dict[str, Any] = {"role": "assistant", "content": response.text}
        if response.reasoning is not None:
            message["reasoning_content"] = response.reasoning
        if calls:
            message["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_text()}} for c in calls]
        return message

    def _result_text(self, outcome: ToolOutcome) -> str:
        if outcome.ok:
            return self.render_output(outcome)
        return f"ERROR: {outcome.error}"


def _calls_from_json(text: str) -> tuple[list[ToolCall], str | None]:
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        return [], f'Reply with JSON {{"name": <tool>, "arguments": {{...}}}}; yours is invalid ({exc.msg} at char {exc.pos}).'
    items = data.get("calls") if isinstance(data, dict) and "calls" in data else [data]
    calls = []
    for i, item in enumerate(items if isinstance(items, list) else [items]):
        if not isinstance(item, dict) or "name" not in item:
            return [], 'Each call must be an object {"name": <tool>, "arguments": {...}}.'
        args = item.get("arguments") or {}
        call = ToolCall(name=str(item["name"]), arguments=args if isinstance(args, dict) else {}, id=f"call_{i}")
        if not isinstance(args, dict):
            call.error = f"arguments must be a JSON object, got {type(args).__name__}"
        calls.append(call)
    return calls, None
