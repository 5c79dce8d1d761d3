"""App-agents as A2A agents: an agent-mode session's app-agents, each behind its own A2A endpoint.

An agent-mode session whose team replaces apps with app-agents (`"team": "oracle"`, ...) exposes
one A2A agent per replaced app, on the server's own port (a2a-sdk 1.x, JSON-RPC binding):

* `GET  /sessions/{id}/a2a` — the session's agents: `{agents: [{app, name, url, card_url}]}`;
* `GET  /sessions/{id}/a2a/{App}/.well-known/agent-card.json` — the agent card: name `<App> expert`,
  ARE's `expert_agent` docstring as description, one skill per tool of the app, the endpoint URL;
* `POST /sessions/{id}/a2a/{App}` — A2A JSON-RPC (`SendMessage`, `SendStreamingMessage`,
  `GetTask`, ...; v0.3's `message/send` too).

A message sent to `<App>`'s agent is the main agent's `<App>__expert_agent(task=<the message's
text>)` call: it goes through the same `tool_call` hook path as the MCP tool of that name (the
`OutsideAgent` of the session records it as a call of the main agent), so orchestra's app-agent
runs with the model, scaffold and budget of `team.app_agent(App)` on the session's simulated
clock, its app calls log as AGENT events the judge sees, and the delegation logs as ARE's
`AppAgent__expert_agent` READ event — byte for byte what an in-process delegation logs. The answer
comes back as the task's artifact (`answer`) and its completing status message; an app-agent that
fails (no `final_answer` in its budget, a model that failed) ends the task FAILED with the error.
The outside orchestrator plays the main agent: it delegates here, uses the session's MCP tools for
the rest (the kept apps, `AgentUserInterface__send_message_to_user`, which ends the turn,
`SystemApp__wait_for_notification`), and `POST /sessions/{id}/finish` gives ARE's verdict.

Errors are JSON-RPC errors (HTTP 200) with one line: an unknown session or app, a step-mode
session, an episode that ended (`-32600`, invalid request); a message without text (`-32602`);
a malformed body (a2a-sdk's parse / request / params errors). The card route answers the server's
`{"error": ...}` shape with 404 / 409 (501 without a2a-sdk).

a2a-sdk is an optional dependency (the `a2a` extra): this module imports it only when an A2A
route is reached, and says which extra to install when it is missing.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from orchestra.errors import OrchestraError
from orchestra.serve.errors import HTTPError, error_response, http_status
from orchestra.teams.config import expert_tool_name

if TYPE_CHECKING:
    from orchestra.serve.sessions import ServedSession, SessionTable

#: The path of an agent card under an agent's URL (A2A's well-known path).
CARD_PATH = "/.well-known/agent-card.json"
#: The name of the artifact that carries an app-agent's answer.
ANSWER_ARTIFACT = "answer"
MISSING_SDK = "orchestra serve's A2A app-agents need a2a-sdk (the `a2a` extra): pip install 'orchestra-agents[a2a]' (a2a-sdk[http-server]>=1.3)"

_STATE_APP = "orchestra_app"


def require_a2a() -> None:
    """Import a2a-sdk's server side, or fail with the extra to install."""
    try:
        import a2a.server.routes  # noqa: F401
        import sse_starlette  # noqa: F401  (the JSON-RPC dispatcher's streaming answers)
    except ImportError as exc:
        raise OrchestraError(f"{MISSING_SDK} ({exc})") from None


def served_apps(served: ServedSession) -> list[str]:
    """The apps whose app-agents a session exposes: an agent-mode session's replaced apps (none in step mode)."""
    if served.mode != "agent" or served.outside is None:
        return []
    return served.rollout.app_agents


def agent_url(base: str, session_id: str, app: str) -> str:
    return f"{base}/sessions/{session_id}/a2a/{app}"


def agent_urls(served: ServedSession, base: str) -> dict[str, str]:
    """`{App: the agent's URL}` (its card is at URL + `CARD_PATH`)."""
    return {app: agent_url(base, served.id, app) for app in served_apps(served)}


