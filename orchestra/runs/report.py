"""`orchestra report DIR`: a run folder as one static, self-contained HTML file.

What the page holds, in order: the run (policies, models, orchestra version, how many rollouts
finished — and, for an interrupted run, what is missing), the summary table per capability as
`orchestra.runs.summary.summarize` computes it (pass@1 ± standard error, pass@k, pass^k, simulated
time, tokens, cost, success per dollar), the charts, the table of rollouts, and each rollout's
transcript: its verdict (reward, judge, stop reason, per-turn verdicts, the judge's rationale, the
error of an `ERROR`), the agents' ledgers, and — when the record carries its trajectory
(`rollouts/NAME.json`, docs/trajectories.md) — every step of every agent: notifications, thought,
model outputs (rejected ones marked), tool calls with their observations or errors, and each
delegation's sub-agent nested under the call that started it. A record without a trajectory shows
what it has: the event log (user messages and environment notifications, every tool call) and
the delegations. Under noise, each transcript says what the noise did and marks it where it
happened: the calls it failed (`NOISE: INJECTED FAILURE`) and the environment events it added
(`NOISE: INJECTED EVENT`); ARE's condition checks (re-run every tick, often most of the log) are
folded away under their count.

Charts are plotly figures (plotly.js inlined once, from the plotly package): per capability
pass@1 (with its standard error), pass@k and pass^k, and the outcome counts; and the pass rate
against a per-rollout budget of simulated time and of cost (tokens when nothing was priced): the
share of rollouts that passed *within* the budget, computed per run index and averaged as pass@1
is, so each curve ends at its capability's pass@1.

The page loads nothing: no network, no fonts, no images (its Content-Security-Policy refuses
them), and the same folder renders to the same bytes.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from orchestra import __version__
from orchestra.are.noise import ENV_EXPANSION_PREFIX
from orchestra.errors import OrchestraError
from orchestra.record import RolloutRecord
from orchestra.runs.run_dir import MANIFEST, RESULTS, Manifest, read_results, rollout_name
from orchestra.runs.summary import ALL, CapabilitySummary, RunSummary, summarize
from orchestra.trajectory import AgentTrajectory, Step, ToolCallEntry, Trajectory

__all__ = ["REPORT", "RunFolder", "budget_curve", "load_run", "render"]

#: The report's default file name, in the run folder.
REPORT = "report.html"
#: The longest text (an observation, an argument, a message) shown whole; longer ones are cut.
MAX_TEXT = 4000
STATUS_ORDER = ("PASS", "FAIL", "ERROR", "N/A")
#: ARE's condition-check events (`EventType.CONDITION`): re-run every tick until they hold.
CONDITION = "CONDITION"
STATUS_COLORS = {"PASS": "#2e7d32", "FAIL": "#c62828", "ERROR": "#ef6c00", "N/A": "#757575"}
#: One colour per capability (plotly's default qualitative palette), `all` in black.
PALETTE = ("#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a", "#19d3f3", "#ff6692", "#b6e880", "#ff97ff", "#fecb52")


@dataclass
class RunFolder:
    """What `load_run` read from a run folder."""

    path: Path
    manifest: Manifest | None
    #: The finished rollouts, in the order they were written; each the whole record from
    #: `rollouts/NAME.json` (its trajectory included) where that file holds it, else the line of `results.jsonl`.
    records: list[RolloutRecord]
    summary: RunSummary
    #: What the reader should know about the folder (an interrupted run, a torn line, a missing file).
    notes: list[str] = field(default_factory=list)


def load_run(path: Path) -> RunFolder:
    """Read a run folder (`orchestra run --out DIR`); a clear one-line `OrchestraError` when it is not one.

    An interrupted run is read as far as it got: a torn last line of `results.jsonl` (the rollout
    being written when the run was killed) is left out and said so."""
    if not path.exists():
        raise OrchestraError(f"{path}: no such folder (give a run folder: `orchestra run --out DIR` writes one)")
    if not path.is_dir():
        raise OrchestraError(f"{path}: not a folder (give the run folder that holds {RESULTS} and {MANIFEST})")
    results, manifest_path = path / RESULTS, path / MANIFEST
    if not results.is_file() and not manifest_path.is_file():
        runs = sorted(p.name for p in path.iterdir() if (p / RESULTS).is_file() or (p / MANIFEST).is_file())
        if runs:  # `orchestra gaia2 --out DIR`: one run folder per phase
            each = ", ".join(f"orchestra report {path / name}" for name in runs)
            raise OrchestraError(f"{path}: a folder of run folders (`orchestra gaia2` keeps one per phase), not one run; report each: {each}")
        what = "an empty folder" if not any(path.iterdir()) else f"no {RESULTS} or {MANIFEST} in it"
        raise OrchestraError(f"{path}: not a run folder ({what}; `orchestra run --out DIR` writes one)")
    notes: list[str] = []
    manifest = None
    if manifest_path.is_file():
        try:
            manifest = Manifest.model_validate_json(manifest_path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise OrchestraError(f"{manifest_path}: not a run manifest ({str(exc).splitlines()[0]})") from None
    else:
        notes.append(f"no {MANIFEST}: capabilities unknown, every rollout counted as untagged")
    if not results.is_file():
        raise OrchestraError(f"{path}: no finished rollout yet ({RESULTS} is missing): nothing to report")
    records = read_results(results)
    lines = [line for line in results.read_text(encoding="utf-8").splitlines() if line.strip()]
    if len(lines) > len(records):
        notes.append(f"the last line of {RESULTS} is cut short (a rollout was being written when the run stopped); it is left out")
    if not records:
        raise OrchestraError(f"{path}: no finished rollout yet ({RESULTS} holds none): nothing to report")
    if manifest is not None and manifest.scenarios and not any(r.perturbation for r in records):  # (the manifest does not list perturbations)
        expected = len(manifest.scenarios) * manifest.runs
        if len(records) < expected:
            notes.append(f"the run did not finish: {len(records)} of {expected} rollouts ({len(manifest.scenarios)} scenarios × {manifest.runs} runs)")
    full = [_whole_record(path, r, notes) for r in records]
    return RunFolder(path=path, manifest=manifest, records=full, summary=summarize(records, manifest), notes=notes)


def _whole_record(folder: Path, record: RolloutRecord, notes: list[str]) -> RolloutRecord:
    """The rollout's own file (`rollouts/NAME.json`, which may hold its trajectory), when it is the same rollout."""
    path = folder / "rollouts" / f"{rollout_name(record)}.json"
    if not path.is_file():
        return record
    try:
        whole = RolloutRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        notes.append(f"rollouts/{path.name}: not a rollout record ({str(exc).splitlines()[0]}); its line of {RESULTS} is shown")
        return record
    same = (whole.scenario_id, whole.sample_index, whole.perturbation) == (record.scenario_id, record.sample_index, record.perturbation)
    return whole if same else record


