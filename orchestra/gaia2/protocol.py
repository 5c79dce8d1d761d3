"""Gaia2's leaderboard protocol — ARE's `are-benchmark gaia2-run` — on orchestra's runner, from Python.

Three phases, each scenario run `runs` times (3, as gaia2-run):

| phase | configs | what changes |
|---|---|---|
| `standard` | execution, search, adaptability, time, ambiguity | the main agent alone (ARE: `a2a_app_prop=0`) |
| `agent2agent` | `mini` | every app an app-agent (ARE: `a2a_app_prop=1.0`), the main agent's model unless the team says otherwise |
| `noise` | `mini` | the main agent alone, `SessionConfig(noise=NoiseConfig())` (ARE: `ToolAugmentationConfig()` + `EnvEventsConfig(10/min, seed 0)`) |

Scenarios come from the Gaia2 dataset in the local Hugging Face cache when all six of its configs
are there, else from the bundled corpus, else from a folder in ARE's layout (`orchestra.gaia2.sources`).

Gaia2's score weighs its seven capabilities the same — five core ones (the standard phase's
configs), Agent2Agent and Noise (the two `mini` phases) — with ARE's report formulas
(`orchestra.runs.summary.are_success_rate` / `macro_success_rate`).

    result = run_gaia2(team=load_team("oracle"), source="bundled", out=Path("gaia2_results"), runs=1)
    print(format_table(result.table))

Each phase is a batch of `orchestra.runs.batch.BatchRun` into its own run folder
(`OUT/<phase>/`: `results.jsonl`, `rollouts/NAME.json` with each trajectory, the manifest), so the
same call again resumes: finished rollouts are kept, the others run. Beside them, ARE's submission
files: `OUT/<phase>/<config>/hf/*.json` (traces), `output.jsonl`, `computed_stats.json`, and the
table (`gaia2_table.json`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import anyio

from orchestra.config import SessionConfig
from orchestra.errors import OrchestraError
from orchestra.gaia2.phases import PHASES, Phase, phase_policy, phase_session
from orchestra.gaia2.sources import Gaia2Source, choose_source
from orchestra.gaia2.table import Gaia2Table, gaia2_table
from orchestra.gaia2.traces import TraceTarget, TraceWriter, trace_key, write_output_jsonl
from orchestra.host import Host
from orchestra.record import RolloutRecord
from orchestra.runs.batch import BatchRun
from orchestra.runs.run_dir import MANIFEST, RESULTS, RunDir, rollout_key
from orchestra.runs.runner import specs_for
from orchestra.scenario_files import ScenarioFile
from orchestra.spec import AgentConfig, RolloutSpec
from orchestra.teams.config import TeamConfig

__all__ = ["TABLE", "Gaia2Plan", "Gaia2Result", "PhaseBatch", "PhaseObserver", "plan_gaia2", "run_gaia2", "run_phases"]

#: The table's file in the submission folder.
TABLE = "gaia2_table.json"


@dataclass
class PhaseBatch:
    """One (phase, config) of the plan: its specs and ARE's runner config of its files."""

    phase: Phase
    config: str
    specs: list[tuple[RolloutSpec, ScenarioFile]]
    runner_config: Any


@dataclass
class Gaia2Plan:
    """What a Gaia2 run runs, where its files go, and the plugin that writes ARE's traces (`writer`:
    the host the phases run on must hold it)."""

    out: Path
    source: Gaia2Source
    runs: int
    model: str
    batches: list[PhaseBatch]
    writer: TraceWriter = field(default_factory=TraceWriter)

    def phase_specs(self, phase: Phase) -> list[tuple[RolloutSpec, ScenarioFile]]:
        return [s for b in self.batches if b.phase is phase for s in b.specs]


@dataclass
class Gaia2Result:
    """A finished (or stopped) Gaia2 run: the table (None when it stopped before the end) and the records by (phase, config)."""

    table: Gaia2Table | None
    records: dict[tuple[str, str], list[RolloutRecord]]
    #: Why the run stopped before its end (its folder could not be written), None when it ran to its end.
    stopped: str | None = None


