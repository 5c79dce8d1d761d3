"""A run's numbers, per capability: pass@1 (mean ± standard error over runs), pass@k, pass^k,
simulated time, tokens, cost, success per dollar — and two runs side by side (`compare`).

Definitions (k = the number of runs of each scenario):

* **pass@1** — for each run index, the share of scenarios that passed; the mean over run indices,
  ± the standard error of that mean (ARE's `report_stats`: std with ddof 1 over runs / sqrt(runs)).
* **pass@k** — the share of scenarios that passed in at least one of their k runs.
* **pass^k** — tau2-bench's `pass_hat_k`: per scenario C(c, k) / C(n, k) with n runs and c passes
  (the chance that k runs drawn from its n all pass), averaged over scenarios.
* `ERROR` rollouts (the harness or the setup failed, no verdict) are counted apart (`errors`) and
  left out of the rates; `N/A` ones (a perturbation that cannot apply) too.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, Field

from orchestra.record import RolloutRecord
from orchestra.runs.run_dir import Manifest

__all__ = [
    "AreRate",
    "CapabilitySummary",
    "RunSummary",
    "are_pass_k",
    "are_success_rate",
    "compare",
    "format_compare",
    "format_summary",
    "macro_success_rate",
    "pass_hat_k",
    "setting_differences",
    "summarize",
]

ALL = "all"


def pass_hat_k(n: int, c: int, k: int) -> float:
    """tau2-bench's pass^k for one task: C(c, k) / C(n, k)."""
    if k > n:
        raise ValueError(f"pass^{k} needs at least {k} trials, got {n}")
    return math.comb(c, k) / math.comb(n, k)


class CapabilitySummary(BaseModel):
    capability: str
    scenarios: int = 0
    rollouts: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    not_applicable: int = 0
    runs: int = 0
    pass_at_1: float | None = None
    pass_at_1_stderr: float | None = None
    pass_at_k: float | None = None
    pass_hat_k: dict[int, float] = Field(default_factory=dict)
    mean_sim_seconds: float | None = None
    mean_tokens: float | None = None
    tokens: int = 0
    cost_usd: float = 0.0
    #: Passed rollouts per US dollar spent (None when nothing was spent: offline models).
    success_per_dollar: float | None = None
    #: Rollouts that ran under noise, and what fired in them (`SessionConfig.noise`).
    noise_rollouts: int = 0
    tool_failures: int = 0
    env_events: int = 0


class RunSummary(BaseModel):
    policies: list[str] = Field(default_factory=list)
    capabilities: list[CapabilitySummary] = Field(default_factory=list)


def _key(record: RolloutRecord) -> str:
    return record.scenario_id + (f" [{record.perturbation}]" if record.perturbation else "")


def _capabilities_of(record: RolloutRecord, manifest: Manifest | None) -> list[str]:
    if manifest is not None and record.spec is not None:
        entry = manifest.scenarios.get(record.spec.scenario)
        if entry is not None and entry.capabilities:
            return entry.capabilities
    return ["untagged"]