# ---------------------------------------------------------------------------- numbers


def capabilities_of(record: RolloutRecord, manifest: Manifest | None) -> list[str]:
    """The capabilities a rollout counts under (as `summarize` groups them)."""
    if manifest is not None and record.spec is not None:
        entry = manifest.scenarios.get(record.spec.scenario)
        if entry is not None and entry.capabilities:
            return list(entry.capabilities)
    return ["untagged"]


def budget_curve(records: Sequence[RolloutRecord], cost: Callable[[RolloutRecord], float]) -> tuple[list[float], list[float]]:
    """The pass rate within a per-rollout budget: for each budget b (the distinct costs of the
    passed rollouts), per run index the share of its judged rollouts that passed spending at most
    b, averaged over run indices — pass@1's definition, so the last point is pass@1. Starts at
    (0, 0); ends at the largest cost of any judged rollout."""
    judged = [r for r in records if r.status in ("PASS", "FAIL") and r.result is not None]
    if not judged:
        return [], []
    runs: dict[int, list[RolloutRecord]] = defaultdict(list)
    for r in judged:
        runs[r.sample_index].append(r)
    budgets = sorted({0.0, *(cost(r) for r in judged if r.status == "PASS")})
    ys = []
    for b in budgets:
        shares = [sum(r.status == "PASS" and cost(r) <= b for r in rs) / len(rs) for rs in runs.values()]
        ys.append(sum(shares) / len(shares))
    top = max(cost(r) for r in judged)
    if top > budgets[-1]:
        budgets.append(top)
        ys.append(ys[-1])
    return budgets, ys


def _sim(r: RolloutRecord) -> float:
    return r.result.sim_seconds if r.result is not None else 0.0


def _cost(r: RolloutRecord) -> float:
    return r.result.cost_usd if r.result is not None else 0.0


def _tokens(r: RolloutRecord) -> float:
    return float(r.result.prompt_tokens + r.result.completion_tokens) if r.result is not None else 0.0


# ---------------------------------------------------------------------------- charts


