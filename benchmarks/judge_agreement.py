"""Judge agreement on the labelled set (tests/support/judge_labelled_set.py): the table in docs/judges.md.

    .venv/bin/python benchmarks/judge_agreement.py            # prints the markdown table

Rows:
* `scripted` — ARE's scripted judge (the default): free text is never checked;
* `strict` — all items, then the hand-written development paraphrases, then the held-out ones;
* `llm` with a *scripted* judge model that replies with each item's label (a perfect judge model,
  `orchestra-judge/FILE`): what ARE's LLM-judge pipeline makes of a judge model that is always
  right; then the same with `--no-judge-are-bool-bug` (the judge model's True/False kept verbatim).
  Every number is measured by judging each text with the judge's own per-tool judge.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from orchestra.are.judges import build_judge  # noqa: E402
from orchestra.judging.settings import JudgeConfig  # noqa: E402
from support.judge_labelled_set import Agreement, agreement, judge_items, judge_script_for, labelled_set  # noqa: E402


def row(a: Agreement, note: str = "") -> str:
    para = f"{a.paraphrase_accepted}/{a.paraphrase_total}" if a.paraphrase_total else "-"
    return (
        f"| {a.judge} | {a.n} | {a.agree} ({100 * a.rate:.1f}%) | {a.false_accepts}/{a.wrong_total} | {a.false_rejects}/{a.correct_total} | {para} | {note} |"
    )


def main() -> int:
    targets, items = labelled_set()
    kinds = Counter(i.kind for i in items)
    scenarios = sorted({t.scenario_id for t in targets})
    print(
        f"labelled set: {len(items)} texts for {len(targets)} free-text arguments of {len(scenarios)} bundled scenarios; "
        + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
    )
    print()
    print("| judge | texts | agree with label | false accepts / wrong texts | false rejects / correct texts | hand-written paraphrases accepted | note |")
    print("|---|---|---|---|---|---|---|")
    scripted = [True] * len(items)  # ARE's scripted judge skips every llm_checker argument
    print(row(agreement("scripted", items, scripted), "skips free text: accepts every text"))
    strict_judge = build_judge(JudgeConfig(mode="strict"))
    strict = judge_items(strict_judge, items)
    print(row(agreement("strict", items, strict)))
    for source, note in (("hand", "development paraphrases/wrongs only"), ("heldout", "held-out paraphrases/wrongs only")):
        sub = [(i, v) for i, v in zip(items, strict) if i.source == source]
        print(row(agreement(f"strict ({source})", [i for i, _ in sub], [v for _, v in sub]), note))
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "labels-judge.json"
        script.write_text(json.dumps(judge_script_for(items)))
        llm_judge = build_judge(JudgeConfig(mode="llm", model=f"orchestra-judge/{script}", use_cache=False))
        llm = judge_items(llm_judge, items)
        a = agreement("llm (scripted perfect judge model)", items, llm)
        print(row(a, "ARE's LLM judge as are-benchmark builds it"))
        # The opt-out (--no-judge-are-bool-bug): the same judge, the judge model's True/False kept
        # verbatim (ARE's LiteLLMEngine lowers them, see docs/judges.md).
        verbatim = build_judge(JudgeConfig(mode="llm", model=f"orchestra-judge/{script}", use_cache=False, are_bool_bug=False))
        llm_fixed = judge_items(verbatim, items)
        print(row(agreement("llm --no-judge-are-bool-bug (scripted perfect judge model)", items, llm_fixed), "True/False kept verbatim"))
    by_tool: Counter[tuple[str, str, bool]] = Counter()
    for i, v in zip(items, llm):
        if i.label == "correct" and not v:
            by_tool[(i.target.tool, i.kind, v)] += 1
    if by_tool:
        print("\nllm false rejects by tool: " + ", ".join(f"{t} ({k}) {n}" for (t, k, _), n in sorted(by_tool.items())))
    disagreements = [(i, v) for i, v in zip(items, strict) if (i.label == "correct") != v]
    for i, _ in disagreements:
        print(f"strict disagrees: {i.target.scenario_id}/{i.target.event_id}.{i.target.arg} [{i.kind}] label={i.label}: {i.text[:120]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