def _summarize(capability: str, records: list[RolloutRecord]) -> CapabilitySummary:
    s = CapabilitySummary(capability=capability, rollouts=len(records))
    judged = [r for r in records if r.status in ("PASS", "FAIL")]
    s.passed = sum(r.status == "PASS" for r in records)
    s.failed = sum(r.status == "FAIL" for r in records)
    s.errors = sum(r.status == "ERROR" for r in records)
    s.not_applicable = sum(r.status == "N/A" for r in records)
    by_scenario: dict[str, list[RolloutRecord]] = defaultdict(list)
    for r in records:
        by_scenario[_key(r)].append(r)
    s.scenarios = len(by_scenario)
    runs = sorted({r.sample_index for r in records})
    s.runs = len(runs)
    if judged:
        per_run = []
        for index in runs:
            of_run = [r for r in judged if r.sample_index == index]
            if of_run:
                per_run.append(sum(r.status == "PASS" for r in of_run) / len(of_run))
        s.pass_at_1 = sum(per_run) / len(per_run)
        if len(per_run) > 1:
            mean = s.pass_at_1
            s.pass_at_1_stderr = math.sqrt(sum((p - mean) ** 2 for p in per_run) / (len(per_run) - 1)) / math.sqrt(len(per_run))
        outcomes = {key: [r.status == "PASS" for r in rs if r.status in ("PASS", "FAIL")] for key, rs in by_scenario.items()}
        outcomes = {key: o for key, o in outcomes.items() if o}
        s.pass_at_k = sum(any(o) for o in outcomes.values()) / len(outcomes)
        k_max = min(len(o) for o in outcomes.values())
        for k in range(1, k_max + 1):
            s.pass_hat_k[k] = math.fsum(pass_hat_k(len(o), sum(o), k) for o in outcomes.values()) / len(outcomes)
        results = [r.result for r in judged if r.result is not None]
        # fsum: exactly rounded, so the summary is the same whatever order the rollouts finished in
        s.mean_sim_seconds = math.fsum(r.sim_seconds for r in results) / len(results)
        s.mean_tokens = sum(r.prompt_tokens + r.completion_tokens for r in results) / len(results)
    results = [r.result for r in records if r.result is not None]
    s.tokens = sum(r.prompt_tokens + r.completion_tokens for r in results)
    s.cost_usd = math.fsum(r.cost_usd for r in results)
    s.success_per_dollar = s.passed / s.cost_usd if s.cost_usd > 0 else None
    noisy = [r.noise for r in results if r.noise is not None]
    s.noise_rollouts, s.tool_failures, s.env_events = len(noisy), sum(n.tool_failures for n in noisy), sum(n.env_events for n in noisy)
    return s


def summarize(records: Iterable[RolloutRecord], manifest: Manifest | None = None) -> RunSummary:
    """Per capability (sorted), then `all`."""
    records = list(records)
    groups: dict[str, list[RolloutRecord]] = defaultdict(list)
    for r in records:
        for capability in _capabilities_of(r, manifest):
            groups[capability].append(r)
    caps = [_summarize(c, groups[c]) for c in sorted(groups)]
    caps.append(_summarize(ALL, records))
    return RunSummary(policies=sorted({r.policy for r in records}), capabilities=caps)


def _pct(value: float | None, err: float | None = None) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}" + (f"±{100 * err:.1f}" if err is not None else "")


def format_summary(summary: RunSummary) -> str:
    """The terminal table."""
    head = f"{'capability':<14} {'scen':>4} {'runs':>4} {'pass@1 %':>11} {'pass@k %':>8} {'pass^k %':>8} {'err':>4} {'sim s':>8} {'tokens':>10} {'cost $':>9} {'pass/$':>8}"
    lines = [head, "-" * len(head)]
    for c in summary.capabilities:
        hat = c.pass_hat_k.get(c.runs) if c.runs else None
        lines.append(
            f"{c.capability:<14} {c.scenarios:>4} {c.runs:>4} {_pct(c.pass_at_1, c.pass_at_1_stderr):>11} {_pct(c.pass_at_k):>8} {_pct(hat):>8} "
            f"{c.errors:>4} {(f'{c.mean_sim_seconds:.1f}' if c.mean_sim_seconds is not None else '-'):>8} {c.tokens:>10} "
            f"{c.cost_usd:>9.4f} {(f'{c.success_per_dollar:.1f}' if c.success_per_dollar is not None else '-'):>8}"
        )
    return "\n".join(lines)


# ------------------------------------------------------------------ two runs side by side


