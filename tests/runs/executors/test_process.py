"""`--executor process`: worker processes give `local`'s records; a killed worker costs only its rollouts;
a kept-alive pool (`keep_alive=True`) serves many batches, from many event loops, with the same workers."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import anyio
import pytest

from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.record import RolloutRecord
from orchestra.runs.executors.process import ProcessExecutor
from orchestra.runs.executors.worker import HostRecipe
from orchestra.runs.runner import execute_all
from support.executor_batches import InlinePlugin, line, oracle_team_batch, run_batch


def test_records_equal_local_on_the_subset(subset: Path, subset_reference: list[str]) -> None:
    records = run_batch(oracle_team_batch([str(subset)]), executor="process", workers=2)
    assert [r.status for r in records] == ["PASS"] * len(subset_reference)
    assert sorted(line(r) for r in records) == subset_reference  # event-log hashes included


def test_a_killed_worker_costs_only_the_rollout_it_held(subset: Path, subset_reference: list[str]) -> None:
    batch = oracle_team_batch([str(subset)])
    executor = ProcessExecutor(workers=2)
    seen: set[int] = set()

    async def go() -> list[RolloutRecord]:
        out: list[RolloutRecord] = []
        async for record in executor.run(batch, host=Host.create(), judge_pool=None, concurrency=1):
            seen.update(executor.pids)
            if not out:  # the first two specs went to workers 0 and 1; kill the one still running its rollout
                os.kill(executor.pids[1 if record.spec == batch[0][0] else 0], signal.SIGKILL)
            out.append(record)
        return out

    records = anyio.run(go)
    assert len(seen) >= 2 and executor.pids == [] and all(_gone(pid) for pid in seen)  # without keep_alive: stopped with the batch
    assert len(records) == len(batch)
    died = [r for r in records if r.status == "ERROR"]
    assert len(died) == 1
    assert "died (exit status -9)" in (died[0].error or "") and "a resumed run runs it again" in (died[0].error or "")
    assert died[0].spec is not None and died[0].result is None
    kept = sorted(line(r) for r in records if r.status != "ERROR")
    assert set(kept) <= set(subset_reference) and len(kept) == len(batch) - 1  # the others, untouched


def test_the_host_recipe_carries_inline_plugins_and_log_levels(monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    host = Host.create([InlinePlugin(3)])
    monkeypatch.setattr(logging.getLogger("are"), "level", logging.CRITICAL)  # as the CLI quiets ARE
    recipe = HostRecipe.of(host)
    assert [kind for kind, _ in recipe.inline] == ["object"]
    monkeypatch.setattr(logging.getLogger("are"), "level", logging.NOTSET)  # a fresh worker process
    rebuilt = recipe.build()
    assert rebuilt.plugin_names == host.plugin_names
    assert rebuilt.pm.get_plugin("InlinePlugin").n == 3
    assert logging.getLogger("are").level == logging.CRITICAL


def test_a_worker_shows_warnings_as_its_caller_does() -> None:
    """Under the CLI (`one_line_warnings`) a worker shows orchestra's warnings as one line too."""
    import warnings

    from orchestra.errors import OneLineWarnings, one_line_warnings

    assert not HostRecipe.of(Host.create()).one_line_warnings
    with one_line_warnings():
        recipe = HostRecipe.of(Host.create())
    assert recipe.one_line_warnings
    with warnings.catch_warnings():  # the worker's process-wide setting, undone here
        recipe.build()
        assert isinstance(warnings.showwarning, OneLineWarnings)


class _HoldsALambda:
    def __init__(self) -> None:
        self.callback = lambda: None  # not picklable


def test_a_plugin_that_cannot_travel_is_a_clear_error() -> None:
    plugin = _HoldsALambda()
    with pytest.raises(OrchestraError, match="cannot be sent to worker processes.*--executor local"):
        HostRecipe.of(Host.create([plugin]))


