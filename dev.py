#!/usr/bin/env python3
"""One entry point for a fresh machine: ``python3.11 dev.py demo`` or ``python3.11 dev.py test``.

Only the standard library is used here, because this file runs before anything is installed.
It creates ``.venv`` (once), installs the locked dependencies from ``requirements-lock.txt``
(hash-checked, through uv for speed), installs orchestra itself in editable mode, and then runs
the requested job inside that environment. The install is skipped when the lock file has not
changed since the last successful install (a stamp file in the venv records its hash).

Everything runs offline once installed: ``LITELLM_LOCAL_MODEL_COST_MAP`` and ``HF_HUB_OFFLINE``
are set for the child process so neither litellm nor the HF hub reaches for the network.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("ORCHESTRA_VENV", ROOT / ".venv"))
LOCK = ROOT / "requirements-lock.txt"
UV_VERSION = "0.13.8"

OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


def _bin(name: str) -> Path:
    return VENV / ("Scripts" if os.name == "nt" else "bin") / name


def _run(cmd: list[str | Path], **kw: object) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kw)  # type: ignore[arg-type]


def ensure_env() -> None:
    """Create the venv and sync it to the lock file, unless it is already in sync."""
    if sys.version_info < (3, 11):
        sys.exit(f"orchestra needs Python >= 3.11; this is {sys.version.split()[0]}")
    digest = hashlib.sha256(LOCK.read_bytes() + (ROOT / "pyproject.toml").read_bytes()).hexdigest()
    stamp = VENV / ".orchestra-lock-sha256"
    if stamp.exists() and stamp.read_text().strip() == digest and _bin("orchestra").exists():
        return
    if not _bin("python").exists():
        print(f"creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=False).create(VENV)
    python = _bin("python")
    _run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", f"uv=={UV_VERSION}"])
    env = {**os.environ, "VIRTUAL_ENV": str(VENV)}
    _run([_bin("uv"), "pip", "sync", "--python", python, "--require-hashes", LOCK], env=env)
    _run([_bin("uv"), "pip", "install", "--python", python, "--no-deps", "-e", ROOT], env=env)
    stamp.write_text(digest)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"demo", "test", "shell", "setup"}:
        print(__doc__)
        print("usage: python3.11 dev.py demo|test|setup [extra args]")
        return 2
    job, extra = argv[0], argv[1:]
    ensure_env()
    env = {**os.environ, **OFFLINE_ENV, "VIRTUAL_ENV": str(VENV)}
    env["PATH"] = f"{_bin('python').parent}{os.pathsep}{env.get('PATH', '')}"
    if job == "setup":
        return 0
    if job == "demo":
        cmd = [_bin("orchestra"), "replay", ROOT / "scenarios", *extra]
    elif job == "test":
        cmd = [_bin("pytest"), *(extra or ["-q"])]
    else:
        cmd = [_bin("python"), *extra]
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
