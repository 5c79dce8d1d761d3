"""`orchestra serve`'s own overhead: per step and per session start, at 1 and at 64 concurrent sessions.

One `orchestra serve` process on loopback; N clients (httpx, asyncio) each play step-mode episodes
of bundled scenarios with the session's oracle model answering through the proxy (`POST
/sessions/{id}/v1/chat/completions`, then `POST /sessions/{id}/step`). The server reports the time
each request spent in the episode itself (`Server-Timing: episode;dur=MS`: loading, stepping,
judging, the model); the server's overhead of a request is the client's wall minus that — HTTP,
JSON, routing, waiting for the event loop while other sessions work. Reported: median and p99 (ms)
of the overhead per step (the proxy call and the step together) and per session start, the
episodes' own time beside it, and that every episode's event-log hash is the same at every
concurrency (the records do not depend on how many sessions share the server).

    .venv/bin/python benchmarks/bench_serve.py [--concurrency 1 64] [--episodes 64] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
#: Small bundled scenarios of several capabilities (the starters: one per capability, and a multi-turn one).
SCENARIOS = (
    "bundled/starter_execution_calendar",
    "bundled/starter_search_lookup",
    "bundled/starter_time_deadline",
    "bundled/starter_adaptability_reply",
    "bundled/starter_ambiguity_clarify",
    "bundled/starter_multiturn_followup",
    "bundled/starter_execution_group_chat",
    "bundled/univ_00_time_text_in_3min",
)


@contextmanager
def serve(*args: str) -> Any:
    """`orchestra serve --port 0` in a subprocess; yields its base URL; stops it (SIGINT) after."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([str(Path(sys.executable).with_name("orchestra")), "serve", "--port", "0", *args], stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        url = None
        deadline = time.monotonic() + 120
        while url is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                raise RuntimeError(f"orchestra serve exited with {proc.returncode}")
            m = re.search(r"listening on (http://\S+)", line)
            url = m.group(1) if m else None
        if url is None:
            raise RuntimeError("orchestra serve did not start within 120 s")
        log: list[str] = []
        threading.Thread(target=lambda: log.extend(proc.stderr), daemon=True).start()  # a full pipe would stall the server
        try:
            yield url
        except BaseException:
            print("orchestra serve's stderr (last 40 lines):\n" + "".join(log[-40:]), file=sys.stderr)
            raise
    finally:
        proc.send_signal(2)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()


def _episode_ms(response: Any) -> float:
    m = re.search(r"episode;dur=([0-9.]+)", response.headers.get("server-timing", ""))
    return float(m.group(1)) if m else 0.0


async def play(client: Any, scenario: str, seed: int, timings: dict[str, list[tuple[float, float]]]) -> dict[str, Any]:
    """One step-mode episode, the session's oracle answering through the proxy; its final info."""
    t0 = time.perf_counter()
    r = await client.post("/sessions", json={"scenario": scenario, "model": "orchestra/oracle", "seed": seed})
    timings["start"].append(((time.perf_counter() - t0) * 1000, _episode_ms(r)))
    r.raise_for_status()
    session = r.json()
    sid, observation = session["session_id"], session["observation"]
    while True:
        t0 = time.perf_counter()
        c = await client.post(f"/sessions/{sid}/v1/chat/completions", json={"messages": observation["messages"], "tools": observation["tools"]})
        c.raise_for_status()
        s = await client.post(f"/sessions/{sid}/step", json={"completion": c.json()})
        s.raise_for_status()
        timings["step"].append(((time.perf_counter() - t0) * 1000, _episode_ms(c) + _episode_ms(s)))
        step = s.json()
        if step["done"]:
            return {"scenario": scenario, "seed": seed, **{k: step["info"].get(k) for k in ("event_log_sha256", "reward", "sim_seconds", "success")}}
        observation = step["observation"]


async def measure(url: str, concurrency: int, episodes: int) -> dict[str, Any]:
    import httpx

    timings: dict[str, list[tuple[float, float]]] = {"start": [], "step": []}
    jobs = [(SCENARIOS[i % len(SCENARIOS)], i) for i in range(episodes)]
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as client:
        gate = asyncio.Semaphore(concurrency)

        async def one(job: tuple[str, int]) -> dict[str, Any]:
            async with gate:
                return await play(client, *job, timings)

        t0 = time.perf_counter()
        results = await asyncio.gather(*(one(j) for j in jobs))
        wall = time.perf_counter() - t0
    out: dict[str, Any] = {"concurrency": concurrency, "episodes": episodes, "wall_s": round(wall, 2), "results": results}
    for kind, pairs in timings.items():
        overhead = [max(0.0, w - e) for w, e in pairs]
        out[kind] = {
            "n": len(pairs),
            "overhead_ms_median": round(statistics.median(overhead), 2),
            "overhead_ms_p99": round(_pct(overhead, 0.99), 2),
            "episode_ms_median": round(statistics.median(e for _, e in pairs), 2),
            "wall_ms_median": round(statistics.median(w for w, _ in pairs), 2),
        }
    return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 64])
    p.add_argument("--episodes", type=int, default=64)
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    report: dict[str, Any] = {"runs": []}
    with serve("--max-sessions", str(max(args.concurrency))) as url:
        for c in args.concurrency:
            run = asyncio.run(measure(url, c, args.episodes))
            report["runs"].append(run)
            print(
                f"concurrency {c:>4}: {run['episodes']} episodes in {run['wall_s']} s; overhead per step median {run['step']['overhead_ms_median']} ms"
                f" p99 {run['step']['overhead_ms_p99']} ms (episode's own {run['step']['episode_ms_median']} ms);"
                f" per session start median {run['start']['overhead_ms_median']} ms p99 {run['start']['overhead_ms_p99']} ms"
                f" (episode's own {run['start']['episode_ms_median']} ms)"
            )
    first = {(r["scenario"], r["seed"]): r for r in report["runs"][0]["results"]}
    same = all(first[(r["scenario"], r["seed"])] == r for run in report["runs"][1:] for r in run["results"])
    report["records_identical_across_concurrency"] = same
    print(f"records identical across concurrency: {same}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
