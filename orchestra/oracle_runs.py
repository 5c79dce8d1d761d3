"""Batch oracle replays (plain or perturbed) over scenario files, one outcome per rollout.

A bad scenario file or a failing rollout becomes an outcome with `error` set; the batch goes on,
so nothing already computed is lost.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from orchestra.are_adapter import JudgePool
from orchestra.errors import OrchestraError
from orchestra.oracle import build_plan, replay
from orchestra.parity import NativeVerdict, are_native_verdict, export_trace
from orchestra.perturbations import JudgeRules, NotApplicable, PerturbationKind, perturb
from orchestra.scenario_files import ScenarioFile, resolve
from orchestra.session import RolloutResult, Session, SessionConfig


@dataclass
class ReplayOutcome:
    """One (possibly perturbed) oracle replay of one scenario file."""

    path: Path
    scenario_id: str
    perturbation: PerturbationKind | None
    result: RolloutResult | None = None
    not_applicable: str | None = None
    note: str | None = None
    error: str | None = None
    native: NativeVerdict | None = None

    @property
    def expected_success(self) -> bool:
        return self.perturbation is None


def replay_file(
    file: ScenarioFile,
    *,
    perturbation: PerturbationKind | None = None,
    config: SessionConfig | None = None,
    judge_pool: JudgePool | None = None,
    native_parity: bool = False,
) -> ReplayOutcome:
    outcome = ReplayOutcome(path=file.path, scenario_id=file.stem, perturbation=perturbation)
    try:
        with Session.open(file, config, judge_pool=judge_pool) as session:
            outcome.scenario_id = session.scenario_id
            plan = build_plan(session)
            if perturbation is not None:
                try:
                    plan = perturb(plan, perturbation, JudgeRules.from_judge(session.prepared.judge, session.scenario))
                except NotApplicable as exc:
                    outcome.not_applicable = str(exc)
                    return outcome
                outcome.note = plan.notes[-1]
            replay(session, plan)
            outcome.result = session.finish()
            outcome.error = outcome.result.error  # a judge error: the rollout is kept, its verdict is not one
            trace = export_trace(session, file.text) if native_parity else None
        if trace is not None:
            outcome.native = are_native_verdict(trace, judge=config.judge if config is not None else None)
    except OrchestraError as exc:
        outcome.error = str(exc)
    except Exception as exc:  # keep the batch going; the message names the scenario
        outcome.error = f"{file.path}: {type(exc).__name__}: {exc}"
    return outcome


def replay_sources(
    sources: Iterable[str | Path],
    *,
    perturbations: Iterable[PerturbationKind | None] = (None,),
    config: SessionConfig | None = None,
    judge_pool: JudgePool | None = None,
    native_parity: bool = False,
    capabilities: Iterable[str] = (),
    scenario_ids: Iterable[str] = (),
    limit: int | None = None,
) -> Iterator[ReplayOutcome]:
    """Yield outcomes as they complete, in deterministic (source order, perturbation) order."""
    kinds = list(perturbations)
    for file in resolve(sources, capabilities=capabilities, scenario_ids=scenario_ids, limit=limit):
        for kind in kinds:
            yield replay_file(file, perturbation=kind, config=config, judge_pool=judge_pool, native_parity=native_parity)
