#!/usr/bin/env python3
"""Run ARE's own test suite under ARE's exact pins and under our lifted pins, and compare.

Why this exists
---------------
``meta-agents-research-environments==1.2.0`` pins exact versions of litellm, pydantic, mcp and
huggingface-hub. Orchestra lifts those pins (``overrides.txt``, fed to ``uv pip compile
--override``; see ``docs/dependencies.md``). ARE never promised to work with the lifted versions,
so the only evidence that the lift is safe is ARE's own test suite, which ships inside the
package (``pytest --pyargs are.simulation.tests``). Part of that suite fails here on both sides
whatever the versions (Hugging Face datasets unreachable offline, the ``gui`` extra not installed,
a test that skips every directory under a dot-directory such as ``.venv``), so "all green" is
not the bar; the bar is "no test that passes under ARE's pins is lost under ours" -- failed,
errored, skipped or not run at all. This script measures exactly that:

1. It builds (or reuses, keyed by a hash of its inputs) a baseline virtual environment at
   ``.venvs/are-pins`` holding ARE 1.2.0 at ARE's own pins plus ARE's dev pin of pytest. The
   baseline is resolved with ``requirements-lock.txt`` as uv's *preferences*, so every package
   that ARE's pins do not force to differ is at the same version on both sides; what differs is
   then the lifted pins (and what they drag along), which is what we want to isolate.
2. It runs the suite in both environments the same way, offline, from a scratch directory (from
   inside ``are/simulation`` ARE's ``types.py`` would shadow the stdlib ``types``), with an empty
   ``pytest.ini`` so neither side picks up any project configuration, and with the side's venv
   first on ``PATH`` (ARE's MCP tests start ``python`` servers from PATH).
3. It compares the two JUnit XML reports test by test, by an id that does not depend on the
   venv's path or on the pytest version (see ``_ID_PLUGIN_SOURCE``), re-runs any regression once
   on both sides to tell a break from a flake, and exits 0 iff nothing regressed.

The two sides also differ in pytest itself (ARE's dev pin 8.3.4 vs. our lock's version); the
report lists every package whose version differs, so such confounds are visible.

Only the standard library is used, so the script runs under any interpreter, including the
project venv (``.venv/bin/python scripts/compare_are_suite.py``).

Exit status: 0 = no regressions, 1 = regressions (listed), 2 = the comparison could not be made
(baseline build failed, a venv is missing, a suite produced no report).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

#: What the baseline venv holds: ARE at its own exact pins, plus ARE's own dev pin of pytest.
ARE_REQUIREMENT = "meta-agents-research-environments==1.2.0"
BASELINE_PYTEST = "pytest==8.3.4"

#: The packages whose pins ``overrides.txt`` lifts (plus pydantic-core, which moves with pydantic).
LIFTED_PACKAGES: tuple[str, ...] = ("litellm", "pydantic", "pydantic-core", "mcp", "huggingface-hub")

#: Bump when the way the baseline is built changes, so an existing one is rebuilt.
BASELINE_RECIPE_VERSION = "1"
BASELINE_KEY_FILE = ".compare-are-suite.key"
BASELINE_REQUIREMENTS_FILE = "requirements-are-pins.txt"

#: Offline switches: litellm would otherwise fetch its model-cost map at import time, and
#: huggingface-hub / datasets would try the Hub.
OFFLINE_ENV: dict[str, str] = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
}

SUITE = "are.simulation.tests"
SIDES: tuple[str, str] = ("pins", "ours")

# Outcomes, from a test's point of view. "missing" = the test id is absent from that side's report.
PASSED, FAILED, ERROR, SKIPPED, MISSING = "passed", "failed", "error", "skipped", "missing"
#: An outcome of a test that passed under the pins which counts as losing that test.
LOST_OUTCOMES = frozenset({FAILED, ERROR, SKIPPED, MISSING})
BAD_OUTCOMES = frozenset({FAILED, ERROR})

# Snippet run inside each venv: where its site-packages is, which interpreter it runs on, and the
# version of every installed distribution. Run in the venv, not here, because importlib.metadata
# only sees the running interpreter's environment.
_PROBE = r"""
import importlib.metadata as md, json, os, platform, sys, sysconfig
import are.simulation.tests as t
pkg = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(t.__file__))))
dists = {}
for d in md.distributions():
    name = (d.metadata["Name"] or "").lower().replace("_", "-")
    if name:
        dists[name] = d.version
