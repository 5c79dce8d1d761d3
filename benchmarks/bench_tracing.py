"""Tracing benchmark: what the tracing plugin costs, disabled and enabled, measured in one process.

The same oracle-model rollouts (the `tool_calling` scaffold with `orchestra/oracle` on the bundled
starter scenarios: every rollout goes through the rollout, agent, pre-step, model and tool hooks
the plugin wraps) under three hosts:

1. *not loaded* — the built-in `tracing` plugin unregistered (the baseline);
2. *loaded, disabled* — the default: the plugin is registered, no `Tracing` is active;
3. *enabled* — a `Tracing` with the SDK's `InMemorySpanExporter` (every span built and exported,
   no I/O), content capture off.

The conditions alternate inside each repeat (1, 2, 3, 1, 2, 3, ...), so drift on a shared machine
hits all three alike; each figure is the median over `--repeats` (and the minimum, the steadier
figure on a shared machine). Reported as ratios against the baseline, measured in the same run;
wall times are for context only.

A rollout is ~100 ms of ARE work, so a few microseconds per hook call drown in its noise; the
benchmark therefore also times the hook dispatch itself — `agent_run` called 200,000 times on a
stand-in agent, not loaded vs loaded-but-disabled — which is exactly the disabled plugin's cost
(one generator and one context-variable read per call), and counts the wrapped hook calls of a
rollout, so the disabled overhead per rollout is that cost times that count.

    .venv/bin/python benchmarks/bench_tracing.py [--repeats 7] [--scenarios N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("ORCHESTRA_PLUGINS", "")  # built-ins only: nothing installed changes the figures
REPO = Path(__file__).resolve().parents[1]

from orchestra.hookspecs import hookimpl  # noqa: E402 - after the environment above


class CountWrappedHooks:
    """Counts the calls of the hooks the tracing plugin wraps (registered for one batch only)."""

    def __init__(self) -> None:
        self.calls = 0

    def _count(self) -> Generator[None, Any, Any]:
        self.calls += 1
        return (yield)

    @hookimpl(wrapper=True)
    def rollout(self, spec: Any) -> Generator[None, Any, Any]:
        return (yield from self._count())

    @hookimpl(wrapper=True)
    def agent_run(self, agent: Any) -> Generator[None, Any, Any]:
        return (yield from self._count())

    @hookimpl(wrapper=True)
    def pre_step(self, agent: Any) -> Generator[None, Any, Any]:
        return (yield from self._count())

    @hookimpl(wrapper=True)
    def model_call(self, agent: Any) -> Generator[None, Any, Any]:
        return (yield from self._count())

    @hookimpl(wrapper=True)
    def tool_call(self, agent: Any) -> Generator[None, Any, Any]:
        return (yield from self._count())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--scenarios", type=int, default=7, help="how many bundled starter scenarios per batch")
    ap.add_argument("--calls", type=int, default=200_000, help="hook calls per dispatch measurement")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as JSON")
    args = ap.parse_args()
    logging.disable(logging.WARNING)

    import anyio
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from orchestra.are.judge_pool import JudgePool
    from orchestra.host import Host
    from orchestra.models import ModelConfig
    from orchestra.rollout import AgentConfig, RolloutRecord, execute_all, specs_for
    from orchestra.scenario_files import read_scenario_file
    from orchestra.tracing import Tracing

    files = [read_scenario_file(p) for p in sorted(REPO.glob("scenarios/*/validation/starter_*.json"))][: args.scenarios]
    if not files:
        sys.exit("no bundled starter scenarios under scenarios/")
    specs = specs_for(files, agent=AgentConfig(scaffold="tool_calling", model=ModelConfig(model="orchestra/oracle")))
    pool = JudgePool()

    not_loaded = Host.create()
    not_loaded.pm.unregister(name="tracing")
    assert "tracing" not in {not_loaded.pm.get_name(p) for p in not_loaded.pm.get_plugins()}
    loaded = Host.create()
    exporter = InMemorySpanExporter()
    tracing = Tracing(exporter, content=False)

    def batch(host: Host) -> list[RolloutRecord]:
        async def go() -> list[RolloutRecord]:
            return [r async for r in execute_all(specs, host=host, judge_pool=pool)]

        records = anyio.run(go)
        assert all(r.result is not None and r.result.success for r in records), [r.error for r in records]
        return records

    def run_not_loaded() -> Any:
        return batch(not_loaded)

    def run_disabled() -> Any:
        return batch(loaded)

    def run_enabled() -> Any:
        exporter.clear()
        with tracing.activate():
            return batch(loaded)

    conditions = {"not loaded": run_not_loaded, "loaded, disabled": run_disabled, "enabled (in-memory)": run_enabled}
    batch(loaded)  # warm up: judges built, imports done, caches filled
    counter = CountWrappedHooks()
    loaded.pm.register(counter, name="bench-counter")
    batch(loaded)
    loaded.pm.unregister(counter)
    wrapped_calls_per_batch = counter.calls
    run_enabled()
    spans_per_batch = len(exporter.get_finished_spans())
    times: dict[str, list[float]] = {name: [] for name in conditions}
    for _ in range(args.repeats):
        for name, fn in conditions.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    tracing.shutdown()

    # The disabled plugin's own cost: hook dispatch with and without its wrapper.
    class StandIn:
        name = "bench"

    stand_in = StandIn()

    def dispatch(host: Host) -> None:
        call = host.hook.agent_run
        for _ in range(args.calls):
            call(agent=stand_in).close()  # the driver's coroutine, never started

    per_call: dict[str, list[float]] = {"not loaded": [], "loaded, disabled": []}
    for _ in range(5):
        for name, host in (("not loaded", not_loaded), ("loaded, disabled", loaded)):
            t0 = time.perf_counter()
            dispatch(host)
            per_call[name].append((time.perf_counter() - t0) / args.calls)
    call_cost = {name: min(ts) for name, ts in per_call.items()}
    overhead = call_cost["loaded, disabled"] - call_cost["not loaded"]

    medians = {name: statistics.median(ts) for name, ts in times.items()}
    minimums = {name: min(ts) for name, ts in times.items()}
    base, base_min = medians["not loaded"], minimums["not loaded"]
    rollouts = len(specs)
    hook_calls = wrapped_calls_per_batch
    print(
        f"{rollouts} oracle rollouts per batch (tool_calling + orchestra/oracle), {spans_per_batch} spans per traced batch, "
        f"{hook_calls} calls of the wrapped hooks per batch; {args.repeats} interleaved repeats"
    )
    print(f"\n{'host':<24}{'median s/batch':>15}{'ratio':>9}{'min s/batch':>14}{'ratio':>9}")
    for name in conditions:
        print(f"{name:<24}{medians[name]:>15.3f}{medians[name] / base:>8.3f}x{minimums[name]:>14.3f}{minimums[name] / base_min:>8.3f}x")
    print(
        f"\nhook dispatch (agent_run, best of 5 x {args.calls:,} calls): not loaded {1e6 * call_cost['not loaded']:.2f} us, "
        f"loaded but disabled {1e6 * call_cost['loaded, disabled']:.2f} us per call "
        f"(ratio {call_cost['loaded, disabled'] / call_cost['not loaded']:.2f}x)"
    )
    per_rollout = overhead * hook_calls / rollouts
    print(
        f"disabled overhead per rollout: {hook_calls / rollouts:.0f} wrapped hook calls x {1e6 * overhead:.2f} us = "
        f"{1e6 * per_rollout:.0f} us, {100 * per_rollout / (base_min / rollouts):.3f}% of a rollout ({1000 * base_min / rollouts:.1f} ms)"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "rollouts_per_batch": rollouts,
                    "spans_per_traced_batch": spans_per_batch,
                    "wrapped_hook_calls_per_batch": hook_calls,
                    "repeats": args.repeats,
                    "median_seconds": medians,
                    "min_seconds": minimums,
                    "ratio_vs_not_loaded_median": {n: m / base for n, m in medians.items()},
                    "ratio_vs_not_loaded_min": {n: m / base_min for n, m in minimums.items()},
                    "hook_dispatch_seconds": call_cost,
                    "disabled_overhead_per_rollout_seconds": per_rollout,
                    "times": times,
                },
                indent=1,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