def _charts(run: RunFolder) -> list[tuple[str, str, str]]:
    """(anchor, title, the figure as plotly JSON) for each chart."""
    import plotly.graph_objects as go
    import plotly.io as pio

    caps = [c for c in run.summary.capabilities if c.capability != ALL]
    rows = caps + [c for c in run.summary.capabilities if c.capability == ALL]
    names = [c.capability for c in rows]
    colors = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(c.capability for c in caps)}
    colors[ALL] = "#222222"
    layout: dict[str, Any] = {
        "template": "plotly_white",
        "height": 340,
        "margin": {"l": 60, "r": 20, "t": 40, "b": 60},
        "font": {"family": "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif", "size": 12},
        "legend": {"orientation": "h", "y": -0.22, "x": 0},
    }

    def pct(value: float | None) -> float | None:
        return None if value is None else round(100 * value, 4)

    def hat_k(c: CapabilitySummary) -> float | None:
        return c.pass_hat_k.get(c.runs) if c.runs else None

    rates = go.Figure(layout={**layout, "title": {"text": "Pass rates by capability (%)"}, "barmode": "group", "yaxis": {"range": [0, 105], "title": "%"}})
    rates.add_bar(
        name="pass@1 ± SE",
        x=names,
        y=[pct(c.pass_at_1) for c in rows],
        error_y={"type": "data", "array": [pct(c.pass_at_1_stderr) or 0 for c in rows], "visible": True},
        marker_color="#3f51b5",
    )
    k = max((c.runs for c in rows), default=1)
    rates.add_bar(name=f"pass@k (k={k})", x=names, y=[pct(c.pass_at_k) for c in rows], marker_color="#26a69a")
    rates.add_bar(name=f"pass^k (k={k})", x=names, y=[pct(hat_k(c)) for c in rows], marker_color="#ffa726")

    for c in rows:
        if c.pass_at_1 is None:  # nothing judged: say so where its bars would be
            rates.add_annotation(x=c.capability, y=4, text="no verdict", showarrow=False, yanchor="bottom", font={"color": "#757575"})

    outcomes = go.Figure(
        layout={
            **layout,
            "title": {"text": "Outcomes by capability (rollouts)"},
            "barmode": "stack",
            "yaxis": {"title": "rollouts"},
            "legend": {**layout["legend"], "traceorder": "normal"},
        }
    )
    for status, attr in (("PASS", "passed"), ("FAIL", "failed"), ("ERROR", "errors"), ("N/A", "not_applicable")):
        counts = [getattr(c, attr) for c in rows]
        if any(counts) or status in ("PASS", "FAIL"):
            outcomes.add_bar(name=status, x=names, y=counts, marker_color=STATUS_COLORS[status])

    groups: dict[str, list[RolloutRecord]] = defaultdict(list)
    for r in run.records:
        for cap in capabilities_of(r, run.manifest):
            groups[cap].append(r)
    groups[ALL] = list(run.records)
    priced = any(_cost(r) > 0 for r in run.records)
    spend, spend_title = (_cost, "cost per rollout (US$)") if priced else (_tokens, "tokens per rollout (no cost recorded: offline or unpriced models)")

    def curves(title: str, x_title: str, cost: Callable[[RolloutRecord], float]) -> Any:
        fig = go.Figure(
            layout={**layout, "title": {"text": title}, "xaxis": {"title": x_title}, "yaxis": {"title": "pass rate within budget (%)", "range": [0, 105]}}
        )
        for name in names:
            xs, ys = budget_curve(groups.get(name, []), cost)
            if xs:
                fig.add_scatter(
                    name=name,
                    x=xs,
                    y=[pct(y) for y in ys],
                    mode="lines+markers",
                    line={"shape": "hv", "color": colors[name], "width": 3 if name == ALL else 2, "dash": "dot" if name == ALL else "solid"},
                    marker={"size": 5},
                )
        return fig

    time_fig = curves("Pass rate against simulated time", "simulated seconds per rollout", _sim)
    cost_fig = curves("Pass rate against cost" if priced else "Pass rate against tokens", spend_title, spend)
    out = []
    for anchor, title, fig in (
        ("chart-rates", "pass rates", rates),
        ("chart-outcomes", "outcomes", outcomes),
        ("chart-time", "pass rate against simulated time", time_fig),
        ("chart-cost", "pass rate against cost", cost_fig),
    ):
        out.append((anchor, title, str(pio.to_json(fig, validate=True, pretty=False))))
    return out


#: How each chart is drawn (plotly's own options): no logo, no "edit in Chart Studio", sized to its box.
PLOT_CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["sendDataToCloud", "lasso2d", "select2d"]}


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return str(get_plotlyjs())


# ---------------------------------------------------------------------------- HTML helpers


def _script_safe(text: str) -> str:
    """JSON inside a <script>: no `</script>` or `<!--` can end or comment it."""
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"


def _json(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=False, default=str)


def _pre(value: Any, cls: str = "") -> str:
    return f'<pre class="{cls}">{_e(_cut(_json(value)))}</pre>' if value not in (None, "", {}, []) else ""


def _args(value: Any) -> str:
    """A tool call's arguments: one line when short, else one argument a line (strings as written)."""
    if value in (None, {}, []):
        return ""
    line = json.dumps(value, ensure_ascii=False, default=str)
    if len(line) <= 140 and "\\n" not in line:
        return f'<code class="args">{_e(line)}</code>'
    if not isinstance(value, dict):
        return _pre(value, "args")
    rows = "".join(
        f'<div><span class="key">{_e(k)}</span> {_e(_cut(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)))}</div>'
        for k, v in value.items()
    )
    return f'<div class="args kv">{rows}</div>'