class PhaseObserver(Protocol):
    """What a caller sees of the phases as they run (the command line's progress lines and display)."""

    def started(self, phase: Phase, batch: BatchRun) -> Callable[[RolloutRecord], None] | None:
        """A phase starts (`batch.earlier` finished before; `batch.todo` runs now); returns what sees each record."""
        ...

    def finished(self, phase: Phase, batch: BatchRun) -> None: ...


def plan_gaia2(
    *,
    team: TeamConfig | None = None,
    agent: AgentConfig | None = None,
    session: SessionConfig | None = None,
    source: Gaia2Source,
    out: Path,
    runs: int = 3,
    select: Callable[[list[ScenarioFile]], list[ScenarioFile]] = lambda files: files,
    session_for_specs: Callable[[SessionConfig], SessionConfig] = lambda s: s,
    writer: TraceWriter | None = None,
) -> Gaia2Plan:
    """Every phase's specs (a team, or one agent; `session` is the base every phase starts from),
    each file of each config as `select` keeps it. `session_for_specs` turns a phase's session into
    the one its team's specs carry (the command line expands the judge's `${VAR}` key there)."""
    from orchestra.are.submission import runner_config

    if (team is None) == (agent is None):
        raise OrchestraError("give a team or one agent")
    base = session or (team.session if team is not None else SessionConfig())
    writer = writer or TraceWriter()
    model = (team.main if team is not None else agent).model.model  # type: ignore[union-attr]
    batches = []
    for phase in PHASES:
        phase_team, phase_agent = phase_policy(phase, team=team, agent=agent)
        phase_base = phase_session(phase, base)
        if phase_team is not None:  # the team's own session is the phase's: noise settings belong to the noise phase only
            phase_team = phase_team.model_copy(update={"session": phase_base})
        label = phase_team.name if phase_team is not None else phase_agent.scaffold  # type: ignore[union-attr]
        config = runner_config(
            model=model,
            agent=f"orchestra:{label}",
            a2a_app_prop=phase.a2a_app_prop,
            a2a_model=model if phase.a2a_app_prop else None,
            noise=phase_base.noise,
        )
        for name in phase.configs:
            files = select(source.files(name))
            spec_session = session_for_specs(phase_base) if phase_team is not None else phase_base
            specs = specs_for(files, team=phase_team, agent=phase_agent, session=spec_session, runs=runs)
            folder = out / phase.name / name
            for spec, _ in specs:
                writer.targets[trace_key(spec)] = TraceTarget(folder=folder, phase=phase, config=name, runner_config=config, hf_metadata=source.hf_metadata)
            batches.append(PhaseBatch(phase, name, specs, config))
    plan = Gaia2Plan(out=out, source=source, runs=runs, model=model, batches=batches, writer=writer)
    if not any(b.specs for b in batches):
        raise OrchestraError("no scenario selected (check --id / --limit and --source)")
    return plan


def open_phases(plan: Gaia2Plan, plugins: dict[str, str] | None = None) -> dict[str, BatchRun]:
    """Every phase's run folder, opened before anything runs: a folder of another configuration (or
    of other `plugins`, `Host.third_party()`) is refused at once, not after the phases before it ran
    again. Traces torn by a kill are removed."""
    out = plan.out
    if (out / RESULTS).is_file() or (out / MANIFEST).is_file():
        raise OrchestraError(f"--out {out}: holds an `orchestra run` folder, not a gaia2 one; use another --out folder")
    opened = {}
    for phase in PHASES:
        specs = plan.phase_specs(phase)
        if specs:
            opened[phase.name] = BatchRun.open(specs, RunDir(out / phase.name, start_over=out), runs=plan.runs, plugins=plugins)
            for torn in sorted((out / phase.name).glob("*/hf/*.json.tmp")):  # a trace being written when the run was killed
                torn.unlink()
    return opened


