"""The whole bundled corpus with the oracle team: `process` and `ray` give `local`'s records, event-log hashes included (slow)."""

from __future__ import annotations

import logging
import os

import pytest

from support.executor_batches import line, oracle_team_batch, run_batch, whole_corpus


@pytest.mark.slow
def test_process_and_ray_equal_local_on_the_whole_corpus() -> None:
    ray = pytest.importorskip("ray") if os.environ.get("CI") != "true" else __import__("ray")
    batch = oracle_team_batch(whole_corpus())
    local = run_batch(batch)
    assert len(local) == len(batch) and all(r.status == "PASS" for r in local)
    reference = sorted(line(r) for r in local)
    hashes = sorted((r.source, r.result.event_log_sha256) for r in local if r.result is not None)

    process = run_batch(batch, executor="process", workers=2)
    assert sorted(line(r) for r in process) == reference
    assert sorted((r.source, r.result.event_log_sha256) for r in process if r.result is not None) == hashes

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(
            address="local",
            num_cpus=2,
            include_dashboard=False,
            object_store_memory=80 * 1024 * 1024,
            _node_ip_address="127.0.0.1",
            logging_level=logging.ERROR,
        )
        try:
            on_ray = run_batch(batch, executor="ray", workers=2)
        finally:
            ray.shutdown()
    assert sorted(line(r) for r in on_ray) == reference
    assert sorted((r.source, r.result.event_log_sha256) for r in on_ray if r.result is not None) == hashes
