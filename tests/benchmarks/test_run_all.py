"""Smoke test of benchmarks/run_all.py: it runs and prints its table (no timing is asserted)."""

from __future__ import annotations

import importlib.util
import json
import logging

from support.helpers import REPO


def load_run_all():
    spec = importlib.util.spec_from_file_location("run_all", REPO / "benchmarks" / "run_all.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_benchmark_runs_the_env_step_figure_and_prints_the_table(tmp_path, capsys):
    run_all = load_run_all()
    out = tmp_path / "figures.json"
    logging_before = logging.root.manager.disable
    assert run_all.main(["--quick", "--only", "step", "--json", str(out)]) == 0
    assert logging.root.manager.disable == logging_before  # the process's logging is as it was (other tests follow in this worker)
    step = json.loads(out.read_text())["results"]["step"]
    assert step["steps"] == 20 and step["median_ms"] > 0 and step["p99_ms"] >= step["median_ms"] and step["raw_median_ms"] > 0
    printed = capsys.readouterr().out
    assert "env overhead per agent step" in printed and "median <= 2 ms" in printed
    header, _, row = printed.strip().splitlines()
    assert header.rstrip(" |").endswith("| met") and "[--quick smoke test: not comparable to the target]" in row
    assert row.rstrip(" |").endswith("| n/a")


def test_the_table_has_a_row_per_figure_with_its_baseline_and_target():
    run_all = load_run_all()
    results = {
        "replay": {"scenarios": 51, "a_cpu_s": 20.0, "a_wall_s": 25.0, "b_cpu_s": 40.0, "b_wall_s": 30.0, "cpu_ratio": 0.5, "wall_ratio": 0.8},
        "startup": {"commands": [{"command": "orchestra --help", "a_wall_s": 0.3, "a_cpu_s": 0.1, "b_wall_s": 0.1, "wall_ratio": 3.0}]},
    }
    rows = run_all.table(results)
    assert [r[0] for r in rows] == ["replay 51 scenarios, judged (whole process)", "orchestra --help"]
    assert rows[0][3] == "cpu 0.50x, wall 0.80x" and rows[0][4] == "<= 0.25x" and rows[1][4] == "<= 1 s"
    assert [r[5] for r in rows] == ["no", "yes"]  # issue 30's target: 0.25x


def test_met_says_whether_each_target_is_met_and_quick_marks_every_row_a_smoke_test():
    run_all = load_run_all()
    levels = [
        {"concurrency": n, "rollouts_per_s": per_s, "peak_rss_growth_mb_per_rollout": 0.1, "errors": 0, "ideal_rollouts_per_s": 2.0, "env_share": share}
        for n, share, per_s in ((8, 0.5, 1.0), (256, 0.04, 120.0))
    ]
    results = {
        "replay": {"scenarios": 1, "a_cpu_s": 27.0, "a_wall_s": 27.0, "b_cpu_s": 10.0, "b_wall_s": 10.0, "cpu_ratio": 2.7, "wall_ratio": 2.7},
        "cold": {"bytes": 1e6, "cpu_s": 0.25, "wall_s": 0.4, "are_cpu_s": 1.0},
        "step": {"median_ms": 1.0, "p99_ms": 12.0, "raw_median_ms": 0.1},
        "concurrency": {"latency_s": 0.5, "judge_build_cpu_s": 4.0, "judge_clone_cpu_s": 0.001, "levels": levels},
        "startup": {"commands": [{"command": "orchestra --help", "a_wall_s": 1.5, "a_cpu_s": 0.9, "b_wall_s": 0.1, "wall_ratio": 15.0}]},
    }
    assert [r[5] for r in run_all.table(results)] == ["no", "yes", "no", "n/a", "n/a", "yes", "no"]
    quick = run_all.table(results, quick=True)
    assert [r[5] for r in quick] == ["n/a"] * 7
    assert all(r[0].endswith("[--quick smoke test: not comparable to the target]") for r in quick)
    assert quick[0][3] == "cpu 2.70x, wall 2.70x"  # the figure itself is still shown


def test_the_concurrency_rows_show_a_judge_built_against_a_judge_cloned():
    run_all = load_run_all()
    level = {"concurrency": 64, "rollouts_per_s": 2.8, "peak_rss_growth_mb_per_rollout": 0.8, "errors": 0, "ideal_rollouts_per_s": 32.0, "env_share": 0.91}
    results = {"concurrency": {"latency_s": 0.5, "judge_build_cpu_s": 4.0, "judge_clone_cpu_s": 0.001, "levels": [level]}}
    rows = run_all.table(results)
    assert rows[0] == ("one more judge for a concurrent rollout", "cloned: cpu 1.00 ms", "built: cpu 4.00 s", "4000x cheaper", "-", "n/a")
    assert rows[1][0] == "64 concurrent rollouts, mock model 500 ms/call" and rows[1][3] == "env share 91.0 %"


def test_the_replay_figure_also_compares_the_process_executor_with_ares_pool(monkeypatch):
    """Every round runs ours, ARE's, ours with `--executor process --workers N`; each ratio is against ARE's run of its round."""
    run_all = load_run_all()
    times = iter([(10.0, 20.0), (20.0, 40.0), (6.0, 30.0), (12.0, 18.0), (24.0, 40.0), (8.0, 34.0)])
    ran: list[list[str]] = []

    def fake_timed_child(argv, *, cwd):
        ran.append(argv)
        return next(times)

    monkeypatch.setattr(run_all, "timed_child", fake_timed_child)
    args = run_all.argparse.Namespace(source=str(run_all.smallest_scenario()), pairs=2, replay_workers=3)
    figures = run_all.fig_replay(args)
    assert len(ran) == 6 and ran[2][-4:] == ["--executor", "process", "--workers", "3"] and "--executor" not in ran[0]
    assert figures["cpu_ratio"] == 0.475 and figures["process"]["workers"] == 3
    assert figures["process"]["cpu_ratio"] == (30.0 / 40 + 34.0 / 40) / 2 and figures["process"]["a_wall_s"] == 7.0
    rows = run_all.table({"replay": figures})
    assert rows[1][0] == "replay 1 scenario, judged, --executor process --workers 3" and rows[1][4] == "<= 0.25x"


def test_issue_30s_figures_have_their_rows_and_targets():
    run_all = load_run_all()
    level = {
        "concurrency": 256,
        "rollouts_per_s": 31.6,
        "peak_rss_growth_mb_per_rollout": 0.5,
        "peak_rss_mb": 544.0,
        "errors": 0,
        "ideal_rollouts_per_s": 128.0,
        "env_share": 0.75,
        "cpu_ms_per_rollout": 23.4,
        "cpu_ms_per_step": 5.85,
    }
    results = {
        "warm": {"bytes": 2.6e6, "cold_cpu_s": 0.6, "cold_wall_s": 0.6, "warm_cpu_s": 0.04, "warm_wall_s": 0.04},
        "concurrency": {"latency_s": 0.5, "judge_build_cpu_s": 4.0, "judge_clone_cpu_s": 0.001, "levels": [level]},
        "executor": {
            "rollouts": 256,
            "workers": 2,
            "latency_s": 0.0,
            "local": {"rollouts_per_s": 30.0, "errors": 0},
            "process": {"rollouts_per_s": 54.0, "errors": 0},
            "speedup": 1.8,
            "identical": True,
        },
        "client": {"rollouts": 64, "lean_cpu_ms": 20.0, "litellm_cpu_ms": 70.0, "ratio": 3.5, "identical": True},
    }
    rows = {r[0]: r for r in run_all.table(results)}
    assert rows["256 concurrent rollouts, mock model 500 ms/call"][5] == "no"  # 31.6 rollouts/s < 100
    assert rows["CPU per rollout (median over levels >= 8)"][1:] == ("23.4 ms", "issue 30's start: ~73-84 ms", "3.4x less", "<= 8 ms", "no")
    assert rows["256 rollouts, --executor process --workers 2 (kept alive), mock 0 ms/call"][3:] == ("1.80x", ">= 1.7x", "yes")
    assert rows["lean model client, 64 rollouts"][3:] == ("3.5x less", "identical records", "yes")
    assert rows["warm start 2.6 MB universe"][4:] == ("<= 0.05 s", "yes")
