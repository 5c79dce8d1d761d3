"""verifiers 0.4 (`vf-eval`, the v1 API) evaluates bundled scenarios through `orchestra serve`.

`vf-eval` runs in a venv of its own (`.venv-vf`, requirements-vf-lock.txt: verifiers 0.4 pins mcp 2 and
openai 2, which ARE's pins exclude) and reaches orchestra only over HTTP, through the thin client
(`clients/orchestra-client`, httpx + pydantic) and its taskset id `orchestra-gaia2` (`clients/orchestra-gaia2`),
both put on vf-eval's PYTHONPATH from this checkout. Each rollout is one step-mode session: verifiers'
own interception server carries every model turn (header `X-Orchestra-Session`) to the server's
`/v1/chat/completions`, where the session's model answers; the completion goes back through `/step`; the
reward is ARE's verdict from `/finish`.

Asserted, on two bundled scenarios (a calendar write and a Time deadline): `-m orchestra/oracle` (the
scenario's oracle actions) scores 1.0 on each, `-m orchestra/scripted:vf_side/wrong_policy.json` (tells
the user it is done without doing anything) 0.0 on each; each rollout's turns went through verifiers'
interception (the trace's model calls) and orchestra charged its clock.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("ORCHESTRA_VF_VENV", REPO / ".venv-vf"))
CLIENT_PATHS = [REPO / "clients" / "orchestra-client" / "src", REPO / "clients" / "orchestra-gaia2" / "src"]
WRONG_POLICY = Path(__file__).parent / "vf_side" / "wrong_policy.json"
SCENARIOS = ["bundled/starter_execution_calendar", "bundled/starter_time_deadline"]
OFFLINE = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}


@pytest.fixture(scope="module")
def vf_eval() -> Path:
    exe = VENV / "bin" / "vf-eval"
    if not exe.exists():
        message = f"no verifiers 0.4 venv at {VENV} (ORCHESTRA_VF_VENV; build it from requirements-vf-lock.txt, docs in /work/serve-notes/verifiers.md)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return exe


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    orchestra = Path(sys.executable).parent / "orchestra"
    with log.open("w") as sink:
        proc = subprocess.Popen([orchestra, "serve", "--port", "0"], stdout=sink, stderr=subprocess.STDOUT, env={**os.environ, **OFFLINE})
    try:
        deadline = time.monotonic() + 60
        while not (found := re.search(r"listening on (http://\S+)", log.read_text())):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"orchestra serve did not start (exit {proc.poll()}):\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield found.group(1).rstrip("/")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _start(vf_eval: Path, url: str, model: str, out: Path) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        **OFFLINE,
        "PYTHONPATH": os.pathsep.join(map(str, CLIENT_PATHS)),
        "NO_COLOR": "1",
    }
    env.pop("VIRTUAL_ENV", None)
    argv = [
        vf_eval, "orchestra-gaia2",
        "-m", model,
        "--client.base-url", f"{url}/v1",
        "--env.taskset.server", url,
        "--env.taskset.scenarios", json.dumps(SCENARIOS),
        "--no-push", "--no-rich",
        "-o", out,
        "--run.dir", "run",
    ]  # fmt: skip
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=out.parent)


def _finish(proc: subprocess.Popen[str], what: str) -> str:
    try:
        output, _ = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        output, _ = proc.communicate()
        pytest.fail(f"vf-eval ({what}) ran past 300 s:\n{output[-4000:]}")
    assert proc.returncode == 0, f"vf-eval ({what}) exited {proc.returncode}:\n{output[-4000:]}"
    return output


def _traces(out: Path) -> dict[str, dict]:
    """Each scenario's one trace (an episode of the single-agent env carries one)."""
    by_scenario: dict[str, dict] = {}
    for line in (out / "run" / "traces.jsonl").read_text().splitlines():
        episode = json.loads(line)
        [trace] = episode["traces"]
        by_scenario[trace["task"]["data"]["scenario"]] = trace
    return by_scenario


def test_vf_eval_scores_oracle_1_and_a_wrong_policy_0(vf_eval: Path, server: str, tmp_path: Path) -> None:
    runs = {
        "orchestra/oracle": (tmp_path / "oracle" / "out", 1.0),
        f"orchestra/scripted:{WRONG_POLICY}": (tmp_path / "wrong" / "out", 0.0),
    }
    procs = {}
    for model, (out, _) in runs.items():
        out.parent.mkdir()
        procs[model] = _start(vf_eval, server, model, out)  # both at once: vf-eval's imports dominate
    outputs = {model: _finish(proc, model) for model, proc in procs.items()}

    for model, (out, expected) in runs.items():
        traces = _traces(out)
        assert sorted(traces) == sorted(SCENARIOS), outputs[model][-3000:]
        for scenario, trace in traces.items():
            where = f"{model} on {scenario}: {trace['errors']}\n{outputs[model][-3000:]}"
            assert trace["ok"] and not trace["errors"], where
            assert trace["rewards"]["gaia2"]["score"] == expected, where
            assert trace["metrics"]["success"] == expected, where
            played = trace["info"]["orchestra"]
            assert played["reward"] == expected and played["policy"] == f"tool_calling:{model}", where
            assert played["sim_seconds"] > 0, where  # the clock was charged from the completions
            # Every orchestra turn was a model call through verifiers' interception (recorded on the trace).
            assert len(trace["calls"]) == trace["metrics"]["orchestra_turns"] >= 1, where
        assert re.search(r"reward", outputs[model]), outputs[model][-2000:]
