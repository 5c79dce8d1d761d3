"""A run's folder: `results.jsonl` (one record per line, streamed), `manifest.json`, resume.

* **results.jsonl** grows by one line — the whole `RolloutRecord` but its trajectory, its spec
  included, secrets masked — as each rollout finishes, written and flushed to the disk at once: a run killed with
  SIGKILL loses at most the rollouts in flight (a torn last line is dropped on the next open).
* **rollouts/NAME.json** holds each rollout's whole record, its trajectory included
  (docs/trajectories.md; `orchestra show DIR/NAME`), written before its line is appended;
  **training/NAME.json** its training trace, when a trainable agent's calls carried token ids
  (`orchestra.training`, docs/rl.md).
* **manifest.json** says what ran: orchestra's version, the configuration (every spec with its
  scenario and run index taken out: team, models, scaffolds, clock, notifications, judge; secrets
  masked), its sha256, and each scenario file's sha256, id and capabilities. No dates, no secrets.
* **Resume.** Opening a folder that holds a run of the same configuration keeps its finished
  rollouts — keyed by (scenario, perturbation, run index) — and the runner runs only the others;
  `ERROR` records are dropped and run again (an error is the harness's or the setup's, not a
  result). A different configuration, or a scenario file that changed since, is refused with the
  difference named: a results folder holds one experiment.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from orchestra import __version__
from orchestra.errors import OrchestraError
from orchestra.models import mask_secrets
from orchestra.record import RolloutRecord
from orchestra.scenario_files import ScenarioFile
from orchestra.spec import RolloutSpec

__all__ = ["MANIFEST", "RESULTS", "Manifest", "RunDir", "ScenarioEntry", "configuration", "read_results", "rollout_key", "rollout_name"]

RESULTS = "results.jsonl"
MANIFEST = "manifest.json"
#: The folder of the episodes' training traces (`orchestra.training`), one file per episode.
TRAINING = "training"

Batch = Sequence[tuple[RolloutSpec, ScenarioFile | None]]


def rollout_key(spec: RolloutSpec) -> str:
    """The identity of one rollout in a run: scenario, perturbation, run index."""
    perturbation = spec.oracle.perturbation if spec.oracle is not None else None
    return f"{spec.scenario}|{perturbation or '-'}|{spec.sample_index}"


def rollout_name(record: RolloutRecord) -> str:
    """A rollout's name in a run folder (`orchestra show DIR/NAME`): scenario id, then the
    perturbation and the run index when there are any."""
    name = record.scenario_id + (f".{record.perturbation}" if record.perturbation else "")
    return name + (f".run{record.sample_index}" if record.sample_index else "")


def configuration(spec: RolloutSpec) -> dict[str, Any]:
    """What a spec runs, without which scenario or which run: the part a resumed run must share."""
    data = mask_secrets(spec.model_dump(mode="json", exclude={"scenario", "sample_index", "noise_index"}))
    if spec.oracle is not None:  # the perturbation is part of the rollout's key, not of the configuration
        data["oracle"] = {k: v for k, v in data["oracle"].items() if k != "perturbation"}
    return dict(data)


def _sha256(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class ScenarioEntry(BaseModel):
    sha256: str
    scenario_id: str
    capabilities: list[str] = Field(default_factory=list)


class Manifest(BaseModel):
    """What a run folder holds (no dates, no secrets)."""

    orchestra_version: str = __version__
    policies: list[str] = Field(default_factory=list)
    #: The distinct configurations of the batch (usually one), secrets masked.
    configurations: list[dict[str, Any]] = Field(default_factory=list)
    configuration_sha256: str = ""
    #: The models every agent and the judge call, by who calls them.
    models: list[str] = Field(default_factory=list)
    runs: int = 1
    #: Scenario files by source: their sha256, id and capabilities.
    scenarios: dict[str, ScenarioEntry] = Field(default_factory=dict)
    #: The plugins beside the built-ins, by name: where each came from (distribution and version,
    #: or "inline"). They can change what an agent sees (tools, prompts), so a resume must match
    #: them. None: not recorded (a folder of an older orchestra, which resumes as before).
    plugins: dict[str, str] | None = None


def build_manifest(batch: Batch, *, runs: int = 1, plugins: dict[str, str] | None = None) -> Manifest:
    from orchestra.runs.preflight import models_of
    from orchestra.scenario_info import describe

    configs: list[dict[str, Any]] = []
    for spec, _ in batch:
        config = configuration(spec)
        if config not in configs:
            configs.append(config)
    scenarios: dict[str, ScenarioEntry] = {}
    for spec, file in batch:
        file = file or ScenarioFile(spec.scenario)
        if spec.scenario in scenarios:
            continue
        try:
            info = describe(file)
            scenario_id, capabilities = info.scenario_id, info.capabilities
        except OrchestraError:
            scenario_id, capabilities = file.stem, []
        scenarios[spec.scenario] = ScenarioEntry(sha256=hashlib.sha256(file.text.encode()).hexdigest(), scenario_id=scenario_id, capabilities=capabilities)
    models = sorted({f"{use.who}: {use.model}" + (f" @ {use.endpoint}" if use.endpoint else "") for spec, _ in batch for use in models_of(spec)})
    return Manifest(
        policies=sorted({spec.policy for spec, _ in batch}),
        configurations=configs,
        configuration_sha256=_sha256(configs),
        models=models,
        runs=runs,
        scenarios=scenarios,
        plugins=plugins,
    )


def read_results(path: Path) -> list[RolloutRecord]:
    """The records of a results file (or of the run folder holding one); a torn last line is skipped."""
    if path.is_dir():
        inner = sorted(str(q.parent) for q in path.glob(f"*/{RESULTS}"))
        if inner and not (path / RESULTS).is_file():
            raise OrchestraError(f"{path}: a folder of run folders (`orchestra gaia2` keeps one per phase), not one run; give one of: {', '.join(inner)}")
        path = path / RESULTS
    if not path.is_file():
        raise OrchestraError(f"{path}: no such results file (a run folder is `orchestra run --out DIR`'s)")
    records = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(RolloutRecord.model_validate_json(line))
        except ValueError as exc:
            if n == len(path.read_text(encoding="utf-8").splitlines()):
                break  # a line torn by a kill: that rollout was in flight
            raise OrchestraError(f"{path}:{n}: not a rollout record ({str(exc).splitlines()[0]})") from None
    return records


def _difference(old: Any, new: Any, where: str = "") -> str | None:
    """The first path at which two configurations differ (for the refusal message)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new), key=str):
            found = _difference(old.get(key), new.get(key), f"{where}.{key}" if where else str(key))
            if found:
                return found
        return None
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            found = _difference(a, b, f"{where}[{i}]")
            if found:
                return found
        return None
    return None if old == new else f"{where or 'configuration'}: {json.dumps(old, default=str)[:80]} before, {json.dumps(new, default=str)[:80]} now"


