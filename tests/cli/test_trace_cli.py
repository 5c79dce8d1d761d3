"""`--trace` on the commands that run rollouts, and `orchestra trace FILE.jsonl`, as a user runs them."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from concurrent import futures
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from orchestra.cli import main
from orchestra.cli.trace import read_spans, render


def _spans(path: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_run_exports_jsonl_and_trace_prints_one_tree_per_rollout(capsys, tmp_path, scenario_path, monkeypatch):
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    out = tmp_path / "run" / "trace.jsonl"
    scenarios = [str(scenario_path("starter_execution_calendar")), str(scenario_path("starter_search_lookup"))]
    code = main(["run", "--model", "orchestra/oracle", "--scenarios", *scenarios, "--concurrency", "2", "--trace", f"jsonl:{out}"])
    assert code == 0
    capsys.readouterr()
    spans = _spans(out)
    assert len({s["context"]["trace_id"] for s in spans}) == 2
    assert all("gen_ai.input.messages" not in s["attributes"] for s in spans)
    assert {s["resource"]["attributes"]["service.name"] for s in spans} == {"orchestra"}

    assert main(["trace", str(out)]) == 0
    text = capsys.readouterr().out
    trees = text.split("\ntrace ")
    assert text.startswith("trace ") and len(trees) == 2 and text.rstrip().endswith(f"2 trace(s), {len(spans)} span(s)")
    for tree in trees:
        lines = tree.splitlines()
        assert lines[1].startswith("invoke_workflow tool_calling:orchestra/oracle  [scenario=starter_")
        assert "PASS reward=1.00" in lines[1] and "sim 0.0s +" in lines[1] and "tokens " in lines[1]
        assert lines[2].startswith("└─ invoke_agent main  [agent=main model=oracle stop=all_turns_completed]  sim ")
        assert any(line.startswith("   ├─ chat oracle  [model=orchestra/oracle]  sim ") and " tokens " in line for line in lines)
        assert any(
            line.startswith("   └─ execute_tool AgentUserInterface__send_message_to_user  [tool=AgentUserInterface__send_message_to_user]") for line in lines
        )
    assert "scenario=starter_execution_calendar" in text and "scenario=starter_search_lookup" in text
    rows = read_spans(out)
    assert render(rows) == render(rows) == text  # rendering builds its trees on copies of the rows


def test_trace_content_and_replay(capsys, tmp_path, scenario_path):
    out = tmp_path / "content.jsonl"
    assert (
        main(["run", "--model", "orchestra/oracle", "--scenarios", str(scenario_path("starter_search_lookup")), "--trace", f"jsonl:{out}", "--trace-content"])
        == 0
    )
    chats = [s for s in _spans(out) if s["name"].startswith("chat ")]
    assert chats and all(json.loads(s["attributes"]["gen_ai.input.messages"])[0]["role"] == "system" for s in chats)

    replayed = tmp_path / "replay.jsonl"
    assert main(["replay", str(scenario_path("starter_search_lookup")), "--trace", f"jsonl:{replayed}"]) == 0
    (workflow,) = _spans(replayed)  # the oracle policy runs no agent: the rollout's span alone
    assert workflow["name"] == "invoke_workflow oracle" and workflow["attributes"]["orchestra.verdict"] is True
    capsys.readouterr()

    checked = tmp_path / "judge-check.jsonl"
    assert main(["judge-check", str(scenario_path("starter_execution_calendar")), "--trace", f"jsonl:{checked}"]) == 0
    workflows = {s["name"]: s["attributes"] for s in _spans(checked)}
    assert workflows["invoke_workflow oracle"]["orchestra.verdict"] is True
    assert workflows["invoke_workflow oracle:wrong_arg"]["orchestra.verdict"] is False
    assert workflows["invoke_workflow oracle:wrong_arg"]["orchestra.perturbation"] == "wrong_arg"
    capsys.readouterr()


def test_trace_file_errors_name_the_file_and_line(capsys, tmp_path):
    missing = tmp_path / "missing.jsonl"
    assert main(["trace", str(missing)]) == 2
    assert f"{missing}: no such trace file" in capsys.readouterr().err

    bad = tmp_path / "bad.jsonl"
    good = {"name": "invoke_workflow x", "context": {"trace_id": "0x1", "span_id": "0x2"}, "parent_id": None, "attributes": {}}
    bad.write_text(json.dumps(good) + "\n\n{not json\n")
    assert main(["trace", str(bad)]) == 2
    assert f"{bad}:3: not JSON" in capsys.readouterr().err

    bad.write_text(json.dumps({"name": "chat m", "attributes": {}}) + "\n")
    assert main(["trace", str(bad)]) == 2
    assert f"{bad}:1: span 'chat m' has no `context`" in capsys.readouterr().err

    bad.write_text("[1, 2]\n")
    assert main(["trace", str(bad)]) == 2
    assert f"{bad}:1: expected a span object, got list" in capsys.readouterr().err

    # spans whose parent is not in the file (it never ended: an interrupted run) stay together under a stand-in
    orphans = [
        {"name": name, "context": {"trace_id": "0x1", "span_id": span_id}, "parent_id": "0x9", "start_time": start, "attributes": {}}
        for name, span_id, start in (("chat m", "0x3", "t1"), ("execute_tool t", "0x4", "t2"))
    ]
    bad.write_text("".join(json.dumps(s) + "\n" for s in [good, *orphans]))
    assert main(["trace", str(bad)]) == 0
    out = capsys.readouterr().out
    assert "? span 9  (not in the file: it never ended — was the run interrupted?)\n├─ chat m  ok\n└─ execute_tool t  ok\n" in out
    assert out.rstrip().endswith("1 trace(s), 3 span(s)")

    # a run killed while writing a span leaves a last line without its newline: skipped, with a warning
    bad.write_text("".join(json.dumps(s) + "\n" for s in [good, *orphans]) + json.dumps(good)[:25])
    assert main(["trace", str(bad)]) == 0
    captured = capsys.readouterr()
    assert f"{bad}:4: the last line is cut off (the run was interrupted?); skipped" in captured.err
    assert captured.out.rstrip().endswith("1 trace(s), 3 span(s)")
    # ... but a bad line that ends with a newline is still an error
    bad.write_text(json.dumps(good) + "\n" + json.dumps(good)[:25] + "\n")
    assert main(["trace", str(bad)]) == 2
    assert f"{bad}:2: not JSON" in capsys.readouterr().err


def test_bad_trace_options_are_clear_errors(capsys, scenario_path, monkeypatch):
    path = str(scenario_path("starter_search_lookup"))
    assert main(["run", "--model", "orchestra/oracle", "--scenarios", path, "--trace", "zipkin"]) == 2
    assert "unknown trace destination 'zipkin'" in capsys.readouterr().err
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "zipkin")
    assert main(["replay", path]) == 2
    assert "OTEL_TRACES_EXPORTER='zipkin' is not supported" in capsys.readouterr().err


def test_otel_traces_exporter_console_turns_tracing_on(capsys, scenario_path, monkeypatch):
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    assert main(["replay", str(scenario_path("starter_search_lookup")), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["success"] is True  # stdout stays the command's output
    assert '"name": "invoke_workflow oracle"' in captured.err

    # OTEL_SDK_DISABLED=true wins over OTEL_TRACES_EXPORTER (both the environment's); an explicit --trace is an error
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert main(["replay", str(scenario_path("starter_search_lookup")), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["success"] is True and "invoke_workflow" not in captured.err
    assert main(["replay", str(scenario_path("starter_search_lookup")), "--trace", "console"]) == 2
    assert "OTEL_SDK_DISABLED=true disables the OpenTelemetry SDK" in capsys.readouterr().err


# ------------------------------------------------------------------------------ OTLP, HTTP and gRPC


class _Collector(BaseHTTPRequestHandler):
    received: list[bytes] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).received.append((self.path, self.headers["Content-Type"], body))  # type: ignore[arg-type]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def http_collector() -> Iterator[tuple[str, list[Any]]]:
    _Collector.received = []
    server = HTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", _Collector.received
    finally:
        server.shutdown()
        server.server_close()


def _span_names(requests: list[Any]) -> list[str]:
    names = []
    for request in requests:
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                names.extend(span.name for span in scope_spans.spans)
    return names


def test_run_exports_over_otlp_http_to_the_endpoint_in_the_environment(capsys, scenario_path, monkeypatch, http_collector):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    endpoint, received = http_collector
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "my-evals")
    assert main(["run", "--model", "orchestra/oracle", "--scenarios", str(scenario_path("starter_search_lookup")), "--trace", "otlp"]) == 0
    capsys.readouterr()
    assert received and all(path == "/v1/traces" and ctype == "application/x-protobuf" for path, ctype, _ in received)
    requests = [ExportTraceServiceRequest.FromString(body) for _, _, body in received]
    names = _span_names(requests)
    assert names.count("invoke_workflow tool_calling:orchestra/oracle") == 1 and "invoke_agent main" in names and "chat oracle" in names
    service = {a.value.string_value for r in requests for rs in r.resource_spans for a in rs.resource.attributes if a.key == "service.name"}
    assert service == {"my-evals"}


def test_run_exports_over_otlp_grpc(capsys, scenario_path, monkeypatch):
    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

    requests: list[Any] = []

    class Service(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request: Any, context: Any) -> Any:  # noqa: N802 - the gRPC method's name
            requests.append(request)
            return trace_service_pb2.ExportTraceServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Service(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        assert main(["run", "--model", "orchestra/oracle", "--scenarios", str(scenario_path("starter_search_lookup")), "--trace", "otlp"]) == 0
    finally:
        server.stop(None)
    capsys.readouterr()
    names = _span_names(requests)
    assert names.count("invoke_workflow tool_calling:orchestra/oracle") == 1 and "invoke_agent main" in names


def test_steps_with_unknown_tools_or_format_errors_are_errors_and_the_stop_reason_is_shown(capsys, tmp_path, scenario_path):
    script = tmp_path / "script.json"
    unknown = 'Thought: teleport.\nAction:\n{"action": "Nowhere__teleport", "action_input": {}}<end_action>'
    broken = "Thought: oops.\nAction:\n{not json at all<end_action>"
    script.write_text(json.dumps([{"text": unknown}, {"text": broken}, {"text": unknown}]))
    out = tmp_path / "trace.jsonl"
    args = ["run", "--model", f"orchestra/scripted:{script}", "--scaffold", "react", "--max-steps", "3", "--no-progress"]
    main([*args, "--scenarios", str(scenario_path("starter_execution_calendar")), "--trace", f"jsonl:{out}"])
    capsys.readouterr()
    assert main(["trace", str(out)]) == 0
    text = capsys.readouterr().out
    unknown_lines = [line for line in text.splitlines() if "execute_tool Nowhere__teleport" in line]
    assert len(unknown_lines) == 2 and all(line.endswith("ERROR unknown_tool") and "step=" in line for line in unknown_lines)
    (format_line,) = [line for line in text.splitlines() if "format_error" in line]
    assert "agent=main step=1" in format_line and format_line.endswith("ERROR format_error")
    workflow = text.splitlines()[1]
    assert "stop=step_budget" in workflow and "FAIL" in workflow
    assert any("invoke_agent main" in line and "stop=step_budget" in line for line in text.splitlines())


def test_otlp_with_no_collector_fails_at_start_in_one_line_naming_the_endpoint(capsys, scenario_path, monkeypatch):
    """It used to run, exit 0, and leave only the SDK's "Failed to export spans batch" ~9 s later."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_PROTOCOL", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", raising=False)
    code = main(["run", "--model", "orchestra/oracle", "--scenarios", str(scenario_path("starter_search_lookup")), "--trace", "otlp"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.strip().splitlines() == [
        f"orchestra: error: --trace otlp: no OpenTelemetry collector at http://127.0.0.1:{port}/v1/traces: nothing is listening (connection refused); "
        "the trace would be lost (start one, or set OTEL_EXPORTER_OTLP_ENDPOINT)"
    ]


def test_a_collector_that_goes_away_mid_run_ends_the_run_with_one_trace_lost_line(capsys, scenario_path, monkeypatch):
    """The collector answers the start-up check, then is gone when the spans are exported: the run
    still finishes, and its last line says the trace was lost, how many spans and where to."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def answer_once_then_die() -> None:
        connection, _ = listener.accept()  # the start-up check (`check_collector`)
        connection.close()
        listener.close()

    thread = threading.Thread(target=answer_once_then_die, daemon=True)
    thread.start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", raising=False)
    code = main(["run", "--model", "orchestra/oracle", "--scenarios", str(scenario_path("starter_search_lookup")), "--trace", "otlp"])
    thread.join(5)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 0
    assert err[-1].startswith("orchestra: trace lost: could not export ") and err[-1].endswith(f" span(s) to http://127.0.0.1:{port}/v1/traces")
    assert int(err[-1].split("export ")[1].split()[0]) > 0


def test_tracing_counts_the_spans_an_exporter_failed_to_export():
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    from orchestra.tracing import Tracing

    class Flaky(SpanExporter):
        def __init__(self) -> None:
            self.calls = 0

        def export(self, spans: Any) -> SpanExportResult:
            self.calls += 1
            if self.calls == 2:
                raise ConnectionError("collector gone")
            return SpanExportResult.SUCCESS if self.calls == 1 else SpanExportResult.FAILURE

    with Tracing(Flaky()) as tracing:
        for name in ("kept", "raised", "refused"):
            with contextlib.suppress(ConnectionError), tracing.tracer.start_as_current_span(name):
                pass
    assert tracing.lost_spans == 2
    assert tracing.lost_message() == "trace lost: could not export 2 span(s) to Flaky"
    with Tracing(Flaky()) as clean:
        with clean.tracer.start_as_current_span("kept"):
            pass
    assert clean.lost_spans == 0 and clean.lost_message() is None


def test_trace_content_without_trace_is_an_error_not_ignored(capsys, scenario_path, monkeypatch):
    monkeypatch.delenv("OTEL_TRACES_EXPORTER", raising=False)
    code = main(["run", "--model", "orchestra/oracle", "--scenarios", str(scenario_path("starter_search_lookup")), "--trace-content"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert (
        captured.err.strip()
        == "orchestra: error: --trace-content records content into a trace: give --trace otlp|console|jsonl:PATH too (or OTEL_TRACES_EXPORTER)"
    )


def test_the_trace_says_error_where_the_command_line_does(capsys, tmp_path, scenario_path):
    """A model whose calls all fail: the judge passes "Max iterations reached" (reward 1.0) but the
    rollout is an ERROR; the trace's workflow line used to say `PASS`/`FAIL reward=1.00`."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"raise": "APIConnectionError"}] * 2))
    out = tmp_path / "t.jsonl"
    argv = ["run", "--scaffold", "react", "--model", f"orchestra/scripted:{script}", "--max-steps", "2", "--model-retries", "0"]
    assert main([*argv, "--scenarios", str(scenario_path("starter_search_lookup")), "--trace", f"jsonl:{out}"]) == 1
    assert capsys.readouterr().out.split()[1] == "ERROR"
    assert main(["trace", str(out)]) == 0
    workflow = capsys.readouterr().out.splitlines()[1]
    assert workflow.startswith("invoke_workflow ") and "[scenario=starter_search_lookup sample=0 ERROR stop=" in workflow
    assert "PASS" not in workflow and "FAIL" not in workflow and "reward=" not in workflow