print(json.dumps({
    "site": os.path.dirname(pkg),
    "prefix": sys.prefix,
    "python": platform.python_version(),
    "base_executable": getattr(sys, "_base_executable", sys.executable),
    "versions": dists,
}))
"""


#: Module name of the tiny pytest plugin below, written into each run's scratch directory.
ID_PLUGIN = "_compare_are_ids"

# Why a plugin: pytest's own test ids are not comparable across the two sides. Some of ARE's
# parametrised tests take absolute file paths (``datetime_test`` walks the installed package), so
# the id embeds the venv's path, and pytest 9 (ours) replaces string ids over a length limit with
# ``argname<N>`` while pytest 8.3.4 (ARE's pin) does not -- and the index N follows os.walk order,
# which differs between two directories. The plugin therefore records, as JUnit properties, the
# real node id and a canonical id built from the parameter *values* with venv paths replaced by
# placeholders. It changes nothing else about the run.
_ID_PLUGIN_SOURCE = r"""
import enum, hashlib, os, sys
import pytest

_SITE = os.path.dirname(os.path.dirname(os.path.abspath(__import__("are").__file__)))
_SIMPLE = (str, bytes, int, float, bool, type(None), os.PathLike, enum.Enum)


def _norm(text):
    return text.replace(_SITE, "<site>").replace(sys.prefix, "<venv>")


def _param(value):
    if not isinstance(value, _SIMPLE):
        return None
    text = _norm(os.fspath(value) if isinstance(value, os.PathLike) else str(value))
    if len(text) > 200:
        text = "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]
    return text


def _canonical(item):
    base = item.nodeid.split("[", 1)[0]
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return _norm(item.nodeid)
    parts = []
    for name in sorted(callspec.params):
        text = _param(callspec.params[name])
        if text is None:  # not a plain value: fall back to pytest's own id for the whole item
            return _norm(item.nodeid)
        parts.append(f"{name}={text}")
    return f"{base}[{', '.join(parts)}]"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    seen = {}
    for item in items:
        cid = _canonical(item)
        seen[cid] = seen.get(cid, 0) + 1
        if seen[cid] > 1:
            cid = f"{cid}#{seen[cid]}"
        item.user_properties.append(("compare_are_id", cid))
        item.user_properties.append(("compare_are_nodeid", item.nodeid))
"""


class CompareError(RuntimeError):
    """The comparison cannot be made (as opposed to: it was made and found regressions)."""


@dataclass
class Probe:
    """What we learn about one venv by running :data:`_PROBE` in it."""

    site: str
    prefix: str
    python: str
    base_executable: str
    versions: dict[str, str]


@dataclass
class TestResult:
    """One test id's outcome on one side, with the first line of its failure message if any."""

    outcome: str
    message: str = ""
    time_s: float = 0.0
    nodeid: str = ""


@dataclass
class SuiteRun:
    """One side's run of the suite: where its artefacts are, how it ended, and every test's result."""

    side: str
    python: str
    junit: str
    log: str
    returncode: int | None
    wall_s: float
    timed_out: bool
    hung_at_exit: bool = False
    results: dict[str, TestResult] = field(default_factory=dict)

    def totals(self) -> dict[str, int]:
        """Count of tests per outcome (plus the total), for the summary table."""
        counts = {PASSED: 0, FAILED: 0, ERROR: 0, SKIPPED: 0}
        for r in self.results.values():
            counts[r.outcome] = counts.get(r.outcome, 0) + 1
        counts["total"] = len(self.results)
        return counts


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def log(msg: str) -> None:
    """Progress goes to stderr so that stdout holds only the report."""
    print(f"[compare-are-suite {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def venv_python(venv: Path) -> Path:
    """The interpreter of a venv (POSIX layout; this project does not run on Windows)."""
    return venv / "bin" / "python"


def run_checked(cmd: Sequence[str], *, env: Mapping[str, str] | None = None) -> str:
    """Run a short helper command, return stdout; raise :class:`CompareError` with its stderr on failure."""
    proc = subprocess.run(list(cmd), capture_output=True, text=True, env=dict(env) if env else None)
    if proc.returncode != 0:
        raise CompareError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr.strip()}")
    return proc.stdout


