"""The collector while a batch runs (`orchestra.runs.collector`): the process's collector is as it
was after the last batch ends, whatever nested, overlapped or froze before; inside, the oldest
generation is swept by the batch, not by the counters."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from orchestra.runs import collector


@pytest.fixture(autouse=True)
def clean_collector() -> Iterator[None]:
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


def test_inside_a_batch_what_was_alive_is_frozen_and_the_oldest_generation_waits_for_the_batch() -> None:
    before = gc.get_threshold()
    with collector.batch_collection(concurrency=8):
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[:2] == before[:2] and gc.get_threshold()[2] > 10**6
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_nested_and_overlapping_batches_restore_once_the_last_ends() -> None:
    before = gc.get_threshold()
    entered, release = threading.Event(), threading.Event()

    def other_batch() -> None:
        with collector.batch_collection():
            entered.set()
            release.wait(10)

    with collector.batch_collection():
        thread = threading.Thread(target=other_batch)
        thread.start()
        assert entered.wait(10)
    assert gc.get_threshold() != before  # the other batch still runs
    release.set()
    thread.join(10)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_what_someone_else_froze_stays_frozen() -> None:
    gc.freeze()
    frozen = gc.get_freeze_count()
    with collector.batch_collection():
        assert gc.get_freeze_count() == frozen
    assert gc.get_freeze_count() == frozen


def test_the_batch_sweeps_every_interval_finished_rollouts(monkeypatch: pytest.MonkeyPatch) -> None:
    sweeps: list[int] = []
    monkeypatch.setattr(collector.gc, "collect", lambda generation=2: sweeps.append(generation) or 0)
    with collector.batch_collection(concurrency=100):
        for _ in range(250):
            collector.rollout_finished()
        assert sweeps == [2, 2]
    assert sweeps == [2, 2, 2]  # the 50 since the last sweep, at the end
    collector.rollout_finished()  # outside a batch: nothing
    assert len(sweeps) == 3


def test_off_leaves_the_collector_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(collector.BATCH_GC_ENV, "0")
    before = gc.get_threshold()
    with collector.batch_collection():
        assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_a_disabled_collector_stays_disabled_and_unchanged() -> None:
    before = gc.get_threshold()
    gc.disable()
    try:
        with collector.batch_collection():
            assert not gc.isenabled() and gc.get_threshold() == before and gc.get_freeze_count() == 0
    finally:
        gc.enable()
