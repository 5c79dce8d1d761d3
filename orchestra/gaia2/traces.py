"""ARE's submission files: each rollout's trace as ARE's exporter writes it (`TraceWriter`, a plugin)
and each config's `output.jsonl` as ARE's runner writes it (`write_output_jsonl`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Generator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestra.errors import OrchestraError
from orchestra.gaia2.phases import Phase
from orchestra.hookspecs import hookimpl
from orchestra.record import RolloutRecord
from orchestra.runs.run_dir import configuration, rollout_key
from orchestra.spec import RolloutSpec


@dataclass
class TraceTarget:
    folder: Path
    phase: Phase
    config: str
    runner_config: Any
    hf_metadata: dict[str, str] | None


class TraceWriter:
    """A plugin: each rollout of the plan, as it finishes, as ARE's trace file
    (`<phase>/<config>/hf/<scenario>_run_<n>_<hash>.json`), exported by ARE's exporter from the
    environment the rollout ran in. Rollouts it has no target for are left alone."""

    def __init__(self) -> None:
        self.targets: dict[str, TraceTarget] = {}

    @hookimpl(wrapper=True)
    def rollout(self, rollout: Any) -> Generator[None, Awaitable[RolloutRecord], Awaitable[RolloutRecord]]:
        inner = yield
        target = self.targets.get(trace_key(rollout.spec))
        if target is None:
            return inner
        return self._written(rollout, target, inner)

    async def _written(self, rollout: Any, target: TraceTarget, inner: Awaitable[RolloutRecord]) -> RolloutRecord:
        record = await inner
        try:
            session = rollout.session
        except OrchestraError:
            return record  # never started: no environment, no trace (its output.jsonl line says why)
        from orchestra.are.submission import export_trace, trace_file_name

        run_number = rollout.spec.sample_index + 1
        success = record.result.success if record.status in ("PASS", "FAIL") and record.result is not None else None
        error = record.error or (record.result.error if record.result is not None else None)
        text = export_trace(
            session.env.env,
            session.scenario,
            session.scenario_id,
            rollout.file.text,
            config=target.runner_config,
            phase_config=target.config,
            run_number=run_number,
            a2a=target.phase.a2a_app_prop > 0,
            success=success,
            exception=error if success is None else None,
            hf_metadata=target.hf_metadata,
        )
        path = target.folder / "hf" / trace_file_name(session.scenario_id, run_number, target.runner_config)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        return record


def trace_key(spec: RolloutSpec) -> str:
    """A rollout's identity across phases: the same scenario and run index run in several phases
    (mini in agent2agent and noise), so the configuration is part of the key."""
    blob = json.dumps(configuration(spec), sort_keys=True, default=str)
    return f"{rollout_key(spec)}|{hashlib.sha256(blob.encode()).hexdigest()[:16]}"


def are_status(record: RolloutRecord) -> tuple[float | None, str]:
    """ARE's score and status of a rollout (`hf_upload_utils.get_scenario_result_info`)."""
    if record.status == "PASS":
        return 1.0, "success"
    if record.status == "FAIL":
        return 0.0, "failed"
    return None, "exception"


def write_output_jsonl(folder: Path, records: Iterable[RolloutRecord], runner_config: Any, *, trace_root: Path) -> Path:
    """`<phase>/<config>/output.jsonl` as ARE's runner writes it (`_export_benchmark_result_jsonl`):
    one line per rollout, sorted by scenario and run; `trace_id` is the trace's path as given by
    `trace_root` (the `--out` folder as typed, like ARE's), absent when the rollout left none."""
    from orchestra.are.submission import trace_file_name

    lines = []
    for r in sorted(records, key=lambda r: (r.scenario_id, r.sample_index)):
        run_number = r.sample_index + 1
        score, status = are_status(r)
        name = trace_file_name(r.scenario_id, run_number, runner_config)
        trace = folder / "hf" / name
        error = r.error or (r.result.error if r.result is not None else None)
        metadata: dict[str, Any] = {"scenario_id": r.scenario_id, "run_number": run_number, "status": status, "has_exception": status == "exception"}
        if status == "exception":
            metadata.update(exception_type="OrchestraError", exception_message=error or "no verdict")
        if r.result is not None and r.result.rationale is not None:
            metadata["rationale"] = r.result.rationale
        line: dict[str, Any] = {"task_id": r.scenario_id, "trace_id": str(trace_root / trace.relative_to(folder.parent.parent)) if trace.is_file() else None}
        line.update(score=score, metadata=metadata)
        lines.append(json.dumps(line))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "output.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