def _badge(status: str) -> str:
    return f'<span class="badge s-{_e(status.replace("/", ""))}">{_e(status)}</span>'


def _pct(value: float | None, err: float | None = None) -> str:
    if value is None:
        return "–"
    return f"{100 * value:.1f}" + (f" ± {100 * err:.1f}" if err is not None else "")


def _num(value: float | None, fmt: str = ".1f") -> str:
    return "–" if value is None else format(value, fmt)


def anchor(record: RolloutRecord) -> str:
    """The transcript's id in the page."""
    return "r-" + "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in rollout_name(record))


# ---------------------------------------------------------------------------- sections


def _header(run: RunFolder) -> str:
    m = run.manifest
    counts = {s: sum(r.status == s for r in run.records) for s in STATUS_ORDER}
    shown = " · ".join(f"{_badge(s)} {n}" for s, n in counts.items() if n or s in ("PASS", "FAIL", "ERROR"))
    facts = [("rollouts", f"{len(run.records)} &nbsp; {shown}")]
    policies = run.summary.policies or (m.policies if m is not None else [])
    facts.append(("policy", _e(", ".join(policies)) or "–"))
    if m is not None:
        facts.append(("models", "<br>".join(_e(x) for x in m.models) or "–"))
        facts.append(("scenarios", f"{len(m.scenarios)} × {m.runs} run(s)"))
        facts.append(("orchestra", _e(m.orchestra_version) + f" (report by {_e(__version__)})"))
        facts.append(("configuration", f"<code>{_e(m.configuration_sha256[:16])}</code>"))
    noisy = [r.result.noise for r in run.records if r.result is not None and r.result.noise is not None]
    if noisy:
        facts.append(
            (
                "noise",
                f"{len(noisy)} rollout(s) under noise: {sum(n.tool_failures for n in noisy)} tool call(s) failed by it, "
                f"{sum(n.env_events for n in noisy)} added environment event(s) ran (marked in each transcript)",
            )
        )
    rows = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in facts)
    notes = "".join(f'<p class="note">⚠ {_e(n)}</p>' for n in run.notes)
    config = (
        f"<details><summary class='dim'>configuration (as the manifest has it)</summary>{_pre(m.configurations)}</details>"
        if m is not None and m.configurations
        else ""
    )
    return (
        f'<header><h1>orchestra report <span class="dim">{_e(run.path.name or run.path)}</span></h1><table class="facts">{rows}</table>{config}{notes}</header>'
    )


def _summary_table(summary: RunSummary) -> str:
    head = (
        "<tr><th>capability</th><th>scenarios</th><th>runs</th><th>rollouts</th><th>pass</th><th>fail</th><th>error</th>"
        "<th>pass@1 % ± SE</th><th>pass@k %</th><th>pass^k %</th><th>mean sim s</th><th>mean tokens</th><th>tokens</th><th>cost $</th><th>pass/$</th></tr>"
    )
    body = []
    for c in summary.capabilities:
        hat = c.pass_hat_k.get(c.runs) if c.runs else None
        body.append(
            f'<tr class="{"total" if c.capability == ALL else ""}"><td>{_e(c.capability)}</td><td>{c.scenarios}</td><td>{c.runs}</td><td>{c.rollouts}</td>'
            f"<td>{c.passed}</td><td>{c.failed}</td><td>{c.errors}</td><td>{_pct(c.pass_at_1, c.pass_at_1_stderr)}</td><td>{_pct(c.pass_at_k)}</td>"
            f"<td>{_pct(hat)}</td><td>{_num(c.mean_sim_seconds)}</td><td>{_num(c.mean_tokens, '.0f')}</td><td>{c.tokens}</td>"
            f"<td>{c.cost_usd:.4f}</td><td>{_num(c.success_per_dollar)}</td></tr>"
        )
    return f'<table id="summary" class="grid num">{head}{"".join(body)}</table>'


def _rollouts_table(run: RunFolder) -> str:
    head = "<tr><th>rollout</th><th>capability</th><th>run</th><th>status</th><th>reward</th><th>sim s</th><th>steps</th><th>tokens</th><th>cost $</th><th>stop</th><th>error</th></tr>"
    body = []
    for r in run.records:
        res = r.result
        error = r.error or (res.error if res is not None else None) or r.not_applicable or ""
        body.append(
            f'<tr data-status="{_e(r.status)}"><td><a href="#{anchor(r)}">{_e(r.scenario_id)}</a>{_e(f" [{r.perturbation}]" if r.perturbation else "")}</td>'
            f"<td>{_e(', '.join(capabilities_of(r, run.manifest)))}</td><td>{r.sample_index}</td><td>{_badge(r.status)}</td>"
            f"<td>{_num(r.reward, '.2f')}</td><td>{_num(res.sim_seconds) if res else '–'}</td><td>{res.steps if res else '–'}</td>"
            f"<td>{res.prompt_tokens + res.completion_tokens if res else '–'}</td><td>{f'{res.cost_usd:.4f}' if res else '–'}</td>"
            f'<td>{_e(res.stop_reason) if res else "–"}</td><td class="err">{_e(_first_line(error))}</td></tr>'
        )
    buttons = "".join(f'<button type="button" data-filter="{s}">{s}</button>' for s in ("all", *STATUS_ORDER))
    return f'<div class="filters">show: {buttons}</div><table id="rollouts" class="grid">{head}{"".join(body)}</table>'


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return (lines[0] + (" …" if len(lines) > 1 else "")) if lines else ""


