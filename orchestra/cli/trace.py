"""`orchestra trace FILE.jsonl`: a finished run's spans as one tree per rollout, in the terminal.

Reads the file `--trace jsonl:PATH` wrote (one OpenTelemetry SDK span JSON object per line) and
prints each trace — one per rollout — as a tree: per span its name, agent, model, tool, simulated
start and duration, tokens and status. Wall-clock timestamps order siblings; the times shown are
simulated (`orchestra.sim.*`), which is what the rollout's clock and its event log use. Works
without OpenTelemetry installed (the file is plain JSON).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestra.errors import OrchestraError


class TraceFileError(OrchestraError):
    """The trace file is missing or is not a span-per-line JSON export."""


@dataclass
class SpanRow:
    name: str
    trace_id: str
    span_id: str
    parent_id: str | None
    start_time: str
    status: str
    status_description: str
    attributes: dict[str, Any]
    line: int
    children: list[SpanRow] = field(default_factory=list)
    #: a stand-in for a parent span that is not in the file (it never ended: the run was interrupted)
    missing: bool = False


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("trace", help="print a finished run's span tree from a --trace jsonl:PATH export")
    p.add_argument("file", type=Path, metavar="FILE.jsonl", help="the JSONL file `orchestra run --trace jsonl:FILE` wrote")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    spans = read_spans(args.file)
    print(render(spans), end="")
    return 0


def read_spans(path: Path) -> list[SpanRow]:
    """Every span of the file, validated line by line (errors name the file and the line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TraceFileError(f"{path}: no such trace file (write one with `orchestra run ... --trace jsonl:{path}`)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceFileError(f"{path}: cannot read the trace file: {exc}") from exc
    rows = []
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            if number == len(lines) and not text.endswith("\n"):
                # the exporter writes whole lines: a last line without its newline was cut off while
                # being written (the run was killed); what came before it is still a valid trace
                print(f"orchestra trace: {path}:{number}: the last line is cut off (the run was interrupted?); skipped", file=sys.stderr)
                break
            raise TraceFileError(f"{path}:{number}: not JSON ({exc.msg} at column {exc.colno}); expected one span object per line") from None
        rows.append(_row(obj, path, number))
    return rows


def _row(obj: Any, path: Path, number: int) -> SpanRow:
    where = f"{path}:{number}"
    if not isinstance(obj, dict):
        raise TraceFileError(f"{where}: expected a span object, got {type(obj).__name__}")
    context = obj.get("context")
    name = obj.get("name")
    if not isinstance(name, str):
        raise TraceFileError(f"{where}: the span has no `name`")
    if not isinstance(context, dict) or not isinstance(context.get("trace_id"), str) or not isinstance(context.get("span_id"), str):
        raise TraceFileError(f"{where}: span {name!r} has no `context` with `trace_id` and `span_id`")
    parent = obj.get("parent_id")
    if parent is not None and not isinstance(parent, str):
        raise TraceFileError(f"{where}: span {name!r} has a `parent_id` that is not a string")
    attributes = obj.get("attributes") or {}
    if not isinstance(attributes, dict):
        raise TraceFileError(f"{where}: span {name!r} has `attributes` that are not an object")
    status = obj.get("status") or {}
    if not isinstance(status, dict):
        raise TraceFileError(f"{where}: span {name!r} has a `status` that is not an object")
    return SpanRow(
        name=name,
        trace_id=context["trace_id"],
        span_id=context["span_id"],
        parent_id=parent,
        start_time=str(obj.get("start_time") or ""),
        status=str(status.get("status_code", "UNSET")),
        status_description=str(status.get("description", "")),
        attributes=attributes,
        line=number,
    )


def render(spans: list[SpanRow]) -> str:
    """One tree per trace, traces in start order; a span whose parent is not in the file is a root.
    The trees are built on copies: `spans` is left as it was (rendering twice prints the same)."""
    by_trace: dict[str, list[SpanRow]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(dataclasses.replace(span, children=[]))
    trees = []
    for trace_id, members in by_trace.items():
        ids = {s.span_id: s for s in members}
        roots: list[SpanRow] = []
        for s in list(members):
            parent = ids.get(s.parent_id) if s.parent_id else None
            if parent is None and s.parent_id:
                # a span ends (and is written) after its children: one that is missing never ended, so its
                # children are kept together under a stand-in rather than scattered as roots
                parent = ids[s.parent_id] = SpanRow(
                    name=s.parent_id,
                    trace_id=trace_id,
                    span_id=s.parent_id,
                    parent_id=None,
                    start_time=s.start_time,
                    status="UNSET",
                    status_description="",
                    attributes={},
                    line=s.line,
                    missing=True,
                )
                roots.append(parent)
                members.append(parent)
            (parent.children if parent is not None else roots).append(s)
        for s in members:
            s.children.sort(key=lambda c: (c.start_time, c.line))
        roots.sort(key=lambda c: (c.start_time, c.line))
        trees.append((roots[0].start_time if roots else "", trace_id, roots))
    trees.sort(key=lambda t: (t[0], t[1]))
    out = []
    for _, trace_id, roots in trees:
        out.append(f"trace {trace_id.removeprefix('0x')}\n")
        for root in roots:
            _lines(root, "", "", out)
        out.append("\n")
    out.append(f"{len(trees)} trace(s), {len(spans)} span(s)\n")
    return "".join(out)


def _lines(span: SpanRow, first: str, rest: str, out: list[str]) -> None:
    text = f"? span {span.span_id.removeprefix('0x')}  (not in the file: it never ended — was the run interrupted?)" if span.missing else _describe(span)
    out.append(f"{first}{text}\n")
    for i, child in enumerate(span.children):
        last = i + 1 == len(span.children)
        _lines(child, rest + ("└─ " if last else "├─ "), rest + ("   " if last else "│  "), out)


def _describe(span: SpanRow) -> str:
    a = span.attributes
    parts = [span.name]
    details = []
    op = a.get("gen_ai.operation.name")
    if op == "invoke_workflow":
        if "orchestra.scenario.id" in a:
            details.append(f"scenario={a['orchestra.scenario.id']}")
        if "orchestra.sample_index" in a:
            details.append(f"sample={a['orchestra.sample_index']}")
        if span.status == "ERROR" or "error.type" in a:  # the rollout's status is ERROR, as the CLI says: no verdict, no reward
            details.append("ERROR")
        elif "orchestra.verdict" in a:
            details.append(("PASS" if a["orchestra.verdict"] else "FAIL") + f" reward={float(a.get('orchestra.reward', 0.0)):.2f}")
        if "orchestra.stop_reason" in a:
            details.append(f"stop={a['orchestra.stop_reason']}")
    if op == "invoke_agent" and a.get("gen_ai.agent.name") is not None:
        details.append(f"agent={a['gen_ai.agent.name']}")
    if op in (None, "format_error") and "orchestra.agent.name" in a:  # a step's problem (format_error): whose, which step
        details.append(f"agent={a['orchestra.agent.name']}")
    if "orchestra.step" in a:
        details.append(f"step={a['orchestra.step']}")
    model = a.get("gen_ai.response.model") or a.get("gen_ai.request.model")
    if model is not None and op in ("invoke_agent", "chat"):
        details.append(f"model={model}")
    if op == "invoke_agent" and "orchestra.agent.stop_reason" in a:
        details.append(f"stop={a['orchestra.agent.stop_reason']}")
    if op == "execute_tool" and "gen_ai.tool.name" in a:
        details.append(f"tool={a['gen_ai.tool.name']}")
    attempts = a.get("orchestra.model.attempts")
    if isinstance(attempts, int) and attempts > 1:
        details.append(f"attempts={attempts}")
    if details:
        parts.append("[" + " ".join(details) + "]")
    start, duration = a.get("orchestra.sim.start"), a.get("orchestra.sim.duration_s")
    if isinstance(start, int | float):
        parts.append(f"sim {float(start):.1f}s" + (f" +{float(duration):.1f}s" if isinstance(duration, int | float) else ""))
    tokens_in, tokens_out = a.get("gen_ai.usage.input_tokens"), a.get("gen_ai.usage.output_tokens")
    if tokens_in is not None or tokens_out is not None:
        parts.append(f"tokens {tokens_in or 0}/{tokens_out or 0}")
    if span.status == "ERROR":
        kind = a.get("error.type")
        reason = span.status_description or kind or "error"
        if kind and span.status_description and span.status_description != kind:
            reason = f"{kind}: {_first_line(span.status_description)}"
        parts.append(f"ERROR {reason}")
    else:
        parts.append("ok")
    return "  ".join(parts)


def _first_line(text: str, width: int = 120) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= width else line[: width - 3] + "..."
