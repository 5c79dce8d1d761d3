"""The code agent: the model writes Python, a sandbox runs it, every tool call goes through orchestra.

What the model sees is ARE's code-agent format (`REACT_LOOP_CODE_SYSTEM_PROMPT`, shipped by ARE
1.2.0 without an executor): `Thought:` then `Code:` and a fenced ```py block ending in
`<end_action>`; the system prompt is ARE's `DEFAULT_ARE_SIMULATION_REACT_CODE_SYSTEM_PROMPT`
(`hints=True`: `..._WITH_HINTS`, ARE's `CODE_AGENT_HINTS`) filled exactly as the JSON ReAct one —
tool list by ARE's tool-box template over ARE's `AppToolAdapter`s, notification policy, date — and
an app-agent gets ARE's app-agent recipe around the code instructions. Observations and errors
use ARE's message templates and step numbering (this class is the `react` scaffold with another
action: history, retries and texts are shared).

The action (`CodeAction`) runs the block in the agent's own sandboxed interpreter
(`orchestra.sandbox`; the `sandbox` option: `wasm` by default, `bwrap`, or `ORCHESTRA_SANDBOX`):

* the agent's tools (the scenario's apps, `SystemApp__wait_for_notification`, an app-agent's
  `final_answer`) are Python functions there, with their real signatures and docstrings; each
  call the code makes is yielded to the agent loop as it happens and executed through the
  `tool_call` hook — one at a time, in program order — so the clock, tracing, noise, the judge and
  the event log see exactly the calls a JSON agent's steps would make;
* the host checks every call first: only this agent's tools, arguments its schema accepts
  (otherwise the code gets a `ToolError` and nothing reaches ARE);
* `print` output and errors are the observation (tracebacks trimmed to the model's code);
  variables persist across the agent's steps; `final_answer` ends the block;
* compute is charged to the simulated clock where the backend counts it (wasm fuel, at
  `SandboxConfig.fuel_per_second`, times the clock's `time_scale`), before each tool call and at
  the end of the block, so an expensive loop costs the same simulated time on every machine;
* a block that kills the interpreter (fuel, memory, wall-clock limit) is an error observation
  saying so, and the next block gets a fresh interpreter.

The action runs synchronously inside the agent loop (the `Action` generator seam): while a block
computes, the event loop waits for it, so rollouts run concurrently on one loop
(`--concurrency`) take turns during compute; tool calls and model calls interleave as usual.

Two deliberate differences from ARE's JSON engine: `True`/`False` are not lowercased (it would
break Python and rewrite string literals), and a fenced block without the `Code:` token is
accepted (small models drop it). `constrained` is not supported (code has no JSON schema).
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from pydantic import Field

from orchestra.are import agent_format
from orchestra.sandbox.base import CellResult, Sandbox, SandboxConfig, SandboxError, SandboxLimits
from orchestra.scaffold import Action, ParsedAction, Scaffold, ScaffoldOptions
from orchestra.scaffolds.react import STOP_SEQUENCES, ReactScaffold
from orchestra.types import ModelRequest, ModelResponse, ToolCall, ToolOutcome

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.views import AgentView

CODE_TOKEN = "Code:"
_BLOCK = re.compile(r"```(?:py|python)?[ \t]*\n(.*?)(?:\n[ \t]*```|\Z)", re.DOTALL)


class CodeOptions(ScaffoldOptions):
    sandbox: str | None = Field(None, description="sandbox backend (registered by plugins): wasm (default) | bwrap; default $ORCHESTRA_SANDBOX or wasm")
    sandbox_limits: SandboxLimits = Field(default_factory=SandboxLimits)
    sandbox_options: dict[str, Any] = Field(
        default_factory=dict, description="the backend's own options (bwrap: allow_exec, pids_cgroup, host_uid, host_gid); docs/sandbox.md"
    )
    fuel_per_second: float = Field(5e9, gt=0, description="wasm fuel units per simulated second")
    hints: bool = Field(False, description="ARE's CODE_AGENT_HINTS in the prompt (DEFAULT_ARE_SIMULATION_REACT_CODE_SYSTEM_PROMPT_WITH_HINTS)")


class CodeScaffold(ReactScaffold):
    name = "code"
    action_format = "code"

    def __init__(self, tools: Any, options: Any = None) -> None:
        super().__init__(tools, options)
        base = options.model_dump() if isinstance(options, ScaffoldOptions) else dict(options or {})
        self.options: CodeOptions = CodeOptions(**base)
        self.sandbox: Sandbox | None = None
        self.cells = 0
        self.last: CodeAction | None = None

    @property
    def backend(self) -> str:
        return self.options.sandbox or os.environ.get("ORCHESTRA_SANDBOX") or "wasm"

    # ---- the prompt and the interpreter
    def start(self, agent: AgentView) -> None:
        super().start(agent)
        self.close()
        factory = agent.host.sandbox(self.backend)
        config = SandboxConfig(
            backend=self.backend, limits=self.options.sandbox_limits, fuel_per_second=self.options.fuel_per_second, options=self.options.sandbox_options
        )
        self.sandbox = factory(self.tools, seed=int(getattr(agent.session.scenario, "seed", 0) or 0), config=config)
        self.cells = 0

    def close(self) -> None:
        """End the interpreter (the `code_agent` plugin calls it when the agent's run ends)."""
        sandbox, self.sandbox = self.sandbox, None
        if sandbox is not None:
            sandbox.stop()

    def system_prompt(self, agent: AgentView) -> str:
        main, app = agent_format.are_code_prompts(hints=self.options.hints)
        if not agent.is_main:
            return agent_format.are_app_agent_react_system_prompt(self.are_tools, prompt=app)
        s = agent.session
        return agent_format.are_react_system_prompt(s.env, s.scenario, self.are_tools, prompt=main)

    def request(self, agent: AgentView) -> ModelRequest:
        req = Scaffold.request(self, agent)  # not react's: no constrained decoding for code
        if self.options.server_stop:
            req.stop = list(STOP_SEQUENCES)
        return req

    # ---- the output
    def output_text(self, response: ModelResponse) -> str:
        text = response.text or ""
        for stop in STOP_SEQUENCES:
            text = text.split(stop)[0]
        return text

    def retry_problem(self, response: ModelResponse) -> str | None:
        text = self.output_text(response)
        if CODE_TOKEN not in text and "Thought:" not in text and "```" not in text:
            return agent_format.are_error_text(agent_format.are_invalid_format_error(text))
        return None

    def exhausted_error(self, response: ModelResponse, attempts: int) -> str:
        return agent_format.are_error_text(agent_format.are_retries_exhausted_error(attempts, self.output_text(response)))

    def code(self, response: ModelResponse) -> tuple[str | None, str | None]:
        """(the code block, None) or (None, the format error as ARE reports it)."""
        text = self.output_text(response)
        try:
            _, action = agent_format.are_split_action(text, CODE_TOKEN)
        except Exception as exc:
            if not (agent_format.is_are_missing_token_error(exc) and "```" in text):
                return None, agent_format.are_error_text(exc)
            action = text  # a fenced block without `Code:` (small models): accepted
        match = _BLOCK.search(action)
        if match is None or not match.group(1).strip():
            message = "Error: no code block found after 'Code:'. Write the code in a ```py ... ``` block ending with <end_action>."
            return None, agent_format.are_error_text(agent_format.are_format_error(message))
        return match.group(1), None

    def parse(self, response: ModelResponse) -> tuple[list[ToolCall], str | None]:
        _, error = self.code(response)
        return [], error  # the calls are made by running the code (`action`)

    def action(self, agent: AgentView, response: ModelResponse) -> Action:
        code, error = self.code(response)
        if code is None:
            self.last = None
            return ParsedAction([], error)
        self.cells += 1
        self.last = CodeAction(self, agent, code, self.cells)
        return self.last

    # ---- history
    def record(self, agent: AgentView, response: ModelResponse, calls: list[ToolCall], outcomes: list[ToolOutcome], format_error: str | None) -> None:
        self.messages.append({"role": "assistant", "content": self.templates["llm_output"].format(content=self.output_text(response))})
        if format_error:
            self._error(format_error)
            return
        action, self.last = self.last, None
        result = action.result if action is not None else None
        if result is None:  # the environment stopped while the code ran
            return
        text = self.cap(result.output)
        if result.dropped:
            text += f"\n[{result.dropped} more characters of output were dropped]"
        if result.crashed is not None:
            problem = f"{result.crashed}. The interpreter was restarted: variables from earlier steps are lost."
            self._error(f"{text.rstrip()}\n{problem}".strip())
        elif result.error is not None:
            self._error(f"{text.rstrip()}\n{result.error}".strip())
        else:
            self._observation(text.strip() or "No observation")

    def charge_compute(self, agent: AgentView, fuel: int) -> None:
        """Charge `fuel` of the sandbox's compute to the simulated clock (wasm; bwrap counts none)."""
        if fuel <= 0 or self.sandbox is None or not self.sandbox.counts_compute:
            return
        session = agent.session
        dt = fuel / self.options.fuel_per_second * session.config.clock.time_scale
        if dt > 0 and not session.done:
            session.idle_until(session.now + dt)
            agent.ledger.sim_seconds += dt


class CodeAction(Action):
    """One code block run in the agent's interpreter; its tool calls are yielded as the code makes them."""

    def __init__(self, scaffold: CodeScaffold, agent: AgentView, code: str, index: int) -> None:
        self.scaffold = scaffold
        self.agent = agent
        self.code = code
        self.index = index
        self.result: CellResult | None = None
        self.format_error = None

    def run(self) -> Generator[ToolCall, ToolOutcome, None]:
        sandbox = self.scaffold.sandbox
        session = self.agent.session
        if sandbox is None:
            self.result = CellResult(output="", error=None, crashed="the code scaffold has no interpreter (start() was not called)")
            return
        try:
            sandbox.begin(self.code, name=f"<step {self.index}>", now=session.now)
        except SandboxError as exc:
            self.result = CellResult(output="", error=None, crashed=str(exc))
            return
        finished = False
        try:
            while True:
                event = sandbox.next_event()
                self.scaffold.charge_compute(self.agent, event.fuel)
                if isinstance(event, CellResult):
                    self.result, finished = event, True
                    return
                if event.problem is not None:
                    sandbox.reply(event, ok=False, error=event.problem, now=session.now)
                    continue
                outcome = yield ToolCall(name=event.tool, arguments=event.arguments, id=f"code-{self.index}-{event.id}")
                if outcome.ok:
                    sandbox.reply(event, ok=True, value=outcome.output, now=session.now)
                else:
                    sandbox.reply(event, ok=False, error=outcome.error or "failed", now=session.now)
        finally:
            if not finished:  # the loop stopped the action (the environment stopped): end the block
                sandbox.abort()