def _ledgers(record: RolloutRecord) -> str:
    if not record.agents:
        return ""
    head = "<tr><th>agent</th><th>role</th><th>app</th><th>model</th><th>scaffold</th><th>steps</th><th>model calls</th><th>tool calls</th><th>tokens</th><th>cost $</th><th>sim s</th><th>stop</th></tr>"
    rows = []
    for a in record.agents:
        trouble = a.error or (f"{a.model_errors} model error(s): {a.last_model_error}" if a.model_errors else "")
        rows.append(
            f"<tr><td>{_e(a.name)}</td><td>{_e(a.role)}</td><td>{_e(a.app or '')}</td><td>{_e(a.model)}</td><td>{_e(a.scaffold)}</td><td>{a.steps}</td>"
            f"<td>{a.model_calls}</td><td>{a.tool_calls}</td><td>{a.prompt_tokens}+{a.completion_tokens}</td><td>{a.cost_usd:.4f}</td>"
            f"<td>{a.sim_seconds:.1f}</td><td>{_e(a.stop_reason or '')}"
            + (f'<div class="err">{_e(_first_line(trouble))}</div>' if trouble else "")
            + "</td></tr>"
        )
    return f'<h4>Agents</h4><table class="grid small">{head}{"".join(rows)}</table>'


def _verdict(record: RolloutRecord) -> str:
    r = record.result
    parts = [f'<div class="verdict">{_badge(record.status)} ']
    if r is not None:
        parts.append(
            (f"reward <b>{record.reward:.2f}</b>" if record.reward is not None else "no reward (ERROR)")
            + f" · judge {_e(r.judge)} · simulated {r.sim_seconds:.1f} s · turns {r.turns_completed}/{r.nb_turns} · "
            f"steps {r.steps} · model calls {r.model_calls} · tool calls {r.n_tool_calls} · tokens {r.prompt_tokens}+{r.completion_tokens} · "
            f"cost ${r.cost_usd:.4f} · stop {_e(r.stop_reason)}"
        )
    elif record.partial is not None:
        parts.append(f"no verdict · simulated {record.partial.sim_seconds:.1f} s · turns completed {record.partial.turns_completed}")
    parts.append("</div>")
    error = record.error or (r.error if r is not None else None)
    if error:
        whole = _pre(error) if len(error.strip().splitlines()) > 1 else ""
        parts.append(f'<div class="errorbox"><b>error:</b> {_e(_first_line(error))}{whole}</div>')
    if record.not_applicable:
        parts.append(f'<p class="dim">not applicable: {_e(record.not_applicable)}</p>')
    if record.note:
        parts.append(f'<p class="dim">{_e(record.note)}</p>')
    if r is not None and len(r.turns) > 1:
        turns = "".join(
            f"<li>turn {t.turn}: {'passed' if t.success else 'failed'} at {t.sim_seconds:.1f} s{': ' + _e(t.rationale) if t.rationale else ''}</li>"
            for t in r.turns
        )
        parts.append(f"<ul class='turns'>{turns}</ul>")
    if r is not None and r.rationale:
        parts.append(f"<h4>Judge's rationale</h4>{_pre(r.rationale.strip(), 'rationale')}")
    if record.native is not None:
        parts.append(f"<p class='dim'>ARE's own verdict: {'success' if record.native.success else 'failure'}</p>")
    return "".join(parts)


def _event_row(event: dict[str, Any], who: str | None = None) -> str:
    kind = str(event.get("type", ""))
    mark = (
        ' <span class="tag noise" title="an environment event the noise added (docs/noise.md); the judge ignores it">NOISE: INJECTED EVENT</span>'
        if str(event.get("id", "")).startswith(ENV_EXPANSION_PREFIX)
        else ""
    )
    outcome = ""
    if event.get("exception"):
        outcome = f'<div class="err">✗ {_e(_cut(str(event["exception"]), 600))}</div>'
    elif event.get("return") is not None:
        outcome = f'<div class="obs">→ {_e(_cut(_json(event["return"]), 600))}</div>'
    args = event.get("args") or {}
    return (
        f'<tr class="ev-{_e(kind.lower())}"><td class="t">{float(event.get("t", 0) or 0):.1f}</td><td>{_e(kind)}</td>'
        + (f"<td>{_e(who or '')}</td>" if who is not None else "")
        + f"<td><code>{_e(event.get('tool', ''))}</code>{mark}{_args(args)}{outcome}</td></tr>"
    )


