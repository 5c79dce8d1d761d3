"""OpenTelemetry tracing configuration: which exporter, whether content is captured, and the
`Tracing` object that owns one `TracerProvider` for the time it is active.

The spans themselves are made by the built-in `tracing` plugin (`orchestra.plugins.tracing`, on
the rollout / agent / model / tool hooks); this module only says where they go. Nothing here is
global: a `Tracing` owns its own `TracerProvider` (never OpenTelemetry's global one, so orchestra
neither takes over nor is taken over by a host application's tracing), and it is made *active*
for a block of code through a context variable, which asyncio/anyio tasks inherit — every
rollout started inside the block, at any concurrency, is traced; code outside it is not::

    from orchestra.tracing import Tracing

    with Tracing.otlp(endpoint="http://127.0.0.1:6006/v1/traces"):   # OTLP over HTTP (Phoenix, Jaeger, ...)
        record = execute_sync(spec)
    # leaving the block flushes and shuts the provider down

    with Tracing(InMemorySpanExporter(), content=True):             # any SDK SpanExporter
        ...

Disabled (no active `Tracing`, the default) costs one context-variable read per hook call and
imports nothing of OpenTelemetry: this module imports the SDK only when a `Tracing` is built.

Configuration follows OpenTelemetry's own environment variables wherever one exists: the OTLP
exporters read `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`, `..._HEADERS`, `..._TIMEOUT`,
`..._CERTIFICATE`, ... themselves; `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL` picks HTTP
(`http/protobuf`, the default) or gRPC (`grpc`); `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES`
name the service (default `orchestra`); `OTEL_BSP_*` tune the batch processor of the OTLP
exporter; `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` opts in to content capture
(messages, tool arguments and results, judge rationale), which is off by default as the GenAI
semantic conventions require.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import random
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from orchestra.errors import OrchestraError

if TYPE_CHECKING:  # pragma: no cover
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.sdk.trace.id_generator import IdGenerator
    from opentelemetry.trace import Tracer

#: The instrumentation scope of every orchestra span.
INSTRUMENTATION_NAME = "orchestra"
#: The GenAI semantic conventions' content opt-in variable (also `--trace-content`).
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
#: OpenTelemetry's semantic-convention opt-in variable: a comma-separated list of values.
SEMCONV_OPT_IN_ENV = "OTEL_SEMCONV_STABILITY_OPT_IN"
#: The value of `SEMCONV_OPT_IN_ENV` that asks for the GenAI names orchestra emitted before it moved to
#: semconv-genai v0.1.0 (a separate `invoke_workflow` root with `gen_ai.workflow.name`, `gen_ai.agent.id`
#: on agent spans, no MCP attributes); see docs/tracing.md.
SEMCONV_LEGACY = "gen_ai_legacy"
#: The version of the GenAI semantic conventions orchestra emits by default.
SEMCONV_VERSION = "semconv-genai v0.1.0"
#: Values of `CAPTURE_CONTENT_ENV` that opt in (the Python GenAI instrumentations accept `true`;
#: newer ones name where content goes, which for orchestra is always the span).
_CONTENT_ON = {"true", "1", "yes", "span_only", "span_and_event"}

Protocol = Literal["http/protobuf", "grpc"]

_ACTIVE: contextvars.ContextVar[Tracing | None] = contextvars.ContextVar("orchestra_tracing", default=None)


class TracingError(OrchestraError):
    """Tracing was asked for with a configuration that cannot work (unknown exporter, bad protocol)."""


def active() -> Tracing | None:
    """The `Tracing` active in the current context, or None (tracing disabled)."""
    return _ACTIVE.get()


def content_from_env() -> bool:
    """Whether `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` opts in to content capture."""
    return os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in _CONTENT_ON


def legacy_from_env() -> bool:
    """Whether `OTEL_SEMCONV_STABILITY_OPT_IN` (a comma-separated list) holds `gen_ai_legacy`, asking
    for the GenAI names orchestra emitted before semconv-genai v0.1.0 (the default is v0.1.0; any other
    value, `gen_ai_latest_experimental` included, keeps it)."""
    values = {v.strip().lower() for v in os.environ.get(SEMCONV_OPT_IN_ENV, "").split(",")}
    return SEMCONV_LEGACY in values


def _check_sdk_enabled() -> None:
    """`OTEL_SDK_DISABLED=true` turns every SDK `TracerProvider` into a no-op: asked for spans, the run
    would write an empty file (or send nothing) without a word."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        raise TracingError("tracing was asked for, but OTEL_SDK_DISABLED=true disables the OpenTelemetry SDK (no span would be recorded): unset it")


