"""OpenEnv's own client and `openenv validate` against `orchestra serve` (issue 27's OpenEnv acceptance).

OpenEnv (the `openenv` package, 0.10) lives in a venv of its own, `.venv-openenv` (hash-locked:
`requirements-openenv-lock.txt`; its pins — huggingface-hub >= 1, fastmcp 3 — clash with ARE's), located by
`ORCHESTRA_OPENENV_VENV`. Without it these tests skip, except under CI=true (then they fail). Nothing here
imports OpenEnv: `tests/serve/openenv_side/play.py` runs in that venv and reaches the server only over the wire,
with `openenv.GenericEnvClient` — which speaks only the WebSocket `/ws` — or plain HTTP (`/reset`, `/step`, `/state`).

One server (`orchestra serve --port 0`, a subprocess) for the module; one `play.py --plan` run plays every
episode (the client's import costs seconds); `openenv validate URL --json` checks the routes it probes.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SIDE = Path(__file__).parent / "openenv_side"
VENV = Path(os.environ.get("ORCHESTRA_OPENENV_VENV", REPO / ".venv-openenv"))

#: Bundled scenarios of different capabilities, a Time one and a two-turn one among them; the oracle passes each.
ORACLE_SCENARIOS = ["starter_adaptability_reply", "univ_02_time_cab_in_4min", "starter_multiturn_followup"]
#: Played by its task index (the task API's `POST /orchestra/task` names it; reset takes `split` + `index`).
BY_INDEX = "univ_02_search_order_status"
WRONG_SCENARIO = "univ_02_time_cab_in_4min"

pytestmark = pytest.mark.slow


def _venv_bin(name: str) -> Path:
    path = VENV / "bin" / name
    if not path.exists():
        message = (
            f"no OpenEnv venv at {VENV} (build it: uv venv -p python3.11 {VENV} && "
            f"uv pip sync --require-hashes -p {VENV}/bin/python requirements-openenv-lock.txt; or set ORCHESTRA_OPENENV_VENV)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="module")
def openenv_python() -> Path:
    return _venv_bin("python")


class Served:
    """A running `orchestra serve` subprocess and what it printed on stderr."""

    def __init__(self, proc: subprocess.Popen[str], url: str, lines: list[str]) -> None:
        self.proc, self.url, self.lines = proc, url, lines
        self.first_health: str = ""

    def stderr(self) -> str:
        return "".join(self.lines[-200:])

    def get(self, path: str) -> tuple[int, Any]:
        return self._call(urllib.request.Request(self.url + path))

    def post(self, path: str, body: Any) -> tuple[int, Any]:
        data = json.dumps(body).encode()
        return self._call(urllib.request.Request(self.url + path, data=data, headers={"Content-Type": "application/json"}, method="POST"))

    @staticmethod
    def _call(request: urllib.request.Request) -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(request, timeout=60) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            text = e.read().decode(errors="replace")
            try:
                return e.code, json.loads(text)
            except ValueError:
                return e.code, text


def _health_until_up(served: Served, seconds: float = 60.0) -> str:
    """GET /health right away, then again until it answers; what the first try got."""
    first, deadline = "", time.monotonic() + seconds
    while True:
        try:
            status, body = served.get("/health")
            return first or f"{status} {body}"
        except (urllib.error.URLError, ConnectionError) as exc:
            first = first or f"refused: {exc}"
            if time.monotonic() > deadline or served.proc.poll() is not None:
                pytest.fail(f"orchestra serve never answered GET /health ({first}):\n{served.stderr()}")
            time.sleep(0.2)


@contextlib.contextmanager
def _serve(out: Path, *extra: str) -> Iterator[Served]:
    """`orchestra serve --port 0 --out OUT *extra` (this checkout's orchestra) until the block ends, then SIGINT."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    env.setdefault("HF_HUB_OFFLINE", "1")
    orchestra = Path(sys.executable).parent / "orchestra"
    proc = subprocess.Popen(
        [str(orchestra), "serve", "--port", "0", "--out", str(out), *extra], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    lines: list[str] = []
    ready = threading.Event()

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "listening on http://" in line:
                ready.set()
        ready.set()

    threading.Thread(target=drain, daemon=True).start()
    ready.wait(180)
    urls = [line.split("listening on ", 1)[1].strip() for line in lines if "listening on http://" in line]
    if not urls or proc.poll() is not None:
        proc.kill()
        proc.wait(10)
        pytest.fail(f"orchestra serve did not start (exit {proc.returncode}):\n{''.join(lines)[-4000:]}")
    served = Served(proc, urls[0].rstrip("/"), lines)
    # The line promises a server that accepts connections; the first request tells (test_listening_means_ready).
    served.first_health = _health_until_up(served)
    try:
        yield served
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with _serve(tmp_path_factory.mktemp("serve-out")) as served:
        yield served


@pytest.fixture(scope="module")
def tasks(server: Served) -> list[dict[str, Any]]:
    status, body = server.post("/orchestra/tasks", {"split": "bundled"})
    assert status == 200, f"POST /orchestra/tasks -> {status} {body}"
    return body["tasks"]


@pytest.fixture(scope="module")
def episodes(openenv_python: Path, server: Served, tasks: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every episode, played by OpenEnv's client in one play.py run, by name."""
    [index] = [t["index"] for t in tasks if t["scenario_id"] == BY_INDEX]
    plan = {
        **{f"oracle:{s}": {"scenario": f"bundled/{s}"} for s in ORACLE_SCENARIOS},
        "after_done": {"scenario": f"bundled/{ORACLE_SCENARIOS[0]}", "after_done_step": True},
        "wrong": {"scenario": f"bundled/{WRONG_SCENARIO}", "policy": "wrong"},
        "by_index": {"split": "bundled", "index": index},
        "http": {"scenario": f"bundled/{ORACLE_SCENARIOS[0]}", "http": True, "after_done_step": True},
    }
    path = tmp_path_factory.mktemp("plan") / "plan.json"
    path.write_text(json.dumps(list(plan.values())))
    done = subprocess.run([str(openenv_python), str(SIDE / "play.py"), server.url, "--plan", str(path)], capture_output=True, text=True, timeout=900)
    assert done.stdout.strip(), f"play.py printed nothing (exit {done.returncode}):\n{done.stderr[-4000:]}\n--- server:\n{server.stderr()}"
    results = json.loads(done.stdout)
    assert done.returncode == 0, f"play.py exit {done.returncode}: {json.dumps(results)[:3000]}\n{done.stderr[-3000:]}"
    return dict(zip(plan, results, strict=True))


def _brief(result: dict[str, Any]) -> str:
    keep = ("transport", "scenario", "policy", "steps", "done", "reward", "success", "state", "after_done_step")
    return json.dumps({**{k: result.get(k) for k in keep}, "rationale": (result.get("metadata") or {}).get("rationale")})[:2000]


@pytest.mark.parametrize("scenario", ORACLE_SCENARIOS)
def test_openenv_client_plays_the_oracle_to_a_pass(episodes: dict[str, dict[str, Any]], scenario: str) -> None:
    r = episodes[f"oracle:{scenario}"]
    assert r["done"] and r["reward"] == 1.0 and r["success"] is True, _brief(r)
    assert r["first_messages"] >= 2 and r["first_tools"] > 0, "reset's observation is the policy's first request (messages, tools)"
    assert {"session_id", "messages", "tools"} <= set(r["first_observation_keys"])
    assert all(not s["done"] for s in r["step_results"][:-1]) and r["step_results"][-1]["done"]
    assert r["metadata"]["scenario_id"] == scenario
    assert r["state"]["episode_id"] == r["session_id"]
    assert r["state"]["step_count"] == r["steps"] and r["state"]["done"] is True


def test_a_wrong_policy_fails(episodes: dict[str, dict[str, Any]]) -> None:
    r = episodes["wrong"]
    assert r["done"] and r["reward"] == 0.0 and r["success"] is False, _brief(r)


def test_reset_by_task_index(episodes: dict[str, dict[str, Any]], tasks: list[dict[str, Any]]) -> None:
    r = episodes["by_index"]
    [task] = [t for t in tasks if t["scenario_id"] == BY_INDEX]
    assert r["task"] == {"status": 200, "body": {"task": task}}
    assert r["metadata"]["scenario_id"] == BY_INDEX
    assert r["done"] and r["reward"] == 1.0, _brief(r)


def test_http_routes_play_the_same_episode(episodes: dict[str, dict[str, Any]]) -> None:
    """`POST /reset` + `POST /step` (with `session_id`): the same verdict and the same event log as over the WebSocket."""
    ws, http = episodes[f"oracle:{ORACLE_SCENARIOS[0]}"], episodes["http"]
    assert http["done"] and http["reward"] == 1.0, _brief(http)
    assert http["steps"] == ws["steps"]
    assert http["metadata"]["event_log_sha256"] == ws["metadata"]["event_log_sha256"]
    assert http["state"]["episode_id"] == http["session_id"] and http["state"]["done"] is True


def test_a_step_after_the_end_is_an_error(episodes: dict[str, dict[str, Any]]) -> None:
    ws, http = episodes["after_done"]["after_done_step"], episodes["http"]["after_done_step"]
    # OpenEnv's client raises a {"type": "error"} frame as RuntimeError("Server error: ... (code: ...)"); the socket lives on.
    assert ws.startswith("Server error:") and "state after: done=True" in ws, ws
    assert http.startswith("409 "), http


def test_task_api_in_openenv_shapes(server: Served, tasks: list[dict[str, Any]]) -> None:
    assert server.get("/list_environments") == (200, ["orchestra"])
    status, splits = server.get("/orchestra/splits")
    assert status == 200 and isinstance(splits, list) and {"name": "bundled", "type": "test"} in splits
    assert [t["index"] for t in tasks] == list(range(len(tasks))) and len(tasks) > 40
    assert server.post("/orchestra/num_tasks", {"split": "bundled"}) == (200, {"num_tasks": len(tasks)})
    assert server.post("/orchestra/task", {"split": "bundled", "index": 3}) == (200, {"task": tasks[3]})
    assert server.post("/orchestra/task_range", {"split": "bundled", "start": 2, "stop": 5}) == (200, {"tasks": tasks[2:5]})
    assert server.post("/orchestra/task", {"split": "bundled", "index": len(tasks)})[0] == 400
    assert server.get("/nosuchenv/splits")[0] == 404


def test_openenv_validate_passes(openenv_python: Path, server: Served) -> None:
    openenv = _venv_bin("openenv")
    done = subprocess.run([str(openenv), "validate", server.url, "--json"], capture_output=True, text=True, timeout=300)
    report = json.loads(done.stdout)
    failed = [c for c in report["criteria"] if not c["passed"]]
    assert not failed and report["passed"] and done.returncode == 0, json.dumps(failed, indent=1)
    assert {c["id"] for c in report["criteria"]} == {
        "openapi_version_available",
        "health_endpoint",
        "metadata_endpoint",
        "schema_endpoint",
        "mcp_endpoint",
        "mode_endpoint_consistency",
    }
    assert report["mode"] == "simulation"


def test_the_server_kept_serving(server: Served, episodes: dict[str, dict[str, Any]]) -> None:
    status, health = server.get("/health")
    assert status == 200 and health["status"] == "healthy", health
    assert server.proc.poll() is None
    assert "Traceback" not in server.stderr(), server.stderr()


def test_listening_means_ready(server: Served) -> None:
    """`orchestra serve: listening on URL` on stderr means the port accepts connections (the contract: printed once ready)."""
    assert server.first_health.startswith("200 "), f"the first GET /health right after the line: {server.first_health}"


def test_api_key(openenv_python: Path, tmp_path: Path) -> None:
    """With --api-key, OpenEnv's client passes it as a header (`headers=`) and plays; without it the socket is refused."""
    key = "k-test-openenv"
    play = [str(openenv_python), str(SIDE / "play.py")]
    with _serve(tmp_path / "out", "--api-key", key) as served:
        episode = ["--scenario", f"bundled/{BY_INDEX}"]
        done = subprocess.run([*play, served.url, *episode, "--api-key", key], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        r = json.loads(done.stdout)
        assert r["done"] and r["reward"] == 1.0, _brief(r)
        refused = subprocess.run([*play, served.url, *episode], capture_output=True, text=True, timeout=300)
        assert refused.returncode != 0 and "403" in refused.stderr, refused.stderr[-3000:]
        assert served.get("/health")[0] == 200