def _event_log(record: RolloutRecord, trajectory: Trajectory | None) -> str:
    events = record.result.event_log if record.result is not None else (record.partial.event_log if record.partial is not None else [])
    if not events:
        return ""
    who = trajectory.event_agents if trajectory is not None and len(trajectory.event_agents) == len(events) else None
    head = "<tr><th>sim s</th><th>type</th>" + ("<th>agent</th>" if who else "") + "<th>tool (as the judge keys it) · arguments · outcome</th></tr>"
    shown = [(i, e) for i, e in enumerate(events) if e.get("type") != CONDITION]
    rows = "".join(_event_row(e, (who[i] or "") if who else None) for i, e in shown)
    page = f'<h4>Event log</h4><p class="dim">USER: the user\'s messages · ENV: the environment (notifications) · AGENT: tool calls</p><table class="grid small events">{head}{rows}</table>'
    checks = len(events) - len(shown)
    if checks:  # ARE re-checks each condition every tick: hundreds of "→ false" rows that hide the rest
        hidden = "".join(_event_row(e, (who[i] or "") if who else None) for i, e in enumerate(events) if e.get("type") == CONDITION)
        page += (
            f'<details class="conditions"><summary>{checks} condition check(s) hidden (ARE polls each condition event until it holds)</summary>'
            f'<table class="grid small events">{head}{hidden}</table></details>'
        )
    return page


def _delegations(record: RolloutRecord) -> str:
    delegations = record.result.delegations if record.result is not None else (record.partial.delegations if record.partial is not None else [])
    if not delegations:
        return ""
    rows = []
    for d in delegations:
        outcome = f'<div class="obs">→ {_e(_cut(d.answer or "", 1500))}</div>' if d.ok else f'<div class="err">✗ {_e(d.error or "failed")}</div>'
        rows.append(
            f'<tr><td class="t">{d.start:.1f}</td><td>{_e(d.caller)} → <b>{_e(d.callee)}</b></td><td><code>{_e(d.tool)}</code>{_pre(d.task, "args")}{outcome}</td>'
            f"<td>{d.duration:.1f} s · {d.steps} steps · {d.prompt_tokens}+{d.completion_tokens} tokens</td></tr>"
        )
    head = "<tr><th>sim s</th><th>delegation</th><th>task · answer</th><th>spent</th></tr>"
    return f'<h4>Delegations</h4><table class="grid small">{head}{"".join(rows)}</table>'


def _tool_call(call: ToolCallEntry, trajectory: Trajectory, depth: int, injected: frozenset[int] = frozenset()) -> str:
    name = f"<code>{_e(call.name)}</code>"
    if call.event_name and call.event_name != call.name:
        name += f' <span class="dim">(logged as <code>{_e(call.event_name)}</code>)</span>'
    if call.problem:
        name += f' <span class="tag bad">{_e(call.problem.replace("_", " ").upper())}</span>'
    if id(call) in injected:
        name += ' <span class="tag noise" title="the noise failed this call (docs/noise.md), not the app">NOISE: INJECTED FAILURE</span>'
    body = _args(call.arguments)
    if call.ok:
        body += f'<div class="obs">→ {_e(_cut(call.observation or ""))}</div>'
    else:
        body += f'<div class="err">✗ {_e(_cut(call.error or "failed"))}</div>'
    nested = ""
    if call.delegate:
        sub = trajectory.agent(call.delegate)
        if sub is not None and depth < 4:
            nested = f'<details class="sub"><summary>sub-agent <b>{_e(sub.name)}</b> ({_e(sub.model)}, {_e(sub.scaffold)}): {len(sub.steps)} step(s)</summary>{_agent_steps(sub, trajectory, depth + 1, injected)}</details>'
    return f'<div class="call"><span class="t">{call.t:.1f}s</span> {name}{body}{nested}</div>'


