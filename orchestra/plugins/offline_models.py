"""Built-in plugin: offline models served as a litellm provider named `orchestra`.

Registered with litellm like any provider, so scaffolds cannot tell them from a real API:

* `orchestra/oracle` answers with the scenario's next oracle action, in the calling scaffold's
  format (ReAct text, native tool calls — several at once when the scaffold allows parallel
  calls — or, for `code`, a ```py block making the call and printing its output;
  `orchestra/oracle:batch` puts all of a reply's due calls in one block, as a loop), idling with `SystemApp__wait_for_notification` until the action is due. Usage is
  synthetic and deterministic (characters / 4), so the clock sees plausible token counts.
  In a team it plays both roles. The main agent's oracle, lacking an app's tools but holding its
  `<App>__expert_agent`, delegates that app's due actions (the consecutive ready ones of one
  app in one task; an action not yet due is left for later, dependencies always hold) with a task text: a sentence naming the
  calls, then the calls with resolved arguments as JSON after `CALLS_MARKER`. An app-agent's
  oracle (any sub-agent) acts on its task text alone — one call per step, all at once for
  parallel scaffolds — and answers through `final_answer` with each call's output and time as
  JSON after `RESULTS_MARKER`; the main agent's oracle takes later placeholders (ids the
  app-agent created) and parent times from that answer. A delegated action is sent up to the
  judge's early tolerance less 1 s before it is due, because the app-agent's own tokens and tool
  calls pass simulated time before its write; the write still lands inside the judge's window.
* `orchestra/scripted:<file>` plays back responses from a JSON / JSONL / YAML list. Each entry is
  `{"text": ...}` and/or `{"tool_calls": [{"name": ..., "arguments": {...}}]}`, optionally with
  `"usage": {"prompt_tokens": n, "completion_tokens": m}`; `{"raise": "RateLimitError"}` makes
  that call fail with the named litellm exception (to exercise retries). Running past the end is a
  clear error.

Both need per-agent state (where in the plan or script an agent is), kept in the agent context
(`agent.state`). litellm's provider map is process-wide, so the handler finds the calling agent
through a context variable that a `model_call` wrapper sets around the call: it belongs to the
calling task, so concurrent rollouts (and an app-agent's call nested in its main agent's turn) each
see their own agent, and nothing outlives the call.
"""

from __future__ import annotations

import contextvars
import dataclasses
import enum
import json
import math
import re
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestra.hookspecs import hookimpl
from orchestra.litellm_setup import LazyProvider
from orchestra.models import ModelSetupError
from orchestra.session import WAIT_TOOL
from orchestra.types import ModelRequest, ModelResponse
from orchestra.views import AgentView

PROVIDER = "orchestra"
#: The proxy model of a remote A2A agent given none (`orchestra.teams.config.A2A_NO_MODEL`): every call fails, naming the fix.
NO_MODEL = "no-model"
#: The oracle variant that, for the `code` scaffold, writes all of a turn's due calls in one block (a loop).
ORACLE_BATCH = "oracle:batch"
#: The agent whose model call is running in this task (set around the call by `model_call`).
_CALLER: contextvars.ContextVar[AgentView | None] = contextvars.ContextVar("orchestra_offline_caller", default=None)


@hookimpl(wrapper=True, tryfirst=True)
def model_call(agent: AgentView, request: ModelRequest) -> Generator[None, Awaitable[ModelResponse], Awaitable[ModelResponse]]:
    inner = yield
    if not agent.model.model.startswith(f"{PROVIDER}/"):
        return inner

    async def as_caller() -> ModelResponse:
        token = _CALLER.set(agent)
        try:
            return await inner
        finally:
            _CALLER.reset(token)

    return as_caller()


@hookimpl
def register_models(register: Callable[[str, Any], None]) -> None:
    register(PROVIDER, _handler)  # the factory: litellm is imported at the first model call, not here


def _preflight(model: str) -> None:
    """Before a batch (`orchestra.runs.preflight`): the model exists, a script file parses."""
    if model.startswith("scripted:"):
        load_script(model.removeprefix("scripted:"))
    elif model not in ("oracle", NO_MODEL):
        raise ModelSetupError(f"unknown offline model {PROVIDER}/{model}; use {PROVIDER}/oracle or {PROVIDER}/scripted:<file>")


