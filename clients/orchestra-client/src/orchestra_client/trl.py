"""TRL's `environment_factory` over `orchestra serve`: a Gaia2 scenario's tools as an environment class.

```python
from trl import GRPOConfig, GRPOTrainer
from orchestra_client.trl import gaia2_environment

Env = gaia2_environment("http://127.0.0.1:8765", "bundled/starter_execution_calendar")
trainer = GRPOTrainer(model=..., args=GRPOConfig(...), train_dataset=dataset, environment_factory=Env)
```

`gaia2_environment(base_url, scenario)` returns a class (the factory TRL calls, once per rollout).
Its public methods are the scenario's tools — `Calendar__add_calendar_event`,
`AgentUserInterface__send_message_to_user`, `SystemApp__wait_for_notification`, ... — read once, when
the class is built, from a throwaway agent-mode session's MCP `tools/list`; each is a real function
with an `inspect.Signature` (keyword-only parameters), annotations mapped from the JSON schema and a
Google-style docstring with `Args:`, which is what TRL needs (transformers' `get_json_schema` turns
it back into the schema the model sees).

What TRL 1.16 does with it (`GRPOTrainer.__init__` and `_generate_and_score_completions`):

* it calls the factory once at start-up as a probe, then keeps a pool of instances, one per
  rollout of a batch, reused across batches: `reset(**row)` starts each episode;
* the tools are found on the **class** (`inspect.getmembers(type(env), inspect.isfunction)`): every
  public function except `reset` and `get_reward` is a tool, keyed by its `__name__`. So this class
  has no other public method — cleanup is `_close()` (or `with Env() as env:`), which TRL never
  calls; `reset` and `get_reward` close what they are done with, and the server's idle timeout
  reaps the rest;
* a tool is called as `method(**arguments)` with the model's parsed arguments; its return value goes
  to the model as `str(result)`; an exception becomes `{"error": "..."}` and counts as a tool failure;
* `get_reward()` is called once per finished rollout (TRL adds it as a reward column, weight 1);
  reward functions also get the instances as `environments=`, so they can read `env.result`.

One rollout is one agent-mode session (`POST /sessions {"mode": "agent"}`): `reset(**row)` opens it
on the row's `scenario` column (or the factory's scenario) and returns the user's task text (TRL
appends it to the row's last user message); each tool call is an MCP `tools/call` on it, answered
with the text orchestra's scaffolds show a model — a failed call (a wrong argument, an unknown tool,
a call after the end) is returned as its `ERROR: ...` text, not raised, so the model sees it;
`get_reward()` is `POST /sessions/{id}/finish`: ARE's verdict as a float (1.0 / 0.0, or the
session's `reward_mode`).

**The clock on this path.** TRL generates the completions itself, so the simulated clock charges
only the tool calls (`tool_call_seconds` each, default 2 s) and the time `wait_for_notification`
idles; the model's tokens are charged only for calls that go through the session's model proxy
(`model_base_url`), which TRL does not use. Notifications and the user's later messages reach the
model only through `SystemApp__wait_for_notification`'s result (the proxy would insert them before a
model call). For token-metered time — Time scenarios whose deadlines depend on how much the model
writes — use the step API (`POST /sessions` in step mode, `OrchestraClient.step`, every completion
charged by its token usage) or the `rollout_func` path of docs/rl.md ("TRL: GRPOTrainer on judge
rewards").

Depends only on httpx; never imports ARE, TRL or transformers.
"""

from __future__ import annotations

import inspect
import json
import keyword
import re
import types
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Union

import httpx

from orchestra_client.client import DEFAULT_TIMEOUT, OrchestraClient, ServeError, _headers, _result

__all__ = ["Gaia2Environment", "gaia2_environment", "list_tools"]

#: What the MCP endpoint is asked to answer in (stateless JSON; SSE is parsed too).
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
#: The upstream model of the sessions (agent mode needs one; TRL never calls the proxy, so it only matters to proxy users).
DEFAULT_MODEL = "orchestra/oracle"
#: Dataset columns `reset(**row)` passes on to `POST /sessions` (besides `scenario`); other columns are ignored.
ROW_SESSION_FIELDS = ("seed", "sample_index", "noise", "judge", "reward_mode", "max_steps")

_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "null": type(None), "object": dict}
#: What ends a Google docstring's description for transformers' parser, wherever it appears.
_SECTION = re.compile(r"(Args|Returns|Raises):")