def compare(a: list[RolloutRecord], b: list[RolloutRecord], manifest_a: Manifest | None = None, manifest_b: Manifest | None = None) -> dict[str, Any]:
    """Per capability deltas of pass@1 and per scenario flips (its pass rate over runs changed),
    over the scenarios both runs judged only (`overlap`: how many; 0 — nothing to compare — is said,
    never printed as a +100 delta); and every setting in which the two runs differ (`settings`)."""

    def rates(records: list[RolloutRecord]) -> Mapping[str, tuple[int, int]]:
        out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for r in records:
            if r.status in ("PASS", "FAIL"):
                out[_key(r)][0] += r.status == "PASS"
                out[_key(r)][1] += 1
        return {k: (v[0], v[1]) for k, v in out.items()}

    ra, rb = rates(a), rates(b)
    common = set(ra) & set(rb)
    sa, sb = summarize([r for r in a if _key(r) in common], manifest_a), summarize([r for r in b if _key(r) in common], manifest_b)
    caps_b = {c.capability: c for c in sb.capabilities}
    deltas = []
    for ca in sa.capabilities if common else []:
        cb = caps_b.get(ca.capability)
        if cb is None:
            continue
        delta = None if ca.pass_at_1 is None or cb.pass_at_1 is None else cb.pass_at_1 - ca.pass_at_1
        deltas.append({"capability": ca.capability, "a": ca.pass_at_1, "b": cb.pass_at_1, "delta": delta, "errors_a": ca.errors, "errors_b": cb.errors})
    flips = []
    for key in sorted(common):
        (pa, na), (pb, nb) = ra[key], rb[key]
        if pa / na != pb / nb:
            flips.append({"scenario": key, "a": f"{pa}/{na}", "b": f"{pb}/{nb}", "direction": "better" if pb / nb > pa / na else "worse"})
    only = {"a": sorted(set(ra) - set(rb)), "b": sorted(set(rb) - set(ra))}
    # ERROR rollouts are left out of the rates: name their scenarios, or a run whose server died looks unchanged
    errors = {side: sorted({_key(r) for r in records if r.status == "ERROR"}) for side, records in (("a", a), ("b", b))}
    return {
        "policies": {"a": sorted({r.policy for r in a}), "b": sorted({r.policy for r in b})},
        "overlap": len(common),
        "settings": setting_differences(manifest_a, manifest_b),
        "capabilities": deltas,
        "flips": flips,
        "only_in": only,
        "errors": errors,
    }


def setting_differences(a: Manifest | None, b: Manifest | None) -> list[dict[str, Any]]:
    """Every setting two runs' manifests differ in (`path`, `a`, `b`; values as JSON text): the
    configuration (clock, judge, models, scaffolds, noise, ...), the models called, the runs per
    scenario, orchestra's version. A run without a manifest has no settings to compare (empty)."""
    if a is None or b is None:
        return []

    def settings(m: Manifest) -> dict[str, Any]:
        configuration: Any = m.configurations[0] if len(m.configurations) == 1 else m.configurations
        return {"configuration": configuration, "models": m.models, "runs": m.runs, "orchestra_version": m.orchestra_version}

    fa, fb = _flatten(settings(a)), _flatten(settings(b))
    missing = "(not set)"
    return [
        {"path": path, "a": fa.get(path, missing), "b": fb.get(path, missing)}
        for path in sorted(set(fa) | set(fb))
        if fa.get(path, missing) != fb.get(path, missing)
    ]


def _flatten(value: Any, path: str = "") -> dict[str, str]:
    """`value` as {dotted path: its JSON text}: dicts and lists of dicts are walked, other values are leaves."""
    if isinstance(value, dict) and value:
        out: dict[str, str] = {}
        for key in value:
            out.update(_flatten(value[key], f"{path}.{key}" if path else str(key)))
        return out
    if isinstance(value, list) and value and any(isinstance(v, dict | list) for v in value):
        out = {}
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{path}[{i}]"))
        return out
    return {path: json.dumps(value, sort_keys=True, default=str)}