def _answer(litellm: Any, kw: dict[str, Any]) -> Any:
    """The reply of the calling agent's offline model (litellm's provider map is global; the handler is stateless)."""
    model = kw["model"]
    agent = _CALLER.get()
    if agent is None:
        raise ModelSetupError(f"{PROVIDER}/{model} only answers inside an orchestra rollout (through the model_call hook)")
    if model in ("oracle", ORACLE_BATCH):
        reply = oracle_reply(agent, kw["messages"], kw.get("optional_params") or {}, batch=model == ORACLE_BATCH)
    elif model.startswith("scripted:"):
        reply = scripted_reply(agent, model.removeprefix("scripted:"), kw["messages"])
    elif model == NO_MODEL:
        raise ModelSetupError("this A2A agent's model proxy has no upstream model; give one (`model:` beside `a2a:` in the team file, or --model)")
    else:
        raise ModelSetupError(f"unknown offline model {PROVIDER}/{model}; use {PROVIDER}/oracle, {PROVIDER}/{ORACLE_BATCH} or {PROVIDER}/scripted:<file>")
    return _fill(litellm, kw["model_response"], model, reply)


_handler = LazyProvider(_answer, preflight=_preflight)


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

#: The line after which a delegated task carries its calls, as a JSON list of {"tool", "arguments"}.
CALLS_MARKER = "=== CALLS (JSON, in order) ==="
#: The line after which an app-agent's answer carries each call's result, as a JSON list.
RESULTS_MARKER = "=== RESULTS (JSON, in order) ==="
_CALLS_LINE = re.compile(rf"^[ \t]*{re.escape(CALLS_MARKER)}[ \t]*$", re.MULTILINE)
_RESULTS_LINE = re.compile(rf"^[ \t]*{re.escape(RESULTS_MARKER)}[ \t]*$", re.MULTILINE)


@dataclass
class _Emitted:
    """One call of the oracle's previous reply: the plan actions it performs, and how."""

    event_ids: list[str]
    delegated: bool  # an `<App>__expert_agent` call: the app-agent reports each action's result


class _OracleCursor:
    def __init__(self, agent: Any) -> None:
        from orchestra.oracle.replay import build_plan

        self.plan = build_plan(agent.session)
        self.pending = list(self.plan.actions)
        self.done_at: dict[str, float] = {}
        self.outputs: dict[str, Any] = {}
        self.emitted: list[_Emitted] = []  # the calls of the previous reply, in call order
        self.seen_records = 0

    def absorb(self, agent: Any) -> None:
        """Learn what happened to the actions emitted last time (their times and outputs).

        A delegated call's results come from the app-agent's answer (its results block): the
        time each call ran and its output, which later placeholders need. An action the answer
        does not report (the app-agent failed or was told something else) counts as done when the
        delegation started — the oracle goes on, its placeholders fall back to the oracle run's
        values, and the judge says what went wrong."""
        if self.emitted and len(agent.records) > self.seen_records:
            outcomes = [o for o in agent.records[-1].outcomes if o.name != WAIT_TOOL]
            for emitted, outcome in zip(self.emitted, outcomes):
                if not emitted.delegated:
                    self.done_at[emitted.event_ids[0]] = outcome.sim_time
                    self.outputs[emitted.event_ids[0]] = outcome.output
                    continue
                results = parse_results(outcome.output) if outcome.ok else []
                for i, event_id in enumerate(emitted.event_ids):
                    result = results[i] if i < len(results) else None
                    if result is None or not isinstance(result.get("time"), (int, float)):
                        self.done_at[event_id] = outcome.sim_time
                        continue
                    self.done_at[event_id] = float(result["time"])
                    self.outputs[event_id] = result.get("output")
        self.emitted = []
        self.seen_records = len(agent.records)


