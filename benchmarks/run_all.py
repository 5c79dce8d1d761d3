"""Every performance figure of issues #20 and #30, each against its baseline measured in the same run, as one table.

| figure | what | baseline (same run) | target |
|---|---|---|---|
| replay | `orchestra replay SOURCE --json` (judged), whole process | ARE's own unjudged `are-benchmark run --oracle` on the same files, whole process | <= 0.25x (issue 30) |
| cold start | load + preprocess + ready of the largest bundled universe, warm judge | ARE's `preprocess_scenario` (judge built inside) | <= 0.3 s |
| env step | the environment's part of one agent step (step API: `apply` + `next_request`, the model excluded) | a raw ARE `AppTool` call | median <= 2 ms, p99 <= 10 ms |
| concurrency | rollouts per second, CPU per rollout and per step, peak memory at N concurrent rollouts against a fixed-latency mock model on loopback (in a child process) | the model-bound ideal (N rollouts x steps x latency) | CPU <= 8 ms per rollout; >= 100 rollouts/s, env share <= 25 % at 256; <= 5 % at 16 |
| warm | a session's start from a copy of the already-loaded largest universe | its cold start (the process's templates emptied) | <= 0.05 s |
| executor | rollouts/s of 256 rollouts with `--executor process --workers N` | the same rollouts in one process | >= 1.7x |
| client | CPU per rollout with the lean model client | the same rollouts through litellm (`ORCHESTRA_MODEL_CLIENT=litellm`) | identical records |
| startup | `orchestra --help`, `plugins`, `teams list`, `scenarios bundled`, whole process | `python -c pass` | <= 1 s |

The two whole-process figures time subprocesses from outside (wall: a monotonic clock around the
child; CPU: user + system of the reaped child, from `resource.getrusage(RUSAGE_CHILDREN)`), the two
commands alternating A B A B so that a drift of the machine's speed hits both; the ratio is taken
pair by pair and the median is reported. On a shared machine quote the CPU ratio: wall time there
measures the neighbours. ARE's harness is pointed at local files through a temporary folder in its
layout (`DIR/<config>/<split>/*.json`, symlinks to the selected scenarios), `--split validation
--num_runs 1` (one rollout per scenario, as ours) and an `--output_dir` of its own; everything else
is ARE's default (its process executor, one worker per CPU). So that like is compared with like,
every round of the replay figure also runs `orchestra replay --executor process --workers N`
(`--replay-workers`, default one per CPU; 0 leaves it out; `--quick` leaves it out too) and
reports its ratio to ARE's run of the same round.

The `met` column says whether a figure meets its target (yes / no; n/a where no target applies,
and on every row of `--quick`, whose rows are marked smoke-test figures: one small scenario and a
few repeats are not comparable to the targets). Where a row has a CPU figure, `met` judges it.

    .venv/bin/python benchmarks/run_all.py                       # everything (tens of minutes on 2 shared cores)
    .venv/bin/python benchmarks/run_all.py --only replay cold step --pairs 3
    .venv/bin/python benchmarks/run_all.py --quick               # seconds-to-minutes smoke run (tests/benchmarks)

`--json OUT` also writes every figure. Offline: LITELLM_LOCAL_MODEL_COST_MAP=True and HF_HUB_OFFLINE=1
are set for every child.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OFFLINE = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
os.environ.update({k: os.environ.get(k, v) for k, v in OFFLINE.items()})
sys.path.insert(0, str(REPO / "devtools"))

FIGURES = ("replay", "cold", "warm", "step", "concurrency", "executor", "client", "startup")
STARTUP_CASES: tuple[tuple[str, list[str]], ...] = (
    ("orchestra --help", ["--help"]),
    ("orchestra plugins", ["plugins"]),
    ("orchestra teams list", ["teams", "list"]),
    ("orchestra scenarios bundled", ["scenarios", "bundled"]),
)


# ------------------------------------------------------------------ helpers


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def child_env() -> dict[str, str]:
    return {**os.environ, **OFFLINE, "ORCHESTRA_PLUGINS": ""}


def timed_child(argv: list[str], *, cwd: Path) -> tuple[float, float]:
    """(wall s, CPU s = user + system) of one child process, run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"benchmark child failed ({proc.returncode}): {' '.join(argv)}\n{proc.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def alternating(commands: list[list[str]], rounds: int, *, cwd: Path) -> list[list[tuple[float, float]]]:
    """Each round runs every command once, in the given order: (wall s, CPU s) per round and command."""
    return [[timed_child(c, cwd=cwd) for c in commands] for _ in range(rounds)]