def test_a_judge_pool_and_bad_settings_are_refused(subset: Path) -> None:
    batch = oracle_team_batch([str(subset)])

    async def go(**kwargs: object) -> None:
        async for _ in execute_all(batch, **kwargs):  # type: ignore[arg-type]
            pass

    from orchestra.are.judge_pool import JudgePool

    with pytest.raises(OrchestraError, match="judge pool lives in one process"):
        anyio.run(lambda: go(executor="process", judge_pool=JudgePool()))
    with pytest.raises(OrchestraError, match="--workers is for --executor process or ray"):
        anyio.run(lambda: go(executor="local", workers=2))
    with pytest.raises(OrchestraError, match="--ray-address is for --executor ray"):
        anyio.run(lambda: go(executor="process", address="127.0.0.1:1"))
    with pytest.raises(OrchestraError, match="unknown executor 'dask'"):
        anyio.run(lambda: go(executor="dask"))
    with pytest.raises(OrchestraError, match="workers=2 builds a named executor; the process executor given is built already"):
        anyio.run(lambda: go(executor=ProcessExecutor(1), workers=2))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--workers", "2"], "--workers is for --executor process or ray"),
        (["--executor", "process", "--ray-address", "127.0.0.1:1"], "--ray-address is for --executor ray, not process"),
    ],
)
def test_cli_options_that_do_not_fit_the_executor_fail_first(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str) -> None:
    from orchestra.cli import main

    out = tmp_path / "run"
    assert main(["run", "--team", "oracle", "--scenarios", "bundled", "--out", str(out), *extra]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()  # nothing loaded, nothing written


def test_rl_rollouts_run_in_worker_processes_against_the_users_endpoint() -> None:
    """orchestra.rl's batched rollouts through the same seam: the workers call the endpoint themselves."""
    from orchestra.rl import EnvConfig
    from orchestra.rl.batches import rollouts
    from orchestra_dev.mock_openai import MockServer
    from support.helpers import scenario

    specs = [EnvConfig(max_steps=3).spec(scenario(name)) for name in ("starter_search_lookup", "starter_execution_calendar")]

    async def go(server: MockServer, **kwargs: object) -> list[RolloutRecord]:
        return [r async for r in rollouts(specs, server.base_url, model="mock-policy", **kwargs)]  # type: ignore[arg-type]

    with MockServer(latency=0.0) as server:
        local = anyio.run(lambda: go(server))
        calls = server.requests
        in_workers = anyio.run(lambda: go(server, executor="process", workers=2))
    assert all(r.result is not None and r.error is None and r.result.model_calls == 3 for r in in_workers)
    # every model call of the second batch reached the server from a worker (its preflight passed in the first)
    assert server.requests - calls == sum(r.result.model_calls for r in in_workers if r.result is not None)

    def summary(records: list[RolloutRecord]) -> list[tuple[object, ...]]:  # the mock numbers its replies (ids, so token counts, differ run to run)
        return sorted((r.scenario_id, r.status, r.result.reward, r.result.steps, r.result.model_calls) for r in records if r.result is not None)

    assert summary(in_workers) == summary(local)


def _gone(pid: int) -> bool:
    """The process has exited (gone, or a zombie its parent has not reaped yet)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def _wait_exited(pid: int) -> None:
    """Until this process's child `pid` has exited, as `multiprocessing` sees it (a killed worker's
    main thread shows as a zombie in /proc before its other threads have exited and it can be reaped)."""
    import multiprocessing

    deadline = time.monotonic() + 30
    while any(child.pid == pid for child in multiprocessing.active_children()):
        assert time.monotonic() < deadline, f"worker {pid} still runs"
        time.sleep(0.05)


def test_a_kept_alive_pool_serves_batches_of_separate_event_loops(subset: Path, subset_reference: list[str]) -> None:
    """A trainer's steps: each batch in its own `anyio.run`, the same workers; a dead one is replaced."""
    batch = oracle_team_batch([str(subset)])
    with ProcessExecutor(workers=2, keep_alive=True) as executor:
        first = run_batch(batch, executor=executor)
        pids = list(executor.pids)
        assert len(pids) == 2 and not any(_gone(pid) for pid in pids)  # alive between the batches
        second = run_batch(batch, executor=executor, concurrency=2)  # a new event loop, two rollouts at once on each worker
        assert executor.pids == pids
        for records in (first, second):
            assert sorted(line(r) for r in records) == subset_reference  # event-log hashes and rewards included

        os.kill(pids[0], signal.SIGKILL)  # a worker dies between batches
        _wait_exited(pids[0])
        third = run_batch(batch, executor=executor)
        assert sorted(line(r) for r in third) == subset_reference  # nothing lost: the dead worker was replaced before the batch
        assert executor.pids[1] == pids[1] and executor.pids[0] not in pids
        replacement = executor.pids[0]

        executor.close()
        assert executor.pids == []
        assert all(_gone(pid) for pid in (*pids, replacement))
    # leaving the block closes it again: a no-op