def oracle_reply(agent: Any, messages: list[dict[str, Any]], params: dict[str, Any], *, batch: bool = False) -> dict[str, Any]:
    """The oracle's next reply. The main agent follows the scenario's plan; a sub-agent (an
    app-agent of a team) performs the calls its task text lists (`delegation_task`). `batch`
    (`orchestra/oracle:batch`): a `code` scaffold gets all due calls in one block."""
    if batch:
        params = {**params, "parallel_tool_calls": True}
    if agent.role != "main":
        return _app_agent_reply(agent, messages, params)
    from orchestra.oracle.replay import env_events, resolve_args

    cursor = agent.state.get("oracle")
    if cursor is None:
        cursor = agent.state["oracle"] = _OracleCursor(agent)
    cursor.absorb(agent)
    session = agent.session
    seen = env_events(session)
    happened = {**{k: t for k, (t, _) in seen.items()}, **cursor.done_at}
    values = {**{k: v for k, (_, v) in seen.items()}, **cursor.outputs}
    ready = [a for a in cursor.pending if all(p in happened for p in a.parents)]
    due = sorted(
        ((max([happened[p] for p in a.parents] or [session.env.start_time]) + a.delay, i, a) for i, a in enumerate(ready)),
        key=lambda d: (d[0], d[1]),
    )
    now = session.now
    # The reply's calls: each is one due action done directly, or consecutive due actions of one
    # app delegated to that app's expert (the main agent of a team no longer has the app's tools).
    # A delegated action is sent ahead of its due time by up to the judge's early tolerance (less
    # a second): the app-agent's own model and tool calls take simulated time before the write,
    # and the write still never lands before the judge's window opens.
    lead = max(0.0, _early_tolerance(session) - 1.0)
    groups: list[tuple[str | None, list[Any]]] = []  # (expert tool or None, actions)
    limit = None if _parallel(agent, params) else 1
    horizon: float | None = None
    for t, _, action in due:
        expert = _expert_for(agent, action.tool)
        send_at = t - lead if expert is not None else t
        if send_at > now + 1e-9:
            horizon = send_at if horizon is None else min(horizon, send_at)
            continue
        if expert is not None and groups and groups[-1][0] == expert:
            groups[-1][1].append(action)
            continue
        if limit is not None and len(groups) >= limit:
            break
        groups.append((expert, [action]))
    if groups:
        calls = []
        for expert, actions in groups:
            for action in actions:
                cursor.pending.remove(action)
            cursor.emitted.append(_Emitted([a.event_id for a in actions], delegated=expert is not None))
            resolved = [{"tool": a.tool, "arguments": resolve_args(a, values)} for a in actions]
            if expert is None:
                calls.append({"name": resolved[0]["tool"], "arguments": resolved[0]["arguments"]})
            else:
                calls.append({"name": expert, "arguments": {"task": delegation_task(resolved)}})
        thought = "Next step of the reference solution."
    else:
        horizon = horizon if horizon is not None else session.env.next_event_time()
        end = session.env.end_time
        if horizon is None:
            horizon = end if end is not None else now + 60
        timeout = max(1, math.ceil(horizon - now))
        calls = [{"name": WAIT_TOOL, "arguments": {"timeout": timeout}}]
        thought = "Nothing to do until the next event."
    return _format(agent, messages, thought, calls)


def _parallel(agent: Any, params: dict[str, Any]) -> bool:
    """Whether the calling scaffold runs several calls per reply: it asked for parallel tool calls,
    or it is a parallel scaffold asking for constrained JSON (no native tools, no such flag)."""
    if agent.scaffold.action_format == "react":
        return False
    if agent.scaffold.action_format == "code":  # one call per block, unless the batch variant asked
        return bool(params.get("parallel_tool_calls"))
    return bool(params.get("parallel_tool_calls")) or bool(getattr(agent.scaffold, "parallel", False))


def _early_tolerance(session: Any) -> float:
    """How early the judge accepts a time-checked action (ARE's `pre_event_tolerance_seconds`)."""
    judge = session.prepared.judge
    return float(judge.config.pre_event_tolerance_seconds) if judge is not None else 0.0