def agent_card(served: ServedSession, app: str, base: str) -> Any:
    """The A2A `AgentCard` of `app`'s agent in `served`: ARE's expert docstring, a skill per tool of the app."""
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
    from a2a.utils.constants import PROTOCOL_VERSION_1_0, TransportProtocol

    from orchestra.are.agent2agent import expert_tool_spec

    expert = expert_tool_spec(app)
    config = served.rollout.team.app_agent(app) if served.rollout.team is not None else None
    tools = [spec for spec in served.rollout.session.tools.values() if spec.app_name == app]
    skills = [
        AgentSkill(
            id=spec.name,
            name=spec.method,
            description=(spec.description.strip().splitlines() or [spec.method])[0],
            tags=[app, "write" if spec.writes else "read"],
        )
        for spec in tools
    ]
    if config is None:
        model = ""
    elif config.a2a is not None:  # the team hands this app to a remote A2A agent: orchestra relays to it
        model = f" Delegates to the remote A2A agent at {config.a2a.url}, its tools and model proxy on the session's simulated clock."
    else:
        model = f" Runs orchestra's app-agent ({config.scaffold}, {config.model.model}) on the session's simulated clock."
    return AgentCard(
        name=f"{app} expert",
        description=f"The {app} app's expert in session {served.id} ({served.rollout.session.scenario_id}).{model}\n\n{expert.description.strip()}",
        supported_interfaces=[
            AgentInterface(url=agent_url(base, served.id, app), protocol_binding=TransportProtocol.JSONRPC.value, protocol_version=PROTOCOL_VERSION_1_0)
        ],
        version="1.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=skills,
    )


class A2AAgents:
    """The A2A side of the server: the routes' endpoints and one a2a-sdk request handler per session
    (its own task store, so a session's tasks are visible through its agents only)."""

    def __init__(self, table: SessionTable, base_url: Any) -> None:
        self.table = table
        #: A callable giving the base URL the current request reached the server by.
        self.base_url = base_url
        self._dispatchers: dict[str, Any] = {}

    # ------------------------------------------------------------------ lookups
    def _served(self, session_id: str, app: str | None) -> ServedSession:
        served = self.table.get(session_id)
        if served.mode != "agent" or served.outside is None:
            raise HTTPError(
                409, f"session {session_id} is a step-mode session: A2A app-agents are served for agent-mode sessions with a team (mode 'agent', team ...)"
            )
        apps = served_apps(served)
        if not apps:
            raise HTTPError(404, f'session {session_id} has no app-agents: start it with a team that names some (e.g. "team": "oracle")')
        if app is not None and app not in apps:
            raise HTTPError(404, f"session {session_id} has no app-agent {app!r} (its app-agents: {', '.join(apps)})")
        return served

    # ------------------------------------------------------------------ routes
    async def index(self, request: Request) -> Response:
        try:
            served = self._served(request.path_params["session_id"], None)
        except Exception as exc:
            return error_response(*http_status(exc))
        base = self.base_url()
        agents = [
            {"app": app, "name": f"{app} expert", "url": url, "card_url": url + CARD_PATH, "tool": expert_tool_name(app)}
            for app, url in agent_urls(served, base).items()
        ]
        return JSONResponse({"session_id": served.id, "agents": agents})

    async def card(self, request: Request) -> Response:
        try:
            require_a2a()
        except OrchestraError as exc:
            return error_response(501, str(exc))
        try:
            served = self._served(request.path_params["session_id"], request.path_params["app"])
            from a2a.server.request_handlers.response_helpers import agent_card_to_dict

            card = agent_card(served, request.path_params["app"], self.base_url())
        except Exception as exc:
            return error_response(*http_status(exc))
        return JSONResponse(agent_card_to_dict(card))

    async def rpc(self, request: Request) -> Response:
        """A JSON-RPC request to one app's agent: checked here (session, app), then a2a-sdk's dispatcher."""
        session_id, app = request.path_params["session_id"], request.path_params["app"]
        try:
            require_a2a()
        except OrchestraError as exc:
            return _rpc_error(None, -32603, str(exc))
        try:
            body = json.loads(await request.body() or b"null")
        except ValueError:
            body = None  # a2a-sdk's dispatcher answers the parse error
        rid = body.get("id") if isinstance(body, dict) else None
        if not isinstance(rid, str | int) or isinstance(rid, bool):
            rid = None
        try:
            served = self._served(session_id, app)
        except Exception as exc:
            return _rpc_error(rid, -32600, http_status(exc)[1])
        sends = isinstance(body, dict) and body.get("method") in _SEND_METHODS
        if sends and served.done:  # reading its tasks (GetTask, ListTasks) stays possible
            return _rpc_error(
                rid, -32600, f"session {session_id}: the episode has ended: no more delegations (POST /sessions/{session_id}/finish has the verdict)"
            )
        if sends and not _has_text(body.get("params")):
            return _rpc_error(rid, -32602, f"the message to {app}'s agent has no text: send the task as a text part")
        return await self._dispatcher(served).handle_requests(request)

    # ------------------------------------------------------------------ a2a-sdk
    def _dispatcher(self, served: ServedSession) -> Any:
        dispatcher = self._dispatchers.get(served.id)
        if dispatcher is None:
            for gone in [k for k in self._dispatchers if k not in self.table.sessions and k not in self.table.finished]:
                del self._dispatchers[gone]  # sessions deleted, expired, or finished and forgotten
            dispatcher = self._dispatchers[served.id] = _build_dispatcher(self, served)
        return dispatcher

    async def delegate(self, served: ServedSession, app: str, task: str) -> tuple[bool, str]:
        """The main agent's `<app>__expert_agent(task)` call, as the session's MCP tool makes it: (ok, answer or error)."""
        from a2a.utils.errors import InvalidRequestError

        assert served.outside is not None
        async with served.lock:
            if served.done:
                raise InvalidRequestError(message=f"session {served.id}: the episode has ended: no more delegations")
            with anyio.CancelScope(shield=True):  # a client that goes away does not cut the delegation in half
                outcome = await served.outside.tool_call(expert_tool_name(app), {"task": task})
        if outcome.ok:
            return True, "" if outcome.output is None else str(outcome.output)
        return False, outcome.error or "the app-agent failed"


