"""A real Arize Phoenix server on loopback, for the integration test that checks orchestra's traces.

Why this module exists: the tracing plugin is only proven if a real OpenTelemetry backend accepts
its OTLP/HTTP export and shows the same span tree back. Phoenix is that backend: it runs from PyPI
alone, as one local process with a SQLite file, and it has its own REST API to read spans back.

Phoenix's dependencies clash with ARE's pins, so it lives in a virtual environment of its own,
``.venv-phoenix`` (``dev.py setup`` / ``dev.py test`` build it from ``requirements-phoenix-lock.txt``;
``ORCHESTRA_PHOENIX_VENV`` points elsewhere). This module never imports Phoenix: it starts
``phoenix serve`` from that venv as a subprocess and talks to it over HTTP with the standard library.

`PhoenixServer` runs it for the length of a ``with`` block: free loopback ports (HTTP and gRPC), a
temporary ``PHOENIX_WORKING_DIR`` (its database and files), Phoenix's own telemetry and every request
to the public internet switched off, and the server's output in a log file whose tail is in every
start-up error. `PhoenixServer.spans` reads a project's spans through ``GET /v1/projects/{p}/spans``.
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
import urllib.error
import urllib.parse
from pathlib import Path
from types import TracebackType
from typing import Any

from orchestra.errors import OrchestraError
from orchestra_dev.servers import LOOPBACK_OPENER, answers_ok, free_port, log_tail, stop_process, wait_for_startup

ROOT = Path(__file__).resolve().parents[2]
#: The Phoenix version in requirements-phoenix.in / requirements-phoenix-lock.txt.
PHOENIX_VERSION = "20.26.1"
INSTALL_COMMAND = "python3.11 dev.py setup   # builds .venv-phoenix from requirements-phoenix-lock.txt"

#: Phoenix settings that keep it local and quiet: no telemetry pixels, no web fonts or WASM download,
#: no LLM assistant, no MCP server, no SQL echo of its migrations into the log.
QUIET_ENV = {
    "PHOENIX_TELEMETRY_ENABLED": "false",
    "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
    "PHOENIX_ENABLE_MCP_SERVER": "false",
    "PHOENIX_ENABLE_PROMETHEUS": "false",
    "PHOENIX_LOG_MIGRATIONS": "false",
}


class PhoenixError(OrchestraError):
    """Phoenix cannot be used: its venv is missing, or the server did not start or answer."""


class _PortInUse(PhoenixError):
    """The server lost the race for an automatically picked port; `PhoenixServer.start` retries."""


def venv_dir() -> Path:
    """Where ``dev.py`` builds Phoenix's venv (``ORCHESTRA_PHOENIX_VENV`` overrides)."""
    return Path(os.environ.get("ORCHESTRA_PHOENIX_VENV") or ROOT / ".venv-phoenix")


def phoenix_executable() -> Path | None:
    """The ``phoenix`` command of the Phoenix venv, or None when that venv is not installed."""
    path = venv_dir() / ("Scripts/phoenix.exe" if os.name == "nt" else "bin/phoenix")
    return path if path.is_file() else None


