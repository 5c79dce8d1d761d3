"""What a scaffold is: the policy's shape around a model — prompt, history, action parsing.

A scaffold never calls the model or the tools itself; the agent loop does, through hooks. It
turns history into a `ModelRequest`, a `ModelResponse` into tool calls, and outcomes back into
history. Scaffolds are registered by name through the `register_scaffolds` hook, built-ins too.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from orchestra.are_adapter import ToolSpec
from orchestra.model_types import ActionFormat, ModelRequest, ModelResponse, ToolCall

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.agent import AgentContext
    from orchestra.session import ToolOutcome


class ScaffoldOptions(BaseModel):
    """Options every scaffold understands; scaffolds may accept more (`extra` is allowed)."""

    model_config = ConfigDict(extra="allow")

    constrained: bool = Field(
        False, description="ask the server to constrain replies to the action schema (small local models need it)"
    )
    constrained_format: str = Field(
        "llama_cpp.server", description="how the server takes a schema: 'llama_cpp.server' (json_object) or 'llama-server' / 'openai' (json_schema)"
    )
    max_observation_chars: int = Field(20_000, gt=0)
    max_tokens: int | None = None


class Scaffold(ABC):
    """Base class: history handling shared by all scaffolds."""

    name: ClassVar[str]
    action_format: ClassVar[ActionFormat]

    def __init__(self, tools: dict[str, ToolSpec], options: ScaffoldOptions | None = None) -> None:
        self.tools = tools
        self.options = options or ScaffoldOptions()
        self.messages: list[dict[str, Any]] = []

    @abstractmethod
    def system_prompt(self, agent: AgentContext) -> str: ...

    @abstractmethod
    def parse(self, response: ModelResponse) -> tuple[list[ToolCall], str | None]:
        """The tool calls to execute (calls with `error` set are reported, not run) and a format error."""

    @abstractmethod
    def record(
        self, agent: AgentContext, response: ModelResponse, calls: list[ToolCall], outcomes: list[ToolOutcome], format_error: str | None
    ) -> None:
        """Append the model's turn and what came back to the history."""

    def start(self, agent: AgentContext) -> None:
        self.messages = [{"role": "system", "content": self.system_prompt(agent)}]

    def observe(self, messages: list[dict[str, Any]]) -> None:
        self.messages.extend(messages)

    def request(self, agent: AgentContext) -> ModelRequest:
        return ModelRequest(messages=list(self.messages), action_format=self.action_format, max_tokens=self.options.max_tokens)

    def response_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.options.constrained_format == "llama_cpp.server":
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema", "json_schema": {"name": "action", "schema": schema, "strict": True}}

    def render_output(self, outcome: ToolOutcome) -> str:
        """Tool output as the model sees it (errors separately, by the caller)."""
        parts = []
        if outcome.output is not None or not outcome.notifications:
            parts.append(_to_text(outcome.output))
        if outcome.notifications:
            parts.append("\n".join(f"[{n.kind}] {n.text}" for n in outcome.notifications))
        text = "\n".join(parts)
        limit = self.options.max_observation_chars
        return text if len(text) <= limit else text[:limit] + f"... [truncated {len(text) - limit} chars]"


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
    """Tool descriptions as ARE's default agent renders them (`are/simulation/tool_box.py`)."""
    lines = []
    for spec in tools.values():
        inputs = {a.name: {"description": a.description, "type": a.type_text} for a in spec.args}
        lines.append(
            f"- {spec.name}: {spec.description}\n    Takes inputs: {inputs}\n    Returns an output of type: {spec.return_type}"
        )
    return "\n".join(lines)
