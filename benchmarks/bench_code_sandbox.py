"""The `code` scaffold's cost: interpreter start-up per backend, and per-step overhead against
`tool_calling` on the same trajectory (the oracle model, one call per step, the same scenarios),
as ratios measured in this run.

    .venv/bin/python benchmarks/bench_code_sandbox.py [--repeat 3] [--compile]

* start-up: every interpreter start inside the code rollouts is timed (`Sandbox.start`: a fresh
  interpreter with the agent's tools installed), median;
* per step: (code rollout − tool_calling rollout − that rollout's start-ups) / steps, per backend;
  and the whole step's wall time as a ratio to tool_calling's (target: ≤ 50 ms overhead per step);
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
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests")]

from orchestra.are.judge_pool import JudgePool  # noqa: E402
from orchestra.hookspecs import hookimpl  # noqa: E402
from orchestra.host import Host  # noqa: E402
from orchestra.models import ModelConfig  # noqa: E402
from orchestra.rollout import AgentConfig, RolloutSpec, execute  # noqa: E402
from orchestra.scenario_files import read_scenario_file  # noqa: E402

SCENARIOS = sorted((ROOT / "scenarios").glob("*/validation/starter_*.json"))


class Timed:
    """An inline plugin: each backend again as `timed-<name>`, recording how long every start took."""

    def __init__(self) -> None:
        self.starts: list[float] = []

    @hookimpl
    def register_sandboxes(self, register: Any) -> None:
        from orchestra.sandbox.bwrap import BwrapSandbox
        from orchestra.sandbox.wasm import WasmSandbox

        starts = self.starts
        for base in (WasmSandbox, BwrapSandbox):

            class TimedSandbox(base):  # type: ignore[valid-type,misc]
                def start(self, now: float) -> None:
                    began = time.perf_counter()
                    was_running = self.running
                    super().start(now)
                    if not was_running:
                        starts.append(time.perf_counter() - began)

            register(f"timed-{base.name}", TimedSandbox)


def rollout(path: Path, scaffold: str, host: Host, pool: JudgePool, backend: str) -> tuple[float, int]:
    os.environ["ORCHESTRA_SANDBOX"] = f"timed-{backend}"
    file = read_scenario_file(path)
    spec = RolloutSpec(scenario=str(file.path), agent=AgentConfig(scaffold=scaffold, model=ModelConfig(model="orchestra/oracle")))
    started = time.perf_counter()
    record = anyio.run(lambda: execute(spec, host=host, judge_pool=pool, file=file))
    elapsed = time.perf_counter() - started
    assert record.result is not None and record.result.success, (path.stem, scaffold, record.error)
    return elapsed, record.result.steps


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
    timed = Timed()
    host = Host.create([timed], entry_points=False)
    pool = JudgePool()
    backends = ["wasm"] + (["bwrap"] if bwrap.probe() is None else [])
    for backend in ["tool_calling", *backends]:  # warm the judge, imports and page cache
        rollout(SCENARIOS[0], "code" if backend != "tool_calling" else backend, host, pool, backends[0] if backend == "tool_calling" else backend)
    baseline = 0.0
    total = {b: 0.0 for b in backends}
    started = {b: [] for b in backends}
    steps_total = 0
    for _ in range(args.repeat):
        for path in SCENARIOS:
            t, steps = rollout(path, "tool_calling", host, pool, "wasm")
            baseline += t
            steps_total += steps
            for backend in backends:
                timed.starts.clear()
                total[backend] += rollout(path, "code", host, pool, backend)[0]
                started[backend] += timed.starts
    print(f"{len(SCENARIOS)} starter scenarios x {args.repeat}, oracle model, {steps_total} steps; tool_calling: {1000 * baseline / steps_total:.1f} ms/step")
    for backend in backends:
        starts = sum(started[backend])
        overhead = (total[backend] - baseline - starts) / steps_total
        print(
            f"code[{backend}]: interpreter start-up {1000 * statistics.median(started[backend]):.0f} ms (median of {len(started[backend])}); "
            f"per step after start-up {1000 * overhead:+.1f} ms over tool_calling (a step x{(total[backend] - starts) / baseline:.2f} "
            f"tool_calling's; with start-ups x{total[backend] / baseline:.2f})"
        )


if __name__ == "__main__":
    main()
