"""Agent-loop parity: two agent runs' traces (ARE's default agent, an orchestra scaffold) compared.

`compare` checks two `AgentTrace`s of one scenario (`orchestra.parity.harness.run_parity` makes
them with the same scripted policy) against each other on what matters to a model and to a benchmark:

* the verdict (ARE's scripted judge, as each runner applies it);
* the agent's tool calls, in order, with arguments and failure (from each event log — nested app
  calls included, exactly as ARE logs them);
* every request the model received: the messages (role and text, byte for byte) and the
  sampling parameters the client sent (`temperature`, `stop`, ...).

Normalisation: only timestamps that come from the *wall clock* are masked, because they differ
between any two runs (ARE's dataclass defaults such as `MessageV2.timestamp`, `ConversationV2.
last_updated`, `Email.timestamp` fall back to `time.time()` when an app creates an object without
one). A number or date is masked only when it lies within a day of the machine's time during the
run; scenario times (simulated) are never touched. ARE's run itself is driven on a simulated clock
(see `orchestra.are.default_agent`), so none of its own timestamps depend on the wall clock.
"""

from __future__ import annotations

import difflib
import json
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from orchestra.parity.policy import ModelRequestRecord
from orchestra.parity.trace import AgentToolCall, AgentTrace

#: How much of a unified diff a report shows per section.
MAX_DIFF_LINES = 120
_EPOCH = re.compile(r"(?<![\d.])1\d{9}(?:\.\d+)?(?![\d])")
_DATETIME = re.compile(r"\b(\d{4}-\d{2}-\d{2})[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?\b")


