"""The data that flows between a scaffold, the model layer and the tools.

Kept free of litellm types so scaffolds and plugins never depend on a provider's response objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

#: How a scaffold expects the model to answer; offline models (oracle, scripted) read it.
ActionFormat = Literal["react", "tool_calls", "code"]


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    #: True when the provider returned no usage and orchestra counted tokens locally.
    counted_locally: bool = False


@dataclass
class ToolCall:
    """One action the model asked for. `arguments` is a dict once parsed; `error` says why not."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str = ""
    error: str | None = None
    #: False for a call refused before it was made (e.g. a second call where one is allowed);
    #: ARE logs a call before running it, so a logged call that fails still counts for termination.
    logged: bool = True


@dataclass
class ModelRequest:
    messages: list[dict[str, Any]]
    action_format: ActionFormat
    tools: list[dict[str, Any]] | None = None  # OpenAI function-tool schemas, for native tool calling
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    stop: list[str] | None = None
    response_format: dict[str, Any] | None = None  # constrained decoding, when the scaffold asks
    temperature: float | None = None
    max_tokens: int | None = None


@dataclass
class ModelResponse:
    text: str | None
    tool_calls: list[ToolCall]
    usage: Usage
    model: str = ""
    finish_reason: str | None = None
    cost_usd: float = 0.0
    #: Attempts it took (transient failures are retried; only the final answer is charged).
    attempts: int = 1
