"""A real MLflow tracking server on loopback: the second trace backend of orchestra's tracing tests.

Why MLflow: its tracking server ingests OTLP/HTTP at ``/v1/traces`` (``mlflow/server/otel_api.py``:
protobuf or JSON, the experiment named by the ``x-mlflow-experiment-id`` header) and reads the GenAI
semantic conventions at ingest (``mlflow/tracing/otel/translation/genai_semconv.py`` maps
``gen_ai.operation.name`` to its span types; ``gen_ai.conversation.id`` becomes the trace's session,
``mlflow.trace.session``). It runs from PyPI alone, offline, as one process with a SQLite file.

MLflow's dependencies clash with ARE's pins, so it lives in a virtual environment of its own,
``.venv-mlflow`` (``dev.py setup`` / ``dev.py test`` build it from ``requirements-mlflow-lock.txt``;
``ORCHESTRA_MLFLOW_VENV`` points elsewhere). Nothing of it is imported here: the server is a
subprocess, and `MLflowServer.traces` reads traces back with MLflow's own Python client
(``mlflow.search_traces``) run by that venv's interpreter, as JSON on its stdout.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from orchestra.errors import OrchestraError
from orchestra_dev.servers import answers_ok, free_port, log_tail, stop_process, wait_for_startup

ROOT = Path(__file__).resolve().parents[2]
#: The MLflow version in requirements-mlflow.in / requirements-mlflow-lock.txt.
MLFLOW_VERSION = "3.17.2"
INSTALL_COMMAND = "python3.11 dev.py setup   # builds .venv-mlflow from requirements-mlflow-lock.txt"
#: The experiment every test writes to (MLflow's default one; the OTLP route needs the header).
EXPERIMENT = "0"

#: MLflow settings that keep it local and quiet.
QUIET_ENV = {"MLFLOW_ENABLE_TELEMETRY": "false", "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true", "MLFLOW_LOGGING_LEVEL": "WARNING"}

#: Run by the venv's interpreter: every trace of the experiment, its spans flattened to JSON.
_QUERY = r"""
import json, sys
import mlflow
mlflow.set_tracking_uri(sys.argv[1])
out = []
for trace in mlflow.search_traces(locations=[sys.argv[2]], return_type="list", max_results=1000):
    spans = [
        {"name": s.name, "span_id": s.span_id, "parent_id": s.parent_id, "trace_id": trace.info.trace_id,
         "span_type": s.span_type, "attributes": dict(s.attributes)}
        for s in trace.data.spans
    ]
    out.append({"trace_id": trace.info.trace_id, "metadata": dict(trace.info.trace_metadata), "spans": spans})
json.dump(out, sys.stdout, default=str)
"""


class MLflowError(OrchestraError):
    """MLflow cannot be used: its venv is missing, or the server did not start or answer."""


def venv_dir() -> Path:
    """Where ``dev.py`` builds MLflow's venv (``ORCHESTRA_MLFLOW_VENV`` overrides)."""
    return Path(os.environ.get("ORCHESTRA_MLFLOW_VENV") or ROOT / ".venv-mlflow")


def mlflow_executable() -> Path | None:
    """The ``mlflow`` command of the MLflow venv, or None when that venv is not installed."""
    path = venv_dir() / ("Scripts/mlflow.exe" if os.name == "nt" else "bin/mlflow")
    return path if path.is_file() else None


