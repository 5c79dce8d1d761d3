"""Shared output helpers for CLI commands: rollout lines, JSON records, files under --out."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from orchestra.oracle_runs import ReplayOutcome


def outcome_record(o: ReplayOutcome) -> dict[str, Any]:
    """The JSON object printed by `--json` (one per rollout)."""
    rec: dict[str, Any] = {
        "scenario_id": o.scenario_id,
        "source": str(o.path),
        "perturbation": o.perturbation,
    }
    if o.error is not None:
        rec.update(status="error", error=o.error)
    elif o.not_applicable is not None:
        rec.update(status="not_applicable", reason=o.not_applicable)
    if o.result is not None and o.not_applicable is None:  # kept with an error too (a judge error)
        r = o.result
        rec.update(
            status="error" if o.error is not None else "ok",
            success=r.success,
            reward=r.reward,
            reward_mode=r.reward_mode,
            sim_seconds=r.sim_seconds,
            event_log_sha256=r.event_log_sha256,
            turns_completed=r.turns_completed,
            nb_turns=r.nb_turns,
            n_tool_calls=r.n_tool_calls,
            stop_reason=r.stop_reason,
            rationale=r.rationale,
            judge=r.judge,
        )
        if r.judge_usage is not None:
            rec["judge_usage"] = r.judge_usage.model_dump()
        if o.note:
            rec["perturbation_note"] = o.note
    if o.native is not None:
        rec["are_native_success"] = o.native.success
    return rec


def outcome_line(o: ReplayOutcome, id_width: int = 36) -> str:
    label = o.scenario_id + (f" [{o.perturbation}]" if o.perturbation else "")
    if o.error is not None:
        return f"{label:<{id_width}}  ERROR  {o.error}"
    if o.not_applicable is not None:
        return f"{label:<{id_width}}  n/a    {o.not_applicable}"
    assert o.result is not None
    r = o.result
    verdict = "PASS" if r.success else "FAIL"
    return f"{label:<{id_width}}  {verdict:<5}  reward={r.reward:.2f}  sim={r.sim_seconds:8.1f}s  judge={r.judge}"


def write_outcome(out_dir: Path, o: ReplayOutcome) -> None:
    """Write the rollout's event log and the judge's verdict/rationale under `out_dir`."""
    if o.result is None:
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = o.scenario_id + (f".{o.perturbation}" if o.perturbation else "")
    r = o.result
    (out_dir / f"{stem}.events.json").write_text(json.dumps(r.event_log, indent=1, default=str) + "\n")
    judge = {k: v for k, v in outcome_record(o).items()}
    judge["turns"] = [t.model_dump() for t in r.turns]
    if r.judge_checks:
        judge["judge_checks"] = r.judge_checks
    (out_dir / f"{stem}.judge.json").write_text(json.dumps(judge, indent=2, default=str) + "\n")


def emit_json(rec: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(rec, default=str) + "\n")
    sys.stdout.flush()
