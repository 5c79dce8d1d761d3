"""An `--out` folder that cannot be written: one line naming `--out` and the path, before the first
rollout; mid-run (the folder broken under the run, a full disk), the run stops with the resume
line, keeping what was kept. It used to be an "unexpected error" with a raw `FileNotFoundError`."""

from __future__ import annotations

import shutil

from orchestra.cli import main
from orchestra.runs.run_dir import RunDir, read_results

SCENARIOS = ("starter_search_lookup", "starter_time_deadline", "starter_execution_calendar")


def test_an_unwritable_out_fails_before_the_first_rollout_in_one_line(tmp_path, capsys, scenario_path):
    (tmp_path / "a_file").write_text("")
    out = tmp_path / "a_file" / "run"
    code = main(["run", "--team", "oracle", "--scenarios", str(scenario_path("starter_search_lookup")), "--out", str(out), "--no-progress"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.strip().splitlines() == [f"orchestra: error: --out {out}: cannot write the run folder: Not a directory"]


def test_an_out_whose_rollouts_folder_cannot_be_made_fails_before_the_first_rollout(tmp_path, capsys, scenario_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "rollouts").write_text("")  # a file where the rollouts' folder goes
    code = main(["run", "--team", "oracle", "--scenarios", str(scenario_path("starter_search_lookup")), "--out", str(out), "--no-progress"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.strip().splitlines() == [f"orchestra: error: --out {out}: cannot write the run folder: File exists ({out / 'rollouts'})"]


def test_an_out_that_breaks_mid_run_stops_the_run_with_the_resume_line(tmp_path, capsys, scenario_path, monkeypatch):
    out = tmp_path / "run"
    keep = RunDir.keep
    kept: list[str] = []

    def breaking(self: RunDir, record):  # the second record finds rollouts/ turned into a file
        if kept:
            shutil.rmtree(self.path / "rollouts")
            (self.path / "rollouts").write_text("")
        kept.append(record.scenario_id)
        return keep(self, record)

    monkeypatch.setattr(RunDir, "keep", breaking)
    argv = ["run", "--team", "oracle", "--scenarios", *(str(scenario_path(s)) for s in SCENARIOS), "--out", str(out), "--no-progress"]
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 1 and len(captured.out.strip().splitlines()) == 1  # the second row is never shown: its record was not kept
    last = captured.err.strip().splitlines()[-1]
    assert last == (
        f"orchestra: --out {out}: cannot write the run folder: File exists ({out / 'rollouts'}); the rollout that just finished is lost: "
        f"1 of 3 rollout(s) finished, kept in {out / 'results.jsonl'}; resume with: orchestra {' '.join(argv)}"
    )
    assert "Traceback" not in captured.err and "unexpected" not in captured.err
    assert [r.scenario_id for r in read_results(out)] == kept[:1]
    # the folder mended, the same command resumes: only the other two run
    monkeypatch.setattr(RunDir, "keep", keep)
    (out / "rollouts").unlink()
    assert main(argv) == 0
    assert len(read_results(out)) == 3 and "resuming" in capsys.readouterr().err


def test_gaia2_with_an_unwritable_out_fails_before_the_first_rollout(tmp_path, capsys):
    (tmp_path / "a_file").write_text("")
    out = tmp_path / "a_file" / "gaia2"
    code = main(["gaia2", "--model", "orchestra/oracle", "--source", "bundled", "--limit", "1", "--runs", "1", "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().splitlines()[-1] == f"orchestra: error: --out {out / 'standard'}: cannot write the run folder: Not a directory"
