"""What a trainer trains on: each trainable agent's model calls in token ids, as the model saw and sampled them.

A rollout records a `TrainingTurn` for every model call of every **trainable** agent (the main
agent, which the policy plays, and the app-agents a team file marks `trainable: true`; frozen
agents' calls are in no trace): its token ids as sent by the server (`orchestra.openai_client`, or
a trainer's completion applied through the step API) or, where a server sent none, counted with the
model's own tokenizer and marked `retokenized`. Nothing is ever re-tokenized or left out silently:
a call that came without ids (a server's hiccup) is kept as a turn marked `token_ids_missing`, and
the agent's one sequence breaks there; logprobs that cannot be this turn's (another count than the
completion's, a null one) are dropped for that turn with the reason in `logprobs_dropped`, and a
warning is logged once per rollout.

At the end the turns become a `TrainingTrace`, one per episode (schema-versioned; the field names
of OpenEnv's `TrainingTurn` / `TrainingTrace` where those exist): per agent, its turns, and — when
every turn's prompt extends the previous prompt and completion token for token (what one sequence
with an interleaved loss mask needs; `AgentTrace.extends`) — that one sequence, the model's tokens
masked 1 and the environment's 0. Where the prompt does not extend (a scaffold that rebuilds its
history, ARE's ReAct), the turns are separate samples and the trace says so.

Everything here is plain data from the simulated world and the server's ids: two runs of the same
spec with the same completions write the same bytes, in any process and at any concurrency.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from orchestra.types import ModelResponse, Tokens

log = logging.getLogger(__name__)

__all__ = ["TRAINING_SCHEMA_VERSION", "AgentTrace", "JoinedSequence", "TrainingRecorder", "TrainingTrace", "TrainingTurn"]

#: The trace's schema version (bumped on an incompatible change).
TRAINING_SCHEMA_VERSION = 1


class TrainingTurn(BaseModel):
    """One model call of a trainable agent (OpenEnv's `TrainingTurn` fields, plus orchestra's)."""

    #: `<agent>/<n>`: the agent's n-th model call of the rollout (0-based; a call without ids counts too).
    node_id: str
    prompt_token_ids: list[int]
    completion_token_ids: list[int]
    #: One per completion token (None when the server sent no logprobs).
    per_token_logps: list[float] | None = None
    #: One per completion token: 1 for the model's own tokens (every token of a single turn).
    loss_mask: list[int] = Field(default_factory=list)
    agent: str
    trainable: bool = True
    #: Counted with the model's tokenizer, not sent by the server (`orchestra.tokenization`).
    retokenized: bool = False
    #: Simulated seconds since the scenario's start when the call was made, and what it cost the clock.
    sim_time: float = 0.0
    dt: float = 0.0
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: The server sent no token ids for this call (and no tokenizer counted it): its id lists are
    #: empty, it is no sample, and the agent's turns are not one sequence across it.
    token_ids_missing: bool = False
    #: Why the logprobs the server sent are not in `per_token_logps` (another count than the
    #: completion's tokens, or a null one), when they were dropped.
    logprobs_dropped: str | None = None


class JoinedSequence(BaseModel):
    """One agent's turns as one sequence: the first prompt, then every completion and every
    environment span after it in order; `loss_mask` 1 on the model's tokens, 0 on the environment's."""

    prompt_token_ids: list[int]
    completion_token_ids: list[int]
    loss_mask: list[int]
    #: The sampled tokens' logprobs, 0.0 on environment tokens (None when a turn had none).
    per_token_logps: list[float] | None = None


class AgentTrace(BaseModel):
    """One trainable agent's part of an episode."""

    agent: str
    role: str = "main"
    app: str | None = None
    model: str = ""
    trainable: bool = True
    turns: list[TrainingTurn] = Field(default_factory=list)
    #: Whether every turn's prompt starts with the previous turn's prompt and completion, token for token.
    extends: bool = True
    #: The turns as one sequence with an interleaved mask, when they extend (else None: train on `turns`).
    sequence: JoinedSequence | None = None
    #: Why the turns are not one sequence (the first turn whose prompt does not extend), when they are not.
    breaks: str | None = None


class TrainingTrace(BaseModel):
    """One episode, for a trainer: the trainable agents' token traces, the reward and the judge's word."""

    schema_version: int = TRAINING_SCHEMA_VERSION
    scenario_id: str
    sample_index: int = 0
    seed: int | None = None
    #: The episode's reward (binary: the judge's verdict; dense: with partial credit) and, where
    #: computed, the dense partial credit of a failed episode.
    reward: float | None = None
    success: bool | None = None
    partial_credit: float | None = None
    rationale: str | None = None
    event_log_sha256: str | None = None
    stop_reason: str | None = None
    sim_seconds: float = 0.0
    agents: list[AgentTrace] = Field(default_factory=list)