def _expert_for(agent: Any, tool: str) -> str | None:
    """The expert tool to delegate `tool` to: when this agent lacks `tool` but has its app's expert."""
    if tool in agent.tools:
        return None
    from orchestra.teams.config import expert_tool_name

    spec = agent.session.tools.get(tool)
    expert = expert_tool_name(spec.app_name) if spec is not None else None
    return expert if expert is not None and expert in agent.tools else None


def _format(agent: Any, messages: list[dict[str, Any]], thought: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The calls as the calling scaffold expects them: one ReAct action, a code block, or native tool calls."""
    if agent.scaffold.action_format == "react":
        c = calls[0]
        reply: dict[str, Any] = {"text": f"Thought: {thought}\nAction:\n{json.dumps({'action': c['name'], 'action_input': c['arguments']})}<end_action>"}
    elif agent.scaffold.action_format == "code":
        reply = {"text": f"Thought: {thought}\nCode:\n```py\n{code_block(calls)}\n```<end_action>"}
    else:
        reply = {"text": None, "tool_calls": calls}
    reply["usage"] = synthetic_usage(messages, reply)
    return reply


def code_block(calls: list[dict[str, Any]]) -> str:
    """The oracle's code for `calls`: one call printed, or a loop over all of them (batch)."""
    if len(calls) == 1:
        c = calls[0]
        args = ", ".join(f"{k}={v!r}" for k, v in c["arguments"].items())
        return f"result = {c['name']}({args})\nprint(result)"
    rows = "\n".join(f"    ({c['name']}, {c['arguments']!r})," for c in calls)
    return f"calls = [\n{rows}\n]\nfor tool, arguments in calls:\n    print(tool(**arguments))"


# ---- delegation: the task text the main oracle sends, and the answer the app-agent's oracle returns


def delegation_task(calls: list[dict[str, Any]]) -> str:
    """What the main agent's oracle asks an app's expert: the calls in words, then exactly, as JSON.

    The JSON block (after `CALLS_MARKER`, on its own line) is what the app-agent's oracle acts on;
    the sentence is for a real model serving as the app-agent. Kept short: the main agent's
    completion tokens move the clock before the app-agent even starts."""
    names = ", then ".join(c["tool"] for c in calls)
    return (
        f"Please call {names}, in this order, with exactly the arguments below; "
        f"then call final_answer with each call's output.\n{CALLS_MARKER}\n{dump_block(calls)}"
    )


def parse_calls(task: str) -> list[dict[str, Any]]:
    """The calls a delegated task asks for (the JSON list after `CALLS_MARKER`).

    The task may be wrapped (ARE's app-agent receives `str(AUIMessage)`: header lines before it,
    `Already read: ...` after it); anything around the block is ignored. Raises ValueError."""
    return _json_list_after(_CALLS_LINE, task, "calls", required=("tool", "arguments"))


def parse_results(answer: Any) -> list[dict[str, Any]]:
    """The per-call results an app-agent's oracle reported (the JSON list after `RESULTS_MARKER`);
    empty when the answer has none."""
    try:
        return _json_list_after(_RESULTS_LINE, str(answer), "results", required=())
    except ValueError:
        return []


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def dump_block(value: Any) -> str:
    """`value` as compact JSON whose strings hold no raw quote characters (`'` and `"` are
    `\\u0027` / `\\u0022`), so the block survives ARE's ReAct parser, which turns every `\\"` in an
    action into `'` (`parse_json_blob`): read back with `'` as the string quote, it is the same JSON."""
    text = json.dumps(value, default=_json_default, separators=(",", ":"), ensure_ascii=False)
    return _JSON_STRING.sub(lambda m: '"' + m.group(0)[1:-1].replace('\\"', "\\u0022").replace("'", "\\u0027") + '"', text)


def _json_list_after(marker: re.Pattern[str], text: str, what: str, *, required: tuple[str, ...]) -> list[dict[str, Any]]:
    m = marker.search(text)
    if m is None:
        raise ValueError(f"no {what} block (a line {marker.pattern!r} followed by a JSON list)")
    start = text.find("[", m.end())
    if start < 0:
        raise ValueError(f"the {what} block has no JSON list")
    try:
        value, _ = json.JSONDecoder().raw_decode(text, start)
    except ValueError as exc:
        try:  # the block went through ARE's ReAct parser: its quotes are `'` now (see `dump_block`)
            value, _ = json.JSONDecoder().raw_decode(text[start:].replace("'", '"'))
        except ValueError:
            raise ValueError(f"the {what} block is not valid JSON: {exc}") from None
    if not isinstance(value, list) or not all(isinstance(v, dict) and all(k in v for k in required) for v in value):
        raise ValueError(f"the {what} block is a JSON list of objects with {', '.join(required) or 'fields'}")
    return value


def _json_value(value: Any) -> Any:
    """A tool output as JSON data (ARE returns ids, dicts, dataclasses, enums, ...)."""
    return json.loads(json.dumps(value, default=_json_default))


def _json_default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (set, frozenset, tuple)):
        return sorted(value, key=str) if isinstance(value, (set, frozenset)) else list(value)
    return str(value)


