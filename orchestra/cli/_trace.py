"""`--trace otlp|console|jsonl:PATH` and `--trace-content`, shared by the commands that run rollouts.

A command adds the options with `add_trace_options(parser)`; `orchestra.cli.main` wraps the
command in `tracing_from_args(args)`, so a command module needs no other line. Without `--trace`,
OpenTelemetry's own `OTEL_TRACES_EXPORTER` (`otlp`, `console`, `none`) can turn tracing on; with
neither, nothing of OpenTelemetry is imported.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - nothing of OpenTelemetry is imported without --trace
    from orchestra.tracing import Tracing

TRACE_HELP = (
    "export OpenTelemetry spans (GenAI semantic conventions; docs/tracing.md): otlp (OTEL_EXPORTER_OTLP_ENDPOINT, "
    "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf|grpc), console (stderr) or jsonl:PATH (read it with `orchestra trace PATH`)"
)


def add_trace_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trace", metavar="DEST", default=None, help=TRACE_HELP)
    parser.add_argument(
        "--trace-content",
        action="store_true",
        default=None,
        help="also record messages, tool arguments and results (as OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)",
    )


@contextlib.contextmanager
def tracing_from_args(args: argparse.Namespace) -> Iterator[None]:
    """Trace the command's rollouts as its options (or `OTEL_TRACES_EXPORTER`) ask; flush at the end."""
    spec = getattr(args, "trace", None)
    if spec is None and hasattr(args, "trace"):
        env = os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
        if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
            env = "none"  # both from the environment: the SDK's off switch wins, as in the SDK (an explicit --trace is an error)
        if env in ("otlp", "console"):
            spec = env
        elif env not in ("", "none"):
            from orchestra.tracing import TracingError

            raise TracingError(f"OTEL_TRACES_EXPORTER={env!r} is not supported by orchestra: use otlp, console or none (or --trace)")
    if spec is None:
        if getattr(args, "trace_content", None):  # it would record nothing: say so, never ignore it
            from orchestra.tracing import TracingError

            raise TracingError("--trace-content records content into a trace: give --trace otlp|console|jsonl:PATH too (or OTEL_TRACES_EXPORTER)")
        yield
        return
    from orchestra.tracing import Tracing

    if spec == "otlp":
        check_collector()
    tracing = Tracing.from_spec(spec, content=getattr(args, "trace_content", None))
    if spec == "otlp":
        tracing.destination = collector_endpoint()
    try:
        with tracing:
            yield
    finally:
        say_lost(tracing)


def say_lost(tracing: Tracing) -> None:
    """One line on stderr when spans could not be exported (a collector that went away mid-run):
    the OpenTelemetry SDK only logs each failed batch."""
    message = tracing.lost_message()
    if message is not None:
        print(f"orchestra: {message}", file=sys.stderr)


def collector_endpoint() -> str:
    """Where OTLP spans go, as the SDK's exporters read it from the environment."""
    protocol = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
    traces = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if traces:
        return traces
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or ("http://localhost:4317" if protocol == "grpc" else "http://localhost:4318")
    return base if protocol == "grpc" else base.rstrip("/") + "/v1/traces"


def check_collector(timeout: float = 2.0) -> None:
    """Preflight of `--trace otlp`: a collector must listen at the endpoint, or every span would be
    lost (the SDK only logs "Failed to export spans batch" seconds after the run): one line, now."""
    import socket
    from urllib.parse import urlsplit

    from orchestra.tracing import TracingError

    endpoint = collector_endpoint()
    url = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "localhost", port), timeout=timeout):
            pass
    except OSError as exc:
        cause = "nothing is listening (connection refused)" if isinstance(exc, ConnectionRefusedError) else f"cannot connect ({exc})"
        raise TracingError(
            f"--trace otlp: no OpenTelemetry collector at {endpoint}: {cause}; the trace would be lost (start one, or set OTEL_EXPORTER_OTLP_ENDPOINT)"
        ) from None
