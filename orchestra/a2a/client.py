"""Talking to a remote A2A agent with `a2a-sdk`'s client: one message, one answer; and its cancel.

`a2a-sdk` is the optional `a2a` extra, imported here only when a message is sent; without it the
error names the install command. Every way a remote agent can fail — unreachable, no card, a card
offering no binding orchestra speaks, no answer within the timeout, a reply that is not A2A, a
dropped connection, a task that ended FAILED — is an `A2AError` with one line naming the agent's
URL and what happened.

Bindings: JSON-RPC and HTTP+JSON (REST), in the order the agent's card lists its interfaces (the
first one of these two it offers is used). gRPC is not spoken (it would need `a2a-sdk[grpc]` and a
channel of its own); a card that offers only gRPC is refused naming its bindings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from orchestra.a2a.config import A2AConfig
from orchestra.a2a.metadata import A2AMetadata
from orchestra.errors import OrchestraError

if TYPE_CHECKING:  # pragma: no cover
    import httpx

INSTALL = "pip install 'orchestra-agents[a2a]'"
#: The A2A protocol bindings orchestra's client speaks (A2A's names, as a card's `protocolBinding`), preferred first.
BINDINGS = ("JSONRPC", "HTTP+JSON")


class A2AError(OrchestraError):
    """A remote A2A agent failed to answer (one line: its URL and what happened)."""


def require_sdk() -> None:
    """Import `a2a-sdk`, or say how to install it."""
    try:
        import a2a.client  # noqa: F401
    except ImportError as exc:
        raise OrchestraError(f"an A2A agent needs a2a-sdk, which is not installed ({exc}): {INSTALL}") from None


def trace_headers() -> dict[str, str]:
    """W3C trace context (`traceparent`) of the current span when tracing is on; nothing (and no
    OpenTelemetry import) when it is off (`orchestra.tracing.inject_trace_context`)."""
    from orchestra.tracing import inject_trace_context

    carrier: dict[str, str] = {}
    inject_trace_context(carrier)
    return carrier


def check_card(config: A2AConfig, who: str) -> None:
    """Before a batch: the SDK is installed, the agent's card answers and offers a binding orchestra
    speaks (an `A2AError` naming it otherwise)."""
    require_sdk()
    import httpx
    from a2a.client.card_resolver import parse_agent_card

    where = f"A2A agent at {config.url} ({who})"
    try:
        response = httpx.get(f"{config.url}/.well-known/agent-card.json", timeout=config.connect_timeout_seconds)
        response.raise_for_status()
        data = response.json()
    except Exception as exc:
        raise A2AError(f"{where}: cannot read its agent card at /.well-known/agent-card.json ({_first_line(exc)})") from None
    if not isinstance(data, dict) or not data.get("name"):
        raise A2AError(f"{where}: its /.well-known/agent-card.json is no agent card")
    try:
        card = parse_agent_card(data)
    except Exception as exc:
        raise A2AError(f"{where}: its /.well-known/agent-card.json is no A2A agent card ({_first_line(exc)})") from None
    interface(card, where)


def interface(card: Any, where: str) -> Any:
    """The interface of `card` orchestra talks to: the first (in the card's order) whose binding it
    speaks (`BINDINGS`); an `A2AError` naming the card's bindings when there is none."""
    for candidate in card.supported_interfaces:
        if candidate.protocol_binding in BINDINGS:
            return candidate
    offered = ", ".join(sorted({i.protocol_binding or "(none)" for i in card.supported_interfaces})) or "none"
    raise A2AError(f"{where}: its agent card offers no A2A binding orchestra speaks (it offers: {offered}; orchestra speaks: {', '.join(BINDINGS)})")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    line = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {line}"[:300] if line else type(exc).__name__


class RemoteAgent:
    """One remote A2A agent, connected (`async with RemoteAgent(config, who) as agent: await agent.send(...)`)."""

    def __init__(self, config: A2AConfig, who: str, *, timeout_hint: str = "timeout_seconds") -> None:
        self.config = config
        #: How messages name it: "A2A agent at URL (the agent under test)".
        self.where = f"A2A agent at {config.url} ({who})"
        #: Where its answer timeout is set, as the timeout's message names it (`--a2a-timeout`, a team file's field).
        self.timeout_hint = timeout_hint
        #: The interface its card named that orchestra talks to (`binding`, `url`), once connected.
        self.binding: str | None = None
        self.endpoint: str | None = None
        self._http: httpx.AsyncClient | None = None
        self._client: Any = None

    def fail(self, what: str) -> A2AError:
        return A2AError(f"{self.where}: {what}")

    async def __aenter__(self) -> RemoteAgent:
        require_sdk()
        import httpx
        from a2a.client import A2ACardResolver, ClientConfig, ClientFactory

        timeout = httpx.Timeout(self.config.timeout_seconds + 5, connect=self.config.connect_timeout_seconds)
        self._http = httpx.AsyncClient(timeout=timeout, event_hooks={"request": [_inject_trace]})
        try:
            with anyio.fail_after(self.config.connect_timeout_seconds):
                card = await A2ACardResolver(self._http, self.config.url).get_agent_card()
            chosen = interface(card, self.where)
            self.binding, self.endpoint = chosen.protocol_binding, chosen.url
            config = ClientConfig(streaming=False, httpx_client=self._http, supported_protocol_bindings=list(BINDINGS))
            self._client = ClientFactory(config).create(card)
        except TimeoutError:
            await self._http.aclose()
            raise self.fail(f"no agent card within {self.config.connect_timeout_seconds:g} s") from None
        except A2AError:
            await self._http.aclose()
            raise
        except Exception as exc:
            await self._http.aclose()
            raise self.fail(f"cannot read its agent card at /.well-known/agent-card.json ({_first_line(exc)})") from None
        return self

    async def __aexit__(self, *exc: object) -> None:
        with anyio.CancelScope(shield=True):
            if self._client is not None:
                try:
                    await self._client.close()
                except Exception:
                    pass
            if self._http is not None:
                await self._http.aclose()

    async def send(self, text: str, metadata: A2AMetadata, *, context_id: str, message_id: str) -> str:
        """Send one user message and wait for the agent's answer (its text)."""
        from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest

        message = Message(role=Role.ROLE_USER, message_id=message_id, context_id=context_id, parts=[Part(text=text)], metadata=metadata.wire())
        request = SendMessageRequest(message=message)
        events: list[Any] = []
        try:
            with anyio.fail_after(self.config.timeout_seconds):
                async for event in self._client.send_message(request):
                    events.append(event)
        except TimeoutError:
            raise self.fail(f"no answer within {self.config.timeout_seconds:g} s (its timeout: {self.timeout_hint})") from None
        except Exception as exc:
            raise self.fail(_describe(exc, self._other_endpoint())) from None
        if not events:
            raise self.fail("the reply held no message and no task")
        return self._answer(events[-1])

    async def cancel(self, context_id: str) -> str:
        """Cancel the open tasks of `context_id` (A2A `ListTasks` by context, then `CancelTask`
        each), best effort within `connect_timeout_seconds`: what happened, in words. An agent that
        answers with a bare message opens no task; its request is simply closed."""
        from a2a.types.a2a_pb2 import CancelTaskRequest, ListTasksRequest, TaskState

        ended = {TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED}
        states: list[str] = []
        try:
            with anyio.fail_after(self.config.connect_timeout_seconds):
                page = await self._client.list_tasks(ListTasksRequest(context_id=context_id))
                for task in page.tasks:
                    if task.status.state not in ended:
                        result = await self._client.cancel_task(CancelTaskRequest(id=task.id))
                        states.append(f"task {task.id}: {TaskState.Name(result.status.state)}")
        except TimeoutError:
            return f"its task could not be cancelled: no answer to ListTasks / CancelTask within {self.config.connect_timeout_seconds:g} s"
        except Exception as exc:
            return f"its task could not be cancelled ({_first_line(exc)})"
        return "; ".join(states) if states else "it had no open task (its request was closed)"

    def _other_endpoint(self) -> tuple[str, str] | None:
        """(URL, binding) of the interface its card names, when that is not the agent's own URL (an error names it)."""
        if self.endpoint is None or self.endpoint.rstrip("/") == self.config.url:
            return None
        return self.endpoint, self.binding or "?"

    def _answer(self, event: Any) -> str:
        from a2a.helpers import get_artifact_text, get_message_text
        from a2a.types.a2a_pb2 import TaskState

        if event.HasField("message"):
            return get_message_text(event.message)
        if event.HasField("task"):
            task = event.task
            state = task.status.state
            status_text = get_message_text(task.status.message) if task.status.HasField("message") else ""
            name = TaskState.Name(state)
            if state in (TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_INPUT_REQUIRED):
                texts = [t for t in (get_artifact_text(a) for a in task.artifacts) if t]
                return "\n".join(texts) if texts else status_text
            raise self.fail(f"its task ended {name}" + (f": {status_text[:200]}" if status_text else ""))
        raise self.fail(f"an unexpected reply ({event.WhichOneof('payload')})")


def _describe(exc: BaseException, endpoint: tuple[str, str] | None = None) -> str:
    """What went wrong on the wire, in words. `endpoint`: (URL, binding) of the interface the card
    names, when it is not the agent's own URL — a connection error then names that URL (a card
    advertising an address only its own container reaches, say)."""
    import httpx

    at = f" to {endpoint[0]}" if endpoint else ""
    note = f"the {endpoint[1]} interface its card names; " if endpoint else ""
    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and len(chain) < 6:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    for e in chain:
        if isinstance(e, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
            return f"the connection{at} dropped before an answer ({note}{_first_line(e)})"
        if isinstance(e, httpx.ConnectError):
            return f"cannot connect{at} ({note}{_first_line(e)})"
        if isinstance(e, httpx.TimeoutException):
            return f"the connection{at} timed out ({note}{_first_line(e)})"
    if "HTTP Error" in str(exc):
        return f"it answered with an HTTP error ({_first_line(exc)})"
    from a2a.client.errors import A2AClientError
    from a2a.utils.errors import A2AError as ProtocolError

    if isinstance(exc, ProtocolError) and not isinstance(exc, A2AClientError) and type(exc).__name__ not in ("JSONParseError", "InvalidAgentResponseError"):
        return f"it answered with an A2A error ({_first_line(exc)})"  # the agent's own failure, well-formed
    return f"a malformed A2A reply ({_first_line(exc)})"


async def _inject_trace(request: httpx.Request) -> None:
    for key, value in trace_headers().items():
        request.headers[key] = value
