"""orchestra installed from its wheel, as the README tells a user to install it into a venv of their own.

The editable install every other test uses hides a package or a data file the wheel leaves out;
here the wheel is built from the checkout, installed into fresh venvs (no editable finder, the
checkout not on the path: every command runs from a temporary folder) the two ways the README
gives — uv with orchestra's overrides, and pip with the lock file — and the commands run from it:
`--help`, `run --help`, `teams list`, `plugins`, and a whole `run --team oracle` on a scenario file
given by path. ARE pins exact versions that orchestra lifts (`overrides.txt`), which a plain
`pip install` of the wheel cannot apply: hence the two ways.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SCENARIO = REPO / "scenarios" / "time" / "validation" / "starter_time_deadline.json"

pytestmark = pytest.mark.slow


def _uv() -> str:
    return shutil.which("uv", path=str(BIN)) or "uv"


def _run(argv: list[str | Path], *, cwd: Path, timeout: float = 600, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert done.returncode == 0, f"{' '.join(map(str, argv))} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _run([_uv(), "build", "--wheel", "-q", "-o", out, REPO], cwd=out)
    [built] = out.glob("*.whl")
    return built


def test_the_wheel_holds_every_package_and_data_file_and_no_scenario(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    packages = sorted(p.parent.relative_to(REPO).as_posix() for p in (REPO / "orchestra").rglob("__init__.py"))
    assert [p for p in packages if f"{p}/__init__.py" not in names] == []
    teams = sorted(p.name for p in (REPO / "orchestra" / "teams" / "shipped").glob("*.yaml"))
    assert teams and all(f"orchestra/teams/shipped/{t}" in names for t in teams)
    assert {"orchestra/runs/report_assets/report.css", "orchestra/runs/report_assets/report.js"} <= names
    assert not [n for n in names if n.startswith("scenarios/") or n.endswith(".json") and "/scenarios/" in n]


def _commands(venv: Path, cwd: Path) -> None:
    """The commands a new user runs first, from a folder that is not the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    orchestra = venv / "bin" / "orchestra"
    where = _run([venv / "bin" / "python", "-c", "import orchestra; print(orchestra.__file__)"], cwd=cwd, env=env).stdout
    assert str(venv) in where and str(REPO) not in where, where  # the installed copy, no editable finder
    assert "run" in _run([orchestra, "--help"], cwd=cwd, env=env).stdout
    assert "--team" in _run([orchestra, "run", "--help"], cwd=cwd, env=env).stdout
    assert "oracle" in _run([orchestra, "teams", "list"], cwd=cwd, env=env).stdout
    assert "executors" in _run([orchestra, "plugins"], cwd=cwd, env=env).stdout
    done = _run([orchestra, "run", "--team", "oracle", "--scenarios", SCENARIO], cwd=cwd, env=env)
    assert "starter_time_deadline" in done.stdout and " PASS " in done.stdout, done.stdout
    bundled = subprocess.run([orchestra, "scenarios", "bundled"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert bundled.returncode == 2 and "ORCHESTRA_BUNDLED_SCENARIOS" in bundled.stderr and bundled.stdout == "", bundled


def test_uv_with_the_overrides(wheel: Path, tmp_path: Path) -> None:
    """README: `uv pip install orchestra_agents-*.whl --override overrides.txt` into your venv."""
    venv = tmp_path / "venv"
    _run([_uv(), "venv", "-q", "-p", sys.executable, venv], cwd=tmp_path)
    _run([_uv(), "pip", "install", "-q", "--python", venv / "bin" / "python", wheel, "--override", REPO / "overrides.txt"], cwd=tmp_path)
    _commands(venv, tmp_path)


def test_pip_with_the_lock_file(wheel: Path, tmp_path: Path) -> None:
    """README: `pip install --no-deps -r requirements-lock.txt`, then `pip install --no-deps orchestra_agents-*.whl`
    (pip cannot lift ARE's pins; the lock holds the resolved, hash-checked set)."""
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    pip = [venv / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile", "--no-deps"]
    _run([*pip, "-r", REPO / "requirements-lock.txt"], cwd=tmp_path, timeout=1800)
    _run([*pip, wheel], cwd=tmp_path)
    _commands(venv, tmp_path)