def offline_env() -> dict[str, str]:
    """The environment both suites run in: ours, minus venv activation, plus the offline switches.

    ``VIRTUAL_ENV``/``PYTHONPATH``/``PYTHONHOME`` are dropped so that the interpreter we start
    decides which packages are visible, not whatever shell launched us (:func:`run_suite` then
    puts the side's own venv first on ``PATH``).
    """
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    env.update(OFFLINE_ENV)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # don't litter either venv's site-packages
    return env


def probe(python: Path) -> Probe:
    """Run :data:`_PROBE` under ``python`` and parse what it prints."""
    out = run_checked([str(python), "-c", _PROBE], env=offline_env())
    data = json.loads(out.strip().splitlines()[-1])
    return Probe(**data)


def find_uv(explicit: str | None) -> Path:
    """uv comes from the project venv (it is installed there); ``--uv`` or PATH are fallbacks."""
    candidates = [Path(explicit)] if explicit else []
    candidates.append(Path(sys.executable).parent / "uv")
    candidates.append(REPO_ROOT / ".venv" / "bin" / "uv")
    which = shutil.which("uv")
    if which:
        candidates.append(Path(which))
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise CompareError("uv not found (looked next to this interpreter, in .venv/bin and on PATH); pass --uv")


# --------------------------------------------------------------------------------------------
# Baseline venv
# --------------------------------------------------------------------------------------------


def baseline_requirements(xdist_version: str | None) -> list[str]:
    """Top-level requirements of the baseline. xdist only when the suites run with ``-n``."""
    reqs = [ARE_REQUIREMENT, BASELINE_PYTEST]
    if xdist_version:
        reqs.append(f"pytest-xdist=={xdist_version}")
    return reqs


def baseline_key(requirements: Sequence[str], base_python: str, python_version: str, uv_version: str, preferences: Path | None) -> str:
    """Hash of everything the baseline's content depends on; a changed input means a rebuild."""
    h = hashlib.sha256()
    for part in (BASELINE_RECIPE_VERSION, *requirements, base_python, python_version, uv_version):
        h.update(part.encode())
        h.update(b"\0")
    if preferences is not None and preferences.is_file():
        h.update(preferences.read_bytes())
    return h.hexdigest()


def ensure_baseline(
    venv: Path, *, uv: Path, base_python: str, python_version: str, requirements: Sequence[str], preferences: Path | None, rebuild: bool
) -> Path:
    """Build the baseline venv unless one built from the same inputs is already there.

    The baseline is compiled with ``requirements-lock.txt`` copied to the output path first:
    uv treats an existing output file as preferences, so packages not forced by ARE's pins keep
    the versions we lock. The compiled file is kept in the venv for inspection.
    """
    uv_version = run_checked([str(uv), "--version"]).strip()
    key = baseline_key(requirements, base_python, python_version, uv_version, preferences)
    key_file = venv / BASELINE_KEY_FILE
    if not rebuild and key_file.is_file() and key_file.read_text().strip() == key and venv_python(venv).exists():
        log(f"reusing baseline venv {venv} (key {key[:12]})")
        return venv_python(venv)

    log(f"building baseline venv {venv} (key {key[:12]}) with {uv_version}")
    venv.parent.mkdir(parents=True, exist_ok=True)
    run_checked([str(uv), "venv", "--clear", "--python", base_python, str(venv)])
    req_in = venv / "requirements-are-pins.in"
    req_in.write_text("\n".join(requirements) + "\n")
    req_out = venv / BASELINE_REQUIREMENTS_FILE
    if preferences is not None and preferences.is_file():
        shutil.copyfile(preferences, req_out)
    py = venv_python(venv)
    run_checked([str(uv), "pip", "compile", "--quiet", str(req_in), "-o", str(req_out), "--python", str(py), "--no-header"])
    run_checked([str(uv), "pip", "sync", "--python", str(py), str(req_out)])
    key_file.write_text(key + "\n")  # written last: a half-built venv never looks reusable
    return py


