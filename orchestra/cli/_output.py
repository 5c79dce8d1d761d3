"""The one output formatter for rollout records (`run`, `replay`, `judge-check`): lines, JSON, files."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - import for type checkers only (`orchestra scenarios` needs no rollout machinery)
    from orchestra.record import RolloutRecord


def outcome_record(o: RolloutRecord) -> dict[str, Any]:
    """The JSON object printed by `--json` (one per rollout)."""
    rec: dict[str, Any] = {
        "scenario_id": o.scenario_id,
        "source": o.source,
        "policy": o.policy,
        "perturbation": o.perturbation,
    }
    rec["status"] = o.status  # PASS / FAIL / ERROR / N/A: the word the table shows
    if o.error is not None:
        rec["error"] = o.error
    elif o.not_applicable is not None:
        rec["reason"] = o.not_applicable
    if o.result is not None and o.not_applicable is None:  # kept with an error too (a judge error)
        r = o.result
        judged = o.status in ("PASS", "FAIL")
        rec.update(
            success=r.success if judged else None,  # an ERROR has no verdict and no reward, whatever the judge said
            reward=o.reward,
            reward_mode=r.reward_mode,
            sim_seconds=r.sim_seconds,
            event_log_sha256=r.event_log_sha256,
            turns_completed=r.turns_completed,
            nb_turns=r.nb_turns,
            # totals over every agent (the sums of `agents`), then the main agent's own
            n_tool_calls=r.n_tool_calls,
            model_calls=r.model_calls,
            steps=r.steps,
            prompt_tokens=r.prompt_tokens,
            completion_tokens=r.completion_tokens,
            reasoning_tokens=r.reasoning_tokens,
            cost_usd=r.cost_usd,
            main_steps=r.main_steps,
            main_prompt_tokens=r.main_prompt_tokens,
            main_completion_tokens=r.main_completion_tokens,
            main_reasoning_tokens=r.main_reasoning_tokens,
            main_cost_usd=r.main_cost_usd,
            stop_reason=r.stop_reason,
            rationale=r.rationale,
            error=o.error or r.error,
            judge=r.judge,
            judge_usage=r.judge_usage.model_dump() if r.judge_usage is not None else None,
            agents=[vars(a) for a in r.agents],
            delegations=[vars(d) for d in r.delegations],
            app_agents=r.app_agents,
        )
        if r.noise is not None:  # which noise ran, what fired (only under noise: clean records stay as they were)
            rec["noise"] = r.noise.model_dump(mode="json")
        if o.note:
            rec["perturbation_note"] = o.note
    if o.partial is not None:  # failed before its verdict: what had happened by then
        rec.update(sim_seconds=o.partial.sim_seconds, event_log_sha256=o.partial.event_log_sha256, agents=[vars(a) for a in o.partial.agents])
    if o.native is not None:
        rec["are_native_success"] = o.native.success
    return rec


def outcome_line(o: RolloutRecord, id_width: int = 36) -> str:
    """One table row: the status word (the JSON's `status`), then the figures; an ERROR row ends
    with its one-line cause, a row whose agent spent its step budget says so."""
    label = o.scenario_id + (f" [{o.perturbation}]" if o.perturbation else "")
    if o.sample_index:
        label += f" #{o.sample_index}"
    status = o.status
    if o.result is None and o.error is not None:
        return f"{label:<{id_width}}  {status:<5}  {one_line(o.error)}"
    if o.not_applicable is not None:
        return f"{label:<{id_width}}  {status:<5}  {o.not_applicable}"
    assert o.result is not None
    r = o.result
    reward = f"reward={o.reward:.2f}" if o.reward is not None else "reward=-   "  # an ERROR has none (the judge's is not the rollout's)
    text = f"{label:<{id_width}}  {status:<5}  {reward}  sim={r.sim_seconds:8.1f}s"
    if not o.policy.startswith("oracle"):
        text += f"  steps={r.steps:<3} tokens={r.prompt_tokens}+{r.completion_tokens}"
    if o.policy.startswith("team:") or r.delegations:  # who did what: the compact team summary
        failed = sum(not d.ok for d in r.delegations)
        text += f"  agents={len(r.agents)} delegations={len(r.delegations)}" + (f" ({failed} failed)" if failed else "")
    text += f"  judge={r.judge}"
    if r.stop_reason == "step_budget":
        text += f"  stop=step_budget ({r.main_steps} steps)"
    if r.noise is not None:
        text += f"  {noise_text(r.noise)}"
    error = o.error or r.error
    return text + (f"  error: {one_line(error)}" if error else "")


def noise_text(noise: Any) -> str:
    """What the noise did in one rollout (a `NoiseReport`): failures of calls drawn, the tools that
    failed (first three), environment events that ran; `no-augmentation` when the file had none."""
    failed = [f.tool for f in noise.failed_calls]
    shown = f" ({', '.join(failed[:3])}{', ...' if len(failed) > 3 else ''})" if failed else ""
    flag = "" if noise.augmentation else " no-augmentation"
    return f"noise: failures={noise.tool_failures}/{noise.tool_calls_drawn}{shown} env_events={noise.env_events}{flag}"


def noise_totals(records: Any) -> str | None:
    """One line over a batch: rollouts that ran under noise, tool failures, environment events; None when none did."""
    noisy = [o.result.noise for o in records if o.result is not None and o.result.noise is not None]
    if not noisy:
        return None
    failures, drawn, events = sum(n.tool_failures for n in noisy), sum(n.tool_calls_drawn for n in noisy), sum(n.env_events for n in noisy)
    bare = sum(not n.augmentation for n in noisy)
    configs = sorted(
        {f"p={n.config.tool_failure_probability:g} env_events/min={n.config.env_events_per_minute:g} seed={n.config.env_events_seed}" for n in noisy}
    )
    text = f"noise ({'; '.join(configs)}): {len(noisy)} rollout(s), {failures} tool failure(s) in {drawn} call(s), {events} environment event(s)"
    return text + (f"; {bare} without augmentation data" if bare else "")


def totals_line(records: Any) -> str:
    """The last line of a batch: how many passed, failed, errored (and were not applicable), and the
    mean reward over the judged ones only — an `ERROR` has no reward, so it is never in the mean."""
    records = list(records)
    counts = {s: sum(o.status == s for o in records) for s in ("PASS", "FAIL", "ERROR", "N/A")}
    rewards = [o.reward for o in records if o.reward is not None]
    mean = f"mean reward {sum(rewards) / len(rewards):.3f} over {len(rewards)} judged" if rewards else "no judged rollout (no mean reward)"
    na = f", {counts['N/A']} not applicable" if counts["N/A"] else ""
    return f"{len(records)} rollout(s): {counts['PASS']} passed, {counts['FAIL']} failed, {counts['ERROR']} error(s){na}; {mean}"


def one_line(text: str) -> str:
    """An error as one line (litellm's messages run over several)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " ".join(lines[:1]) + (" ..." if len(lines) > 1 else "") if lines else text


def write_outcome(out_dir: Path, o: RolloutRecord) -> None:
    """Write the rollout's event log and the judge's verdict/rationale under `out_dir`."""
    if o.result is None:
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = o.scenario_id + (f".{o.perturbation}" if o.perturbation else "")
    r = o.result
    (out_dir / f"{stem}.events.json").write_text(json.dumps(r.event_log, indent=1, default=str) + "\n")
    judge = dict(outcome_record(o))
    judge["turns"] = [t.model_dump() for t in r.turns]
    if r.judge_checks:
        judge["judge_checks"] = r.judge_checks
    (out_dir / f"{stem}.judge.json").write_text(json.dumps(judge, indent=2, default=str) + "\n")


def emit_json(rec: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(rec, default=str) + "\n")
    sys.stdout.flush()
