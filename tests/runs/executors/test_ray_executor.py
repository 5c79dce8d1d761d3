"""`--executor ray` on a local Ray cluster this module starts (two CPUs, loopback, no dashboard, a
small object store; shut down even when a test fails): `local`'s records; a worker killed mid-run
loses no finished result and the rerun completes only what is missing."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.executor_batches import line, oracle_team_batch, run_batch
from support.helpers import REPO

if os.environ.get("CI") == "true":
    import ray  # CI installs the full lock, which has Ray: a missing Ray fails there
else:
    ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Ray cluster driven by this test process; its GCS address."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
        context = ray.init(
            address="local",
            num_cpus=2,
            include_dashboard=False,
            object_store_memory=80 * 1024 * 1024,
            _node_ip_address="127.0.0.1",
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
        try:
            yield context.address_info["gcs_address"]
        finally:
            ray.shutdown()


def test_records_equal_local_on_the_subset(cluster: str, subset: Path, subset_reference: list[str]) -> None:
    records = run_batch(oracle_team_batch([str(subset)]), executor="ray", workers=2)
    assert [r.status for r in records] == ["PASS"] * len(subset_reference)
    assert sorted(line(r) for r in records) == subset_reference  # event-log hashes included


def _descendants(root: int) -> dict[int, str]:
    """The processes below `root`, with their command lines (Ray names its actor processes `ray::Class...`)."""
    children: dict[int, list[int]] = {}
    titles: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            titles[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    out, todo = {}, [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out[child] = titles.get(child, "")
            todo.append(child)
    return out


def _lines(out: Path) -> list[str]:
    path = out / "results.jsonl"
    return [x for x in path.read_text().splitlines() if x.strip()] if path.is_file() else []


def test_a_killed_worker_loses_no_finished_result_and_the_rerun_completes_the_rest(
    cluster: str, subset: Path, subset_reference: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "run"
    argv = [sys.executable, "-m", "orchestra.cli", "run", "--team", "oracle", "--scenarios", str(subset), "--out", str(out), "--no-progress"]
    argv += ["--executor", "ray", "--workers", "2", "--ray-address", cluster]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        while not _lines(out):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run never finished a rollout"
            time.sleep(0.05)
        before = _lines(out)
        actors = [pid for pid, title in _descendants(os.getpid()).items() if title.startswith("ray::RolloutWorker")]
        assert actors, "no Ray worker process found"
        for pid in actors:  # the other worker is mid-rollout: its rollout is lost, nothing finished is
            os.kill(pid, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, stderr[-3000:]  # some rollout ended as an ERROR: the worker died
    after = _lines(out)
    assert set(before) <= set(after)  # every finished record kept
    errors = [x for x in after if '"error":"' in x and "Ray worker running this rollout died" in x]
    assert errors, stderr[-3000:]
    assert len(after) == len(subset_reference)

    rerun = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    finished = len(subset_reference) - len(errors)
    assert f"{finished} of {len(subset_reference)} rollout(s) finished before, {len(errors)} ERROR rollout(s) run again; running {len(errors)}" in rerun.stderr
    assert sorted(_lines(out)) == subset_reference  # as an uninterrupted run's


def test_orchestra_never_imports_ray_unless_the_ray_executor_runs(subset: Path) -> None:
    code = (
        "import sys, orchestra, orchestra.runs.runner, orchestra.rl.env, orchestra.cli, orchestra.runs.executors.process\n"
        "from orchestra.cli import main\n"
        "from orchestra.host import Host\n"
        "Host.create().executor('process', workers=2)\n"
        f"assert main(['scenarios', {str(subset)!r}]) == 0\n"
        "print('ray' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split()[-1] == "False"