# --------------------------------------------------------------------------------------------
# Running the suite and reading its report
# --------------------------------------------------------------------------------------------


def normalise(text: str, site: str, prefix: str) -> str:
    """Replace a venv's own paths in a test id, so the same test has the same id on both sides.

    Some of ARE's parametrised ids embed absolute file paths (e.g. ``datetime_test``).
    """
    for path, token in ((site, "<site>"), (prefix, "<venv>")):
        if path:
            text = text.replace(path, token)
    return text


def parse_junit(path: Path, site: str, prefix: str) -> dict[str, TestResult]:
    """Classify every ``<testcase>`` of a pytest JUnit report.

    Test id = the canonical id recorded by :data:`_ID_PLUGIN_SOURCE`; where there is none
    (collection errors, which have no item) ``classname::name`` with venv paths normalised,
    empty classname shown as ``<collect>``. pytest reports xfail as skipped and xpass as passed,
    which is the classification we want. If one id shows up twice (a call failure plus a
    teardown error), the worst outcome wins.
    """
    rank = {PASSED: 0, SKIPPED: 1, FAILED: 2, ERROR: 3}
    results: dict[str, TestResult] = {}
    root = ET.parse(path).getroot()
    for tc in root.iter("testcase"):
        props = {p.get("name"): p.get("value", "") for p in tc.iter("property")}
        classname = tc.get("classname", "") or "<collect>"
        test_id = props.get("compare_are_id") or normalise(f"{classname}::{tc.get('name', '')}", site, prefix)
        outcome, message = PASSED, ""
        for child in tc:
            tag = child.tag
            if tag in ("failure", "error", "skipped"):
                new = {"failure": FAILED, "error": ERROR, "skipped": SKIPPED}[tag]
                if rank[new] > rank[outcome]:
                    outcome = new
                    lines = (child.get("message") or child.text or "").strip().splitlines()
                    message = normalise(lines[0], site, prefix)[:300] if lines else ""
        try:
            t = float(tc.get("time", "0") or 0)
        except ValueError:
            t = 0.0
        prev = results.get(test_id)
        if prev is None or rank[outcome] > rank[prev.outcome]:
            results[test_id] = TestResult(outcome, message, t, props.get("compare_are_nodeid", ""))
    return results


def pytest_command(
    python: Path, ini: Path, site: str, junit: Path, workers: int, test_timeout: int, targets: Sequence[str] | None = None, keyword: str | None = None
) -> list[str]:
    """The pytest invocation, identical on both sides apart from the interpreter and paths.

    ``-c`` an empty ini: otherwise pytest walks up from the venv and may adopt this repository's
    ``pyproject.toml`` config. ``--rootdir`` site-packages: test ids become
    ``are.simulation.tests.<module>`` instead of paths relative to the scratch directory.
    ``--continue-on-collection-errors``: two server test modules need the ``gui`` extra
    (strawberry) on both sides, and a collection error would otherwise abort the whole run.
    ``faulthandler_timeout`` is pytest's built-in hang diagnosis (there is no pytest-timeout):
    a test running longer than that gets all thread stacks dumped into the log.
    """
    cmd = [
        str(python),
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        ID_PLUGIN,
        "-c",
        str(ini),
        "--rootdir",
        site,
        "--continue-on-collection-errors",
        f"--junitxml={junit}",
        "-o",
        "junit_family=xunit2",
        "-o",
        f"faulthandler_timeout={test_timeout}",
        "-rfE",
    ]
    if workers > 0:
        cmd += ["-n", str(workers)]
    if keyword:
        cmd += ["-k", keyword]
    if targets is None:
        cmd += ["--pyargs", SUITE]
    else:
        cmd += list(targets)
    return cmd


