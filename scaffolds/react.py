"""ReAct with one JSON action per step — ARE's default agent format (the Gaia2 paper's scaffold).

The model writes `Thought: ...` then `Action:` and a JSON blob `{"action": <tool>, "action_input":
{...}}` ending with `<end_action>`; it never writes the observation. Prompt (ARE's own system prompt,
filled as ARE fills it), stop sequences, parsing rules and history rendering follow ARE's
`JsonActionExecutor` and `BaseAgent` (are/simulation/agents/default_agent/), so a model tuned on
ARE's agent sees the same conversation here. Format errors go back to the model as observations.

With `constrained=True` the server is asked to emit the JSON blob only — an object
`{"thought", "action", "action_input"}` restricted to the real tools and their argument schemas —
which small local models need to produce valid actions.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from orchestra import are_adapter
from orchestra.model_types import ModelRequest, ModelResponse, ToolCall
from orchestra.scaffold import Scaffold, render_tool_list
from orchestra.tool_schemas import parameters_schema

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.agent import AgentContext
    from orchestra.session import ToolOutcome

STOP_SEQUENCES = ["<end_action>", "Observation:"]
OBSERVATION = "[OUTPUT OF STEP {i}] Observation:\n***\n{content}\n***\n"
ERROR = (
    "[OUTPUT OF STEP {i}] ERROR:\n***\n{content}\n***\n\nNow let's retry: take care not to repeat previous errors! "
    "If you have retried several times, try a completely different approach.\n"
)
FORMAT_HINT = (
    'Your answer must be "Thought: ..." followed by "Action:" and ONE JSON blob '
    '{"action": "<tool name>", "action_input": {<arguments>}} ending with <end_action>.'
)


class ReactScaffold(Scaffold):
    name = "react"
    action_format = "react"

    def system_prompt(self, agent: AgentContext) -> str:
        s = agent.session
        return are_adapter.are_system_prompt(s.env, s.scenario, tool_descriptions=render_tool_list(self.tools))

    def request(self, agent: AgentContext) -> ModelRequest:
        req = super().request(agent)
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

    # ---- parsing, as ARE's JsonActionExecutor does it ----
    def parse(self, response: ModelResponse) -> tuple[list[ToolCall], str | None]:
        text = _cut_at_stop(response.text or "")
        blob_text = text.strip()
        if not (blob_text.startswith("{") and '"action"' in blob_text):  # constrained replies are the blob alone
            if "Action:" not in text:
                return [], f"No 'Action:' found in your output. {FORMAT_HINT}"
            parts = text.split("Action:")
            if len(parts) > 2:
                return [], f"Several 'Action:' blocks found; PROVIDE ONLY ONE TOOL CALL per step. {FORMAT_HINT}"
            blob_text = parts[1]
        try:
            blob = _parse_json_blob(blob_text)
        except ValueError as exc:
            return [], f"{exc}. {FORMAT_HINT}"
        if isinstance(blob, list):
            return [], f"The JSON blob holds {len(blob)} calls; PROVIDE ONLY ONE TOOL CALL per step. {FORMAT_HINT}"
        if not isinstance(blob, dict) or "action" not in blob:
            return [], f"The JSON blob must be an object with keys 'action' and 'action_input'. {FORMAT_HINT}"
        name = str(blob["action"])
        args = blob.get("action_input", {})
        if args is None or args == "":
            args = {}
        if not isinstance(args, dict):
            spec = self.tools.get(name)
            required = [a.name for a in spec.args if a.required] if spec else []
            if len(required) == 1:
                args = {required[0]: args}
            else:
                return [ToolCall(name=name, error=f"'action_input' must be a JSON object of arguments for {name}, got {type(args).__name__}")], None
        return [ToolCall(name=name, arguments=args, id=f"step-{name}")], None

    def record(self, agent: AgentContext, response: ModelResponse, calls: list[ToolCall], outcomes: list[ToolOutcome], format_error: str | None) -> None:
        i = agent.steps
        text = _cut_at_stop(response.text or "").rstrip()
        if calls and text.lstrip().startswith("{"):
            text = f"Action:\n{text}"
        self.messages.append({"role": "assistant", "content": (text + "<end_action>") if calls else text})
        if format_error:
            self.messages.append({"role": "user", "content": ERROR.format(i=i, content=format_error)})
            return
        for outcome in outcomes:
            if outcome.ok:
                self.messages.append({"role": "user", "content": OBSERVATION.format(i=i, content=self.render_output(outcome))})
            else:
                detail = outcome.error or "failed"
                spec = self.tools.get(outcome.name)
                if spec is not None:
                    detail += f"\nTool description: {spec.name}: {spec.description}"
                self.messages.append({"role": "user", "content": ERROR.format(i=i, content=detail)})


def _cut_at_stop(text: str) -> str:
    for stop in STOP_SEQUENCES:
        idx = text.find(stop)
        if idx != -1:
            text = text[:idx]
    return text


def _parse_json_blob(text: str) -> Any:
    """ARE's rules: strip code fences, first '{' (or '[') to the last '}' , triple quotes -> quotes."""
    text = re.sub(r"```(?:json)?", "", text)
    starts = [i for i in (text.find("{"), text.find("[")) if i != -1]
    if not starts:
        raise ValueError("No JSON blob found after 'Action:'")
    start = min(starts)
    end = max(text.rfind("}"), text.rfind("]"))
    if end <= start:
        raise ValueError("The JSON blob is not closed")
    blob = text[start : end + 1].replace('"""', '"')
    try:
        return json.loads(blob, strict=False)
    except json.JSONDecodeError as exc:
        raise ValueError(f"The JSON blob is invalid ({exc.msg} at char {exc.pos}): {blob[:300]!r}") from None