def test_a_kept_alive_pool_restarts_for_another_host_and_stops_with_its_block(subset: Path) -> None:
    batch = oracle_team_batch([str(subset)])[:1]

    async def records(executor: ProcessExecutor, host: Host) -> list[RolloutRecord]:
        return [r async for r in execute_all(batch, host=host, executor=executor)]

    async def go() -> tuple[list[int], list[int]]:
        async with ProcessExecutor(1, keep_alive=True) as executor:
            assert [r.status for r in await records(executor, Host.create())] == ["PASS"]
            first = list(executor.pids)
            run = executor.run(batch, host=Host.create(), judge_pool=None, concurrency=1)  # an equal host: the same worker
            assert (await run.__anext__()).status == "PASS"
            with pytest.raises(OrchestraError, match="one batch at a time"):  # that batch has not ended yet
                await records(executor, Host.create())
            await run.aclose()  # ended early, holding no rollout: the worker stays
            assert executor.pids == first
            assert [r.status for r in await records(executor, Host.create([InlinePlugin(1)]))] == ["PASS"]  # other plugins
            second = list(executor.pids)
            assert second != first and _gone(first[0])  # workers built for one host never serve another's
        return first, second

    first, second = anyio.run(go)
    assert all(_gone(pid) for pid in (*first, *second))


def test_rl_rollouts_reuse_a_kept_alive_pool_across_training_steps() -> None:
    """`rollouts(executor=ProcessExecutor(keep_alive=True))` once per step, each step its own `anyio.run`."""
    from orchestra.rl import EnvConfig
    from orchestra.rl.batches import rollouts
    from orchestra_dev.mock_openai import MockServer
    from support.helpers import scenario

    specs = [EnvConfig(max_steps=3).spec(scenario(name)) for name in ("starter_search_lookup", "starter_execution_calendar")]

    async def step(server: MockServer, **kwargs: object) -> list[RolloutRecord]:
        return [r async for r in rollouts(specs, server.base_url, model="mock-policy", **kwargs)]  # type: ignore[arg-type]

    def summary(records: list[RolloutRecord]) -> list[tuple[object, ...]]:
        return sorted((r.scenario_id, r.status, r.result.reward, r.result.steps, r.result.model_calls) for r in records if r.result is not None)

    with MockServer(latency=0.0) as server, ProcessExecutor(1, keep_alive=True) as pool:
        local = summary(anyio.run(lambda: step(server)))
        with pytest.raises(OrchestraError, match="workers=2 builds a named executor"):  # the pool has its own workers
            anyio.run(lambda: step(server, executor=pool, workers=2))
        summaries, pids = [], []
        for _ in range(2):  # two training steps
            summaries.append(summary(anyio.run(lambda: step(server, executor=pool))))
            pids.append(list(pool.pids))
    assert summaries == [local, local] and len(local) == 2
    assert pids[0] == pids[1] and len(pids[0]) == 1  # the same worker served both steps
    assert _gone(pids[0][0])  # and stopped with the block
