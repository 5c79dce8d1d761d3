"""Gaia2's leaderboard protocol — ARE's `are-benchmark gaia2-run` — on orchestra's runner.

Three phases, each scenario run `runs` times (3, as gaia2-run):

| phase | configs | what changes |
|---|---|---|
| `standard` | execution, search, adaptability, time, ambiguity | the main agent alone (ARE: `a2a_app_prop=0`) |
| `agent2agent` | `mini` | every app an app-agent (ARE: `a2a_app_prop=1.0`), the main agent's model unless the team says otherwise |
| `noise` | `mini` | the main agent alone, `SessionConfig(noise=NoiseConfig())` (ARE: `ToolAugmentationConfig()` + `EnvEventsConfig(10/min, seed 0)`) |

Scenarios come from the Gaia2 dataset in the local Hugging Face cache when all six of its configs
are there, else from the bundled corpus, else from a folder in ARE's layout (`DIR/<config>/...`).
The dataset has a `mini` config; a source without one gets `mini_selection` — Gaia2-mini is a
fixed subset stratified by capability, 32 of each capability's 160 scenarios (one fifth), so the
selection takes one fifth (rounded up) of each config's scenarios, spread over universes, ranked by
a hash of the scenario id: deterministic, no seed, no date.

Gaia2's score weighs its seven capabilities the same — five core ones (the standard phase's
configs), Agent2Agent and Noise (the two `mini` phases) — with ARE's report formulas
(`orchestra.runs.summary.are_success_rate` / `macro_success_rate`).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Awaitable, Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from orchestra.config import NoiseConfig, SessionConfig
from orchestra.errors import OrchestraError
from orchestra.hookspecs import hookimpl
from orchestra.record import RolloutRecord
from orchestra.runs.run_dir import configuration, rollout_key
from orchestra.runs.summary import AreRate, are_pass_k, are_success_rate, macro_success_rate
from orchestra.scenario_files import HF_DATASET, HF_DEFAULT_REVISION, ScenarioError, ScenarioFile, expand, load_hf_dataset
from orchestra.spec import AgentConfig, RolloutSpec
from orchestra.teams.config import AppAgentsConfig, TeamConfig

__all__ = [
    "MINI",
    "PHASES",
    "STANDARD_CONFIGS",
    "Gaia2Column",
    "Gaia2Source",
    "Gaia2Table",
    "Phase",
    "TraceWriter",
    "choose_source",
    "format_table",
    "gaia2_table",
    "mini_selection",
    "phase_policy",
    "trace_key",
    "write_output_jsonl",
]

#: gaia2-run's standard configs, in ARE's order (`CapabilityTag.gaia2_capabilities()`; a test checks).
STANDARD_CONFIGS = ("ambiguity", "adaptability", "execution", "search", "time")
MINI = "mini"
#: Gaia2-mini takes this share of each capability's scenarios (32 of 160).
MINI_SHARE = 5
SPLIT = "validation"


@dataclass(frozen=True)
class Phase:
    name: str
    configs: tuple[str, ...]
    #: ARE's `a2a_app_prop`: 1.0 makes every app an app-agent.
    a2a_app_prop: float = 0.0
    noise: bool = False


PHASES = (
    Phase("standard", STANDARD_CONFIGS),
    Phase("agent2agent", (MINI,), a2a_app_prop=1.0),
    Phase("noise", (MINI,), noise=True),
)

#: The table's columns (Gaia2's seven capabilities): (phase, config) -> name.
COLUMNS = {
    ("standard", "execution"): "Execution",
    ("standard", "search"): "Search",
    ("standard", "adaptability"): "Adaptability",
    ("standard", "time"): "Time",
    ("standard", "ambiguity"): "Ambiguity",
    ("agent2agent", MINI): "Agent2Agent",
    ("noise", MINI): "Noise",
}


# ------------------------------------------------------------------ where the scenarios come from


@dataclass
class Gaia2Source:
    """Where a run's scenarios come from: `hf` (the dataset, from the local HF cache), `bundled`
    (this repository's corpus) or a folder in ARE's layout."""

    kind: str
    folder: Path | None = None
    revision: str = HF_DEFAULT_REVISION
    _cache: dict[str, list[ScenarioFile]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        if self.kind == "hf":
            return f"the Gaia2 dataset ({HF_DATASET}@{self.revision[:12]}, local Hugging Face cache)"
        if self.kind == "bundled":
            return "the bundled corpus (scenarios/; mini: orchestra's selection, docs/gaia2.md)"
        return f"{self.folder} (ARE's layout)"

    @property
    def hf_metadata(self) -> dict[str, str] | None:
        return {"dataset": HF_DATASET, "split": SPLIT, "revision": self.revision} if self.kind == "hf" else None

    def files(self, config: str) -> list[ScenarioFile]:
        if config not in self._cache:
            self._cache[config] = self._files(config)
        return self._cache[config]

    def _files(self, config: str) -> list[ScenarioFile]:
        if self.kind == "hf":
            return list(expand(f"hf:{config}/{SPLIT}@{self.revision}"))
        if self.kind == "bundled":
            if config == MINI:
                return mini_selection({c: self.files(c) for c in STANDARD_CONFIGS})
            return list(expand(f"bundled:{config}"))
        assert self.folder is not None
        folder = self.folder / config
        if config == MINI and not folder.is_dir():
            return mini_selection({c: self.files(c) for c in STANDARD_CONFIGS})
        if not folder.is_dir():
            raise ScenarioError(folder, f"no {config}/ folder: a Gaia2 folder holds {', '.join(STANDARD_CONFIGS)} (and optionally {MINI}) in ARE's layout")
        return list(expand(folder))


def hf_missing(revision: str = HF_DEFAULT_REVISION) -> str | None:
    """None when every config gaia2-run needs is in the local HF cache, else the first that is not."""
    for config in (*STANDARD_CONFIGS, MINI):
        try:
            load_hf_dataset(config, SPLIT, revision, source=f"hf:{config}")
        except ScenarioError:
            return config
    return None


def choose_source(requested: str) -> tuple[Gaia2Source, str]:
    """The source for `--source` (auto | hf[@REV] | bundled | DIR), and the one line that says which."""
    kind, _, revision = requested.partition("@")
    revision = revision or HF_DEFAULT_REVISION
    if kind == "auto":
        missing = hf_missing(revision)
        if missing is None:
            source = Gaia2Source("hf", revision=revision)
            return source, f"scenarios: {source.label}"
        source = Gaia2Source("bundled")
        return source, f"scenarios: {source.label} — the Gaia2 dataset is not in the local Hugging Face cache (config {missing!r})"
    if kind == "hf":
        missing = hf_missing(revision)
        if missing is not None:
            load_hf_dataset(missing, SPLIT, revision, source=f"hf:{missing}")  # raises the error that says what to download
        source = Gaia2Source("hf", revision=revision)
    elif kind == "bundled":
        source = Gaia2Source("bundled")
    else:
        folder = Path(requested)
        if not folder.is_dir():
            raise OrchestraError(f"--source {requested}: not auto, hf[@REVISION], bundled or a folder")
        source = Gaia2Source("dir", folder=folder)
    return source, f"scenarios: {source.label}"


# ------------------------------------------------------------------ mini


def _universe(file: ScenarioFile) -> str:
    from orchestra.scenario_info import describe

    entry = _bundled_universes().get(describe(file).scenario_id)
    return entry or ""


def _bundled_universes() -> dict[str, str]:
    from orchestra.scenario_files import MANIFEST_NAME, bundled_root

    path = bundled_root() / MANIFEST_NAME
    if not path.is_file():
        return {}
    return {sid: str(entry.get("universe") or "") for sid, entry in json.loads(path.read_text()).get("scenarios", {}).items()}


def _rank(scenario_id: str) -> str:
    return hashlib.sha256(f"gaia2-mini/{scenario_id}".encode()).hexdigest()


def mini_selection(files_by_config: dict[str, Sequence[ScenarioFile]], universe: Callable[[ScenarioFile], str] | None = None) -> list[ScenarioFile]:
    """Gaia2-mini for a source without a `mini` config: of each config, ceil(n / 5) scenarios (the
    dataset's mini is 32 of each capability's 160), taken round-robin over the config's universes
    (bundled: `scenarios/manifest.json`; elsewhere one universe), each universe's scenarios in the
    order of sha256("gaia2-mini/<scenario id>"). Sorted by path; the same files on every machine."""
    from orchestra.scenario_info import describe

    universe = universe or _universe
    chosen: list[ScenarioFile] = []
    for config in sorted(files_by_config):
        files = list(files_by_config[config])
        if not files:
            continue
        k = math.ceil(len(files) / MINI_SHARE)
        groups: dict[str, list[tuple[str, ScenarioFile]]] = defaultdict(list)
        for f in files:
            groups[universe(f)].append((_rank(describe(f).scenario_id), f))
        for g in groups.values():
            g.sort(key=lambda rf: rf[0])
        order = sorted(((i, rank, f) for g in groups.values() for i, (rank, f) in enumerate(g)), key=lambda t: (t[0], t[1]))
        chosen += [f for _, _, f in order[:k]]
    return sorted(chosen, key=lambda f: str(f.path))


# ------------------------------------------------------------------ what runs in each phase


def phase_policy(phase: Phase, *, team: TeamConfig | None, agent: AgentConfig | None) -> tuple[TeamConfig | None, AgentConfig | None]:
    """The team or agent a phase runs: standard and noise run the main agent alone (ARE's
    `a2a_app_prop=0`); agent2agent makes every app an app-agent (`a2a_app_prop=1.0`), with the
    team's app-agent settings (defaults, overrides) when it has some, else the main agent's."""
    if phase.a2a_app_prop > 0:
        if team is not None:
            existing = team.app_agents
            app_agents = AppAgentsConfig(apps="all", defaults=existing.defaults, overrides=existing.overrides) if existing else AppAgentsConfig(apps="all")
            return team.model_copy(update={"app_agents": app_agents}), None
        assert agent is not None
        return TeamConfig(name=f"{agent.scaffold}+app-agents", main=agent, app_agents=AppAgentsConfig(apps="all")), None
    if team is not None:
        return team.model_copy(update={"app_agents": None}), None
    return None, agent


def phase_session(phase: Phase, base: SessionConfig) -> SessionConfig:
    """Noise only in the noise phase: the base's noise settings when it has some, else Gaia2's defaults."""
    if phase.noise:
        return base.model_copy(update={"noise": base.noise or NoiseConfig()})
    return base.model_copy(update={"noise": None})


# ------------------------------------------------------------------ ARE's files


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


# ------------------------------------------------------------------ the table


class Gaia2Column(BaseModel):
    name: str
    phase: str
    config: str
    scenarios: int = 0
    runs: int = 0
    rollouts: int = 0
    errors: int = 0
    pass_at_1: AreRate = Field(default_factory=AreRate)
    #: ARE's Pass@k / Pass^k: scenarios with at least one / only passing runs.
    pass_at_k: float | None = None
    pass_hat_k: float | None = None
    mean_sim_seconds: float | None = None
    tokens: int = 0
    cost_usd: float = 0.0


class Gaia2Table(BaseModel):
    source: str
    runs: int
    columns: list[Gaia2Column]
    #: Gaia2's score: the seven capabilities' pass@1, equal weight (ARE's macro success rate).
    overall: AreRate


def gaia2_table(records: dict[tuple[str, str], list[RolloutRecord]], *, source: str, runs: int) -> Gaia2Table:
    """The seven columns (their records by (phase, config)) and the overall score."""
    columns = []
    for (phase, config), name in COLUMNS.items():
        rs = records.get((phase, config), [])
        judged = [r.result for r in rs if r.status in ("PASS", "FAIL") and r.result is not None]
        results = [r.result for r in rs if r.result is not None]
        at_k, hat_k = are_pass_k(rs)
        columns.append(
            Gaia2Column(
                name=name,
                phase=phase,
                config=config,
                scenarios=len({r.scenario_id for r in rs}),
                runs=len({r.sample_index for r in rs}),
                rollouts=len(rs),
                errors=sum(r.status == "ERROR" for r in rs),
                pass_at_1=are_success_rate(rs),
                pass_at_k=at_k,
                pass_hat_k=hat_k,
                mean_sim_seconds=sum(j.sim_seconds for j in judged) / len(judged) if judged else None,
                tokens=sum(r.prompt_tokens + r.completion_tokens for r in results),
                cost_usd=sum(r.cost_usd for r in results),
            )
        )
    # As ARE's statistics: over the capabilities the folder holds (`--id` / `--limit` may leave
    # columns empty; an empty column is not a capability scored 0).
    overall = macro_success_rate({c.name: records.get((c.phase, c.config), []) for c in columns if c.rollouts})
    return Gaia2Table(source=source, runs=runs, columns=columns, overall=overall)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def format_table(table: Gaia2Table) -> str:
    """The terminal table: one column per capability, then Gaia2's score."""
    names = [c.name for c in table.columns] + ["Gaia2"]
    width = max(13, *(len(n) + 1 for n in names))
    k = table.runs

    def row(label: str, cells: list[str]) -> str:
        return f"{label:<16}" + "".join(f"{cell:>{width}}" for cell in cells)

    def rate(r: AreRate) -> str:
        return "-" if r.mean is None else f"{100 * r.mean:.1f}±{100 * r.sem:.1f}"

    lines = [row("", names), "-" * (16 + width * len(names))]
    lines.append(row("pass@1 %", [rate(c.pass_at_1) for c in table.columns] + [rate(table.overall)]))
    lines.append(row(f"pass^{k} %", [_pct(c.pass_hat_k) for c in table.columns] + [""]))
    lines.append(row("sim s / rollout", [f"{c.mean_sim_seconds:.1f}" if c.mean_sim_seconds is not None else "-" for c in table.columns] + [""]))
    lines.append(row("tokens", [str(c.tokens) for c in table.columns] + [str(sum(c.tokens for c in table.columns))]))
    lines.append(row("cost $", [f"{c.cost_usd:.4f}" for c in table.columns] + [f"{sum(c.cost_usd for c in table.columns):.4f}"]))
    lines.append(row("scenarios x runs", [f"{c.scenarios}x{c.runs}" for c in table.columns] + [""]))
    lines.append(row("errors", [str(c.errors) for c in table.columns] + [str(sum(c.errors for c in table.columns))]))
    empty = [c.name for c in table.columns if not c.rollouts]
    if empty:
        lines.append(
            f"Gaia2: over {len(table.columns) - len(empty)} of {len(table.columns)} capabilities ({', '.join(empty)}: no rollout selected); not a submission"
        )
    return "\n".join(lines)