def run_suite(
    side: str,
    python: Path,
    info: Probe,
    workdir: Path,
    *,
    workers: int,
    timeout: float,
    test_timeout: int,
    exit_grace: float,
    targets: Sequence[str] | None = None,
    keyword: str | None = None,
    tag: str = "",
) -> SuiteRun:
    """Run the suite (or ``targets``) for one side, wall-clocked, with an overall timeout.

    Two ways a run can fail to end by itself, both handled by polling rather than waiting:

    * The overall ``timeout``: pytest first gets SIGINT, which makes it stop and still write
      the JUnit report of what ran; if it ignores that for a minute the process group is
      killed. Tests that never ran then show up as "missing", which counts against that side.
    * Hanging at exit: pytest writes the JUnit report at the end of the session, but under
      ARE's pins (mcp 1.11.0) a run of just the MCP tests was seen never to exit, left waiting
      on the MCP demo servers' client threads. Once the report exists the process gets ``exit_grace``
      seconds, then its process group (it runs in its own session) is killed. The results are
      complete; the run is marked ``hung_at_exit`` and its wall time is taken at the report.
    """
    name = f"{side}{tag}"
    run_dir = workdir / name
    run_dir.mkdir(parents=True, exist_ok=True)
    ini = run_dir / "pytest.ini"
    ini.write_text("[pytest]\n")
    (run_dir / f"{ID_PLUGIN}.py").write_text(_ID_PLUGIN_SOURCE)
    env = offline_env()
    env["PYTHONPATH"] = str(run_dir)  # only so that ``-p _compare_are_ids`` can import the plugin
    # Activate the venv as far as subprocesses are concerned: ARE's MCP tests start their demo
    # servers as plain ``python <script>``, found on PATH. Without this they would run the
    # system interpreter, fail with "No module named 'mcp'" on *both* sides, and the lifted mcp
    # would go untested.
    env["PATH"] = os.pathsep.join([str(python.parent), env.get("PATH", os.defpath)])
    env["VIRTUAL_ENV"] = info.prefix
    junit = run_dir / "junit.xml"
    junit.unlink(missing_ok=True)  # its appearance is the end-of-session signal
    log_path = run_dir / "pytest.log"
    cmd = pytest_command(python, ini, info.site, junit, workers, test_timeout, targets, keyword)
    log(f"[{name}] running: {' '.join(cmd[:8])} ... (log {log_path})")
    start = time.monotonic()
    timed_out = hung_at_exit = False
    report_at: float | None = None
    with log_path.open("w") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        proc = subprocess.Popen(cmd, cwd=run_dir, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        returncode: int | None = None
        while (returncode := proc.poll()) is None:
            now = time.monotonic()
            if report_at is None and junit.exists():
                report_at = now
            if report_at is not None and now - report_at > exit_grace:
                hung_at_exit = True
                log(f"[{name}] report written but pytest still running after {exit_grace:.0f}s; killing its process group")
                _kill_group(proc, signal.SIGKILL)
                returncode = proc.wait()
                break
            if now - start > timeout:
                timed_out = True
                log(f"[{name}] overall timeout {timeout:.0f}s reached; interrupting pytest")
                _kill_group(proc, signal.SIGINT)
                try:
                    returncode = proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    _kill_group(proc, signal.SIGKILL)
                    returncode = proc.wait()
                break
            time.sleep(1.0)
    wall = (report_at if hung_at_exit and report_at is not None else time.monotonic()) - start
    run = SuiteRun(
        side=side,
        python=str(python),
        junit=str(junit),
        log=str(log_path),
        returncode=returncode,
        wall_s=round(wall, 1),
        timed_out=timed_out,
        hung_at_exit=hung_at_exit,
    )
    if junit.is_file():
        run.results = parse_junit(junit, info.site, info.prefix)
    log(f"[{name}] finished in {wall:.0f}s, rc={returncode}, hung_at_exit={hung_at_exit}, totals={run.totals()}")
    return run


def _kill_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    """Signal pytest's whole process group (it was started as a session leader), if still there."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


# --------------------------------------------------------------------------------------------
# Comparison and report
# --------------------------------------------------------------------------------------------


def compare(pins: SuiteRun, ours: SuiteRun) -> dict[str, list[dict[str, str]]]:
    """Split test ids by how their outcome moved from the pins to ours.

    ``regressions``: passed under the pins, and under ours failed, errored, was skipped or did
    not run at all — any of those loses a test. ``fixed``: failed/errored under the pins,
    passed under ours. ``other_changes``: every other outcome change, for completeness.
    """
    out: dict[str, list[dict[str, str]]] = {"regressions": [], "fixed": [], "other_changes": []}
    for test_id in sorted(set(pins.results) | set(ours.results)):
        a = pins.results.get(test_id, TestResult(MISSING))
        b = ours.results.get(test_id, TestResult(MISSING))
        if a.outcome == b.outcome:
            continue
        row = {"id": test_id, "pins": a.outcome, "ours": b.outcome, "pins_message": a.message, "ours_message": b.message}
        if a.outcome == PASSED and b.outcome in LOST_OUTCOMES:
            out["regressions"].append(row)
        elif a.outcome in BAD_OUTCOMES and b.outcome == PASSED:
            out["fixed"].append(row)
        else:
            out["other_changes"].append(row)
    return out


def version_table(infos: Mapping[str, Probe]) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """(lifted packages per side, every other package whose version differs between the sides)."""
    pins, ours = infos["pins"].versions, infos["ours"].versions
    lifted = [(p, pins.get(p, "-"), ours.get(p, "-")) for p in LIFTED_PACKAGES]
    others = [(p, pins.get(p, "-"), ours.get(p, "-")) for p in sorted(set(pins) | set(ours)) if p not in LIFTED_PACKAGES and pins.get(p) != ours.get(p)]
    return lifted, others


def print_table(rows: Iterable[Sequence[object]], header: Sequence[str]) -> None:
    """A plain fixed-width table on stdout."""
    cells = [[str(c) for c in r] for r in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    print("  ".join("-" * w for w in widths))
    for r in cells:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


def print_report(
    runs: Mapping[str, SuiteRun], infos: Mapping[str, Probe], diff: Mapping[str, list[dict[str, str]]], reruns: Mapping[str, dict[str, str]]
) -> None:
    """Human-readable summary: versions, totals per side, regressions, fixes."""
    lifted, others = version_table(infos)
    print("\n== Lifted packages ==")
    print_table(lifted, ("package", "pins", "ours"))
    if others:
        print(f"\n== Other packages that differ between the sides ({len(others)}) ==")
        print_table(others, ("package", "pins", "ours"))

    print("\n== ARE suite totals (offline) ==")
    rows = []
    for side in SIDES:
        r, t = runs[side], runs[side].totals()
        note = "TIMED OUT" if r.timed_out else "no report" if not r.results else "hung at exit, killed after report" if r.hung_at_exit else ""
        rows.append((side, infos[side].python, t[PASSED], t[FAILED], t[ERROR], t[SKIPPED], t["total"], f"{r.wall_s:.0f}", note))
    print_table(rows, ("side", "python", "passed", "failed", "error", "skipped", "total", "wall_s", "note"))

    regs = diff["regressions"]
    print(f"\n== Regressions: pass under the pins, lost under ours ({len(regs)}) ==")
    for row in regs:
        rerun = reruns.get(row["id"])
        extra = f"  [rerun: pins={rerun.get('pins', MISSING)} ours={rerun.get('ours', MISSING)}]" if rerun else ""
        print(f"  {row['id']}: {row['pins']} -> {row['ours']}{extra}")
        if row["ours_message"]:
            print(f"      {row['ours_message']}")
    fixed = diff["fixed"]
    print(f"\n== Fail under the pins, pass under ours ({len(fixed)}) ==")
    for row in fixed:
        print(f"  {row['id']}: {row['pins']} -> {row['ours']}")
        if row["pins_message"]:
            print(f"      {row['pins_message']}")
    if diff["other_changes"]:
        print(f"\n== Other outcome changes ({len(diff['other_changes'])}) ==")
        for row in diff["other_changes"]:
            print(f"  {row['id']}: {row['pins']} -> {row['ours']}")
    print("\nLogs: " + "  ".join(f"{s}={runs[s].log}" for s in SIDES))


def rerun_regressions(
    regs: Sequence[dict[str, str]],
    runs: Mapping[str, SuiteRun],
    pythons: Mapping[str, Path],
    infos: Mapping[str, Probe],
    workdir: Path,
    args: argparse.Namespace,
) -> dict[str, dict[str, str]]:
    """Re-run just the regressed tests on both sides, once, to tell a real break from a flake.

    The annotation is informational: the exit status still counts every regression of the
    full run, because a test that fails only sometimes under ours is not proven safe either.
    """
    if not regs or args.no_rerun:
        return {}
    log(f"re-running {len(regs)} regressed test(s) on both sides")
    out: dict[str, dict[str, str]] = {row["id"]: {s: MISSING for s in SIDES} for row in regs}
    for side in SIDES:
        # Each side's own node ids (they may differ, see _ID_PLUGIN_SOURCE), made absolute.
        nodeids = {runs[side].results[t].nodeid for t in out if t in runs[side].results}
        targets = sorted(f"{infos[side].site}/{n}" for n in nodeids if n)  # not Path: ids hold "//"
        if not targets:
            continue
        run = run_suite(
            side,
            pythons[side],
            infos[side],
            workdir,
            workers=0,
            timeout=args.timeout,
            test_timeout=args.test_timeout,
            exit_grace=args.exit_grace,
            targets=targets,
            tag="-rerun",
        )
        for test_id in out:
            out[test_id][side] = run.results.get(test_id, TestResult(MISSING)).outcome
    return out


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options (see the module docstring for what the comparison means)."""
    p = argparse.ArgumentParser(
        description="Run ARE's own test suite under ARE's exact pins and under our venv; exit 1 if any test that passes under the pins is lost under ours."
    )
    p.add_argument("--ours", type=Path, default=REPO_ROOT / ".venv", help="our venv (default: %(default)s)")
    p.add_argument(
        "--baseline",
        type=Path,
        default=REPO_ROOT / ".venvs" / "are-pins",
        help="baseline venv with ARE's own pins, built if missing or stale (default: %(default)s)",
    )
    p.add_argument(
        "--preferences",
        type=Path,
        default=REPO_ROOT / "requirements-lock.txt",
        help="lock file whose versions the baseline prefers where ARE's pins allow (default: %(default)s)",
    )
    p.add_argument("--rebuild", action="store_true", help="rebuild the baseline venv even if its key matches")
    p.add_argument("--uv", help="uv executable (default: next to this interpreter, then .venv/bin, then PATH)")
    p.add_argument(
        "--timeout",
        type=float,
        default=5400,
        help="overall limit per suite run in seconds; on expiry pytest is interrupted and the tests that did not run count as missing (default: %(default)s)",
    )
    p.add_argument(
        "--test-timeout",
        type=int,
        default=300,
        help="dump all thread stacks into the log when one test runs longer than this (pytest's faulthandler_timeout; default: %(default)s)",
    )
    (
        p.add_argument(
            "--exit-grace",
            type=float,
            default=60,
            help="seconds pytest may take to exit after writing its JUnit report before its "
            "process group is killed (under ARE's pins, a run of just the MCP tests "
            "was seen to hang at exit; default: %(default)s)",
        ),
    )
    p.add_argument(
        "-n",
        "--workers",
        type=int,
        default=0,
        help="pytest-xdist workers, the same on both sides; 0 (default) runs serially. >0 installs ours' pytest-xdist version into the baseline too",
    )
    p.add_argument("--concurrent", action="store_true", help="run the two suites at the same time (one per core) instead of one after the other")
    p.add_argument(
        "-k",
        dest="keyword",
        help="pytest -k expression applied on both sides, for quick partial checks. "
        "Match on module/function names only: parametrised ids differ between "
        "pytest 8 and 9, so a -k hitting them selects different tests per side",
    )
    p.add_argument("--no-rerun", action="store_true", help="do not re-run regressed tests to check for flakes")
    p.add_argument("--workdir", type=Path, help="where the JUnit reports and logs go (default: a new temporary directory, kept)")
    p.add_argument("--json", type=Path, help="write the full comparison as JSON here")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Build/reuse the baseline, run both suites, compare, report; return the exit status."""
    args = parse_args(argv)
    ours_py = venv_python(args.ours.resolve())
    if not ours_py.exists():
        raise CompareError(f"no interpreter at {ours_py}; pass --ours")
    info_ours = probe(ours_py)
    xdist = None
    if args.workers > 0:
        xdist = info_ours.versions.get("pytest-xdist")
        if not xdist:
            raise CompareError("--workers needs pytest-xdist in our venv")
    uv = find_uv(args.uv)
    pins_py = ensure_baseline(
        args.baseline.resolve(),
        uv=uv,
        base_python=info_ours.base_executable,
        python_version=info_ours.python,
        requirements=baseline_requirements(xdist),
        preferences=args.preferences,
        rebuild=args.rebuild,
    )
    infos = {"pins": probe(pins_py), "ours": info_ours}
    pythons = {"pins": pins_py, "ours": ours_py}

    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="compare-are-suite-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    log(f"work directory {workdir}")

    def run_side(side: str) -> SuiteRun:
        return run_suite(
            side,
            pythons[side],
            infos[side],
            workdir,
            workers=args.workers,
            timeout=args.timeout,
            test_timeout=args.test_timeout,
            exit_grace=args.exit_grace,
            keyword=args.keyword,
        )

    if args.concurrent:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {s: pool.submit(run_side, s) for s in SIDES}
            runs = {s: f.result() for s, f in futures.items()}
    else:
        runs = {s: run_side(s) for s in SIDES}
    for side in SIDES:
        if not runs[side].results:
            raise CompareError(f"the {side} suite produced no JUnit report; see {runs[side].log}")

    diff = compare(runs["pins"], runs["ours"])
    reruns = rerun_regressions(diff["regressions"], runs, pythons, infos, workdir, args)
    print_report(runs, infos, diff, reruns)

    if args.json:
        lifted, others = version_table(infos)
        payload = {
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
            "options": {"workers": args.workers, "timeout": args.timeout, "concurrent": args.concurrent, "keyword": args.keyword},
            "sides": {
                s: {
                    "venv": infos[s].prefix,
                    "python": infos[s].python,
                    "junit": runs[s].junit,
                    "log": runs[s].log,
                    "returncode": runs[s].returncode,
                    "wall_s": runs[s].wall_s,
                    "timed_out": runs[s].timed_out,
                    "hung_at_exit": runs[s].hung_at_exit,
                    "totals": runs[s].totals(),
                    "versions": infos[s].versions,
                }
                for s in SIDES
            },
            "lifted_versions": {p: {"pins": a, "ours": b} for p, a, b in lifted},
            "other_version_differences": {p: {"pins": a, "ours": b} for p, a, b in others},
            **diff,
            "reruns": reruns,
            "results": {
                t: {s: asdict(runs[s].results[t]) if t in runs[s].results else {"outcome": MISSING} for s in SIDES}
                for t in sorted(set(runs["pins"].results) | set(runs["ours"].results))
            },
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2, sort_keys=False) + "\n")
        log(f"wrote {args.json}")

    if diff["regressions"]:
        print(f"\nFAIL: {len(diff['regressions'])} test(s) pass under ARE's pins but not under ours.")
        return 1
    print("\nOK: no test that passes under ARE's pins is lost under ours.")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CompareError as exc:
        print(f"compare_are_suite: {exc}", file=sys.stderr)
        sys.exit(2)
