"""What a rollout produced, as data: `RolloutRecord` (and its judged part, `RolloutResult`).

One function builds a record (`build_record`), from the judge's `Judgement` and the ledgers of the
agents that ran, so the totals are defined in exactly one place: **every total is the sum over all
agents** (a team's app-agents included) — steps, model calls, tool calls, tokens, cost — and the
main agent's own figures stand beside them as `main_*`. A record carries the spec that produced it
(`spec`), so a stored record says what ran and a runner can resume from it; literal API keys are
masked when it is written (`${VAR}` references are kept).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_serializer

from orchestra.models import mask_secrets
from orchestra.session import Judgement, PartialLog
from orchestra.spec import RolloutSpec
from orchestra.training import TrainingTrace
from orchestra.trajectory import Trajectory
from orchestra.types import AgentLedger, Delegation

__all__ = ["NativeVerdictRecord", "PartialRollout", "RolloutRecord", "RolloutResult", "build_record"]


class RolloutResult(Judgement):
    """A judged rollout: the judge's verdict and the world's record, plus who acted and what they spent.

    A rollout that ended in an error (`error` set) has no verdict: `success` and `reward` are None
    (ARE's judge may have passed what ran before the error; no file may carry that as a result)."""

    success: bool | None  # type: ignore[assignment]
    reward: float | None  # type: ignore[assignment]

    #: Totals over every agent of the rollout (the sums of `agents`).
    steps: int = 0
    model_calls: int = 0
    n_tool_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    #: The main agent's own figures (the agent that talks to the user; for a team, without its app-agents).
    main_steps: int = 0
    main_prompt_tokens: int = 0
    main_completion_tokens: int = 0
    main_reasoning_tokens: int = 0
    main_cost_usd: float = 0.0
    #: One ledger per agent that ran (main first, then sub-agents in start order; the oracle policy
    #: has one too, named `oracle`).
    agents: list[AgentLedger] = Field(default_factory=list)
    #: Every task an agent handed to a sub-agent (an app-agent's expert call included), in the order they finished.
    delegations: list[Delegation] = Field(default_factory=list)
    #: The apps served by app-agents in this rollout (Agent2Agent), in the order ARE appends them;
    #: empty for one agent — or for a team none of whose named apps this scenario has.
    app_agents: list[str] = Field(default_factory=list)


class PartialRollout(PartialLog):
    """A rollout that failed before it was judged: its event log so far and what its agents spent."""

    agents: list[AgentLedger] = Field(default_factory=list)
    delegations: list[Delegation] = Field(default_factory=list)


class NativeVerdictRecord(BaseModel):
    success: bool
    rationale: str | None = None


class RolloutRecord(BaseModel):
    """What one rollout produced — or why it produced no verdict. The batch goes on either way."""

    scenario_id: str
    source: str
    policy: str
    perturbation: str | None = None
    sample_index: int = 0
    seed: int | None = None
    #: The spec that produced this record (what ran; a runner resumes from it).
    spec: RolloutSpec | None = None
    #: The judged rollout: verdict, reward, per-turn verdicts, ledgers and their totals, event log and hash, judge label.
    #: An `ERROR` rollout may have one too (the judge looked at what happened before the error, or
    #: the judge itself failed): kept as evidence, its reward is not the rollout's (`reward`).
    result: RolloutResult | None = None
    #: Why this rollout failed (a bad scenario, a permanent model failure, a plugin's exception).
    error: str | None = None
    #: A rollout that failed before its verdict: what had happened by then (event log, ledgers).
    partial: PartialRollout | None = None
    #: A perturbation that cannot apply to this scenario (the reason): no rollout ran.
    not_applicable: str | None = None
    #: What a perturbation changed.
    note: str | None = None
    #: ARE's own offline verdict on the same trajectory (`OracleConfig.native_parity`).
    native: NativeVerdictRecord | None = None
    #: Everything every agent was asked, answered and did (`orchestra.trajectory`; docs/trajectories.md).
    #: Kept in `DIR/rollouts/NAME.json`, left out of `results.jsonl` (`RolloutRecord.compact()`).
    trajectory: Trajectory | None = None
    #: The trainable agents' model calls in token ids, for a trainer (`orchestra.training`); None when
    #: no call carried token ids (a hosted model, the oracle). Kept in its own file by a run folder.
    training: TrainingTrace | None = None

    @field_serializer("spec")
    def _spec_without_secrets(self, spec: RolloutSpec | None) -> dict[str, Any] | None:
        return None if spec is None else mask_secrets(spec.model_dump(mode="json"))

    @property
    def status(self) -> str:
        """One word, the same in every table and JSON: `PASS` / `FAIL` (the agent's verdict), `ERROR`
        (the harness or the setup: no trustworthy verdict; `error` says why) or `N/A` (a perturbation
        that cannot apply)."""
        if self.not_applicable is not None:
            return "N/A"
        if self.error is not None or self.result is None or self.result.error is not None:
            return "ERROR"
        return "PASS" if self.result.success else "FAIL"

    @property
    def reward(self) -> float | None:
        """The rollout's reward: the judge's, for a `PASS` or `FAIL` only. An `ERROR` has none —
        ARE's judge may still have passed what ran before the error (a broken model's "Max
        iterations reached" passes a search scenario), and no line, file or mean may show that."""
        return self.result.reward if self.result is not None and self.status in ("PASS", "FAIL") else None

    def compact(self) -> dict[str, Any]:
        """The record as JSON data without its trajectory and training trace (a line of `results.jsonl`)."""
        return self.model_dump(mode="json", exclude={"trajectory", "training"})

    @property
    def agents(self) -> list[AgentLedger]:
        if self.result is not None:
            return self.result.agents
        return self.partial.agents if self.partial is not None else []

    @property
    def expected_success(self) -> bool:
        return self.perturbation is None


def build_record(
    spec: RolloutSpec,
    source: str,
    *,
    scenario_id: str | None = None,
    judgement: Judgement | None = None,
    partial: PartialLog | None = None,
    agents: Iterable[AgentLedger] = (),
    delegations: Iterable[Delegation] = (),
    app_agents: Sequence[str] = (),
    stop_reason: str | None = None,
    error: str | None = None,
    not_applicable: str | None = None,
    note: str | None = None,
    native: NativeVerdictRecord | None = None,
    trajectory: Trajectory | None = None,
) -> RolloutRecord:
    """The record of one rollout: the judgement (if any) with the agents' ledgers and their totals.

    Ledgers and delegations are copied, so the record never changes after it is built.
    `stop_reason` replaces the judgement's (the main agent's own reason: `step_budget`,
    `model_error`, ...); a judge error becomes the record's `error` unless it has one already."""
    ledgers = [replace(ledger) for ledger in agents]
    handed = [replace(d) for d in delegations]
    result = None
    if judgement is not None:
        main = next((ledger for ledger in ledgers if ledger.role == "main"), None)
        error = error or judgement.error
        unjudged = {"success": None, "reward": None} if error is not None else {}
        result = RolloutResult(
            **{**dict(judgement), "stop_reason": stop_reason or judgement.stop_reason, **unjudged},
            steps=sum(ledger.steps for ledger in ledgers),
            model_calls=sum(ledger.model_calls for ledger in ledgers),
            n_tool_calls=sum(ledger.tool_calls for ledger in ledgers),
            prompt_tokens=sum(ledger.prompt_tokens for ledger in ledgers),
            completion_tokens=sum(ledger.completion_tokens for ledger in ledgers),
            reasoning_tokens=sum(ledger.reasoning_tokens for ledger in ledgers),
            cost_usd=sum(ledger.cost_usd for ledger in ledgers),
            main_steps=main.steps if main is not None else 0,
            main_prompt_tokens=main.prompt_tokens if main is not None else 0,
            main_completion_tokens=main.completion_tokens if main is not None else 0,
            main_reasoning_tokens=main.reasoning_tokens if main is not None else 0,
            main_cost_usd=main.cost_usd if main is not None else 0.0,
            agents=ledgers,
            delegations=handed,
            app_agents=list(app_agents),
        )
    failed = None
    if result is None and partial is not None:
        failed = PartialRollout(**partial.model_dump(), agents=ledgers, delegations=handed)
    return RolloutRecord(
        scenario_id=scenario_id or Path(source).stem,
        source=source,
        policy=spec.policy,
        perturbation=spec.oracle.perturbation if spec.oracle is not None else None,
        sample_index=spec.sample_index,
        seed=spec.seed,
        spec=spec,
        result=result,
        error=error,
        partial=failed,
        not_applicable=not_applicable,
        note=note,
        native=native,
        trajectory=trajectory,
    )
