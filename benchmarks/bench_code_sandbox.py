"""The `code` scaffold's cost: interpreter start-up per backend, and per-step overhead against
`tool_calling` on the same trajectory (the oracle model, one call per step, the same scenarios),
as ratios measured in this run.

    .venv/bin/python benchmarks/bench_code_sandbox.py [--repeat 3] [--compile]

* start-up: a fresh interpreter with the scenario's tools installed (`Sandbox.start`), median;
* per step: (code rollout − tool_calling rollout − one start-up) / steps, per backend; and the
  whole step's wall time as a ratio to tool_calling's (target: ≤ 50 ms overhead per step);
* `--compile`: also time the one-off compile of the WebAssembly interpreter (into a temporary cache).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests")]

from orchestra.are.judge_pool import JudgePool  # noqa: E402
from orchestra.host import Host  # noqa: E402
from orchestra.models import ModelConfig  # noqa: E402
from orchestra.rollout import AgentConfig, RolloutSpec, execute  # noqa: E402
from orchestra.scenario_files import read_scenario_file  # noqa: E402
from orchestra.session import Session  # noqa: E402

SCENARIOS = sorted((ROOT / "scenarios").glob("*/validation/starter_*.json"))


def rollout(path: Path, scaffold: str, host: Host, pool: JudgePool, backend: str) -> tuple[float, int]:
    os.environ["ORCHESTRA_SANDBOX"] = backend
    file = read_scenario_file(path)
    spec = RolloutSpec(scenario=str(file.path), agent=AgentConfig(scaffold=scaffold, model=ModelConfig(model="orchestra/oracle")))
    started = time.perf_counter()
    record = anyio.run(lambda: execute(spec, host=host, judge_pool=pool, file=file))
    elapsed = time.perf_counter() - started
    assert record.result is not None and record.result.success, (path.stem, scaffold, record.error)
    return elapsed, record.result.steps


def startup(backend: str, host: Host, repeat: int) -> float:
    with Session.open(SCENARIOS[0]) as session:
        tools = session.tools
    times = []
    for _ in range(repeat):
        sandbox = host.sandbox(backend)(tools, seed=0)
        started = time.perf_counter()
        sandbox.start(now=0.0)
        times.append(time.perf_counter() - started)
        sandbox.stop()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compile", action="store_true", help="also time the one-off wasm compile")
    args = parser.parse_args()
    from orchestra.sandbox import bwrap, wasm

    if args.compile:
        with tempfile.TemporaryDirectory() as cache:
            os.environ["ORCHESTRA_WASM_CACHE"] = cache
            started = time.perf_counter()
            wasm.compiled_module_path()
            print(f"wasm interpreter compile (once, then cached): {time.perf_counter() - started:.1f} s")
            del os.environ["ORCHESTRA_WASM_CACHE"]
    wasm.compiled_module_path()  # the cached module, so start-ups below do not compile
    host = Host.create(entry_points=False)
    pool = JudgePool()
    backends = ["wasm"] + (["bwrap"] if bwrap.probe() is None else [])
    for path in SCENARIOS[:1]:
        rollout(path, "tool_calling", host, pool, "wasm")  # warm the judge and imports
    starts = {b: startup(b, host, args.repeat) for b in backends}
    baseline: list[float] = []
    per_backend: dict[str, list[float]] = {b: [] for b in backends}
    steps_total = 0
    for _ in range(args.repeat):
        for path in SCENARIOS:
            t, steps = rollout(path, "tool_calling", host, pool, "wasm")
            baseline.append(t)
            steps_total += steps
            for backend in backends:
                per_backend[backend].append(rollout(path, "code", host, pool, backend)[0])
    base = sum(baseline)
    print(f"{len(SCENARIOS)} starter scenarios x {args.repeat}, oracle model, {steps_total} steps; tool_calling: {1000 * base / steps_total:.1f} ms/step")
    for backend in backends:
        total = sum(per_backend[backend])
        runs = len(per_backend[backend])
        overhead = (total - base - runs * starts[backend]) / steps_total
        print(
            f"code[{backend}]: interpreter start-up {1000 * starts[backend]:.0f} ms; per step after start-up "
            f"{1000 * overhead:+.1f} ms over tool_calling (whole step x{(total - runs * starts[backend]) / base:.2f}; "
            f"with start-up x{total / base:.2f})"
        )


if __name__ == "__main__":
    main()
