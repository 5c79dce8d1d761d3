"""The sandbox backends the tests run on (`BACKENDS`, `require_backend`), and the host's resources
(`HostProbe`), measured around each attack; the `backend` fixture is tests/sandbox/conftest.py's.

The bwrap cases are skipped only where its start-up probe fails (no user namespaces here), and
the skip says why; under CI (`CI=true`) that is a failure instead, so a runner that silently lost
bubblewrap is noticed."""

from __future__ import annotations

import gc
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

BACKENDS = ["wasm", "bwrap"]


def require_backend(name: str) -> None:
    if name != "bwrap":
        return
    from orchestra.sandbox.bwrap import probe

    problem = probe()
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"bwrap cannot run on this CI machine: {problem}")
        pytest.skip(f"bwrap cannot run here (its start-up probe failed: {problem})")


# ---------------------------------------------------------------- the host's resources, measured


@dataclass(frozen=True)
class Usage:
    """What the test process (the host) holds at one moment: resident and peak memory, CPU seconds
    (its own, its reaped children's and its live descendants', so a bwrap guest counts), threads
    and live descendant processes."""

    rss_mb: float
    peak_mb: float
    cpu_s: float
    threads: int
    processes: int


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def _descendants() -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [os.getpid()]
    while frontier:
        pid = frontier.pop()
        children = [child for child, parent in parents.items() if parent == pid]
        found += children
        frontier += children
    return found


def _cpu_of(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def usage() -> Usage:
    times = os.times()
    descendants = _descendants()
    return Usage(
        rss_mb=_status_mb("VmRSS"),
        peak_mb=_status_mb("VmHWM"),
        cpu_s=times.user + times.system + times.children_user + times.children_system + sum(_cpu_of(p) for p in descendants),
        threads=threading.active_count(),
        processes=len(descendants),
    )


def reset_peak() -> None:
    """Start a new peak-RSS window (VmHWM; Linux: write 5 to clear_refs)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:  # pragma: no cover - an old kernel: the peak then covers the whole run
        pass


@dataclass
class HostProbe:
    """The host's usage before an attack; `assert_bounded` checks it after: memory, CPU seconds,
    threads and processes back (or within bounds), whatever the guest did."""

    before: Usage = field(default_factory=usage)

    def __post_init__(self) -> None:
        gc.collect()
        reset_peak()
        self.before = usage()

    def settle(self, seconds: float = 3.0) -> Usage:
        """Usage once threads and processes the sandbox ended are gone (they may take a moment)."""
        deadline = time.monotonic() + seconds
        while True:
            gc.collect()
            now = usage()
            if (now.threads <= self.before.threads and now.processes <= self.before.processes) or time.monotonic() > deadline:
                return now

    def assert_bounded(self, *, peak_mb: float = 250.0, kept_mb: float = 60.0, cpu_s: float | None = None) -> Usage:
        after = self.settle()
        assert after.threads <= self.before.threads, f"threads {self.before.threads} -> {after.threads}"
        assert after.processes <= self.before.processes, f"processes {self.before.processes} -> {after.processes}"
        assert after.peak_mb - self.before.rss_mb < peak_mb, f"peak RSS {self.before.rss_mb:.0f} -> {after.peak_mb:.0f} MB"
        assert after.rss_mb - self.before.rss_mb < kept_mb, f"RSS kept {self.before.rss_mb:.0f} -> {after.rss_mb:.0f} MB"
        if cpu_s is not None:
            assert after.cpu_s - self.before.cpu_s < cpu_s, f"CPU {after.cpu_s - self.before.cpu_s:.1f} s"
        return after
