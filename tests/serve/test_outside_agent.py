"""Bring your own agent: an agent that no one here wrote plays bundled scenarios through `orchestra serve`.

The agent is built with the OpenAI Agents SDK (`openai-agents`, pinned in requirements-agent.in) and
runs in a venv of its own (`.venv-agent`, from requirements-agent-lock.txt; `ORCHESTRA_AGENT_VENV`
names another) that has no orchestra in it: `tests/serve/agent_side/play.py` creates an agent-mode
session, gives the SDK's `Agent` the session's MCP endpoint (`MCPServerStreamableHttp`: the
scenario's tools) and the session's OpenAI-compatible proxy (`OpenAIChatCompletionsModel`), runs it
with `Runner.run` and asks the server for ARE's verdict (`POST /sessions/{id}/finish`).

Asserted, on one `orchestra serve --port 0`:
* the proxy's upstream is orchestra's oracle: PASS on six bundled scenarios, one per capability
  (Execution, Search, Time, Adaptability, Ambiguity) plus a two-turn one; the Time scenario's
  simulated clock passed its three-minute wait (notifications and the clock matter);
* the same agent on a wrong policy (`orchestra/scripted:FILE`) FAILS: the Time scenario's text sent
  at once instead of in three minutes; the calendar scenario answered "done" after one failed call
  (ARE's error comes back as an MCP tool error, which the SDK shows the model);
* a rerun of the Time scenario in a new session has the same event-log hash;
* an SDK run that stops between two turns (a scripted "chatty" policy answers without a tool call) is
  continued with its history, and the two-turn scenario PASSes.

Without the agent venv the test is skipped (`python3.11 dev.py setup` builds it), except under CI
(`CI=true`) or with `ORCHESTRA_REQUIRE_AGENT=1`, where that is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.processes import listening_url, stop

REPO = Path(__file__).resolve().parents[2]
AGENT_SIDE = Path(__file__).parent / "agent_side"
PLAY = AGENT_SIDE / "play.py"
VENV = Path(os.environ.get("ORCHESTRA_AGENT_VENV", REPO / ".venv-agent"))

#: One scenario per capability, and a two-turn one.
ORACLE = [
    "bundled/starter_execution_calendar",  # Execution
    "bundled/starter_search_lookup",  # Search
    "bundled/starter_time_deadline",  # Time: a text due exactly 3 minutes after the request
    "bundled/starter_adaptability_reply",  # Adaptability: an email arrives mid-task (a notification)
    "bundled/starter_ambiguity_clarify",  # Ambiguity
    "bundled/starter_multiturn_followup",  # two turns: the user writes again after the first answer
]
TIME = "bundled/starter_time_deadline"
#: The same agent on a wrong policy (orchestra's scripted model): each must FAIL.
WRONG = [
    ("bundled/starter_time_deadline", AGENT_SIDE / "wrong_time_too_early.json"),  # right text, sent 3 minutes early
    ("bundled/starter_execution_calendar", AGENT_SIDE / "wrong_skip_work.json"),  # a failing call (an MCP tool error), then "done"
]

#: A policy that talks like a chatty model: after answering the first turn it says something without a tool
#: call, which ends the SDK's run while the scenario goes on; play.py runs the agent again with its history
#: and the proxy shows the user's second message. Right actions otherwise (ARE's ids are seeded): PASS, 2 runs.
CHATTY = ("bundled/starter_multiturn_followup", AGENT_SIDE / "chatty_multiturn.json")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def agent_python() -> Path:
    python = VENV / "bin" / "python"
    if not python.exists():
        reason = f"no agent venv at {VENV} (python3.11 dev.py setup builds it from requirements-agent-lock.txt)"
        if os.environ.get("CI") == "true" or os.environ.get("ORCHESTRA_REQUIRE_AGENT") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return python


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`orchestra serve --port 0` in a subprocess; its URL, read from the line it prints when ready."""
    out = tmp_path_factory.mktemp("serve-out")
    orchestra = Path(sys.executable).parent / "orchestra"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    proc = subprocess.Popen([orchestra, "serve", "--port", "0", "--out", out], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    url = listening_url(proc, proc.stderr, what="orchestra serve")
    try:
        yield url
    finally:
        stop(proc)


def _play(agent_python: Path, url: str, plays: list[tuple[str, str]]) -> list[dict]:
    """Run play.py in the agent venv (one process for every session: the SDK's import costs seconds)."""
    args = [str(a) for scenario, model in plays for a in ("--play", scenario, model)]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    started = time.monotonic()
    done = subprocess.run([agent_python, PLAY, url, *args], capture_output=True, text=True, timeout=300, env=env)
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0 and len(results) == len(plays), (
        f"play.py exited {done.returncode} after {time.monotonic() - started:.0f}s\nstdout:\n{done.stdout}\nstderr (tail):\n{done.stderr[-6000:]}"
    )
    return results


def test_an_outside_agent_plays_through_serve(agent_python: Path, server: str) -> None:
    plays = [(s, "orchestra/oracle") for s in ORACLE]
    plays += [(TIME, "orchestra/oracle")]  # the rerun: a new session, the same episode
    plays += [(CHATTY[0], f"orchestra/scripted:{CHATTY[1]}")]
    plays += [(s, f"orchestra/scripted:{f}") for s, f in WRONG]
    results = _play(agent_python, server, plays)
    n = len(ORACLE)
    oracle, rerun, chatty, wrong = results[:n], results[n], results[n + 1], results[n + 2 :]
    table = "\n".join(
        json.dumps({k: r.get(k) for k in ("scenario", "model", "success", "reward", "sim_seconds", "sdk_runs", "sdk_turns", "error")}) for r in results
    )

    for r in oracle:
        assert r["success"] is True and r["reward"] == 1.0, f"{r['scenario']}: the oracle through the SDK should PASS\n{table}"
        assert r["event_log_sha256"], table
    time_run = oracle[ORACLE.index(TIME)]
    assert time_run["sim_seconds"] >= 180, f"the Time scenario's text is due 3 simulated minutes in\n{table}"
    assert rerun["success"] is True and rerun["event_log_sha256"] == time_run["event_log_sha256"], f"a rerun is the same episode\n{table}"
    assert chatty["success"] is True and chatty["sdk_runs"] == 2, f"a run that stopped between turns is continued\n{table}"
    for r in wrong:
        assert r["success"] is False and r["reward"] == 0.0, f"{r['scenario']}: the wrong policy should FAIL\n{table}"
