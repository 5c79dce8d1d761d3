"""A real trainer on orchestra: TRL's `GRPOTrainer` takes optimizer steps on a Gaia2 scenario, its
rewards from ARE's judge through orchestra, on the CPU.

The trainer runs in its own hash-locked venv (`.venv-trl`: TRL 1.16, transformers 5, torch's CPU
build — their pins clash with ARE's) and reaches orchestra only through its command line
(`orchestra run --token-ids --out DIR`), the way `tests/integration/trainer/grpo_on_orchestra.py`
(and docs/rl.md) shows. The model is a tiny, randomly initialised Qwen2 with Qwen2.5's real
tokenizer (read from the GGUF the local-model tests use); its action space is constrained to a few
candidate answers — the scenario's right one and wrong ones — so a group's rewards differ.

Asserted: two optimizer steps with finite losses; parameters changed; every completion trained on is,
token for token and logprob for logprob, one the model sampled; the clock charged each turn from
those very token counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from orchestra.clock import ClockConfig
from orchestra.judging.facts import extract_facts
from orchestra.judging.mutation import mutate
from orchestra.judging.scenario_names import scenario_gazetteer
from support.helpers import scenario, trimmed_scenario

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).parent / "trainer" / "grpo_on_orchestra.py"
VENV = Path(os.environ.get("ORCHESTRA_TRAINER_VENV", REPO / ".venv-trl"))
STARTER = "starter_search_lookup"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def trainer_python() -> Path:
    python = VENV / "bin" / "python"
    if not python.exists():
        if os.environ.get("ORCHESTRA_REQUIRE_TRAINER") == "1" or os.environ.get("CI") == "true":
            pytest.fail(f"no trainer venv at {VENV} (python3.11 dev.py setup builds it)")
        pytest.skip(f"no trainer venv at {VENV} (python3.11 dev.py setup builds it)")
    return python


def _answers(path: Path) -> list[str]:
    """The scenario's answer to the user, then wrong versions of it (one fact changed each)."""
    data = json.loads(path.read_text())
    [right] = [
        arg["value"]
        for e in data["events"]
        if e.get("event_type") == "AGENT" and (e.get("action") or {}).get("function") == "send_message_to_user"
        for arg in e["action"]["args"]
        if arg["name"] == "content"
    ]
    gazetteer = scenario_gazetteer(json.loads(scenario(STARTER).read_text()))
    wrong = [w for w in (mutate(right, fact) for fact in extract_facts(right, gazetteer)) if w and w != right]
    return [right, *dict.fromkeys(wrong)][:4]


def test_grpo_takes_optimizer_steps_on_judge_rewards(trainer_python: Path, tmp_path: Path) -> None:
    from orchestra_dev.local_llm import assemble_gguf

    gguf = assemble_gguf()
    tokenizer = tmp_path / "tokenizer"
    extract = (
        "import sys; from transformers import AutoTokenizer; AutoTokenizer.from_pretrained(sys.argv[1], gguf_file=sys.argv[2]).save_pretrained(sys.argv[3])"
    )
    subprocess.run([trainer_python, "-c", extract, gguf.parent, gguf.name, tokenizer], check=True, capture_output=True, timeout=600)
    path = trimmed_scenario(STARTER, tmp_path / "scenarios")  # three apps: a short prompt
    candidates = tmp_path / "candidates.json"
    candidates.write_text(json.dumps(_answers(path)))
    orchestra = Path(sys.executable).parent / "orchestra"
    out = tmp_path / "out"
    done = subprocess.run(
        [trainer_python, SCRIPT, "--orchestra", orchestra, "--tokenizer", tokenizer, "--scenario", path, "--candidates", candidates, "--out", out],
        capture_output=True,
        text=True,
        timeout=2400,
        env={**os.environ, "TRL_EXPERIMENTAL_SILENCE": "1", "TOKENIZERS_PARALLELISM": "false"},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads((out / "report.json").read_text())

    assert report["optimizer_steps"] == 2
    assert report["losses"] and all(abs(x) < float("inf") for x in report["losses"])
    assert report["parameters_changed"] > 0, "no group had rewards that differ, or the step changed nothing"
    assert set(report["rewards"]) == {0.0, 1.0}  # the judge said both, through orchestra

    served = {(tuple(s["prompt_ids"]), tuple(s["completion_ids"])): s["logprobs"] for s in report["served"]}
    clock = ClockConfig()
    for episode in report["episodes"]:
        [agent] = episode["trace"]["agents"]
        for turn in agent["turns"]:
            key = (tuple(turn["prompt_token_ids"]), tuple(turn["completion_token_ids"]))
            assert key in served, "a completion trained on that the model never sampled"
            assert turn["per_token_logps"] == served[key]
            assert turn["dt"] == round(clock.model_seconds(len(turn["prompt_token_ids"]), len(turn["completion_token_ids"])), 6)
    assert len(report["episodes"]) == 2 * 4  # two steps, a group of four each