class _TaskCursor:
    """An app-agent oracle's progress through the calls its task text asks for."""

    def __init__(self, task: str) -> None:
        self.error: str | None = None
        try:
            self.calls = parse_calls(task)
        except ValueError as exc:
            self.calls, self.error = [], str(exc)
        self.next = 0
        self.emitted = 0  # how many calls the previous reply made
        self.results: list[dict[str, Any]] = []
        self.seen_records = 0

    def absorb(self, agent: Any) -> None:
        if self.emitted and len(agent.records) > self.seen_records:
            from orchestra.config import FINAL_ANSWER_TOOL

            outcomes = [o for o in agent.records[-1].outcomes if o.name != FINAL_ANSWER_TOOL][: self.emitted]
            for o in outcomes:
                result = {"tool": o.name, "ok": o.ok, "output": _json_value(o.output), "time": o.sim_time}
                if not o.ok:
                    result["error"] = o.error
                self.results.append(result)
            self.next += len(outcomes)
            if len(outcomes) < self.emitted:  # a call did not run (the environment stopped): give up on the rest
                self.next = len(self.calls)
        self.emitted = 0
        self.seen_records = len(agent.records)


def _app_agent_reply(agent: Any, messages: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
    """A sub-agent's oracle: the calls listed in its task text — one per step, or all at once
    for a scaffold with parallel calls — then `final_answer` with each call's result."""
    from orchestra.config import FINAL_ANSWER_TOOL

    cursor = agent.state.get("oracle")
    if cursor is None:
        cursor = agent.state["oracle"] = _TaskCursor(agent.task or "")
    cursor.absorb(agent)
    remaining = cursor.calls[cursor.next :]
    if remaining:
        batch = remaining if _parallel(agent, params) else remaining[:1]
        cursor.emitted = len(batch)
        calls = [{"name": c["tool"], "arguments": c["arguments"]} for c in batch]
        return _format(agent, messages, "Next call my task asks for.", calls)
    if cursor.error is not None:
        answer = f"I could not do this task: {cursor.error}."
    else:
        answer = f"Done: {len(cursor.results)} call(s) made.\n{RESULTS_MARKER}\n{dump_block(cursor.results)}"
    return _format(agent, messages, "All calls made; reporting back.", [{"name": FINAL_ANSWER_TOOL, "arguments": {"answer": answer}}])


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
        raise ModelSetupError(f'{path}: a script is a list of objects like {{"text": ...}} or {{"tool_calls": [...]}}')
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
        raise ModelSetupError(f'{where}: \'tool_calls\' is a list of {{"name": ..., "arguments": ...}} objects')
    if "raise" in entry:
        from orchestra.litellm_setup import import_litellm

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
        from orchestra.litellm_setup import import_litellm

        litellm = import_litellm()
        exc_cls = getattr(litellm, str(entry["raise"]))
        raise exc_cls(message=f"scripted failure at response {pos}", llm_provider=PROVIDER, model=f"scripted:{path}")
    reply = {"text": entry.get("text"), "tool_calls": entry.get("tool_calls")}
    usage = entry.get("usage")
    reply["usage"] = (int(usage["prompt_tokens"]), int(usage["completion_tokens"])) if usage else synthetic_usage(messages, reply)
    return reply