async def run_phases(
    plan: Gaia2Plan,
    host: Host,
    *,
    concurrency: int = 1,
    observer: PhaseObserver | None = None,
    keeping: Callable[[], AbstractContextManager[None]] = nullcontext,
    health: Callable[[RolloutRecord], str | None] | None = None,
) -> Gaia2Result:
    """Run what is left of every phase (resume), then write ARE's submission files and the table.

    `host` must hold `plan.writer` (ARE's traces are written as each rollout finishes). Cancelled
    (Ctrl-C), it stops at the rollouts' next await: every finished rollout is on disk. `health` is
    `BatchRun.run`'s (a model endpoint that died stops the run); a stopped run has `stopped` set
    and no table."""
    if plan.writer not in host.pm.get_plugins():
        raise OrchestraError("the host does not hold the plan's trace writer: build it with Host.create([plan.writer, ...])")
    phases = open_phases(plan, host.third_party())
    records: dict[tuple[str, str], list[RolloutRecord]] = {}
    for phase in PHASES:
        batch = phases.get(phase.name)
        if batch is None:
            continue
        on_record = observer.started(phase, batch) if observer is not None else None
        if batch.todo:
            await batch.run(host=host, concurrency=concurrency, on_record=on_record, keeping=keeping, health=health)
        if observer is not None:
            observer.finished(phase, batch)
        if batch.stopped is not None:  # what finished is kept; the same call resumes
            return Gaia2Result(table=None, records=records, stopped=batch.stopped)
        by_key = {rollout_key(r.spec): r for r in batch.records if r.spec is not None}
        for b in plan.batches:
            if b.phase is phase:
                mine = [by_key[rollout_key(spec)] for spec, _ in b.specs if rollout_key(spec) in by_key]
                records[(phase.name, b.config)] = mine
                write_output_jsonl(plan.out / phase.name / b.config, mine, b.runner_config, trace_root=plan.out)
    table = gaia2_table(records, source=plan.source.label, runs=plan.runs)
    (plan.out / TABLE).write_text(table.model_dump_json(indent=1) + "\n")
    _are_report(plan.out, plan.model)
    return Gaia2Result(table=table, records=records)


def _are_report(out: Path, model: str) -> None:
    """ARE's own statistics on the folder, read back by ARE's upload script's reader."""
    from orchestra.are.submission import read_submission

    # (ARE's text report, `generate_validation_report`, lists capabilities in polars' unordered
    # `unique()` order, so it is not written: the generated files are byte-identical run to run.)
    (out / "computed_stats.json").write_text(json.dumps(read_submission(out, model=model), indent=2, sort_keys=True) + "\n")


def select_files(*, scenario_ids: Sequence[str] = (), limit: int | None = None) -> Callable[[list[ScenarioFile]], list[ScenarioFile]]:
    """Keep the files of these scenario ids (by id or file stem) and at most `limit` per config (a quick check, not a submission)."""
    from orchestra.scenario_info import describe

    def select(files: list[ScenarioFile]) -> list[ScenarioFile]:
        if scenario_ids:
            files = [f for f in files if f.stem in scenario_ids or describe(f).scenario_id in scenario_ids]
        return files[:limit] if limit else files

    return select


def run_gaia2(
    *,
    out: Path,
    team: TeamConfig | None = None,
    agent: AgentConfig | None = None,
    session: SessionConfig | None = None,
    source: str | Gaia2Source = "auto",
    runs: int = 3,
    scenario_ids: Iterable[str] = (),
    limit: int | None = None,
    concurrency: int = 1,
    plugins: Sequence[object] = (),
) -> Gaia2Result:
    """The whole protocol from Python (synchronously): plan, run every phase into `out` (the same
    call again resumes), write ARE's files and the table. `plugins` join the built-ins and the trace writer."""
    chosen = choose_source(source)[0] if isinstance(source, str) else source
    plan = plan_gaia2(
        team=team, agent=agent, session=session, source=chosen, out=Path(out), runs=runs, select=select_files(scenario_ids=tuple(scenario_ids), limit=limit)
    )
    host = Host.create([plan.writer, *plugins])
    base = session or (team.session if team is not None else SessionConfig())
    host.judge_builder(base.judge.mode)
    return anyio.run(lambda: run_phases(plan, host, concurrency=concurrency))