def _step(step: Step, trajectory: Trajectory, depth: int, injected: frozenset[int] = frozenset()) -> str:
    parts = [
        f'<div class="step"><div class="stephead">step {step.index} <span class="dim">· run {step.run} · {step.t_start:.1f}–{step.t_end:.1f} s</span></div>'
    ]
    for n in step.notifications:
        parts.append(f'<div class="notif"><span class="lbl">notification</span> {_e(_cut(n))}</div>')
    if step.auto:
        parts.append(f'<div class="dim">on the agent\'s behalf: {_e(step.auto)}</div>')
    for out in step.outputs:
        if out.rejected is not None:
            parts.append(
                f'<details class="rejected"><summary>rejected output: {_e(_first_line(out.rejected))}</summary>{_pre(out.text or "", "out")}</details>'
            )
    if step.thought:
        parts.append(f'<div class="thought"><span class="lbl">thought</span> {_e(_cut(step.thought))}</div>')
    acted = next((o for o in reversed(step.outputs) if o.rejected is None), None)
    if acted is not None and (not step.tool_calls or step.format_error) and acted.text:
        parts.append(f'<details class="raw"><summary>model output ({acted.completion_tokens} tokens)</summary>{_pre(acted.text, "out")}</details>')
    if step.prompt is not None and step.prompt.messages:
        msgs = "".join(
            f'<div class="msg"><b>{_e(m.get("role", ""))}</b>{_pre(m.get("content") if isinstance(m.get("content"), str) else m.get("content") or "", "out")}</div>'
            for m in step.prompt.messages
        )
        parts.append(f'<details class="prompt"><summary>request #{step.prompt.id}: {len(step.prompt.messages)} new message(s)</summary>{msgs}</details>')
    if step.format_error:
        parts.append(f'<div class="err">format error: {_e(_cut(step.format_error, 800))}</div>')
    if step.model_error:
        parts.append(f'<div class="err">model error: {_e(_cut(step.model_error, 800))}</div>')
    parts.extend(_tool_call(c, trajectory, depth, injected) for c in step.tool_calls)
    parts.append("</div>")
    return "".join(parts)


def _agent_steps(agent: AgentTrajectory, trajectory: Trajectory, depth: int = 0, injected: frozenset[int] = frozenset()) -> str:
    runs = {r.run: r for r in agent.runs}
    parts: list[str] = []
    current: int | None = None
    for step in agent.steps:
        if step.run != current:
            current = step.run
            start = runs.get(step.run)
            if start is not None and start.task and agent.role == "main":
                parts.append(f'<div class="task"><span class="t">{start.t:.1f}s</span> <span class="lbl">user</span> {_e(_cut(start.task))}</div>')
        parts.append(_step(step, trajectory, depth, injected))
    if agent.error:
        parts.append(f'<div class="err">{_e(agent.name)}: {_e(_first_line(agent.error))}</div>')
    return "".join(parts)


def _trajectory(trajectory: Trajectory, injected: frozenset[int] = frozenset()) -> str:
    main = next((a for a in trajectory.agents if a.role == "main"), trajectory.agents[0] if trajectory.agents else None)
    if main is None:
        return ""
    shown = {main.name}
    stack = [main]
    while stack:  # every agent reached through a delegation is nested under its call
        agent = stack.pop()
        for step in agent.steps:
            for call in step.tool_calls:
                sub = trajectory.agent(call.delegate) if call.delegate else None
                if sub is not None and sub.name not in shown:
                    shown.add(sub.name)
                    stack.append(sub)
    rest = "".join(
        f'<details class="sub"><summary>agent <b>{_e(a.name)}</b> ({_e(a.role)}): {len(a.steps)} step(s)</summary>{_agent_steps(a, trajectory, 1, injected)}</details>'
        for a in trajectory.agents
        if a.name not in shown
    )
    return f'<h4>Transcript</h4><div class="transcript">{_agent_steps(main, trajectory, 0, injected)}{rest}</div>'


def injected_failures(record: RolloutRecord) -> frozenset[int]:
    """The `id()`s of the trajectory's tool calls the noise failed (`NoiseReport.failed_calls`: the
    agent, the simulated second and ARE's method name match one failed call; the app's part of the
    name may differ: the noise names the tool as its app class registers it)."""
    noise = record.result.noise if record.result is not None else None
    if noise is None or not noise.failed_calls or record.trajectory is None:
        return frozenset()
    wanted = [(f.agent, f.tool, f.sim_seconds) for f in noise.failed_calls]
    found: set[int] = set()
    for agent in record.trajectory.agents:
        for step in agent.steps:
            for call in step.tool_calls:
                method = (call.event_name or call.name).rsplit("__", 1)[-1]
                if not call.ok and any(who == agent.name and tool.rsplit("__", 1)[-1] == method and abs(t - call.t) < 1e-3 for who, tool, t in wanted):
                    found.add(id(call))
    return frozenset(found)


def _noise(record: RolloutRecord) -> str:
    """What the noise did in this rollout (docs/noise.md): its settings, each call it failed, each
    environment event it added that ran — the judge's event log does not say which are the noise's."""
    noise = record.result.noise if record.result is not None else None
    if noise is None:
        return ""
    c = noise.config
    events = [e for e in (record.result.event_log if record.result is not None else []) if str(e.get("id", "")).startswith(ENV_EXPANSION_PREFIX)]
    failures = "".join(f"<li>{f.sim_seconds:.1f} s · {_e(f.agent)}'s call #{f.call_index}: <code>{_e(f.tool)}</code> failed</li>" for f in noise.failed_calls)
    injected = "".join(f"<li>{float(e.get('t', 0) or 0):.1f} s · <code>{_e(e.get('tool', ''))}</code></li>" for e in events)
    flag = "" if noise.augmentation else " · the scenario has no augmentation data (no renames, no events)"
    return (
        f'<div class="noisebox"><b>noise</b> (p={c.tool_failure_probability:g}, {c.env_events_per_minute:g} environment events/min, seed {c.env_events_seed}){flag}: '
        f"{noise.tool_failures} of {noise.tool_calls_drawn} tool call(s) failed by the noise · {noise.env_events} of {noise.env_events_scheduled} "
        f"added environment event(s) ran · {noise.renamed_tools} tool(s) renamed"
        + (f"<ul>{failures}</ul>" if failures else "")
        + (f"<div class='dim'>added events that ran:</div><ul>{injected}</ul>" if injected else "")
        + "</div>"
    )