@dataclass
class WallClockWindow:
    """The machine's time span of a parity run: values inside it are wall-clock leaks."""

    start: float
    end: float
    margin: float = 86400.0

    def contains(self, t: float) -> bool:
        return self.start - self.margin <= t <= self.end + self.margin

    def normalise(self, text: str) -> str:
        def epoch(m: re.Match[str]) -> str:
            return "<WALL-CLOCK-TIME>" if self.contains(float(m.group(0))) else m.group(0)

        days = {datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d") for t in (self.start - self.margin, self.start, self.end, self.end + self.margin)}

        def date(m: re.Match[str]) -> str:
            return "<WALL-CLOCK-DATETIME>" if m.group(1) in days else m.group(0)

        return _DATETIME.sub(date, _EPOCH.sub(epoch, text))


def render_message(message: dict[str, Any]) -> str:
    extra = {k: v for k, v in message.items() if k not in ("role", "content")}
    head = f"### {message.get('role')}" + (f" {json.dumps(extra, sort_keys=True, default=str)}" if extra else "")
    content = message.get("content")
    body = content if isinstance(content, str) else json.dumps(content, sort_keys=True, default=str)
    return f"{head}\n{body}"


def render_request(request: ModelRequestRecord, window: WallClockWindow | None = None) -> list[str]:
    """One request's messages as text lines (for diffs), wall-clock timestamps masked."""
    text = "\n".join(render_message(m) for m in request.messages)
    if window is not None:
        text = window.normalise(text)
    return text.split("\n")


def render_call(call: AgentToolCall, window: WallClockWindow | None = None) -> str:
    text = f"{call.tool}({json.dumps(call.args, sort_keys=True, ensure_ascii=False, default=str)})"
    if call.error:
        text += f"  -> FAILED: {call.error}"
    return window.normalise(text) if window is not None else text


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def _diff(a: list[str], b: list[str], a_name: str, b_name: str) -> list[str]:
    lines = list(difflib.unified_diff(a, b, fromfile=a_name, tofile=b_name, lineterm="", n=3))
    if len(lines) > MAX_DIFF_LINES:
        lines = lines[:MAX_DIFF_LINES] + [f"... ({len(lines) - MAX_DIFF_LINES} more diff lines)"]
    return lines


def _first_difference(a: ModelRequestRecord, b: ModelRequestRecord, window: WallClockWindow | None) -> list[str]:
    """Where the two requests first differ: message index, role, line, both texts."""
    for k in range(max(len(a.messages), len(b.messages))):
        if k >= len(a.messages) or k >= len(b.messages):
            side = "orchestra" if k >= len(a.messages) else "ARE"
            return [f"first difference: message {k + 1} exists only on the {side} side"]
        am, bm = a.messages[k], b.messages[k]
        a_lines = render_message(am).split("\n")
        b_lines = render_message(bm).split("\n")
        if window is not None:
            a_lines = window.normalise("\n".join(a_lines)).split("\n")
            b_lines = window.normalise("\n".join(b_lines)).split("\n")
        if a_lines == b_lines:
            continue
        for j in range(max(len(a_lines), len(b_lines))):
            al = a_lines[j] if j < len(a_lines) else "<no line>"
            bl = b_lines[j] if j < len(b_lines) else "<no line>"
            if al != bl:
                return [
                    f"first difference: message {k + 1} ({am.get('role')} / {bm.get('role')}), line {j}:",
                    f"  ARE:       {al[:300]!r}",
                    f"  orchestra: {bl[:300]!r}",
                ]
    return []


@dataclass
class ParityReport:
    """The comparison of one scenario: empty difference lists mean byte-identical behaviour."""

    scenario_id: str
    source: str
    are: AgentTrace
    orchestra: AgentTrace
    window: WallClockWindow
    verdict: list[str] = field(default_factory=list)
    tool_calls: list[str] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    first_prompt_difference: int | None = None  # 0-based request index
    #: The first request the policy could not answer (ran out of replies, raised), on either side.
    #: A policy failure is the input's fault, not a parity finding: prompts after it are not compared.
    policy_failure: str | None = None

    @property
    def identical(self) -> bool:
        return not (self.verdict or self.tool_calls or self.prompts or self.requests)

    def summary(self) -> str:
        parts = []
        if self.verdict:
            parts.append("verdict")
        if self.tool_calls:
            parts.append("tool calls")
        if self.prompts:
            parts.append(f"prompts (first at request {self.first_prompt_difference + 1 if self.first_prompt_difference is not None else '?'})")
        if self.requests:
            parts.append("request parameters")
        return "identical" if not parts else "DIFFERENT: " + ", ".join(parts)

    def render(self) -> str:
        a, o = self.are, self.orchestra
        out = [
            f"== {self.scenario_id} ({self.source}): {self.summary()}",
            f"   ARE:       {'PASS' if a.success else 'FAIL'}  {len(a.requests)} model requests, {len(a.tool_calls)} agent tool calls, sim {a.sim_seconds:.1f}s"
            + (f", error: {_first_line(a.error)}" if a.error else ""),
            f"   orchestra: {'PASS' if o.success else 'FAIL'}  {len(o.requests)} model requests, {len(o.tool_calls)} agent tool calls, sim {o.sim_seconds:.1f}s"
            + (f", error: {_first_line(o.error)}" if o.error else ""),
        ]
        for t in (a, o):
            out.extend(f"   note ({t.side}): {_first_line(n)}" for n in t.notes)
        if self.policy_failure:
            out.append(f"   POLICY FAILED: {self.policy_failure}")
        for title, lines in (
            ("verdict", self.verdict),
            ("tool calls (ARE vs orchestra)", self.tool_calls),
            ("first differing prompt", self.prompts),
            ("request parameters", self.requests),
        ):
            if lines:
                out.append(f"-- {title}")
                out.extend("   " + line for line in lines)
        return "\n".join(out)

    def to_json(self) -> dict[str, Any]:
        def trace(t: AgentTrace) -> dict[str, Any]:
            return {
                "success": t.success,
                "rationale": t.rationale,
                "error": t.error,
                "sim_seconds": t.sim_seconds,
                "n_requests": len(t.requests),
                "tool_calls": [render_call(c) for c in t.tool_calls],
                "notes": t.notes,
            }

        return {
            "scenario_id": self.scenario_id,
            "source": self.source,
            "identical": self.identical,
            "summary": self.summary(),
            "first_prompt_difference": self.first_prompt_difference,
            "policy_failure": self.policy_failure,
            "verdict": self.verdict,
            "tool_calls": self.tool_calls,
            "prompts": self.prompts,
            "requests": self.requests,
            "are": trace(self.are),
            "orchestra": trace(self.orchestra),
        }


def compare(are: AgentTrace, orch: AgentTrace, *, source: str = "", window: WallClockWindow | None = None) -> ParityReport:
    """Compare two traces; every difference is described in the report's lists."""
    window = window or WallClockWindow(time.time(), time.time())
    report = ParityReport(scenario_id=are.scenario_id, source=source, are=are, orchestra=orch, window=window)
    if are.success != orch.success:
        report.verdict = [
            f"ARE: {'PASS' if are.success else 'FAIL'}" + (f" ({are.rationale})" if are.rationale else ""),
            f"orchestra: {'PASS' if orch.success else 'FAIL'}" + (f" ({orch.rationale})" if orch.rationale else ""),
        ]
    a_calls = [render_call(c, window) for c in are.tool_calls]
    o_calls = [render_call(c, window) for c in orch.tool_calls]
    if a_calls != o_calls:
        report.tool_calls = _diff(a_calls, o_calls, "ARE", "orchestra")
    n_compared = max(len(are.requests), len(orch.requests))
    failed = [(i, t.side, r.error) for t in (are, orch) for i, r in enumerate(t.requests) if r.error is not None]
    if failed:
        i, side, error = min(failed, key=lambda f: f[0])
        report.policy_failure = (
            f"the policy failed on request {i + 1} ({side} side): {_first_line(error or '')}; later requests show "
            "the failure as each client reports it (litellm's traceback differs between ARE's sync and "
            "orchestra's async call) and are not compared"
        )
        n_compared = i + 1
    for i in range(n_compared):
        if i >= len(are.requests) or i >= len(orch.requests):
            report.first_prompt_difference = i
            report.prompts = [
                f"ARE's model received {len(are.requests)} requests, orchestra's {len(orch.requests)}; "
                f"request {i + 1} exists only on the {'orchestra' if i >= len(are.requests) else 'ARE'} side:"
            ] + ["   " + line for line in render_request((orch.requests if i >= len(are.requests) else are.requests)[i], window)[-40:]]
            break
        a_lines = render_request(are.requests[i], window)
        o_lines = render_request(orch.requests[i], window)
        if a_lines != o_lines:
            report.first_prompt_difference = i
            report.prompts = [
                f"request {i + 1}: ARE sent {len(are.requests[i].messages)} messages, orchestra {len(orch.requests[i].messages)}",
                *_first_difference(are.requests[i], orch.requests[i], window),
            ] + _diff(a_lines, o_lines, f"ARE request {i + 1}", f"orchestra request {i + 1}")
            break
    for i, (ar, orq) in enumerate(zip(are.requests[:n_compared], orch.requests[:n_compared])):
        if ar.params != orq.params:
            report.requests = [
                f"request {i + 1}: ARE's client sent {json.dumps(ar.params, sort_keys=True)}, orchestra's {json.dumps(orq.params, sort_keys=True)}"
            ]
            break
    return report
