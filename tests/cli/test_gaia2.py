"""`orchestra gaia2`: three phases, ARE's submission layout read back by ARE's own code, resume.

Fast tests run on a Gaia2-layout folder of the small starter scenarios; the whole bundled corpus
is `slow`."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from orchestra.cli import main
from support.helpers import gaia2_folder as make_gaia2_folder

COLUMNS = ["Execution", "Search", "Adaptability", "Time", "Ambiguity", "Agent2Agent", "Noise"]


@pytest.fixture(scope="module")
def gaia2_folder(tmp_path_factory) -> Path:
    """A Gaia2 folder in ARE's layout (`<config>/validation/*.json`): one starter per config."""
    return make_gaia2_folder(tmp_path_factory.mktemp("gaia2"))


def _files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def submission(gaia2_folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("out") / "sub"
    argv = ["gaia2", "--team", "oracle", "--runs", "2", "--source", str(gaia2_folder), "--out", str(out), "--no-progress", "--json"]
    return out, argv, main(argv)


def test_three_phases_in_ares_layout(submission, capsys):
    out, _, rc = submission
    assert rc == 0
    for phase, config in [("standard", c) for c in ("execution", "search", "adaptability", "time", "ambiguity")] + [("agent2agent", "mini"), ("noise", "mini")]:
        folder = out / phase / config
        lines = [json.loads(line) for line in (folder / "output.jsonl").read_text().splitlines()]
        # the oracle passes everything but noise: its tool failures cost it scenarios (the records say)
        expected = [1.0, 1.0] if phase != "noise" else [json.loads(r)["result"]["reward"] for r in (out / "noise" / "results.jsonl").read_text().splitlines()]
        assert [(line["metadata"]["run_number"], line["score"]) for line in lines] == [(1, expected[0]), (2, expected[1])]
        traces = sorted((folder / "hf").glob("*.json"))
        assert [Path(line["trace_id"]).name for line in lines] == [t.name for t in traces]
        trace = json.loads(traces[0].read_text())
        definition = trace["metadata"]["definition"]
        assert definition["config"] == config and definition["run_number"] == 1
        assert definition["has_a2a_augmentation"] is (phase == "agent2agent")
        assert definition["has_tool_augmentation"] is definition["has_env_events_augmentation"] is (phase == "noise")
        assert trace["metadata"]["annotation"]["validation_decision"] == ("Valid" if expected[0] == 1.0 else "Invalid") and trace["completed_events"]
    assert (out / "standard" / "results.jsonl").is_file() and (out / "noise" / "manifest.json").is_file()
    table = json.loads((out / "gaia2_table.json").read_text())
    assert [c["name"] for c in table["columns"]] == COLUMNS
    assert all(c["pass_hat_k"] == 1.0 for c in table["columns"][:-1])
    noise = [json.loads(line) for line in (out / "noise" / "results.jsonl").read_text().splitlines()]
    assert noise[0]["spec"]["session"]["noise"]["tool_failure_probability"] == 0.1  # the setting is recorded
    assert sum(r["result"]["noise"]["tool_failures"] + r["result"]["noise"]["env_events"] for r in noise) > 0  # and it fired
    assert table["columns"][-1]["pass_at_1"]["mean"] == sum(r["result"]["reward"] for r in noise) / 2
    assert table["overall"]["mean"] == pytest.approx((6 + table["columns"][-1]["pass_at_1"]["mean"]) / 7)


def test_ares_own_reader_agrees(submission):
    """ARE's upload script reads the folder back; ARE's statistics equal the table; ARE's benchmark
    loader imports every trace with its completed events."""
    from orchestra.are.submission import load_traces, read_submission

    out, _, _ = submission
    stats = read_submission(out, model="orchestra/oracle")["statistics"]
    table = json.loads((out / "gaia2_table.json").read_text())
    assert sorted(stats["per_capability"]) == sorted(["execution", "search", "adaptability", "time", "ambiguity", "mini_agent2agent", "mini_noise"])
    assert stats["global"]["macro_success_rate"] == pytest.approx(100 * table["overall"]["mean"])
    assert json.loads((out / "computed_stats.json").read_text())["statistics"] == json.loads(json.dumps(stats))
    loaded = load_traces(out / "standard" / "execution" / "output.jsonl")
    assert [(sid, n) for sid, n, _ in loaded] == [("starter_execution_calendar", 1), ("starter_execution_calendar", 2)]
    assert all(events > 0 for _, _, events in loaded)


def test_rerun_resumes_and_changes_nothing(submission, capsys):
    out, argv, _ = submission
    before = _files(out)
    capsys.readouterr()
    assert main([a if a != "--json" else "--no-preflight" for a in argv]) == 0
    err = capsys.readouterr().err
    assert err.count("finished before; not run again") == 3
    assert _files(out) == before  # byte-identical: traces, output.jsonl, reports


def test_uses_the_hf_dataset_when_cached(gaia2_folder, tmp_path, monkeypatch, capsys):
    """With every config in the HF cache the dataset is the source; traces refer to it (no apps)."""
    from orchestra import scenario_files

    def cached(config, split, revision, *, source):
        folder = gaia2_folder / config / "validation"
        return [{"scenario_id": p.stem, "data": p.read_text()} for p in sorted(folder.glob("*.json"))]

    monkeypatch.setattr(scenario_files, "load_hf_dataset", cached)
    monkeypatch.setattr("orchestra.gaia2.sources.load_hf_dataset", cached)
    out = tmp_path / "hf"
    assert main(["gaia2", "--model", "orchestra/oracle", "--scaffold", "react", "--runs", "1", "--out", str(out), "--no-progress", "--no-preflight"]) == 0
    assert "scenarios: the Gaia2 dataset" in capsys.readouterr().err
    trace = json.loads(next((out / "standard" / "time" / "hf").glob("*.json")).read_text())
    assert trace["apps"] == [] and trace["metadata"]["definition"]["hf_metadata"]["dataset"].endswith("gaia2")


def test_bad_source_is_one_line(tmp_path, capsys):
    assert main(["gaia2", "--team", "oracle", "--source", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2
    assert "--source" in capsys.readouterr().err


@pytest.mark.slow
def test_oracle_team_on_the_whole_bundled_corpus(tmp_path, capsys):
    """The acceptance run: `orchestra gaia2 --team oracle` on the bundled corpus, three runs."""
    out = tmp_path / "bundled"
    start = time.monotonic()
    assert main(["gaia2", "--team", "oracle", "--source", "bundled", "--out", str(out), "--no-progress", "--concurrency", "2"]) == 0
    err = capsys.readouterr().err
    print(f"wall time: {time.monotonic() - start:.0f} s")
    for name in COLUMNS + ["Gaia2"]:
        assert name in err
    table = json.loads((out / "gaia2_table.json").read_text())
    assert [(c["name"], c["scenarios"], c["errors"]) for c in table["columns"]] == [
        ("Execution", 13, 0),
        ("Search", 9, 0),
        ("Adaptability", 13, 0),
        ("Time", 8, 0),
        ("Ambiguity", 8, 0),
        ("Agent2Agent", 12, 0),
        ("Noise", 12, 0),
    ]
    # the oracle passes everything but noise: the noise fires (tool failures and environment events
    # on most rollouts) and costs it some scenarios (measured: 24 of 36 passed, 31 rollouts with noise)
    assert all(c["pass_at_1"]["mean"] == 1.0 for c in table["columns"][:-1])
    assert 0.0 < table["columns"][-1]["pass_at_1"]["mean"] < 1.0 and table["overall"]["mean"] < 1.0
    noise = [json.loads(line)["result"]["noise"] for line in (out / "noise" / "results.jsonl").read_text().splitlines()]
    assert len(noise) == 36 and sum(n["tool_failures"] > 0 for n in noise) > 0 and sum(n["env_events"] > 0 for n in noise) > 18


def test_a_folder_of_another_configuration_is_refused_before_anything_runs(gaia2_folder, tmp_path, capsys):
    """The noise phase's setting differs: refused at once, naming the phase's folder and the whole
    submission folder to delete — not after the standard phase ran its missing rollouts."""
    team = tmp_path / "team.yaml"
    team.write_text("name: mine\nmain:\n  scaffold: tool_calling\n  model: orchestra/oracle\n")
    noisier = tmp_path / "noisier.yaml"
    noisier.write_text(team.read_text() + "session:\n  noise:\n    tool_failure_probability: 0.5\n")
    out = tmp_path / "sub"
    argv = [
        "gaia2",
        "--runs",
        "1",
        "--source",
        str(gaia2_folder),
        "--id",
        "starter_execution_calendar",
        "--id",
        "starter_multiturn_followup",
        "--out",
        str(out),
        "--no-progress",
        "--no-preflight",
    ]
    assert main([*argv, "--team", str(team)]) == 0
    before = (out / "standard" / "results.jsonl").read_text()
    capsys.readouterr()
    assert main([a if a != "1" else "2" for a in argv] + ["--team", str(noisier)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"orchestra: error: {out / 'noise'} holds a run of another configuration (")
    assert err[-1].endswith(f"will not resume into it: use another --out folder, or delete {out} to start over")
    assert (out / "standard" / "results.jsonl").read_text() == before  # nothing ran


def test_an_orchestra_run_folder_is_not_a_gaia2_folder(gaia2_folder, tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "results.jsonl").write_text("")
    argv = ["gaia2", "--team", "oracle", "--source", str(gaia2_folder), "--out", str(out), "--no-preflight"]
    assert main(argv) == 2
    assert (
        capsys.readouterr().err.strip().splitlines()[-1]
        == f"orchestra: error: --out {out}: holds an `orchestra run` folder, not a gaia2 one; use another --out folder"
    )
    assert not (out / "standard").exists()


def test_noise_phase_settings_are_recorded_and_a_changed_one_is_refused_on_resume(gaia2_folder, tmp_path, capsys):
    """`--tool-failure-probability` / `--env-events-per-minute` set the noise phase only: its records,
    manifest and ARE traces carry them, the other phases run clean, and resuming with another value
    is refused like any changed configuration (nothing runs)."""
    out = tmp_path / "sub"
    argv = ["gaia2", "--team", "oracle", "--runs", "1", "--source", str(gaia2_folder), "--id", "starter_multiturn_followup", "--out", str(out)]
    argv += ["--no-progress", "--no-preflight"]
    assert main([*argv, "--tool-failure-probability", "0.25", "--env-events-per-minute", "3"]) in (0, 1)
    noise = json.loads((out / "noise" / "manifest.json").read_text())["configurations"]
    assert [(c["session"]["noise"]["tool_failure_probability"], c["session"]["noise"]["env_events_per_minute"]) for c in noise] == [(0.25, 3.0)]
    assert all(c["session"]["noise"] is None for c in json.loads((out / "agent2agent" / "manifest.json").read_text())["configurations"])
    (trace,) = (out / "noise" / "mini" / "hf").glob("*.json")
    runner = json.loads(trace.read_text())["metadata"]["runner_config"]
    assert runner["tool_augmentation_config"]["tool_failure_probability"] == 0.25
    assert runner["env_events_config"]["num_env_events_per_minute"] == 3
    before = (out / "noise" / "results.jsonl").read_text()
    capsys.readouterr()

    assert main([*argv, "--tool-failure-probability", "0.5", "--env-events-per-minute", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"orchestra: error: {out / 'noise'} holds a run of another configuration (")
    assert "noise.tool_failure_probability: 0.25 before, 0.5 now" in err
    assert (out / "noise" / "results.jsonl").read_text() == before


def test_noise_phase_flags_are_checked(gaia2_folder, tmp_path, capsys):
    argv = ["gaia2", "--team", "oracle", "--source", str(gaia2_folder), "--out", str(tmp_path / "sub"), "--no-preflight"]
    assert main([*argv, "--tool-failure-probability", "1.5"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("orchestra: error: --tool-failure-probability: ")
    with pytest.raises(SystemExit):
        main([*argv, "--env-events-per-minute", "2.5"])  # ARE's EnvEventsConfig takes a whole number
    assert not (tmp_path / "sub").exists()


def test_show_and_report_find_gaia2_rollouts_and_mark_the_noise(submission, capsys, tmp_path):
    """The phases keep trajectories as `orchestra run` does: `show OUT/PHASE/NAME` reads one. The
    noise phase's report says what the noise did — each call it failed and each event it added,
    marked where it happened (it used to never mention noise)."""
    from orchestra.runs.report import load_run

    out, _, _ = submission
    capsys.readouterr()
    name = sorted((out / "noise" / "rollouts").glob("*.json"))[0].stem
    assert main(["show", str(out / "noise" / name)]) == 0
    shown = capsys.readouterr().out
    assert "status: " in shown and "transcript (simulated seconds" in shown and "noise: failures=" in shown
    page_path = tmp_path / "noise.html"
    assert main(["report", str(out / "noise"), "-o", str(page_path)]) == 0
    page = page_path.read_text()
    records = load_run(out / "noise").records
    failures = sum(len(r.result.noise.failed_calls) for r in records if r.result is not None and r.result.noise is not None)
    events = sum(1 for r in records if r.result is not None for e in r.result.event_log if str(e.get("id", "")).startswith("env_expansion_"))
    assert failures + events > 0
    assert page.count(">NOISE: INJECTED FAILURE</span>") == failures
    assert page.count(">NOISE: INJECTED EVENT</span>") == events
    assert page.count('<div class="noisebox"><b>noise</b> (p=0.1, 10 environment events/min, seed 0)') == len(records)
    assert f"{len(records)} rollout(s) under noise: {failures} tool call(s) failed by it" in page
    # the gaia2 folder itself, given where one run folder is expected: each command names the phases' folders
    assert main(["show", str(out / name)]) == 2
    err = capsys.readouterr().err
    assert "is a folder of run folders (`orchestra gaia2` keeps one per phase): " in err and str(out / "noise" / name) in err
    assert main(["compare", str(out), str(out / "noise")]) == 2
    assert f"{out}: a folder of run folders (`orchestra gaia2` keeps one per phase), not one run; give one of: " in capsys.readouterr().err


def test_a_folder_without_a_capability_leaves_its_column_empty(gaia2_folder, tmp_path, capsys):
    """It used to be refused ("no time/ folder"); `--id` / `--limit` leaving a column empty shows `-`,
    and so does a folder that lacks a config. A folder with none of them is still refused."""
    import shutil

    source = tmp_path / "src"
    shutil.copytree(gaia2_folder, source)
    shutil.rmtree(source / "time")
    out = tmp_path / "out"
    assert main(["gaia2", "--team", "oracle", "--runs", "1", "--source", str(source), "--out", str(out), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"orchestra: gaia2: {source} has no time/ folder: those columns stay empty (not a submission)" in err
    table = json.loads((out / "gaia2_table.json").read_text())
    assert [c["rollouts"] for c in table["columns"]] == [1, 1, 1, 0, 1, 1, 1]
    assert "Gaia2: over 6 of 7 capabilities (Time: no rollout selected); not a submission" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["gaia2", "--team", "oracle", "--source", str(empty), "--out", str(tmp_path / "o2")]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(f"orchestra: error: {empty}: no Gaia2 scenarios: a Gaia2 folder holds ")


def test_a_model_endpoint_that_dies_mid_run_stops_gaia2_with_the_resume_line(gaia2_folder, tmp_path, capsys):
    from orchestra_dev.mock_openai import MockServer

    out = tmp_path / "out"
    with MockServer(latency=0.0, fault="http500", healthy=1) as server:  # the preflight's test request passes, then HTTP 500s
        argv = [
            "gaia2",
            "--model",
            "openai/mock",
            "--endpoint",
            server.base_url,
            "--runs",
            "1",
            "--source",
            str(gaia2_folder),
            "--out",
            str(out),
            "--no-progress",
        ]
        code = main(argv)
    captured = capsys.readouterr()
    assert code == 1 and len(captured.out.strip().splitlines()) == 1 and " ERROR " in captured.out
    last = captured.err.strip().splitlines()[-1]
    assert last.startswith(f"orchestra: the model endpoint stopped answering (agent model openai/mock: endpoint {server.base_url}: ")
    assert last.endswith(
        f"in phase standard: 1 of its 5 rollout(s) finished, kept in {out / 'standard' / 'results.jsonl'} (earlier phases are complete); resume with: orchestra {' '.join(argv)}"
    )
    assert not (out / "gaia2_table.json").exists()
