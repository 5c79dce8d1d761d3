"""`orchestra show DIR/NAME`: one rollout of a run folder as a readable transcript."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from orchestra.cli._output import noise_text, one_line
from orchestra.errors import OrchestraError
from orchestra.record import RolloutRecord


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("show", help="one rollout of a run folder as a transcript (DIR/NAME, NAME as in DIR/rollouts/)")
    p.add_argument("rollout", metavar="DIR/NAME", help="a run folder and a rollout's name (e.g. out/starter_time_deadline.run1), or its .json file")
    p.set_defaults(func=run)


def locate(text: str) -> Path:
    path = Path(text)
    candidates = [path, path.parent / "rollouts" / f"{path.name}.json", path.parent / "rollouts" / path.name, path.with_suffix(".json")]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    folder = path.parent / "rollouts"
    names = sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []
    hint = f"; rollouts in {folder}: {', '.join(names[:8])}" + (" ..." if len(names) > 8 else "") if names else ""
    raise OrchestraError(f"{text}: no such rollout{hint}")


def _short(value: Any, width: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= width else text[: width - 3] + "..."


def transcript(o: RolloutRecord) -> str:
    lines = [f"{o.scenario_id}  run {o.sample_index}  {o.policy}" + (f"  [{o.perturbation}]" if o.perturbation else ""), f"status: {o.status}"]
    if o.error:
        lines.append(f"error: {one_line(o.error)}")
    r = o.result
    if r is not None:
        lines.append(
            f"reward {r.reward:.2f}  sim {r.sim_seconds:.1f}s  steps {r.steps}  model calls {r.model_calls}  tool calls {r.n_tool_calls}  "
            f"tokens {r.prompt_tokens}+{r.completion_tokens}  cost ${r.cost_usd:.4f}  stop {r.stop_reason}  judge {r.judge}"
        )
    if r is not None and r.noise is not None:  # which noise ran, and the calls it failed (the judge's log never shows them)
        n = r.noise
        lines.append(f"{noise_text(n)} of {n.env_events_scheduled} scheduled  renamed={n.renamed_tools}")
        lines += [f"  {f.sim_seconds:8.1f}  FAILED {f.tool} (noise: {f.agent}'s call #{f.call_index})" for f in n.failed_calls]
    lines += ["", "agents:"]
    for a in o.agents:
        failed = f"  model errors {a.model_errors}" if a.model_errors else ""
        lines.append(
            f"  {a.name:<16} {a.role:<4} {a.model:<28} steps {a.steps:<3} calls {a.model_calls:<3} tools {a.tool_calls:<3} "
            f"sim {a.sim_seconds:7.1f}s  stop {a.stop_reason}{failed}"
        )
    delegations = r.delegations if r is not None else (o.partial.delegations if o.partial is not None else [])
    if delegations:
        lines += ["", "delegations:"]
        lines += [
            f"  {d.caller} -> {d.callee} ({d.tool}): {_short(d.task, 70)} => {'ok' if d.ok else 'FAILED'}: {_short(d.answer or d.error or '', 60)}"
            for d in delegations
        ]
    events = r.event_log if r is not None else (o.partial.event_log if o.partial is not None else [])
    lines += ["", "events (simulated seconds, as the judge keys the tools):"]
    for e in events:
        outcome = (
            f"  !! {_short(e.get('exception'), 80)}" if e.get("exception") else (f"  -> {_short(e.get('return'), 60)}" if e.get("return") is not None else "")
        )
        lines.append(f"  {e.get('t', 0):8.1f}  {e.get('type', ''):<6} {e.get('tool')}({_short(e.get('args') or {}, 90)}){outcome}")
    if r is not None and r.rationale:
        lines += ["", "judge rationale:", *("  " + line for line in r.rationale.strip().splitlines())]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    path = locate(args.rollout)
    try:
        record = RolloutRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise OrchestraError(f"{path}: not a rollout record ({str(exc).splitlines()[0]})") from None
    print(transcript(record))
    return 0