def ratios(rows: list[list[tuple[float, float]]], a: int, b: int) -> dict[str, Any]:
    """Medians of command `a`, of command `b` and of the per-round ratios a/b (wall and CPU)."""
    return {
        "pairs": len(rows),
        "a_wall_s": statistics.median(r[a][0] for r in rows),
        "a_cpu_s": statistics.median(r[a][1] for r in rows),
        "b_wall_s": statistics.median(r[b][0] for r in rows),
        "b_cpu_s": statistics.median(r[b][1] for r in rows),
        "wall_ratio": statistics.median(r[a][0] / r[b][0] for r in rows),
        "cpu_ratio": statistics.median(r[a][1] / r[b][1] for r in rows),
    }


def paired(a: list[str], b: list[str], pairs: int, *, cwd: Path) -> dict[str, Any]:
    """A and B alternating; medians of each and of the pairwise ratios A/B (wall and CPU)."""
    return ratios(alternating([a, b], pairs, cwd=cwd), 0, 1)


def timed(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Medians of (wall s, process CPU s) over `repeats` calls."""
    walls, cpus = [], []
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus)


def largest_scenario() -> Path:
    files = sorted((p for p in (REPO / "scenarios").rglob("*.json") if p.name != "manifest.json"), key=lambda p: (p.stat().st_size, str(p)))
    return files[-1]


def smallest_scenario() -> Path:
    files = sorted((p for p in (REPO / "scenarios").rglob("*.json") if p.name != "manifest.json"), key=lambda p: (p.stat().st_size, str(p)))
    return files[0]


@contextlib.contextmanager
def are_layout(files: list[Path]) -> Iterator[Path]:
    """A temporary folder in ARE's local layout, `<config>/validation/<file>.json`, of symlinks to `files`."""
    root = Path(tempfile.mkdtemp(prefix="orchestra-bench-ds-"))
    try:
        for f in files:
            config = f.parent.parent.name
            target = root / config / "validation"
            target.mkdir(parents=True, exist_ok=True)
            (target / f.name).symlink_to(f.resolve())
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------ the figures


def fig_replay(args: argparse.Namespace) -> dict[str, Any]:
    from orchestra.scenario_files import resolve

    files = [f.path for f in resolve([args.source])]
    bindir = Path(sys.executable).parent
    are_benchmark = bindir / "are-benchmark"
    out = Path(tempfile.mkdtemp(prefix="orchestra-bench-are-out-"))
    try:
        with are_layout(files) as ds:
            ours = [sys.executable, "-m", "orchestra.cli", "replay", args.source, "--json"]
            theirs = [
                str(are_benchmark),
                "run",
                "--oracle",
                "-d",
                str(ds),
                "--split",
                "validation",
                "--num_runs",
                "1",
                "--output_dir",
                str(out),
                "--log-level",
                "WARNING",
            ]
            commands = [ours, theirs]
            if args.replay_workers:  # like with like: ARE's harness runs a process pool, one worker per CPU
                commands.append([*ours, "--executor", "process", "--workers", str(args.replay_workers)])
            rows = alternating(commands, args.pairs, cwd=REPO)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    figures = ratios(rows, 0, 1)
    if args.replay_workers:
        figures["process"] = {"workers": args.replay_workers, **ratios(rows, 2, 1)}
    figures["scenarios"] = len(files)
    return figures


def fig_cold(args: argparse.Namespace) -> dict[str, Any]:
    from are.simulation.data_handler.importer import JsonScenarioImporter
    from are.simulation.scenarios.scenario_imported_from_json.utils import preprocess_scenario
    from are.simulation.validation import ScriptedGraphPerEventJudgeConfig

    from orchestra.are import judge_pool, loading
    from orchestra.are.judge_pool import _no_llm_engine
    from orchestra.scenario_files import read_scenario_file
    from orchestra.session import Session

    path = smallest_scenario() if args.quick else largest_scenario()
    pool = judge_pool.JudgePool()
    pool.warm()

    def ours() -> None:
        loading.process_templates().clear()  # cold: no copy of a world loaded before
        with Session.open(read_scenario_file(path), judge_pool=pool):
            pass

    def are() -> None:
        sc, _, _ = JsonScenarioImporter().import_from_json_to_benchmark(path.read_text(), load_completed_events=False)
        preprocess_scenario(sc, judge_config=ScriptedGraphPerEventJudgeConfig(engine=_no_llm_engine), max_scenario_duration=1800)

    ours()  # imports, caches of the first call
    wall, cpu = timed(ours, args.repeats)
    are_wall, are_cpu = timed(are, max(1, min(args.repeats, 3)))
    return {"scenario": str(path.relative_to(REPO)), "bytes": path.stat().st_size, "wall_s": wall, "cpu_s": cpu, "are_wall_s": are_wall, "are_cpu_s": are_cpu}


def fig_step(args: argparse.Namespace) -> dict[str, Any]:
    import anyio

    from orchestra.are.judge_pool import JudgePool
    from orchestra.config import SessionConfig
    from orchestra.models import ModelConfig
    from orchestra.rollout import Rollout
    from orchestra.spec import AgentConfig, RolloutSpec
    from orchestra.types import ModelResponse, ToolCall, Usage

    path = smallest_scenario() if args.quick else largest_scenario()
    steps = 20 if args.quick else args.steps
    tool = "SystemApp__get_current_time"
    pool = JudgePool()
    spec = RolloutSpec(
        scenario=str(path),
        agent=AgentConfig(scaffold="tool_calling", model=ModelConfig(model="openai/bench"), max_steps=steps + 5),
        session=SessionConfig(),
    )
    samples: list[float] = []
    raw: list[float] = []

    async def go() -> None:
        with Rollout.open(spec, judge_pool=pool) as rollout:
            request = await rollout.next_request()
            for i in range(steps):
                assert request is not None
                response = ModelResponse(text=None, tool_calls=[ToolCall(name=tool, arguments={}, id=f"call_{i}")], usage=Usage(1000, 20))
                t0 = time.perf_counter()
                await rollout.apply(response)
                request = await rollout.next_request()
                samples.append(time.perf_counter() - t0)
            app_tool = rollout.session.app_tools[tool]
            with rollout.session.env.scope():
                for _ in range(steps):
                    t0 = time.perf_counter()
                    app_tool()
                    raw.append(time.perf_counter() - t0)

    anyio.run(go)
    return {
        "scenario": str(path.relative_to(REPO)),
        "steps": steps,
        "median_ms": statistics.median(samples) * 1000,
        "p99_ms": pct(samples, 0.99) * 1000,
        "raw_median_ms": statistics.median(raw) * 1000,
        "raw_p99_ms": pct(raw, 0.99) * 1000,
    }


def fig_concurrency(args: argparse.Namespace) -> dict[str, Any]:
    import anyio

    from orchestra.are.judge_pool import JudgePool
    from orchestra.rl import EnvConfig
    from orchestra.rl.batches import rollouts
    from orchestra_dev.mock_openai import mock_in_child

    path = smallest_scenario()
    levels = [1, 2] if args.quick else args.levels
    latency = 0.05 if args.quick else args.latency
    steps = 2 if args.quick else args.model_steps
    config = EnvConfig(max_steps=steps)
    pool = JudgePool()
    rows = []
    # The mock runs in a child process: its CPU (aiohttp, parsing 50 kB requests) is not orchestra's.
    with mock_in_child(latency) as url:

        async def warm_up() -> None:  # the first model call imports litellm (seconds): a process's cost, not a rollout's
            async for _ in rollouts([config.spec(str(path))], url, model="bench", concurrency=1, judge_pool=pool):
                pass

        anyio.run(warm_up)
        # What a judge costs: one built from scratch (what every concurrent rollout paid before judges
        # were cloned) against one cloned from the pool's first, measured in the same run.
        c0 = time.process_time()
        JudgePool(clone=lambda judge: None).warm()
        build_cpu = time.process_time() - c0
        c0 = time.process_time()
        pool.warm()  # the warm-up built the pool's first judge: this one is its clone
        clone_cpu = time.process_time() - c0
        for n in levels:
            c0 = time.process_time()
            while pool.builds < n:  # the level's judges: the first was built, the others are clones
                pool.warm()
            judges_cpu = time.process_time() - c0
            specs = [config.spec(str(path), sample_index=i) for i in range(n)]
            rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

            async def go(specs: list[Any] = specs, n: int = n) -> list[Any]:
                return [r async for r in rollouts(specs, url, model="bench", concurrency=n, judge_pool=pool)]

            c1, t0 = time.process_time(), time.perf_counter()
            records = anyio.run(go)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c1
            rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            errors = [r.error for r in records if r.error]
            calls = sum(r.result.model_calls for r in records if r.result)
            ideal = (calls / n) * latency  # every rollout's model calls back to back, all rollouts at once
            rows.append(
                {
                    "concurrency": n,
                    "rollouts": len(records),
                    "errors": len(errors),
                    "model_calls": calls,
                    "wall_s": wall,
                    "ideal_s": ideal,
                    "rollouts_per_s": len(records) / wall,
                    "ideal_rollouts_per_s": len(records) / ideal if ideal else None,
                    "env_share": max(0.0, (wall - ideal) / wall),
                    "peak_rss_growth_mb_per_rollout": max(0, rss1 - rss0) / 1024 / n,
                    "peak_rss_mb": rss1 / 1024,
                    "judges_cpu_s": judges_cpu,
                    "cpu_s": cpu,
                    "cpu_ms_per_rollout": cpu / max(1, len(records)) * 1000,
                    "cpu_ms_per_step": cpu / max(1, calls) * 1000,
                }
            )
    return {
        "scenario": str(path.relative_to(REPO)),
        "latency_s": latency,
        "model_steps": steps,
        "judge_build_cpu_s": build_cpu,
        "judge_clone_cpu_s": clone_cpu,
        "levels": rows,
    }


def fig_executor(args: argparse.Namespace) -> dict[str, Any]:
    """Rollouts per second of `--executor-level` rollouts: one process (`local`, all at once) against
    `--executor process --workers N` (each worker `level / N` at once), same mock, same specs, the
    two alternated `--repeats` times. The workers are kept alive across batches (`ProcessExecutor(
    keep_alive=True)`), as a trainer keeps them across training steps; a warm-up batch of each
    first (imports, the template, the judge, the workers' start: what a run pays once, reported
    apart as `start_s`). `--executor-latency` (default 0: the mock answers at once) makes the batch
    CPU-bound: at the concurrency figure's 500 ms a batch of 256 is bound by the model's latency
    (2 s for 4 calls) and one process already reaches most of it, so a second core has nothing to add."""
    import anyio

    from orchestra.rl import EnvConfig
    from orchestra.rl.batches import rollouts
    from orchestra.runs.executors.process import ProcessExecutor
    from orchestra_dev.mock_openai import mock_in_child

    path = smallest_scenario()
    n = 8 if args.quick else args.executor_level
    workers = args.workers
    latency = args.executor_latency
    config = EnvConfig(max_steps=2 if args.quick else args.model_steps)
    specs = [config.spec(str(path), sample_index=i) for i in range(n)]
    out: dict[str, Any] = {"scenario": str(path.relative_to(REPO)), "rollouts": n, "workers": workers, "latency_s": latency}
    walls: dict[str, list[float]] = {"local": [], "process": []}
    hashes: dict[str, list[str]] = {}
    errors: dict[str, int] = {"local": 0, "process": 0}
    with mock_in_child(latency) as url, ProcessExecutor(workers, keep_alive=True) as pool:

        async def run(name: str) -> list[Any]:
            if name == "local":
                return [r async for r in rollouts(specs, url, model="bench", concurrency=n)]
            return [r async for r in rollouts(specs, url, model="bench", concurrency=max(1, n // workers), executor=pool)]

        for name in ("local", "process"):  # warm-up: imports, templates, judges, the workers' start
            t0 = time.perf_counter()
            anyio.run(run, name)
            out[f"{name}_start_s"] = time.perf_counter() - t0
        for _ in range(1 if args.quick else args.repeats):
            for name in ("local", "process"):
                t0 = time.perf_counter()
                records = anyio.run(run, name)
                walls[name].append(time.perf_counter() - t0)
                errors[name] += sum(1 for r in records if r.error)
                hashes[name] = sorted(r.result.event_log_sha256 for r in records if r.result)
    for name in ("local", "process"):
        wall = statistics.median(walls[name])
        out[name] = {"wall_s": wall, "walls_s": walls[name], "rollouts_per_s": n / wall, "errors": errors[name]}
    out["speedup"] = out["process"]["rollouts_per_s"] / out["local"]["rollouts_per_s"]
    out["identical"] = hashes["process"] == hashes["local"]
    return out


def fig_client(args: argparse.Namespace) -> dict[str, Any]:
    """CPU per rollout of the same rollouts with the lean model client and through litellm
    (`ORCHESTRA_MODEL_CLIENT=litellm`), alternating, with the records compared."""
    import anyio

    from orchestra.are.judge_pool import JudgePool
    from orchestra.rl import EnvConfig
    from orchestra.rl.batches import rollouts
    from orchestra_dev.mock_openai import mock_in_child

    path = smallest_scenario()
    n = 8 if args.quick else 64
    config = EnvConfig(max_steps=2 if args.quick else args.model_steps)
    specs = [config.spec(str(path), sample_index=i) for i in range(n)]
    pool = JudgePool()
    cpu: dict[str, list[float]] = {"lean": [], "litellm": []}
    keys: dict[str, list[Any]] = {}
    before = os.environ.get("ORCHESTRA_MODEL_CLIENT")
    with mock_in_child(0.0) as url:

        async def go() -> list[Any]:
            return [r async for r in rollouts(specs, url, model="bench", concurrency=8, judge_pool=pool)]

        try:
            for round_ in range(1 + (1 if args.quick else args.repeats)):
                for name in ("lean", "litellm"):
                    if name == "litellm":
                        os.environ["ORCHESTRA_MODEL_CLIENT"] = "litellm"
                    else:
                        os.environ.pop("ORCHESTRA_MODEL_CLIENT", None)
                    c0 = time.process_time()
                    records = anyio.run(go)
                    if round_:  # the first round warms both paths up
                        cpu[name].append((time.process_time() - c0) / n)
                    keys[name] = sorted(
                        (r.result.event_log_sha256, r.reward, r.result.sim_seconds, r.result.prompt_tokens, r.result.completion_tokens)
                        for r in records
                        if r.result
                    )
        finally:
            if before is None:
                os.environ.pop("ORCHESTRA_MODEL_CLIENT", None)
            else:
                os.environ["ORCHESTRA_MODEL_CLIENT"] = before
    lean, via = statistics.median(cpu["lean"]), statistics.median(cpu["litellm"])
    return {"rollouts": n, "lean_cpu_ms": lean * 1000, "litellm_cpu_ms": via * 1000, "ratio": via / lean, "identical": keys["lean"] == keys["litellm"]}


def fig_warm(args: argparse.Namespace) -> dict[str, Any]:
    """A session's start from the largest bundled universe: cold (parse, initialize, oracle run; the
    process's templates emptied first) against warm (a copy of the already-loaded world), with the
    records of warm starts are those of cold ones: tests/corpus)."""
    from orchestra.are import loading
    from orchestra.are.judge_pool import JudgePool
    from orchestra.scenario_files import read_scenario_file
    from orchestra.session import Session

    path = smallest_scenario() if args.quick else largest_scenario()
    pool = JudgePool()
    pool.warm()
    file = read_scenario_file(path)

    def start(cold: bool) -> None:
        if cold:
            loading.process_templates().clear()
        with Session.open(file, judge_pool=pool):
            pass

    start(True)  # imports, caches of the first call
    cold_wall, cold_cpu = timed(lambda: start(True), args.repeats)
    start(False)
    warm_wall, warm_cpu = timed(lambda: start(False), args.repeats)
    return {
        "scenario": str(path.relative_to(REPO)),
        "bytes": path.stat().st_size,
        "cold_cpu_s": cold_cpu,
        "cold_wall_s": cold_wall,
        "warm_cpu_s": warm_cpu,
        "warm_wall_s": warm_wall,
    }


def fig_startup(args: argparse.Namespace) -> dict[str, Any]:
    base = [sys.executable, "-c", "pass"]
    rows = []
    for label, argv in STARTUP_CASES[:1] if args.quick else STARTUP_CASES:
        cmd = [sys.executable, "-m", "orchestra.cli", *argv]
        timed_child(cmd, cwd=REPO)  # warm the file cache
        figures = paired(cmd, base, 1 if args.quick else args.repeats, cwd=REPO)
        rows.append({"command": label, **figures})
    return {"commands": rows}


# ------------------------------------------------------------------ the table


Row = tuple[str, str, str, str, str, str]
#: `--quick`'s mark on every row: one small scenario, a few repeats — a smoke test, not a measurement.
QUICK_MARK = " [--quick smoke test: not comparable to the target]"


def met(ok: bool | None) -> str:
    """The `met` column: yes / no, or n/a where no target applies to the row."""
    return "n/a" if ok is None else "yes" if ok else "no"


def table(results: dict[str, Any], *, quick: bool = False) -> list[Row]:
    """(figure, ours, baseline, ratio, target, met) rows. `met` judges the CPU figure where there
    is one (wall time on a shared machine measures the neighbours); `quick`: every row is marked a
    smoke-test figure and `met` is n/a (one small scenario says nothing about a target)."""
    rows = _rows(results)
    if quick:
        return [(r[0] + QUICK_MARK, r[1], r[2], r[3], r[4], "n/a") for r in rows]
    return rows


def _size(n: int) -> str:
    """A file size for a row: MB from 1 MB, else KB (the `--quick` figures use a 38 KB scenario)."""
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} KB"


def _replay_row(r: dict[str, Any], ours: str, baseline: str) -> Row:
    """A replay pair's row: orchestra's command (`a_*`) against ARE's harness (`b_*`)."""
    return (
        f"replay {r['scenarios']} scenario{'' if r['scenarios'] == 1 else 's'}, {ours}",
        f"cpu {r['a_cpu_s']:.1f} s, wall {r['a_wall_s']:.1f} s",
        f"{baseline}: cpu {r['b_cpu_s']:.1f} s, wall {r['b_wall_s']:.1f} s",
        f"cpu {r['cpu_ratio']:.2f}x, wall {r['wall_ratio']:.2f}x",
        "<= 0.25x",
        met(r["cpu_ratio"] <= 0.25),
    )


def _rows(results: dict[str, Any]) -> list[Row]:
    out = []
    if "replay" in results:
        r = results["replay"]
        out.append(_replay_row(r, "judged (whole process)", "ARE unjudged oracle"))
        if "process" in r:
            p = r["process"]
            out.append(
                _replay_row({**p, "scenarios": r["scenarios"]}, f"judged, --executor process --workers {p['workers']}", "ARE unjudged oracle (same rounds)")
            )
    if "cold" in results:
        r = results["cold"]
        out.append(
            (
                f"cold start {_size(r['bytes'])} universe, warm judge",
                f"cpu {r['cpu_s']:.3f} s, wall {r['wall_s']:.3f} s",
                f"ARE preprocess_scenario: cpu {r['are_cpu_s']:.3f} s",
                f"{r['cpu_s'] / r['are_cpu_s']:.3g}x ARE (cpu)",
                "<= 0.3 s",
                met(r["cpu_s"] <= 0.3),
            )
        )
    if "step" in results:
        r = results["step"]
        out.append(
            (
                "env overhead per agent step",
                f"median {r['median_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms",
                f"raw ARE tool call: median {r['raw_median_ms']:.3f} ms",
                f"{r['median_ms'] / r['raw_median_ms']:.0f}x raw",
                "median <= 2 ms, p99 <= 10 ms",
                met(r["median_ms"] <= 2 and r["p99_ms"] <= 10),
            )
        )
    if "concurrency" in results:
        r = results["concurrency"]
        out.append(
            (
                "one more judge for a concurrent rollout",
                f"cloned: cpu {r['judge_clone_cpu_s'] * 1000:.2f} ms",
                f"built: cpu {r['judge_build_cpu_s']:.2f} s",
                f"{r['judge_build_cpu_s'] / max(r['judge_clone_cpu_s'], 1e-6):.0f}x cheaper",
                "-",
                met(None),
            )
        )
        for row in r["levels"]:
            n = row["concurrency"]
            target, ok = "-", None
            if n == 256:
                target, ok = ">= 100 rollouts/s, env share <= 25 % at 256", row["rollouts_per_s"] >= 100 and row["env_share"] <= 0.25
            elif n == 16:
                target, ok = "env share <= 5 % at 16", row["env_share"] <= 0.05
            elif n == 1024:
                target, ok = "no error, memory bounded", row["errors"] == 0
            out.append(
                (
                    f"{n} concurrent rollouts, mock model {r['latency_s'] * 1000:.0f} ms/call",
                    f"{row['rollouts_per_s']:.2f} rollouts/s, cpu {row.get('cpu_ms_per_rollout', float('nan')):.1f} ms/rollout "
                    f"({row.get('cpu_ms_per_step', float('nan')):.2f} ms/step), peak {row.get('peak_rss_mb', float('nan')):.0f} MB, {row['errors']} errors",
                    f"model-bound ideal {row['ideal_rollouts_per_s']:.2f} rollouts/s" if row["ideal_rollouts_per_s"] else "-",
                    f"env share {row['env_share'] * 100:.1f} %",
                    target,
                    met(ok),
                )
            )
        measured = [row["cpu_ms_per_rollout"] for row in r["levels"] if "cpu_ms_per_rollout" in row and row["concurrency"] >= 8]
        if measured:
            cpu_ms = statistics.median(measured)
            out.append(
                (
                    "CPU per rollout (median over levels >= 8)",
                    f"{cpu_ms:.1f} ms",
                    "issue 30's start: ~73-84 ms",
                    f"{80 / cpu_ms:.1f}x less",
                    "<= 8 ms",
                    met(cpu_ms <= 8),
                )
            )
    if "executor" in results:
        r = results["executor"]
        out.append(
            (
                f"{r['rollouts']} rollouts, --executor process --workers {r['workers']} (kept alive), mock {r['latency_s'] * 1000:.0f} ms/call",
                f"{r['process']['rollouts_per_s']:.2f} rollouts/s, {r['process']['errors']} errors, records identical: {r['identical']}",
                f"one process: {r['local']['rollouts_per_s']:.2f} rollouts/s",
                f"{r['speedup']:.2f}x",
                ">= 1.7x",
                met(r["speedup"] >= 1.7 and r["identical"]),
            )
        )
    if "client" in results:
        r = results["client"]
        out.append(
            (
                f"lean model client, {r['rollouts']} rollouts",
                f"cpu {r['lean_cpu_ms']:.1f} ms/rollout, records identical: {r['identical']}",
                f"litellm: cpu {r['litellm_cpu_ms']:.1f} ms/rollout",
                f"{r['ratio']:.1f}x less",
                "identical records",
                met(r["identical"]),
            )
        )
    if "warm" in results:
        r = results["warm"]
        out.append(
            (
                f"warm start {_size(r['bytes'])} universe",
                f"cpu {r['warm_cpu_s']:.3f} s, wall {r['warm_wall_s']:.3f} s",
                f"cold start: cpu {r['cold_cpu_s']:.3f} s",
                f"{r['cold_cpu_s'] / max(r['warm_cpu_s'], 1e-9):.1f}x less",
                "<= 0.05 s",
                met(r["warm_cpu_s"] <= 0.05),
            )
        )
    if "startup" in results:
        for row in results["startup"]["commands"]:
            out.append(
                (
                    row["command"],
                    f"wall {row['a_wall_s']:.2f} s, cpu {row['a_cpu_s']:.2f} s",
                    f"python -c pass: wall {row['b_wall_s']:.2f} s",
                    f"{row['wall_ratio']:.1f}x",
                    "<= 1 s",
                    met(row["a_wall_s"] <= 1),
                )
            )
    return out


def print_table(rows: list[Row]) -> None:
    header = ("figure", "orchestra", "baseline (same run)", "ratio", "target", "met")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"
    print(line)
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |")


@contextlib.contextmanager
def logging_disabled() -> Iterator[None]:
    """`logging.disable(WARNING)` for the block, the process's previous setting restored after it
    (the smoke test calls `main` in a pytest worker that runs other tests afterwards)."""
    before = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(before)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=FIGURES, default=list(FIGURES))
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a small, fast version of every figure (the smoke test): one small scenario, few repeats, no `replay --executor process` "
        "(--replay-workers is ignored); every row is marked a smoke-test figure, not comparable to the targets, and `met` is n/a",
    )
    parser.add_argument("--source", default="bundled", help="scenarios of the replay figure (default: the whole bundled corpus)")
    parser.add_argument("--pairs", type=int, default=1, help="A/B pairs of the replay figure")
    parser.add_argument(
        "--replay-workers",
        type=int,
        default=os.cpu_count() or 1,
        help="also time `replay --executor process --workers N` in every round of the replay figure, as ARE's harness runs a process pool (default: one worker per CPU, as ARE; 0: only the default executor; --quick: never)",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200, help="agent steps of the env-overhead figure")
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 8, 16, 64, 256, 1024], help="concurrent rollouts")
    parser.add_argument("--executor-level", type=int, default=256, help="concurrent rollouts of the executor figure")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="worker processes of the executor figure (default: one per CPU)")
    parser.add_argument("--latency", type=float, default=0.5, help="mock model latency per call, seconds")
    parser.add_argument("--executor-latency", type=float, default=0.0, help="mock model latency of the executor figure (default 0: CPU-bound)")
    parser.add_argument("--model-steps", type=int, default=4, help="model calls per rollout in the concurrency figure")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args(argv)
    if args.quick and args.source == "bundled":
        args.source = str(smallest_scenario())
    if args.quick:
        args.replay_workers = 0

    results: dict[str, Any] = {}
    for name in FIGURES:
        if name in args.only:
            t0 = time.perf_counter()
            with logging_disabled():  # ARE logs every event; the figures time the work, not the log lines
                results[name] = globals()[f"fig_{name}"](args)
            print(f"[{name}: {time.perf_counter() - t0:.0f} s]", file=sys.stderr, flush=True)
    print_table(table(results, quick=args.quick))
    if args.json:
        args.json.write_text(json.dumps({"argv": sys.argv[1:], "cores": os.cpu_count(), "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