#: The JSON-RPC methods that send a message (A2A 1.0 and v0.3's names).
_SEND_METHODS = frozenset({"SendMessage", "SendStreamingMessage", "message/send", "message/stream"})


def _has_text(params: Any) -> bool:
    """Whether a send's params hold a message with a non-blank text part (True when the shape is
    off: a2a-sdk's own validation answers a malformed message, naming the field)."""
    message = params.get("message") if isinstance(params, dict) else None
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(parts, list) or not parts:
        return True
    return any(isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"].strip() for p in parts)


def _rpc_error(rid: Any, code: int, message: str) -> JSONResponse:
    return JSONResponse({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def _build_dispatcher(agents: A2AAgents, served: ServedSession) -> Any:
    """a2a-sdk's JSON-RPC dispatcher over a request handler (in-memory task store) whose executor delegates."""
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import DefaultServerCallContextBuilder
    from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.utils.errors import InvalidParamsError, TaskNotCancelableError

    class ContextBuilder(DefaultServerCallContextBuilder):
        def build(self, request: Any) -> Any:
            context = super().build(request)
            context.state[_STATE_APP] = request.path_params["app"]
            return context

    class AppAgentExecutor(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            from a2a.helpers import new_task, new_text_part
            from a2a.types import TaskState

            app = context.call_context.state[_STATE_APP]
            task = context.get_user_input().strip()
            if not task:
                raise InvalidParamsError(message=f"the message to {app}'s agent has no text: send the task as a text part")
            assert context.task_id is not None and context.context_id is not None
            if context.current_task is None:
                history = [context.message] if context.message is not None else []
                await event_queue.enqueue_event(new_task(context.task_id, context.context_id, TaskState.TASK_STATE_SUBMITTED, history=history))
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            await updater.start_work()
            ok, text = await agents.delegate(served, app, task)
            if ok:
                await updater.add_artifact([new_text_part(text)], name=ANSWER_ARTIFACT)
                await updater.complete(updater.new_agent_message([new_text_part(text)]))
            else:
                await updater.failed(updater.new_agent_message([new_text_part(f"ERROR: {text}")]))

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise TaskNotCancelableError(message="a delegation runs to its end on the simulated clock; it cannot be cancelled")

    base = agents.base_url()
    app = served_apps(served)[0]
    handler = DefaultRequestHandler(agent_executor=AppAgentExecutor(), task_store=InMemoryTaskStore(), agent_card=agent_card(served, app, base))
    return JsonRpcDispatcher(request_handler=handler, context_builder=ContextBuilder(), enable_v0_3_compat=True)
