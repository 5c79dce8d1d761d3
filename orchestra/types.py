"""The data that flows between the host, the session, scaffolds, models, tools and plugins.

Dependency-free on purpose (standard library only): the hook specifications, scaffolds and
plugins type their arguments with these classes without importing the loop, the session, ARE or
litellm; what plugins may read of an agent, a rollout and the host is in `orchestra.views`.
"""

from __future__ import annotations

import enum
import json
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
    #: The arguments exactly as the model wrote them (a JSON text, parseable or not: `error` says
    #: why not): the history shows the model its own text byte for byte, never a re-serialized or
    #: rewritten `{}` — what a trainer needs for the next prompt to extend this completion.
    raw_arguments: str | None = None

    def arguments_text(self) -> str:
        """The arguments as the history shows them: the model's own text when it wrote one, else JSON."""
        return self.raw_arguments if self.raw_arguments is not None else json.dumps(self.arguments)


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


@dataclass(frozen=True)
class Tokens:
    """One model call in token ids, as a trainer needs it: the prompt the model saw, the completion
    it sampled, and the logprob of each sampled token — exactly as the server sent them."""

    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    #: One per completion token, when the server sent them.
    logprobs: tuple[float, ...] | None = None
    #: True when the server sent no ids and orchestra tokenized the turn with the model's own
    #: tokenizer (`orchestra.tokenization`): the prompt as the chat template renders it, not as sampled.
    retokenized: bool = False


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
    #: The model's reasoning text, when the server sends it apart (`reasoning_content`); kept in the
    #: history as the model wrote it.
    reasoning: str | None = None
    #: The call in token ids, when the server sent them (or they were counted with the model's tokenizer).
    tokens: Tokens | None = None
    #: Which client made the call: `openai` (straight to an OpenAI-compatible server,
    #: `orchestra.openai_client`), `litellm`, or "" (none: a trainer's completion, an offline model).
    client: str = ""


# ---------------------------------------------------------------------------------------- tools


@dataclass(frozen=True)
class ToolArg:
    name: str
    type_hint: Any
    type_text: str
    description: str
    required: bool
    default: Any = None


@dataclass(frozen=True)
class ToolSpec:
    """What a scaffold needs to know about one agent tool (`<App instance name>__<method>`)."""

    name: str
    app_name: str
    app_class: str
    method: str
    description: str
    args: tuple[ToolArg, ...]
    return_type: str
    writes: bool


@dataclass
class Notification:
    """One message from ARE's notification system, as the agent will see it."""

    kind: str  # "user" | "environment" | "stop"
    text: str
    timestamp: float


@dataclass
class ToolOutcome:
    """What one tool call did. `ok=False` means `error` says why; the rollout goes on either way."""

    name: str
    arguments: dict[str, Any]
    ok: bool
    output: Any = None
    error: str | None = None
    sim_time: float = 0.0
    #: Filled by `call_tool` after a wait (the agent loop leaves them queued for its pre-step).
    notifications: list[Notification] = field(default_factory=list)
    #: The exception the tool raised (ARE's agent renders it with its own texts).
    exception: BaseException | None = None
    #: The output as the model was shown it, rendered by the scaffold right after the call.
    observation: str | None = None


# ---------------------------------------------------------------------------------------- steps


class StepDecision(str, enum.Enum):
    """What happens after a step (the `post_step` hook's answer)."""

    STOP = "stop"
    END_TURN = "end_turn"
    PAUSE = "pause"
    CONTINUE = "continue"
    #: A sub-agent returned (its `final_answer` tool): its run is over, its answer goes to the parent.
    RETURN = "return"


@dataclass
class StepRecord:
    """One iteration of an agent: the model's response, the calls it made and what they did."""

    index: int
    response: ModelResponse | None
    calls: list[ToolCall]
    outcomes: list[ToolOutcome]
    format_error: str | None = None
    #: Outputs asked again inside this iteration (ARE's invalid-format retries), with the reason.
    retries: list[tuple[ModelResponse, str]] = field(default_factory=list)
    #: The model call failed for good: the error as the model was shown it.
    model_error: str | None = None

    @property
    def last_tool(self) -> str | None:
        """The last call ARE would have logged (a call is logged before it runs, failed or not)."""
        logged = [c.name for c in self.calls if c.logged]
        return logged[-1] if logged else None


@dataclass
class AgentLedger:
    """What one agent spent in one rollout: the per-agent line of a rollout record."""

    name: str
    role: str = "main"
    parent: str | None = None
    model: str = ""
    scaffold: str = ""
    steps: int = 0
    runs: int = 0
    turns: int = 0
    model_calls: int = 0
    #: Model calls that failed for good (after their retries) and were shown to the model as ARE does.
    model_errors: int = 0
    #: The last of those failures (the `ModelError`'s message).
    last_model_error: str | None = None
    tool_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    #: Simulated seconds this agent's own model calls and tool calls moved the clock.
    sim_seconds: float = 0.0
    stop_reason: str | None = None
    error: str | None = None
    #: A sub-agent's final answer (what its parent got back as the tool outcome).
    answer: str | None = None
    #: The ARE app an app-agent serves (Agent2Agent: its tools are that app's); None for the main
    #: agent and for generic sub-agents.
    app: str | None = None
    #: An agent played by a remote A2A agent (`orchestra.a2a`): its URL, the messages sent, and what
    #: the clock charged from what (its MCP tool calls, its model calls through the proxy); else None.
    a2a: dict[str, Any] | None = None


@dataclass
class Delegation:
    """One task an agent handed to a sub-agent (`orchestra.agent.spawn`), and what came back."""

    #: The calling agent's name.
    caller: str
    #: The sub-agent's (unique) name.
    callee: str
    #: The tool the caller called (`<App>__expert_agent`), or "spawn" for a direct spawn.
    tool: str
    #: The task text as the caller wrote it (before any wrapping the callee sees).
    task: str
    ok: bool
    #: The answer returned (ok), else None.
    answer: str | None = None
    #: Why the delegation failed (not ok), else None.
    error: str | None = None
    #: The ARE app the callee serves (Agent2Agent), None for a generic sub-agent.
    app: str | None = None
    #: Simulated seconds since the scenario started, when the call began.
    start: float = 0.0
    #: Simulated seconds the callee ran (its model and tool calls, while the caller waited).
    duration: float = 0.0
    #: The callee's iterations and tokens.
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