class TrainingRecorder:
    """Collects a rollout's trainable turns as they happen (the `training` plugin feeds it)."""

    def __init__(self) -> None:
        self._agents: dict[str, AgentTrace] = {}
        self._warned = False

    @property
    def empty(self) -> bool:
        """No turn carried ids (a rollout that asked for none has no trace, not one of empty turns)."""
        return not any(not t.token_ids_missing for a in self._agents.values() for t in a.turns)

    def add(self, *, agent: str, role: str, app: str | None, model: str, response: ModelResponse, sim_time: float, dt: float) -> None:
        """Record one accepted model call of a trainable agent; a call without ids is kept, marked."""
        trace = self._agents.setdefault(agent, AgentTrace(agent=agent, role=role, app=app, model=model))
        turn = _turn(f"{agent}/{len(trace.turns)}", agent, response.tokens, sim_time, dt, response)
        trace.turns.append(turn)
        if self._warned:  # once per rollout: a flaky server would flood the log
            return
        node, problem = turn.node_id, turn.logprobs_dropped
        if problem is None and not self.empty:
            # a call without ids matters only in a rollout whose server sends them (a run that asked
            # for none, or an offline model, has no trace at all: nothing to warn about)
            node = next((t.node_id for a in self._agents.values() for t in a.turns if t.token_ids_missing), "")
            problem = "the server sent no token ids" if node else None
        if problem is not None:
            self._warned = True
            log.warning("training trace: %s: %s (marked on the turn; further such turns of this rollout are marked, not logged)", node, problem)

    def agents(self) -> list[AgentTrace]:
        """Every trainable agent's trace, its turns joined into one sequence where they extend."""
        return [_joined(a) for a in self._agents.values() if a.turns]


def _turn(node_id: str, agent: str, tokens: Tokens | None, sim_time: float, dt: float, response: ModelResponse) -> TrainingTurn:
    meta: dict[str, Any] = {}
    if response.finish_reason is not None:
        meta["finish_reason"] = response.finish_reason
    common: dict[str, Any] = dict(node_id=node_id, agent=agent, sim_time=round(sim_time, 6), dt=round(dt, 6), metadata=meta)
    if tokens is None:
        return TrainingTurn(prompt_token_ids=[], completion_token_ids=[], token_ids_missing=True, **common)
    logps, dropped = _logps(tokens)
    return TrainingTurn(
        prompt_token_ids=list(tokens.prompt_ids),
        completion_token_ids=list(tokens.completion_ids),
        per_token_logps=logps,
        loss_mask=[1] * len(tokens.completion_ids),
        retokenized=tokens.retokenized,
        logprobs_dropped=dropped,
        **common,
    )


def _logps(tokens: Tokens) -> tuple[list[float] | None, str | None]:
    """The turn's logprobs when they are this sample's (one number per completion token), else
    None and why not."""
    if tokens.logprobs is None:
        return None, None
    n, k = len(tokens.logprobs), len(tokens.completion_ids)
    if n != k:
        return None, f"the server sent {n} logprobs for {k} completion tokens"
    bad = next((i for i, lp in enumerate(tokens.logprobs) if math.isnan(lp)), None)
    if bad is not None:
        return None, f"the server sent no logprob (null) for completion token {bad}"
    return list(tokens.logprobs), None


def _joined(trace: AgentTrace) -> AgentTrace:
    """The trace with its one sequence when every prompt extends the one before (see the module doc)."""
    turns = trace.turns
    ids = list(turns[0].prompt_token_ids)
    completion: list[int] = []
    mask: list[int] = []
    logps: list[float] | None = []
    for i, turn in enumerate(turns):
        if turn.token_ids_missing:
            return _broken(trace, f"{turn.node_id}: the server sent no token ids for this call")
        if i > 0:
            prefix = ids + completion
            if turn.prompt_token_ids[: len(prefix)] != prefix:
                where = _first_difference(prefix, turn.prompt_token_ids)
                return _broken(trace, f"{turn.node_id}: its prompt differs from the previous prompt and completion at token {where}")
            env = turn.prompt_token_ids[len(prefix) :]
            completion += env
            mask += [0] * len(env)
            if logps is not None:
                logps += [0.0] * len(env)
        completion += turn.completion_token_ids
        mask += turn.loss_mask
        if logps is not None and turn.per_token_logps is not None:
            logps += turn.per_token_logps
        else:
            logps = None
    return trace.model_copy(
        update={
            "extends": True,
            "sequence": JoinedSequence(prompt_token_ids=ids, completion_token_ids=completion, loss_mask=mask, per_token_logps=logps),
            "breaks": None,
        }
    )


def _broken(trace: AgentTrace, why: str) -> AgentTrace:
    return trace.model_copy(update={"extends": False, "sequence": None, "breaks": why})


def _first_difference(a: Sequence[int], b: Sequence[int]) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))
