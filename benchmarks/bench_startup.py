"""Start-up benchmark: the wall time of the quick `orchestra` commands, against `python -c pass`.

Each command runs as a fresh subprocess of the venv's Python (`python -m orchestra.cli ...`), with
`PYTHONDONTWRITEBYTECODE=1` as on the CI machines (so only bytecode written at install counts),
`--repeats` times; the figure is the median wall time, reported as a ratio against the median of
`python -c pass` measured in the same run — so the ratios compare across machines, the seconds
are context. The issue's target is <= 1 s wall for each command on an idle machine.

Also reported: `import orchestra.cli` alone, and whether each command imported litellm or ARE
(the behavioural twin of this benchmark is tests/cli/test_startup.py).

    .venv/bin/python benchmarks/bench_startup.py [--repeats 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: (label, python arguments)
CASES: tuple[tuple[str, list[str]], ...] = (
    ("python -c pass", ["-c", "pass"]),
    ("import orchestra.cli", ["-c", "import orchestra.cli"]),
    ("orchestra --help", ["-m", "orchestra.cli", "--help"]),
    ("orchestra plugins", ["-m", "orchestra.cli", "plugins"]),
    ("orchestra teams list", ["-m", "orchestra.cli", "teams", "list"]),
    ("orchestra scenarios bundled", ["-m", "orchestra.cli", "scenarios", "bundled"]),
)

#: Prints, after the command ran, which heavy packages it imported (run under `-c`).
PROBE = (
    "import runpy, sys\n"
    "sys.argv = ['orchestra', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('orchestra.cli', run_name='__main__')\n"
    "except SystemExit:\n"
    "    pass\n"
    "sys.stderr.write('HEAVY ' + ','.join(m for m in ('litellm', 'are') if m in sys.modules) + '\\n')\n"
)


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "ORCHESTRA_PLUGINS": "", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def wall(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=REPO, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def heavy_imports(args: list[str]) -> str:
    if args[:2] != ["-m", "orchestra.cli"]:
        return ""
    proc = subprocess.run([sys.executable, "-c", PROBE, *args[2:]], cwd=REPO, env=env(), capture_output=True, text=True, check=False)
    lines = [line for line in proc.stderr.splitlines() if line.startswith("HEAVY ")]
    return lines[-1].removeprefix("HEAVY ") if lines else "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)

    for _, case in CASES:  # warm the OS file cache, so the first case is not penalised
        wall(case)
    medians = {label: statistics.median(wall(case) for _ in range(args.repeats)) for label, case in CASES}
    baseline = medians["python -c pass"]
    rows = []
    print(f"{'command':<30} {'wall s':>8} {'x pass':>8}  imports litellm/are")
    for label, case in CASES:
        heavy = heavy_imports(case)
        rows.append({"command": label, "wall_seconds": round(medians[label], 4), "ratio_to_pass": round(medians[label] / baseline, 2), "heavy_imports": heavy})
        print(f"{label:<30} {medians[label]:>8.3f} {medians[label] / baseline:>8.1f}  {heavy or '-'}")
    if args.json:
        args.json.write_text(json.dumps({"repeats": args.repeats, "python": sys.version.split()[0], "results": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
