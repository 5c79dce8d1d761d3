"""Gaia2's seven-column table: pass@1 (ARE's formulas), pass@k, pass^k, simulated time, tokens and
cost per capability, and Gaia2's score (the seven capabilities' pass@1, equal weight).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from orchestra.gaia2.sources import MINI
from orchestra.record import RolloutRecord
from orchestra.runs.summary import AreRate, are_pass_k, are_success_rate, macro_success_rate

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