def _die_with_parent() -> None:
    """In the child before exec (Linux): SIGTERM it when the test process dies, so a pytest killed
    mid-run (CI timeout, ^C twice) never leaves a Phoenix server behind holding its ports."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the fixture's teardown is the only stop
        pass


class PhoenixServer:
    """``phoenix serve`` on loopback for the length of a ``with`` block.

    Usage::

        with PhoenixServer() as phoenix:
            exporter = OTLPSpanExporter(endpoint=phoenix.otlp_traces_endpoint, headers={"x-project-name": "p"})
            ...
            spans = phoenix.wait_for_spans("p", count=7)

    The working directory (SQLite database, logs) is a fresh temporary directory removed on `stop`, so
    runs never see each other's traces.
    """

    def __init__(self, *, host: str = "127.0.0.1", startup_timeout: float = 180.0, executable: Path | None = None) -> None:
        self.host = host
        self.startup_timeout = startup_timeout
        self.executable = executable
        self.port: int | None = None
        self.grpc_port: int | None = None
        #: Seconds from process launch to the first ``GET /healthz`` that answered 200.
        self.startup_seconds: float | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._workdir: tempfile.TemporaryDirectory[str] | None = None
        self._log_path: Path | None = None

    # -- where it is

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise PhoenixError("PhoenixServer has not been started")
        return f"http://{self.host}:{self.port}"

    @property
    def otlp_endpoint(self) -> str:
        """The value for ``OTEL_EXPORTER_OTLP_ENDPOINT`` (the SDK appends ``/v1/traces``)."""
        return self.base_url

    @property
    def otlp_traces_endpoint(self) -> str:
        """The full OTLP/HTTP traces URL (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, or an exporter's ``endpoint``)."""
        return f"{self.base_url}/v1/traces"

    @property
    def log_tail(self) -> str:
        """The last few KB of the server's combined stdout/stderr (for diagnostics)."""
        return log_tail(self._log_path, 6000)

    # -- its API

    def get_json(self, path: str, params: dict[str, Any] | None = None, timeout: float = 10.0) -> Any:
        """``GET base_url + path`` and decode the JSON body; an HTTP error raises `PhoenixError` with the body."""
        url = self.base_url + path + (f"?{urllib.parse.urlencode(params, doseq=True)}" if params else "")
        try:
            with LOOPBACK_OPENER.open(url, timeout=timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as err:
            body = err.read().decode("utf-8", errors="replace")[:2000]
            raise PhoenixError(f"GET {url} -> HTTP {err.code}: {body}") from err

    def version(self) -> str:
        with LOOPBACK_OPENER.open(f"{self.base_url}/arize_phoenix_version", timeout=10) as response:
            return str(response.read().decode().strip())

    def project_names(self) -> list[str]:
        return [str(p["name"]) for p in self.get_json("/v1/projects", {"limit": 1000})["data"]]

    def spans(self, project: str) -> list[dict[str, Any]]:
        """Every span of `project` (all pages), as Phoenix's REST API returns them; [] if the project does not exist yet.

        Each span is a dict with ``name``, ``context`` (``trace_id``, ``span_id``), ``parent_id``,
        ``start_time``, ``end_time``, ``status_code``, ``attributes`` (flat, dotted keys) and ``events``.
        """
        if project not in self.project_names():
            return []
        found: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"limit": 1000, "sort": "start_time", "order": "asc"}
            if cursor:
                params["cursor"] = cursor
            page = self.get_json(f"/v1/projects/{urllib.parse.quote(project, safe='')}/spans", params)
            found.extend(page["data"])
            cursor = page.get("next_cursor")
            if not cursor:
                return found

    def wait_for_spans(self, project: str, count: int, timeout: float = 120.0) -> list[dict[str, Any]]:
        """The spans of `project` once at least `count` have been stored (Phoenix inserts in the background).

        Raises `PhoenixError` naming how many arrived when `timeout` passes first.
        """
        deadline = time.monotonic() + timeout
        while True:
            found = self.spans(project)
            if len(found) >= count:
                return found
            if time.monotonic() > deadline:
                names = sorted(str(s.get("name")) for s in found)
                raise PhoenixError(
                    f"Phoenix project {project!r} holds {len(found)} spans after {timeout:.0f} s, expected {count}: "
                    f"{names}\n--- server output (tail) ---\n{self.log_tail}"
                )
            time.sleep(0.3)

    # -- lifecycle

    def _ready(self) -> bool:
        return answers_ok(f"{self.base_url}/healthz")

    def start(self) -> PhoenixServer:
        """Launch ``phoenix serve`` and block until ``/healthz`` answers, or raise `PhoenixError` with its output tail."""
        if self._process is not None:
            raise PhoenixError("PhoenixServer already started")
        executable = self.executable or phoenix_executable()
        if executable is None:
            raise PhoenixError(f"Phoenix is not installed: no {venv_dir()}/bin/phoenix; install it with: {INSTALL_COMMAND}")
        for attempt in range(3):
            self.port = free_port(self.host)
            self.grpc_port = free_port(self.host)
            while self.grpc_port == self.port:  # two separate picks may return the same free port
                self.grpc_port = free_port(self.host)
            try:
                return self._launch(executable)
            except _PortInUse:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _launch(self, executable: Path) -> PhoenixServer:
        self._workdir = tempfile.TemporaryDirectory(prefix="orchestra-phoenix-")
        workdir = Path(self._workdir.name)
        self._log_path = workdir / "server.log"
        # Only what a process needs from the outside (PATH, locale, TMPDIR), never OTEL_* or PHOENIX_* of the
        # caller: Phoenix must not pick up the test's own exporter settings or a user's Phoenix configuration.
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_"))}
        env.update(QUIET_ENV)
        env.update(
            PHOENIX_WORKING_DIR=str(workdir),
            PHOENIX_HOST=self.host,
            PHOENIX_PORT=str(self.port),
            PHOENIX_GRPC_PORT=str(self.grpc_port),
            HOME=str(workdir),  # nothing lands in the real home directory
        )
        command = [str(executable), "serve"]
        started = time.monotonic()
        with self._log_path.open("wb") as log:
            self._process = subprocess.Popen(
                command, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, close_fds=True,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )  # fmt: skip
        deadline = started + self.startup_timeout
        try:
            code = wait_for_startup(self._process, self._ready, deadline=deadline, interval=0.25)
        except TimeoutError:
            tail = self.log_tail
            self.stop()
            raise PhoenixError(
                f"phoenix serve did not answer GET {self.base_url}/healthz within {self.startup_timeout:.0f} s.\n--- server output (tail) ---\n{tail}"
            ) from None
        if code is None:
            self.startup_seconds = time.monotonic() - started
            return self
        tail = self.log_tail
        self.stop()
        error = _PortInUse if "address already in use" in tail.lower() else PhoenixError
        raise error(f"phoenix serve exited with code {code} before answering on {self.base_url}/healthz.\n--- server output (tail) ---\n{tail}")

    def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after 15 s) and remove its working directory. Safe to call twice."""
        process, self._process = self._process, None
        stop_process(process, grace=15)
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None
            self._log_path = None

    def __enter__(self) -> PhoenixServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
