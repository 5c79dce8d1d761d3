"""`vf-eval are-gaia2` offline against the local llama.cpp server (plumbing, not skill).

The 0.5B model's answers are not asserted — only that verifiers ran two scenarios through orchestra
and wrote their results: a reward per rollout, and the completions' usage on the clock. The two are
bundled starters trimmed to three apps (`trimmed_scenario`), in a folder given as the source: the
six-app starters' prompt costs the 0.5B model about 90 s of CPU per rollout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.helpers import trimmed_scenario

pytest.importorskip("verifiers")


def test_vf_eval_are_gaia2_runs_two_trimmed_starters_against_the_local_server(local_server, tmp_path):
    vf_eval = shutil.which("vf-eval", path=str(Path(sys.executable).parent))
    assert vf_eval is not None, "vf-eval is not installed next to this interpreter (python3.11 dev.py setup)"
    # ReAct: no native tool schemas on top of the tool list in the system prompt, so the prompt fits the 8k context
    folder = tmp_path / "scenarios"
    for name in ("starter_search_lookup", "starter_ambiguity_clarify"):
        trimmed_scenario(name, folder)
    # One turn: from the second on, verifiers sends the earlier assistant message with `tool_calls: null`,
    # which llama-cpp-python's server rejects (docs/local-models.md); the multi-turn path is tested
    # against the mock server (tests/rl/test_rl_servers.py).
    args = {"source": str(folder), "capability": "mini", "max_turns": 1, "scaffold": "react"}  # mini: every file of the folder
    cmd = [
        vf_eval,
        "are-gaia2",
        "-m",
        local_server.alias,
        "-b",
        local_server.api_base,
        "-k",
        "LOCAL_LLM_KEY",
        "-n",
        "2",
        "-r",
        "1",
        "-c",
        "1",
        "-t",
        "256",
        "-T",
        "0",
        "-a",
        json.dumps(args),
        "-s",
        "-C",
        "orchestra",
        "-o",
        str(tmp_path / "out"),
        "-d",
        "--disable-env-server",
        "--max-retries",
        "0",
    ]
    env = {**os.environ, "LOCAL_LLM_KEY": "none", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1500, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = sorted((tmp_path / "out").rglob("results.jsonl"))
    assert results, f"no results.jsonl under {tmp_path}:\n{done.stdout[-2000:]}"
    rows = [json.loads(line) for line in results[-1].read_text().splitlines() if line.strip()]
    assert len(rows) == 2
    for row in rows:
        assert isinstance(row["reward"], (int, float)) and 0.0 <= row["reward"] <= 1.0
        info = row["orchestra"]
        # verifiers writes a failed model call (a ModelError from the server) as the row's `error`;
        # orchestra's own failures (the scenario, the judge) are the record's
        assert not row.get("error") and info["error"] is None, (row.get("error"), info["error"])
        main = info["ledgers"][0]
        assert main["steps"] >= 1 and main["prompt_tokens"] > 0 and main["sim_seconds"] > 0 and info["sim_seconds"] > 0