class RunDir:
    """One run folder (see the module doc). `open` checks and writes the manifest, loads what finished."""

    def __init__(self, path: Path, *, start_over: Path | None = None) -> None:
        self.path = path
        #: What a refusal says to delete to start over (`orchestra gaia2`: the whole submission folder).
        self.start_over = start_over or path
        self.results = path / RESULTS
        self.manifest_path = path / MANIFEST
        #: Finished rollouts kept from an earlier run of the same configuration, by key.
        self.finished: dict[str, RolloutRecord] = {}
        #: ERROR records of an earlier run, dropped to be run again.
        self.retried = 0

    def open(self, batch: Batch, *, runs: int = 1, plugins: dict[str, str] | None = None) -> RunDir:
        from orchestra.runs.preflight import shared_ids

        shared = shared_ids(batch)  # also with --no-preflight: one file's record must never overwrite another's
        if shared:
            raise OrchestraError("; ".join(shared))
        manifest = build_manifest(batch, runs=runs, plugins=plugins)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self.unwritable(exc) from None
        if self.manifest_path.is_file():
            old = Manifest.model_validate_json(self.manifest_path.read_text(encoding="utf-8"))
            self._check_same(old, manifest)
            manifest = manifest.model_copy(
                update={
                    "scenarios": {**old.scenarios, **manifest.scenarios},
                    "runs": max(old.runs, manifest.runs),
                    "plugins": None if old.plugins is None else manifest.plugins,  # never claimed for rollouts made before it was recorded
                }
            )
        elif self.results.is_file() and self.results.stat().st_size:
            raise OrchestraError(f"{self.path}: holds {RESULTS} but no {MANIFEST}: not a run folder of this orchestra; use another --out folder")
        try:  # the manifest is written before the first rollout: a folder that cannot be written fails here, not after one ran
            _write_atomic(self.manifest_path, manifest.model_dump_json(indent=1) + "\n")
            (self.path / "rollouts").mkdir(exist_ok=True)  # where each rollout's record goes: checked now too
        except OSError as exc:
            raise self.unwritable(exc) from None
        if self.results.is_file():
            self._load()
        return self

    def unwritable(self, exc: OSError) -> OrchestraError:
        """The one line for a run folder that cannot be written (`--out` names it)."""
        where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(self.path) else ""
        return OrchestraError(f"--out {self.path}: cannot write the run folder: {exc.strerror or type(exc).__name__}{where}")

    def _check_same(self, old: Manifest, new: Manifest) -> None:
        hint = f"use another --out folder, or delete {self.start_over} to start over"
        if old.configuration_sha256 != new.configuration_sha256:
            diff = _difference(old.configurations, new.configurations) or "the configuration"
            raise OrchestraError(f"{self.path} holds a run of another configuration ({diff}); will not resume into it: {hint}")
        if old.plugins is not None and new.plugins is not None and old.plugins != new.plugins:
            diff = _difference(old.plugins, new.plugins, "plugins") or "the plugins"
            raise OrchestraError(f"{self.path} holds a run made with other plugins ({diff}); will not resume into it: {hint}")
        for source, entry in new.scenarios.items():
            before = old.scenarios.get(source)
            if before is not None and before.sha256 != entry.sha256:
                raise OrchestraError(f"{self.path}: scenario file {source} changed since the run it holds (sha256 differs); will not resume: {hint}")

    def _load(self) -> None:
        lines = self.results.read_text(encoding="utf-8").splitlines()
        kept: list[str] = []
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = RolloutRecord.model_validate_json(line)
            except ValueError:
                if n == len(lines):
                    continue  # torn by a kill mid-write: that rollout was in flight
                raise OrchestraError(f"{self.results}:{n}: not a rollout record; will not resume into {self.path}") from None
            if record.spec is None:
                continue
            if record.status == "ERROR":
                self.retried += 1
                continue
            self.finished[rollout_key(record.spec)] = record
            kept.append(line)
        if len(kept) != len([line for line in lines if line.strip()]):
            _write_atomic(self.results, "".join(line + "\n" for line in kept))

    def remaining(self, batch: Batch) -> list[tuple[RolloutSpec, ScenarioFile | None]]:
        """The batch without the rollouts that finished before."""
        return [(spec, file) for spec, file in batch if rollout_key(spec) not in self.finished]

    def keep(self, record: RolloutRecord, *, name: str | None = None) -> Path:
        """One finished rollout into the folder: its whole record (trajectory included) as
        `rollouts/NAME.json`, then its compact line in `results.jsonl`; the file's path. `name`:
        another NAME than `rollout_name` (a server's episodes of one scenario are many)."""
        path = self.write_rollout(record, name=name)
        self.append(record)
        return path

    def write_rollout(self, record: RolloutRecord, *, name: str | None = None) -> Path:
        """The whole record of one rollout (spec, verdict, ledgers, event log — or the partial one —
        and the trajectory) as `rollouts/NAME.json` (`orchestra show DIR/NAME`), atomically; its
        training trace, when it has one, as `training/NAME.json` (one file per episode, for a trainer)."""
        name = name or rollout_name(record)
        if record.training is not None:
            folder = self.path / TRAINING
            folder.mkdir(parents=True, exist_ok=True)
            _write_atomic(folder / f"{name}.json", record.training.model_dump_json(indent=1) + "\n")
        folder = self.path / "rollouts"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.json"
        _write_atomic(path, json.dumps(record.model_dump(mode="json", exclude={"training"}), indent=1, default=str) + "\n")
        return path

    def append(self, record: RolloutRecord) -> None:
        """One finished rollout, one line (without its trajectory), on the disk before this returns."""
        line = json.dumps(record.compact(), sort_keys=True, separators=(",", ":"), default=str)
        with self.results.open("a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())

    def records(self) -> list[RolloutRecord]:
        return read_results(self.results) if self.results.is_file() else []


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