def _transcript(record: RolloutRecord) -> str:
    res = record.result
    title = (
        f"{_badge(record.status)} <b>{_e(record.scenario_id)}</b>"
        + (f" [{_e(record.perturbation)}]" if record.perturbation else "")
        + f' <span class="dim">run {record.sample_index} · {_e(record.policy)}'
        + (f" · reward {record.reward:.2f}" if record.reward is not None else "")
        + (f" · {res.sim_seconds:.1f} s · {res.steps} steps" if res is not None else "")
        + "</span>"
    )
    trajectory = record.trajectory
    body = [_verdict(record), _noise(record), _ledgers(record)]
    if trajectory is not None and trajectory.agents:
        body.append(_trajectory(trajectory, injected_failures(record)))
        body.append(f"<details><summary>event log and delegations</summary>{_event_log(record, trajectory)}{_delegations(record)}</details>")
    else:
        body.append('<p class="dim">This record has no trajectory (no thoughts or model outputs were kept): what it has is shown.</p>')
        body.append(_event_log(record, None))
        body.append(_delegations(record))
    return f'<details class="rollout" id="{anchor(record)}" data-status="{_e(record.status)}"><summary>{title}</summary><div class="body">{"".join(body)}</div></details>'


def _asset(name: str) -> str:
    """A file of the page's own (`report_assets/`, package data): its style and scripts, kept as files
    so an editor and a linter read them as CSS and JavaScript."""
    return resources.files("orchestra.runs").joinpath("report_assets", name).read_text(encoding="utf-8")


CSS = _asset("report.css")
#: Draws the charts once the page is laid out (each div then has its final width).
PLOT_SCRIPT = _asset("plots.js")
#: The status filters and the links that open a transcript.
SCRIPT = _asset("report.js")

#: Nothing may load from anywhere: inline script and style only (plotly's SVG charts need no
#: eval), images and fonts only as data: URIs. A request the page tried would be refused and logged.
CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:"


def render(run: RunFolder, *, plotly_js: str | None = None) -> str:
    """The whole page (deterministic: the same folder gives the same bytes)."""
    charts = _charts(run)
    chart_html = "".join(f'<div class="chart" id="{a}" title="{_e(t)}"></div>' for a, t, _ in charts)
    figures = "{" + ",".join(f"{json.dumps(a)}:{fig}" for a, _, fig in charts) + "}"
    plots = f"var FIGURES={_script_safe(figures)};var CONFIG={json.dumps(PLOT_CONFIG)};" + PLOT_SCRIPT
    transcripts = "".join(_transcript(r) for r in run.records)
    js = plotly_js if plotly_js is not None else _plotly_js()
    title = f"orchestra report: {run.path.name or run.path}"
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{_e(title)}</title><style>{CSS}</style>'
        f'<script type="text/javascript">{js}</script></head><body>'
        f"{_header(run)}"
        f'<h2 id="summary-title">Summary</h2><p class="dim">Per capability (a scenario counts under each of its capabilities; <b>all</b> counts each once). '
        "pass@1: mean over run indices of the share of scenarios that passed, ± its standard error; pass@k: passed in at least one of k runs; "
        "pass^k: all of k runs drawn pass (tau2-bench). ERROR and N/A rollouts are left out of the rates.</p>"
        f"{_summary_table(run.summary)}"
        f'<h2>Charts</h2><p class="dim">Budget curves: the share of rollouts that passed spending at most the budget on the x axis, per run index and averaged (so each curve ends at pass@1).</p>'
        f'<div class="charts">{chart_html}</div>'
        f"<h2>Rollouts</h2>{_rollouts_table(run)}"
        f'<h2 id="transcripts">Transcripts</h2>{transcripts}'
        f"<footer>Written by <code>orchestra report</code> from {_e(RESULTS)}{' and ' + _e(MANIFEST) if run.manifest else ''}; self-contained, loads nothing.</footer>"
        f"<script>{plots}{SCRIPT}</script></body></html>\n"
    )


def write_report(run: RunFolder, out: Path) -> int:
    """Write the page to `out` (atomically); its size in bytes."""
    page = render(run)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    return len(page.encode("utf-8"))
