"""Built-in plugin: offline models served as a litellm provider named `orchestra`.

Registered with litellm like any provider, so scaffolds cannot tell them from a real API:

* `orchestra/oracle` answers with the scenario's next oracle action, in the calling scaffold's
  format (ReAct text, or native tool calls — several at once when the scaffold allows parallel
  calls), idling with `SystemApp__wait_for_notification` until the action is due. Usage is
  synthetic and deterministic (characters / 4), so the clock sees plausible token counts.
* `orchestra/scripted:<file>` plays back responses from a JSON / JSONL / YAML list. Each entry is
  `{"text": ...}` and/or `{"tool_calls": [{"name": ..., "arguments": {...}}]}`, optionally with
  `"usage": {"prompt_tokens": n, "completion_tokens": m}`; `{"raise": "RateLimitError"}` makes
  that call fail with the named litellm exception (to exercise retries). Running past the end is a
  clear error.

Both need per-rollout state (where in the plan or script a rollout is). litellm's provider map is
process-wide, so the state lives in the agent context; a `model_call` wrapper indexes live agents
by rollout id (weakly), and the rollout id travels in the request's litellm `metadata`.
"""

from __future__ import annotations

import json
import math
import weakref
from collections.abc import Awaitable, Callable, Generator
from pathlib import Path
from typing import Any

from orchestra.hookspecs import hookimpl
from orchestra.models import ModelSetupError
from orchestra.session import WAIT_TOOL
from orchestra.types import AgentView, ModelRequest, ModelResponse

PROVIDER = "orchestra"
_AGENTS: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


@hookimpl(wrapper=True, tryfirst=True)
def model_call(agent: AgentView, request: ModelRequest) -> Generator[None, Awaitable[ModelResponse], Awaitable[ModelResponse]]:
    _AGENTS[agent.rollout_id] = agent
    return (yield)


@hookimpl
def register_models(register: Callable[[str, Any], None]) -> None:
    register(PROVIDER, _handler())


_HANDLER: Any = None


def _handler() -> Any:
    """One litellm `CustomLLM` for the process (litellm's provider map is global; the handler is stateless)."""
    global _HANDLER
    if _HANDLER is None:
        from orchestra.models import import_litellm

        litellm = import_litellm()

        class OrchestraOffline(litellm.CustomLLM):  # type: ignore[name-defined]  # litellm is imported lazily, inside the function
            def completion(self, *args: Any, **kwargs: Any) -> Any:
                return self._answer(kwargs)

            async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
                return self._answer(kwargs)

            def _answer(self, kw: dict[str, Any]) -> Any:
                model = kw["model"]
                metadata = (kw.get("litellm_params") or {}).get("metadata") or {}
                agent = _AGENTS.get(metadata.get("orchestra_rollout", ""))
                if agent is None:
                    raise ModelSetupError(f"{PROVIDER}/{model} only answers inside an orchestra rollout (no rollout id in metadata)")
                if model == "oracle":
                    reply = oracle_reply(agent, kw["messages"], kw.get("optional_params") or {})
                elif model.startswith("scripted:"):
                    reply = scripted_reply(agent, model.removeprefix("scripted:"), kw["messages"])
                else:
                    raise ModelSetupError(f"unknown offline model {PROVIDER}/{model}; use {PROVIDER}/oracle or {PROVIDER}/scripted:<file>")
                return _fill(litellm, kw["model_response"], model, reply)

        _HANDLER = OrchestraOffline()
    return _HANDLER


def _fill(litellm: Any, response: Any, model: str, reply: dict[str, Any]) -> Any:
    from litellm.types.utils import ChatCompletionMessageToolCall, Choices, Function, Message, Usage

    calls = reply.get("tool_calls") or []
    tool_calls = [
        ChatCompletionMessageToolCall(id=f"call_{i}", type="function", function=Function(name=c["name"], arguments=json.dumps(c.get("arguments", {}))))
        for i, c in enumerate(calls)
    ] or None
    message = Message(role="assistant", content=reply.get("text"), tool_calls=tool_calls)
    response.choices = [Choices(index=0, finish_reason="tool_calls" if tool_calls else "stop", message=message)]
    response.model = f"{PROVIDER}/{model}"
    usage = reply["usage"]
    response.usage = Usage(prompt_tokens=usage[0], completion_tokens=usage[1], total_tokens=usage[0] + usage[1])
    return response


def synthetic_usage(messages: list[dict[str, Any]], reply: dict[str, Any]) -> tuple[int, int]:
    """Deterministic stand-in token counts: one token per four characters."""
    prompt = math.ceil(len(json.dumps(messages, sort_keys=True, default=str)) / 4)
    out = (reply.get("text") or "") + json.dumps(reply.get("tool_calls") or [], sort_keys=True)
    return prompt, max(1, math.ceil(len(out) / 4))


# ------------------------------------------------------------------ the oracle model


class _OracleCursor:
    def __init__(self, agent: Any) -> None:
        from orchestra.oracle import build_plan

        self.plan = build_plan(agent.session)
        self.pending = list(self.plan.actions)
        self.done_at: dict[str, float] = {}
        self.outputs: dict[str, Any] = {}
        self.emitted: list[str] = []  # event ids emitted in the previous reply, in call order
        self.seen_records = 0

    def absorb(self, agent: Any) -> None:
        """Learn what happened to the actions emitted last time (their times and outputs)."""
        if self.emitted and len(agent.records) > self.seen_records:
            outcomes = [o for o in agent.records[-1].outcomes if o.name != WAIT_TOOL]
            for event_id, outcome in zip(self.emitted, outcomes):
                self.done_at[event_id] = outcome.sim_time
                self.outputs[event_id] = outcome.output
        self.emitted = []
        self.seen_records = len(agent.records)