# ---------------------------------------------------------------------------- MCP over plain JSON-RPC
def _rpc(http: httpx.Client, url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One JSON-RPC request to a session's MCP endpoint (streamable HTTP, stateless): its `result`,
    or a `{"isError": True, ...}` result carrying a JSON-RPC error's message."""
    response = http.post(url, headers=MCP_HEADERS, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    route = f"POST {httpx.URL(url).path} {method}"
    if response.status_code >= 400:
        _result(response, route)  # raises ServeError with the server's message
    message = _message(response)
    if "error" in message:
        error = message["error"] or {}
        text = f"ERROR: {error.get('message', error)}" if isinstance(error, dict) else f"ERROR: {error}"
        return {"isError": True, "content": [{"type": "text", "text": text}]}
    result: dict[str, Any] = message.get("result") or {}
    return result


def _message(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC response in a JSON body or in an SSE stream's `data:` lines."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and (payload := line[5:].strip()):
                message = json.loads(payload)
                if isinstance(message, dict) and ("result" in message or "error" in message):
                    return message
        raise ServeError(response.status_code, "the MCP stream held no JSON-RPC response", str(response.url))
    data: dict[str, Any] = response.json()
    return data


def _text(result: Mapping[str, Any]) -> str:
    """A `tools/call` result as the model sees it: its text blocks joined; an error as `ERROR: ...`."""
    parts = [str(block.get("text", "")) for block in result.get("content") or [] if isinstance(block, Mapping) and block.get("type") == "text"]
    text = "\n".join(parts)
    if result.get("isError") and not text.startswith("ERROR"):
        text = f"ERROR: {text}"
    return text


def list_tools(base_url: str, scenario: str, *, api_key: str | None = None, model: str | None = None) -> list[dict[str, Any]]:
    """The MCP tools (`name`, `description`, `inputSchema`) of `scenario`, read from a throwaway agent-mode session."""
    with OrchestraClient(base_url, api_key=api_key) as client:
        session = client.create_session(scenario, mode="agent", model=model or DEFAULT_MODEL)
        try:
            url = f"{client.base_url}/sessions/{session['session_id']}/mcp"
            tools: list[dict[str, Any]] = _rpc(client._http, url, "tools/list", {}).get("tools") or []
        finally:
            client.delete(session["session_id"])
    return tools


# ---------------------------------------------------------------------------- JSON schema -> Python
def _annotation(schema: Mapping[str, Any]) -> Any:
    """The Python type hint that transformers' `get_json_schema` maps back to (about) this JSON schema."""
    if "enum" in schema and schema["enum"] and all(isinstance(v, (str, int, float, bool)) or v is None for v in schema["enum"]):
        return Literal[tuple(schema["enum"])]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _union([_annotation(s) for s in schema[key] if isinstance(s, Mapping)])
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([_annotation({**schema, "type": k}) for k in kind])
    if kind == "array":
        items = schema.get("items")
        return list[_annotation(items)] if isinstance(items, Mapping) and items else list  # type: ignore[misc]
    return _JSON_TYPES.get(kind, Any) if isinstance(kind, str) else Any


def _union(options: list[Any]) -> Any:
    unique = list(dict.fromkeys(options))
    if not unique:
        return Any
    if Any in unique:
        return Any
    return unique[0] if len(unique) == 1 else Union[tuple(unique)]  # noqa: UP007  (a runtime-built union)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _docstring(description: str, params: list[tuple[str, str]]) -> str:
    """A Google-style docstring: the tool's description (no section header inside it), then `Args:`."""
    body = _SECTION.sub(lambda m: f"{m.group(1)} -", inspect.cleandoc(description or "").strip()) or "A tool of the scenario."
    if not params:
        return body
    lines = [f"    {name}: {_one_line(desc) or name}" for name, desc in params]
    return body + "\n\nArgs:\n" + "\n".join(lines)


def _tool_method(spec: Mapping[str, Any], reserved: set[str]) -> Any:
    """A function `name(self, *, <schema's properties>) -> str` calling the MCP tool `name`."""
    name = str(spec.get("name") or "")
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_") or name in reserved:
        raise ValueError(f"tool {name!r}: not usable as a method name of a TRL environment (a Python identifier, not private, not {sorted(reserved)})")
    schema = spec.get("inputSchema") or {}
    properties: Mapping[str, Mapping[str, Any]] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    docs: list[tuple[str, str]] = []
    for pname, pschema in properties.items():
        if not pname.isidentifier() or keyword.iskeyword(pname) or pname == "self":
            raise ValueError(f"tool {name!r}: argument {pname!r} cannot be a Python parameter name")
        hint = _annotation(pschema)
        default: Any = inspect.Parameter.empty if pname in required else pschema.get("default")
        parameters.append(inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint))
        annotations[pname] = hint
        docs.append((pname, str(pschema.get("description") or pschema.get("title") or "")))
    annotations["return"] = str
    signature = inspect.Signature(parameters, return_annotation=str)
    order = list(properties)

    def tool(self: Gaia2Environment, *args: Any, **arguments: Any) -> str:
        # The model's arguments go to the server as given (positional ones by the schema's order):
        # orchestra checks them as it checks a scaffold's call, and a wrong one comes back as ERROR text.
        arguments = {**dict(zip(order, args)), **arguments}
        return self._call(name, arguments)

    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = _docstring(str(spec.get("description") or ""), docs)
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = annotations
    tool.__module__ = __name__
    return tool


# ---------------------------------------------------------------------------- the environment
class Gaia2Environment:
    """One rollout's episode on `orchestra serve` (the base of `gaia2_environment`'s classes).

    Public methods are TRL tools, so this base has only `reset` and `get_reward`; the rest is private.
    """

    base_url: str = ""
    scenario: str | None = None
    api_key: str | None = None
    model: str = DEFAULT_MODEL
    session_fields: dict[str, Any] = {}
    #: The tools' MCP specs (name, description, inputSchema), as listed by the server.
    tool_specs: list[dict[str, Any]] = []

    def __init__(self) -> None:
        self._http = httpx.Client(base_url=self.base_url, headers=_headers(self.api_key), timeout=DEFAULT_TIMEOUT)
        self.session_id: str | None = None
        #: `POST /finish`'s answer (reward, success, info, record) once `get_reward()` judged the episode.
        self.result: dict[str, Any] | None = None
        #: The user's task text `reset` returned.
        self.task: str | None = None

    # -- TRL's hooks
    def reset(self, **row: Any) -> str | None:
        """Start an episode: an agent-mode session on the row's `scenario` (or the class's); the user's task."""
        self._end()
        scenario = row.get("scenario") or self.scenario
        if not scenario:
            raise ValueError(f"{type(self).__name__}.reset: no scenario (the dataset row has no `scenario` column and the factory was built on several)")
        fields = {**self.session_fields, **{k: row[k] for k in ROW_SESSION_FIELDS if row.get(k) is not None}}
        body = {"scenario": str(scenario), "mode": "agent", "model": self.model, **fields}
        session = _result(self._http.post("/sessions", json=body), "POST /sessions")
        self.session_id = str(session["session_id"])
        self.result = None
        self.task = session.get("task")
        return self.task

    def get_reward(self) -> float:
        """Judge the episode (`POST /sessions/{id}/finish`): ARE's verdict as the rollout's reward."""
        if self.result is None:
            session_id = self._require()
            self.result = _result(self._http.post(f"/sessions/{session_id}/finish", json={}), f"POST /sessions/{session_id}/finish")
            self._delete()  # judged: its record is kept (`--out`) and in `self.result`; the server can forget it
        return float(self.result.get("reward") or 0.0)

    # -- private: TRL exposes every public method as a tool
    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        session_id = self._require()
        if self.result is not None:
            return "ERROR: the episode has been judged: no more tool calls"
        result = _rpc(self._http, f"/sessions/{session_id}/mcp", "tools/call", {"name": name, "arguments": arguments})
        return _text(result)

    def _require(self) -> str:
        if self.session_id is None:
            raise RuntimeError(f"{type(self).__name__}: call reset() first (no episode is open)")
        return self.session_id

    def _delete(self) -> None:
        session_id, self.session_id = self.session_id, None
        if session_id is not None:
            try:
                self._http.delete(f"/sessions/{session_id}")
            except httpx.HTTPError:
                pass  # the server's idle timeout reaps it

    def _end(self) -> None:
        """Drop the current episode unjudged (a judged one is already gone)."""
        self._delete()
        self.result = None
        self.task = None

    def _close(self) -> None:
        """Close the episode (unjudged if `get_reward` was not called) and the HTTP client."""
        self._end()
        self._http.close()

    def __enter__(self) -> Gaia2Environment:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()


def gaia2_environment(
    base_url: str,
    scenario: str | Sequence[str],
    *,
    api_key: str | None = None,
    model: str | None = None,
    session_fields: Mapping[str, Any] | None = None,
    name: str = "Gaia2Environment",
) -> type[Gaia2Environment]:
    """A TRL environment class (pass it as `environment_factory=`) for `scenario` on `orchestra serve` at `base_url`.

    `scenario`: what `reset` plays when the dataset row has no `scenario` column (`bundled/ID`,
    `bundled:CONFIG/ID`, a file path on the server); a list of scenarios gives the union of their
    tools, and then each row must name its scenario. `model`: the sessions' upstream model (only a
    client of the session's proxy meets it; default orchestra/oracle). `session_fields`: more fields
    for every `POST /sessions` (seed, noise, judge, reward_mode, ...); a row's `seed`, `noise`,
    `judge`, ... columns override them per episode. The tools are listed now, once (one session).
    """
    scenarios = [scenario] if isinstance(scenario, str) else list(scenario)
    if not scenarios:
        raise ValueError("gaia2_environment: no scenario")
    specs: dict[str, dict[str, Any]] = {}
    for one in scenarios:
        for spec in list_tools(base_url, one, api_key=api_key, model=model):
            specs.setdefault(str(spec.get("name")), spec)
    reserved = {n for n in dir(Gaia2Environment) if not n.startswith("_")} | {"session_id", "result", "task"}
    namespace: dict[str, Any] = {
        "base_url": base_url.rstrip("/"),
        "scenario": scenarios[0] if len(scenarios) == 1 else None,
        "api_key": api_key,
        "model": model or DEFAULT_MODEL,
        "session_fields": dict(session_fields or {}),
        "tool_specs": list(specs.values()),
        "__module__": __name__,
    }
    for tool_name, spec in specs.items():
        namespace[tool_name] = _tool_method(spec, reserved)
    cls = types.new_class(name, (Gaia2Environment,), exec_body=lambda ns: ns.update(namespace))
    for tool_name in specs:
        getattr(cls, tool_name).__qualname__ = f"{name}.{tool_name}"
    return cls