def format_compare(result: dict[str, Any], name_a: str, name_b: str) -> str:
    lines = [f"A = {name_a} ({', '.join(result['policies']['a'])})", f"B = {name_b} ({', '.join(result['policies']['b'])})"]
    settings = result.get("settings") or []
    if settings:
        lines.append(f"settings that differ ({len(settings)}):")
        lines += [f"  {s['path']}: {s['a']} (A), {s['b']} (B)" for s in settings]
    lines.append("")
    if not result.get("overlap", 1):
        lines.append("no scenario in common (judged in both runs): nothing to compare")
    else:
        lines.append(f"over the {result['overlap']} scenario(s) both runs judged:")
        lines.append(f"{'capability':<14} {'A pass@1 %':>10} {'B pass@1 %':>10} {'delta':>7} {'A err':>5} {'B err':>5}")
        for d in result["capabilities"]:
            delta = "-" if d["delta"] is None else f"{100 * d['delta']:+.1f}"
            lines.append(f"{d['capability']:<14} {_pct(d['a']):>10} {_pct(d['b']):>10} {delta:>7} {d['errors_a']:>5} {d['errors_b']:>5}")
        lines.append("")
        if result["flips"]:
            lines.append(f"{len(result['flips'])} scenario(s) changed (passes/runs):")
            lines += [f"  {f['direction']:<6} {f['scenario']:<44} {f['a']} -> {f['b']}" for f in result["flips"]]
        else:
            lines.append("no scenario changed")
    for side in ("a", "b"):
        if result["only_in"][side]:
            lines.append(f"only in {side.upper()} (not compared): {', '.join(result['only_in'][side])}")
    for side in ("a", "b"):
        if result.get("errors", {}).get(side):
            lines.append(f"ERROR in {side.upper()} (left out of the rates): {', '.join(result['errors'][side])}")
    return "\n".join(lines)


# ------------------------------------------------------------------ ARE's report formulas (Gaia2)


class AreRate(BaseModel):
    """A success rate as ARE's report computes it (`benchmark/report_stats.py`), in [0, 1]."""

    #: Mean over the judged rollouts (ARE's `success_rate`: exceptions are left out, not failures).
    mean: float | None = None
    #: Standard deviation (ddof 1) of the per-run means; 0 with one run (ARE's `success_rate_std`).
    std: float = 0.0
    #: `std / sqrt(runs)` (ARE's `success_rate_sem`, the ± of its report).
    sem: float = 0.0
    #: The per-run means, by run index.
    per_run: dict[int, float] = Field(default_factory=dict)


def _spread(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return 0.0, 0.0
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    return std, std / math.sqrt(len(values))


def are_success_rate(records: Iterable[RolloutRecord]) -> AreRate:
    """ARE's per-capability success rate: the mean over every judged rollout, ± the standard error
    of the per-run means (`_calculate_success_rate_stats`). `ERROR` rollouts are not judged."""
    judged = [r for r in records if r.status in ("PASS", "FAIL")]
    if not judged:
        return AreRate()
    per_run: dict[int, list[bool]] = defaultdict(list)
    for r in judged:
        per_run[r.sample_index].append(r.status == "PASS")
    means = {i: sum(v) / len(v) for i, v in sorted(per_run.items())}
    std, sem = _spread(list(means.values()))
    return AreRate(mean=sum(r.status == "PASS" for r in judged) / len(judged), std=std, sem=sem, per_run=means)


def are_pass_k(records: Iterable[RolloutRecord]) -> tuple[float | None, float | None]:
    """ARE's Pass@k and Pass^k (`_calculate_pass_at_k_stats`): the share of scenarios with at least
    one / with only passing judged runs, over every scenario (one whose runs all erred counts as
    neither). None without scenarios."""
    by_scenario: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        outcomes = by_scenario[_key(r)]
        if r.status in ("PASS", "FAIL"):
            outcomes.append(r.status == "PASS")
    if not by_scenario:
        return None, None
    n = len(by_scenario)
    return sum(any(o) for o in by_scenario.values()) / n, sum(bool(o) and all(o) for o in by_scenario.values()) / n


def macro_success_rate(groups: Mapping[str, Iterable[RolloutRecord]]) -> AreRate:
    """Gaia2's overall score: each group (capability) weighs the same — ARE's macro success rate,
    the mean of the groups' rates, ± the standard error over runs of the per-run macro means
    (`_calculate_cross_run_stats(..., "macro")`)."""
    rates = {name: are_success_rate(records) for name, records in groups.items()}
    if all(r.mean is None for r in rates.values()):
        return AreRate()
    present = [r.mean or 0.0 for r in rates.values()]  # ARE: a group with no judged rollout counts 0
    runs = sorted({i for r in rates.values() for i in r.per_run})
    per_run = {}
    for i in runs:
        values = [r.per_run[i] for r in rates.values() if i in r.per_run]
        per_run[i] = sum(values) / len(values)
    std, sem = _spread(list(per_run.values()))
    return AreRate(mean=sum(present) / len(present), std=std, sem=sem, per_run=per_run)