def oracle_reply(agent: Any, messages: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
    from orchestra.oracle import _env_events, _resolve

    cursor = agent.state.get("oracle")
    if cursor is None:
        cursor = agent.state["oracle"] = _OracleCursor(agent)
    cursor.absorb(agent)
    session = agent.session
    seen = _env_events(session)
    happened = {**{k: t for k, (t, _) in seen.items()}, **cursor.done_at}
    values = {**{k: v for k, (_, v) in seen.items()}, **cursor.outputs}
    ready = [a for a in cursor.pending if all(p in happened for p in a.parents)]
    due = sorted(
        ((max([happened[p] for p in a.parents] or [session.env.start_time]) + a.delay, i, a) for i, a in enumerate(ready)),
        key=lambda d: (d[0], d[1]),
    )
    now = session.now
    batch: list[Any] = []
    if due and due[0][0] <= now + 1e-9:
        limit = None if params.get("parallel_tool_calls") else 1
        for t, _, action in due:
            if t > now + 1e-9 or (limit is not None and len(batch) >= limit):
                break
            batch.append(action)
    if batch:
        for action in batch:
            cursor.pending.remove(action)
        cursor.emitted = [a.event_id for a in batch]
        calls = [{"name": a.tool, "arguments": _resolve(a, values)} for a in batch]
        thought = "Next step of the reference solution."
    else:
        horizon = due[0][0] if due else session.env.next_event_time()
        end = session.env.end_time
        if horizon is None:
            horizon = end if end is not None else now + 60
        timeout = max(1, math.ceil(horizon - now))
        calls = [{"name": WAIT_TOOL, "arguments": {"timeout": timeout}}]
        thought = "Nothing to do until the next event."
    fmt = agent.scaffold.action_format
    if fmt == "react":
        c = calls[0]
        reply: dict[str, Any] = {"text": f"Thought: {thought}\nAction:\n{json.dumps({'action': c['name'], 'action_input': c['arguments']})}<end_action>"}
        cursor.emitted = cursor.emitted[:1]
    else:
        reply = {"text": None, "tool_calls": calls}
    reply["usage"] = synthetic_usage(messages, reply)
    return reply


# ------------------------------------------------------------------ the scripted model


def load_script(path: str) -> list[dict[str, Any]]:
    p = Path(path)
    if not p.is_file():
        raise ModelSetupError(f"script file {path} not found")
    import yaml

    kind = "YAML" if p.suffix in (".yaml", ".yml") else "JSONL" if p.suffix == ".jsonl" else "JSON"
    # A broken script is a setup error (the rollout ends at once), never a failed call to retry.
    try:
        text = p.read_text(encoding="utf-8")
        if kind == "YAML":
            data = yaml.safe_load(text)
        elif kind == "JSONL":
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = json.loads(text)
    except (ValueError, yaml.YAMLError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ModelSetupError(f"{path}: not valid {kind}: {exc}") from None
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise ModelSetupError(f"{path}: a script is a list of objects like {{\"text\": ...}} or {{\"tool_calls\": [...]}}")
    for i, entry in enumerate(data):
        _check_entry(path, i, entry)
    return data


SCRIPT_KEYS = ("text", "tool_calls", "raise", "usage")


def _check_entry(path: str, i: int, entry: dict[str, Any]) -> None:
    """Reject a script entry that would otherwise be played as an empty reply or a retried crash."""
    where = f"{path}: response {i}"
    unknown = sorted(set(entry) - set(SCRIPT_KEYS))
    if unknown:
        raise ModelSetupError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; an entry has {', '.join(SCRIPT_KEYS)}")
    if not any(k in entry for k in ("text", "tool_calls", "raise")):
        raise ModelSetupError(f"{where}: has none of 'text', 'tool_calls', 'raise'")
    if entry.get("text") is not None and not isinstance(entry["text"], str):
        raise ModelSetupError(f"{where}: 'text' is a string, got {type(entry['text']).__name__}")
    calls = entry.get("tool_calls")
    if calls is not None and (not isinstance(calls, list) or not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls)):
        raise ModelSetupError(f"{where}: 'tool_calls' is a list of {{\"name\": ..., \"arguments\": ...}} objects")
    if "raise" in entry:
        from orchestra.models import import_litellm

        exc_cls = getattr(import_litellm(), str(entry["raise"]), None)
        if not (isinstance(exc_cls, type) and issubclass(exc_cls, Exception)):
            raise ModelSetupError(f"{where}: 'raise' names a litellm exception (e.g. RateLimitError, Timeout), got {entry['raise']!r}")


def scripted_reply(agent: Any, path: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    state = agent.state.setdefault("scripted", {"entries": load_script(path), "pos": 0})
    entries, pos = state["entries"], state["pos"]
    if pos >= len(entries):
        raise ModelSetupError(f"{path}: script exhausted after {len(entries)} responses")
    state["pos"] = pos + 1
    entry = entries[pos]
    if "raise" in entry:
        from orchestra.models import import_litellm

        litellm = import_litellm()
        exc_cls = getattr(litellm, str(entry["raise"]))
        raise exc_cls(message=f"scripted failure at response {pos}", llm_provider=PROVIDER, model=f"scripted:{path}")
    reply = {"text": entry.get("text"), "tool_calls": entry.get("tool_calls")}
    usage = entry.get("usage")
    reply["usage"] = (int(usage["prompt_tokens"]), int(usage["completion_tokens"])) if usage else synthetic_usage(messages, reply)
    return reply