def _check_http_endpoint(endpoint: str | None) -> None:
    """An OTLP/HTTP endpoint without `http://` or `https://` (`localhost:4318`, a common slip, valid
    for gRPC) fails only at export time, after the whole run, with "No connection adapters were
    found" and every span lost; say so before anything runs."""
    sources: list[tuple[str, str | None]] = [("endpoint", endpoint)] if endpoint is not None else []
    sources += [(name, os.environ.get(name)) for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")]
    where, value = next(((w, v) for w, v in sources if v), ("", None))
    if value is not None and urlsplit(value.strip()).scheme not in ("http", "https"):
        raise TracingError(f"{where}={value!r} is not an http:// or https:// URL, which OTLP over HTTP needs (e.g. http://{value.strip()})")


def system_random_ids() -> IdGenerator:
    """Trace and span ids from the OS's randomness, never from the `random` module's global state.

    The SDK's default `RandomIdGenerator` draws from `random.getrandbits`, and ARE seeds that global
    generator (`random.seed(33)` when it is imported, again when some apps are seeded), so every
    `orchestra run` would start with the same trace and span ids: two runs exported to one backend
    (or appended to one JSONL file) would merge into one trace with colliding span ids.
    """
    from opentelemetry.sdk.trace.id_generator import IdGenerator
    from opentelemetry.trace import INVALID_SPAN_ID, INVALID_TRACE_ID

    rng = random.SystemRandom()

    class SystemRandomIdGenerator(IdGenerator):
        def generate_span_id(self) -> int:
            span_id = rng.getrandbits(64)
            while span_id == INVALID_SPAN_ID:
                span_id = rng.getrandbits(64)
            return span_id

        def generate_trace_id(self) -> int:
            trace_id = rng.getrandbits(128)
            while trace_id == INVALID_TRACE_ID:
                trace_id = rng.getrandbits(128)
            return trace_id

        def is_trace_id_random(self) -> bool:
            return True

    return SystemRandomIdGenerator()


def _counted(exporter: SpanExporter) -> SpanExporter:
    """`exporter`, counting the spans of every export that failed (`lost`); otherwise the same."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class Counted(SpanExporter):
        def __init__(self, inner: SpanExporter) -> None:
            self.inner = inner
            self.lost = 0
            self._lock = threading.Lock()

        def export(self, spans: Any) -> SpanExportResult:
            try:
                result = self.inner.export(spans)
            except Exception:
                self._count(len(spans))
                raise
            if result != SpanExportResult.SUCCESS:
                self._count(len(spans))
            return result

        def _count(self, n: int) -> None:
            with self._lock:
                self.lost += n

        def shutdown(self) -> None:
            self.inner.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return self.inner.force_flush(timeout_millis)

    return Counted(exporter)


class Tracing:
    """One trace destination: an SDK `TracerProvider` of its own with one exporter.

    :param exporter: any OpenTelemetry SDK `SpanExporter` (OTLP, console, in-memory, ...).
    :param content: record message, argument and result content (default: the
        `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` opt-in).
    :param batch: export from a background batch processor (network exporters) instead of
        synchronously as each span ends (files, console, tests).
    :param on_shutdown: called after the provider shut down (closes a file the exporter wrote).
    :param legacy: emit the pre-v0.1.0 GenAI names (default: `OTEL_SEMCONV_STABILITY_OPT_IN`
        holding `gen_ai_legacy`); otherwise semconv-genai v0.1.0's.
    """

    def __init__(
        self,
        exporter: SpanExporter,
        *,
        content: bool | None = None,
        batch: bool = False,
        on_shutdown: Callable[[], None] | None = None,
        legacy: bool | None = None,
    ) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        from orchestra import __version__

        _check_sdk_enabled()
        attributes: dict[str, Any] = {"service.version": __version__}
        if not os.environ.get("OTEL_SERVICE_NAME"):
            attributes["service.name"] = "orchestra"
        # Resource.create also reads OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME.
        self.provider: TracerProvider = TracerProvider(resource=Resource.create(attributes), id_generator=system_random_ids())
        self._counted: Any = _counted(exporter)  # `lost`: spans whose export failed
        #: Where the spans go, for messages (`lost_message`): the exporter's kind unless told (an endpoint, a file).
        self.destination: str = type(exporter).__name__
        self.provider.add_span_processor(BatchSpanProcessor(self._counted) if batch else SimpleSpanProcessor(self._counted))
        self.tracer: Tracer = self.provider.get_tracer(INSTRUMENTATION_NAME, __version__)
        self.exporter = exporter
        self.content = content_from_env() if content is None else content
        #: The pre-v0.1.0 GenAI names (`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_legacy`), else v0.1.0's.
        self.legacy = legacy_from_env() if legacy is None else legacy
        self._on_shutdown = on_shutdown
        self._closed = False
        #: litellm model string → (provider, model), filled as models are seen (per Tracing, not global).
        self.model_names: dict[str, tuple[str, str]] = {}

    @property
    def lost_spans(self) -> int:
        """Spans the exporter failed to export so far (a collector that went away, refused them, ...)."""
        return int(self._counted.lost)

    def lost_message(self) -> str | None:
        """`trace lost: could not export N span(s) to DESTINATION`, or None when nothing was lost."""
        lost = self.lost_spans
        return f"trace lost: could not export {lost} span(s) to {self.destination}" if lost else None

    # ------------------------------------------------------------------ constructors
    @classmethod
    def otlp(
        cls,
        *,
        endpoint: str | None = None,
        protocol: Protocol | None = None,
        headers: dict[str, str] | None = None,
        content: bool | None = None,
    ) -> Tracing:
        """OTLP export (batched). `endpoint`/`headers` default to the `OTEL_EXPORTER_OTLP_*`
        variables, which the SDK's exporters read; `protocol` to `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`
        / `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf`. An HTTP endpoint given here is the
        full traces URL (`http://host:4318/v1/traces`); one from `OTEL_EXPORTER_OTLP_ENDPOINT` gets
        `/v1/traces` appended by the SDK, as the specification says."""
        chosen = protocol or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
        kwargs: dict[str, Any] = {}
        if endpoint is not None:
            kwargs["endpoint"] = endpoint
        if headers is not None:
            kwargs["headers"] = headers
        exporter: SpanExporter
        if chosen == "http/protobuf":
            _check_http_endpoint(endpoint)
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HTTPExporter

            exporter = HTTPExporter(**kwargs)
        elif chosen == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GRPCExporter

            exporter = GRPCExporter(**kwargs)
        else:
            raise TracingError(f"OTLP protocol {chosen!r} is not supported: use 'http/protobuf' or 'grpc' (OTEL_EXPORTER_OTLP_PROTOCOL)")
        return cls(exporter, content=content, batch=True)

    @classmethod
    def console(cls, *, out: IO[str] | None = None, content: bool | None = None) -> Tracing:
        """Every span as pretty JSON as it ends, on stderr (stdout stays the command's output)."""
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return cls(ConsoleSpanExporter(out=out or sys.stderr), content=content)

    @classmethod
    def jsonl(cls, path: str | Path, *, content: bool | None = None) -> Tracing:
        """Every span as one line of JSON (the SDK's own span JSON) in `path`, overwritten; the
        format `orchestra trace FILE` reads."""
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        _check_sdk_enabled()  # before the file is truncated
        target = Path(path)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            handle = target.open("w", encoding="utf-8")
        except OSError as exc:
            raise TracingError(f"cannot write the trace file {target}: {exc.strerror or exc}") from exc
        exporter = ConsoleSpanExporter(out=handle, formatter=lambda span: span.to_json(indent=None) + "\n")
        return cls(exporter, content=content, on_shutdown=handle.close)

    @classmethod
    def from_spec(cls, spec: str, *, content: bool | None = None) -> Tracing:
        """`otlp`, `console` or `jsonl:PATH` (the `--trace` option's values)."""
        kind, _, arg = spec.partition(":")
        if kind == "otlp" and not arg:
            return cls.otlp(content=content)
        if kind == "console" and not arg:
            return cls.console(content=content)
        if kind == "jsonl" and arg:
            tracing = cls.jsonl(arg, content=content)
            tracing.destination = arg
            return tracing
        if kind == "jsonl":
            raise TracingError("--trace jsonl needs a file: jsonl:PATH")
        raise TracingError(f"unknown trace destination {spec!r}: use otlp, console or jsonl:PATH")

    # ------------------------------------------------------------------ lifetime
    @contextlib.contextmanager
    def activate(self) -> Iterator[Tracing]:
        """Trace what runs inside the block (tasks started inside inherit it); does not shut down."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)

    def shutdown(self) -> None:
        """Export what is pending and release the exporter. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self.provider.force_flush()
            self.provider.shutdown()
        finally:
            if self._on_shutdown is not None:
                self._on_shutdown()

    def __enter__(self) -> Tracing:
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(self.activate())
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._stack.close()
        finally:
            self.shutdown()


# ---------------------------------------------------------------------- what other code may call


def conversation_id(spec: Any, *, session: str | None = None) -> str:
    """The `gen_ai.conversation.id` of a rollout: derived from its spec alone (what runs, on which
    scenario, which sample; API keys masked), never from a clock or a random draw, so the same rollout
    has the same id in every run and every process. 32 hex digits with an `orchestra-` prefix.

    `session`: `orchestra serve`'s session id, hashed in too — a served spec does not say which
    outside agent plays it, so two sessions of one spec are two conversations."""
    import hashlib
    import json

    from orchestra.models import mask_secrets

    data = mask_secrets(spec.model_dump(mode="json"))
    if session is not None:
        data = {"spec": data, "served_session": session}
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()
    return f"orchestra-{digest[:32]}"


def inject_trace_context(carrier: dict[str, str]) -> None:
    """Put the current span's W3C trace context (`traceparent`, and `tracestate` when there is one)
    into `carrier` (HTTP headers, an A2A message's metadata, ...), so a process that receives it can
    parent its spans under the span running here (a delegation's `execute_tool`, say).

    A no-op when tracing is off (no active `Tracing`: nothing of OpenTelemetry is imported) or when
    no orchestra span is current."""
    if active() is None:
        return
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    TraceContextTextMapPropagator().inject(carrier)


def extract_trace_context(carrier: dict[str, str]) -> Any:
    """The OpenTelemetry `Context` a `traceparent` in `carrier` names (give it as `context=` when
    starting a span), or None when tracing is off or the carrier holds none."""
    if active() is None or not any(k.lower() == "traceparent" for k in carrier):
        return None
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    return TraceContextTextMapPropagator().extract({k.lower(): v for k, v in carrier.items()})


#: The MCP request a tool call arrived in (`orchestra serve`'s MCP endpoint), for its `execute_tool` span.
_MCP_CALL: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("orchestra_tracing_mcp_call", default=None)


@contextlib.contextmanager
def mcp_call(*, session_id: str, request_id: str | int | None = None, protocol_version: str | None = None) -> Iterator[None]:
    """Tool calls made inside the block arrived over MCP (`tools/call`): their `execute_tool` spans
    carry the MCP conventions' attributes (`mcp.method.name`, `mcp.session.id`, `jsonrpc.request.id`,
    ...). Costs one context-variable set when tracing is off."""
    attributes: dict[str, Any] = {"mcp.method.name": "tools/call", "mcp.session.id": session_id, "network.transport": "tcp", "network.protocol.name": "http"}
    if request_id is not None:
        attributes["jsonrpc.request.id"] = str(request_id)
    if protocol_version:
        attributes["mcp.protocol.version"] = protocol_version
    token = _MCP_CALL.set(attributes)
    try:
        yield
    finally:
        _MCP_CALL.reset(token)


def current_mcp_call() -> dict[str, Any] | None:
    """The MCP attributes of the tool call running here (`mcp_call`), or None."""
    return _MCP_CALL.get()