def _die_with_parent() -> None:
    """In the child before exec (Linux): SIGTERM it when the test process dies (no server left behind)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class MLflowServer:
    """``mlflow server`` on a free loopback port with a SQLite store in a temporary directory, for a ``with`` block."""

    def __init__(self, *, host: str = "127.0.0.1", startup_timeout: float = 120.0, executable: Path | None = None) -> None:
        self.host = host
        self.startup_timeout = startup_timeout
        self.executable = executable
        self.port: int | None = None
        #: Seconds from process launch to the first ``GET /health`` that answered 200.
        self.startup_seconds: float | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._workdir: tempfile.TemporaryDirectory[str] | None = None
        self._log_path: Path | None = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise MLflowError("MLflowServer has not been started")
        return f"http://{self.host}:{self.port}"

    @property
    def otlp_endpoint(self) -> str:
        """The value for ``OTEL_EXPORTER_OTLP_ENDPOINT`` (the SDK appends ``/v1/traces``)."""
        return self.base_url

    @property
    def otlp_headers(self) -> str:
        """The value for ``OTEL_EXPORTER_OTLP_HEADERS``: the experiment the traces go to."""
        return f"x-mlflow-experiment-id={EXPERIMENT}"

    @property
    def log_tail(self) -> str:
        return log_tail(self._log_path, 6000)

    def create_experiment(self, name: str) -> str:
        """A new experiment (MLflow's REST API), for a test whose traces must not meet the others'; its id."""
        import httpx

        response = httpx.post(f"{self.base_url}/api/2.0/mlflow/experiments/create", json={"name": name}, timeout=30)
        if response.status_code != 200:
            raise MLflowError(f"creating the experiment {name!r} failed: HTTP {response.status_code} {response.text[:500]}")
        return str(response.json()["experiment_id"])

    def traces(self, experiment: str = EXPERIMENT) -> list[dict[str, Any]]:
        """Every trace of the experiment, read with MLflow's Python client from its venv: ``trace_id``,
        ``metadata`` (``mlflow.trace.session`` among them) and ``spans`` (name, ids, span type, attributes)."""
        python = venv_dir() / "bin" / "python"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "MLFLOW_"))}
        env.update(QUIET_ENV)
        done = subprocess.run([str(python), "-c", _QUERY, self.base_url, experiment], capture_output=True, text=True, env=env, timeout=120)
        if done.returncode:
            raise MLflowError(f"mlflow.search_traces failed (exit {done.returncode}): {done.stderr[-3000:]}\n--- server output (tail) ---\n{self.log_tail}")
        return list(json.loads(done.stdout))

    def wait_for_traces(self, count: int, spans: int, timeout: float = 60.0, experiment: str = EXPERIMENT) -> list[dict[str, Any]]:
        """The experiment's traces once `count` traces with `spans` spans in all are stored."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.traces(experiment)
            if len(found) >= count and sum(len(t["spans"]) for t in found) >= spans:
                return found
            if time.monotonic() > deadline:
                raise MLflowError(
                    f"MLflow holds {len(found)} trace(s), {sum(len(t['spans']) for t in found)} span(s) after {timeout:.0f} s, "
                    f"expected {count} and {spans}\n--- server output (tail) ---\n{self.log_tail}"
                )
            time.sleep(0.5)

    def start(self) -> MLflowServer:
        if self._process is not None:
            raise MLflowError("MLflowServer already started")
        executable = self.executable or mlflow_executable()
        if executable is None:
            raise MLflowError(f"MLflow is not installed: no {venv_dir()}/bin/mlflow; install it with: {INSTALL_COMMAND}")
        self.port = free_port(self.host)
        self._workdir = tempfile.TemporaryDirectory(prefix="orchestra-mlflow-")
        workdir = Path(self._workdir.name)
        self._log_path = workdir / "server.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "MLFLOW_"))}
        env.update(QUIET_ENV)
        env["HOME"] = str(workdir)
        command = [
            str(executable), "server", "--host", self.host, "--port", str(self.port), "--workers", "1",
            "--backend-store-uri", f"sqlite:///{workdir / 'mlflow.db'}", "--default-artifact-root", str(workdir / "artifacts"),
        ]  # fmt: skip
        started = time.monotonic()
        with self._log_path.open("wb") as log:
            self._process = subprocess.Popen(
                command, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, close_fds=True,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )  # fmt: skip
        try:
            code = wait_for_startup(self._process, lambda: answers_ok(f"{self.base_url}/health"), deadline=started + self.startup_timeout, interval=0.25)
        except TimeoutError:
            tail = self.log_tail
            self.stop()
            raise MLflowError(
                f"mlflow server did not answer GET {self.base_url}/health within {self.startup_timeout:.0f} s.\n--- server output (tail) ---\n{tail}"
            ) from None
        if code is not None:
            tail = self.log_tail
            self.stop()
            raise MLflowError(f"mlflow server exited with code {code} before answering on {self.base_url}/health.\n--- server output (tail) ---\n{tail}")
        self.startup_seconds = time.monotonic() - started
        return self

    def stop(self) -> None:
        """Terminate the server (and its workers) and remove its working directory. Safe to call twice."""
        process, self._process = self._process, None
        stop_process(process, grace=15)
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None
            self._log_path = None

    def __enter__(self) -> MLflowServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
