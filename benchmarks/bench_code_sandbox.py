"""The `code` scaffold's cost: interpreter start-up per backend, and per-step overhead against
`tool_calling` on the same trajectory (the oracle model, one call per step, the same scenarios),
as ratios measured in this run.

    .venv/bin/python benchmarks/bench_code_sandbox.py [--repeat 3] [--compile]
    .venv/bin/python benchmarks/bench_code_sandbox.py --attacks   # the host's resources under attack

* start-up: every interpreter start inside the code rollouts is timed (`Sandbox.start`: a fresh
  interpreter with the agent's tools installed), median;
* per step: (code rollout − tool_calling rollout − that rollout's start-ups) / steps, per backend;
  and the whole step's wall time as a ratio to tool_calling's (target: ≤ 50 ms overhead per step);
* `--compile`: also time the one-off compile of the WebAssembly interpreter (into a temporary cache);
* `--attacks`: the adversarial review's attacks (docs/sandbox.md), each in a fresh sandbox, with
  the host's figures around it: the cell's seconds, peak and kept RSS growth, CPU seconds (the
  host's and its descendants', i.e. a bwrap guest's) during the attack and in an idle window after
  it, threads and processes left after `stop()`, and how the cell ended. Only the caller's side of
  the sandbox is used, so the same script measures an older tree (`PYTHONPATH=<old tree>`): the
  before/after figures in one run each.
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
    parser.add_argument("--attacks", action="store_true", help="measure the host's resources under the review's attacks instead")
    args = parser.parse_args()
    if args.attacks:
        attacks()
        return
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


# ---------------------------------------------------------------------------- --attacks

BYPASS = "import posixpath\nos = posixpath.os\n"
#: (name, backends, code, guard, limits, idle seconds after the cell)
ATTACKS: list[tuple[str, tuple[str, ...], str, bool, dict[str, Any], float]] = [
    (
        "fork32: 30 x 32-bit fork (children pause)",
        ("bwrap",),
        "import ctypes, mmap\ncode = bytes.fromhex('53b802000000cd8085c07509b8220000000f05ebf75bc3')\n"
        "page = mmap.mmap(-1, 4096, prot=7)\npage.write(code)\n"
        "call = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))\nprint([call() for _ in range(30)])",
        False,
        {},
        0.0,
    ),
    (
        "threads: 200 with 64 KiB stacks",
        ("bwrap",),
        "import threading\nthreading.stack_size(1 << 16)\ngate = threading.Event()\nn = 0\nfor _ in range(200):\n"
        "    try:\n        threading.Thread(target=gate.wait, daemon=True).start()\n    except RuntimeError:\n        break\n    n += 1\ngate.set()\nprint('started', n)",
        False,
        {},
        0.0,
    ),
    (
        "flood: 1500 lines of 1 MB on the channel",
        ("wasm", "bwrap"),
        BYPASS + 'line = (\'{"op":"done","output":"\' + \'x\' * 1_000_000 + \'","error":null,"dropped":0,"final":false}\\n\').encode()\n'
        "for i in range(1500):\n    os.write(1, line)",
        True,
        {},
        3.0,
    ),
    (
        "forged done, then an endless loop",
        ("wasm", "bwrap"),
        BYPASS + 'os.write(1, b\'{"op":"done","output":"forged","error":null,"dropped":0,"final":false}\\n\')\nwhile True:\n    pass',
        True,
        {"cell_timeout_s": 5.0},
        10.0,
    ),
    (
        "select([], [], [], 100000) holding 300 MB",
        ("wasm", "bwrap"),
        "blob = bytearray(300 << 20)\nblob[::4096] = b'x' * len(blob[::4096])\nimport select\nselect.select([], [], [], 100000)\nprint('woke')",
        False,
        {"cell_timeout_s": 10.0},
        0.0,
    ),
    (
        "deeply nested JSON line",
        ("wasm", "bwrap"),
        BYPASS + "os.write(1, b'[' * 200_000 + b']' * 200_000 + b'\\n')\nprint('after')",
        True,
        {"cell_timeout_s": 10.0},
        0.0,
    ),
    (
        "scratch over quota, then a next cell",
        ("wasm",),
        "open('big.bin', 'wb').write(b'x' * (3 << 20))\nwhile True:\n    pass",
        True,
        {"file_mb": 2},
        0.0,
    ),
    (
        "the time, printed in two fresh sandboxes",
        ("wasm", "bwrap"),
        "import time\nprint(time.ctime(), time.monotonic())",
        True,
        {},
        0.0,
    ),
]


def _usage() -> dict[str, float]:
    """RSS, peak RSS (MB), CPU seconds of this process and its descendants, threads, descendant processes."""
    import threading

    status = {line.split(":")[0]: line.split()[1] for line in Path("/proc/self/status").read_text().splitlines() if line.split()[1:]}
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
    family, frontier = [], [os.getpid()]
    while frontier:
        pid = frontier.pop()
        children = [c for c, p in parents.items() if p == pid]
        family += children
        frontier += children
    cpu = sum(os.times()[:4])
    for pid in family:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            pass
    return {
        "rss": int(status["VmRSS"]) / 1024,
        "peak": int(status["VmHWM"]) / 1024,
        "cpu": cpu,
        "threads": threading.active_count(),
        "processes": len(family),
    }


def _cell(sandbox: Any, code: str, step: int) -> Any:
    from orchestra.sandbox import ToolRequest

    sandbox.begin(code, name=f"<step {step}>", now=1_728_975_600.0)
    event = sandbox.next_event()
    while isinstance(event, ToolRequest):
        sandbox.reply(event, ok=False, error="refused", now=1_728_975_600.0)
        event = sandbox.next_event()
    return event


def _outcome(result: Any) -> str:
    if result.crashed:
        return str(result.crashed)[:70]
    if result.error:
        return str(result.error).strip().splitlines()[-1][:70]
    return str(result.output).strip()[:70]


def attacks() -> None:
    import gc

    from orchestra.sandbox import SandboxConfig, SandboxLimits
    from orchestra.sandbox.bwrap import BwrapSandbox, probe
    from orchestra.sandbox.wasm import WasmSandbox

    classes = {"wasm": WasmSandbox, "bwrap": BwrapSandbox}
    available = ["wasm"] + (["bwrap"] if probe() is None else [])
    import orchestra.sandbox.base as base

    print(f"orchestra.sandbox from {Path(base.__file__).parent}")
    for backend in available:  # load each runtime once: the figures below are the attack's own
        warm = classes[backend]({}, config=SandboxConfig(backend=backend))
        _cell(warm, "x = 1", 1)
        warm.stop()
    print(
        "| attack | backend | cell s (stop s) | peak RSS +MB | RSS kept +MB | CPU s: cell, idle after | processes during | threads, processes after stop | next cell | outcome |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, backends, code, guard, limits, idle in ATTACKS:
        for backend in (b for b in backends if b in available):
            gc.collect()
            time.sleep(0.5)
            Path("/proc/self/clear_refs").write_text("5")
            before = _usage()
            config = SandboxConfig(backend=backend, limits=SandboxLimits(**{"cell_timeout_s": 30.0, **limits}))
            sandbox = classes[backend]({}, seed=1, config=config, guard=guard)
            started = time.perf_counter()
            try:
                result = _cell(sandbox, code, 1)
                outcome = _outcome(result)
            except Exception as exc:  # an older tree may raise where a cell should end
                outcome = f"{type(exc).__name__}: {exc}"[:70]
            cell_s = time.perf_counter() - started
            during = _usage()
            time.sleep(idle)
            idle_cpu = _usage()["cpu"] - during["cpu"]
            try:
                following = _cell(sandbox, "print('next')", 2)
                second = "ok" if following.output == "next\n" else _outcome(following)
            except Exception as exc:
                second = f"{type(exc).__name__}: {exc}"[:50]
            if name.startswith("the time"):
                other = classes[backend]({}, seed=1, config=config, guard=guard)
                same = _cell(other, code, 1).output == result.output
                other.stop()
                second = "same output" if same else "differs"
            stop_started = time.perf_counter()
            sandbox.stop()
            stop_s = time.perf_counter() - stop_started
            gc.collect()
            time.sleep(0.5)
            after = _usage()
            print(
                f"| {name} | {backend} | {cell_s:.1f} ({stop_s:.1f}) | {after['peak'] - before['rss']:+.0f} | {after['rss'] - before['rss']:+.0f} | "
                f"{during['cpu'] - before['cpu']:.1f}, {idle_cpu:.1f} in {idle:g} s | {during['processes'] - before['processes']:+d} | "
                f"{after['threads'] - before['threads']:+d}, {after['processes'] - before['processes']:+d} | {second[:40]} | {outcome[:60]} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
