"""`orchestra report DIR` over folders `orchestra run --out` wrote: finished, and interrupted."""

from __future__ import annotations

from orchestra.cli import main


def test_report_of_a_run_and_of_an_interrupted_one(tmp_path, capsys, scenario_path):
    folder = tmp_path / "run"
    scenarios = [str(scenario_path("starter_execution_group_chat")), str(scenario_path("starter_ambiguity_clarify"))]
    assert main(["run", "--model", "orchestra/oracle", "--scenarios", *scenarios, "--runs", "2", "--out", str(folder)]) == 0
    capsys.readouterr()
    assert main(["report", str(folder)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"{folder / 'report.html'}: 4 rollout(s) (4 PASS), ") and err == ""
    page = (folder / "report.html").read_text()
    assert 'id="summary"' in page and page.count('<details class="rollout"') == 4 and "did not finish" not in page

    # Killed after two rollouts, the third one half-written: the report says so, and shows the two.
    lines = (folder / "results.jsonl").read_text().splitlines()
    (folder / "results.jsonl").write_text(lines[0] + "\n" + lines[1] + "\n" + lines[2][:100])
    assert main(["report", str(folder), "-o", str(tmp_path / "partial.html")]) == 0
    out, err = capsys.readouterr()
    assert "2 rollout(s) (2 PASS)" in out
    assert "results.jsonl is cut short" in err and "the run did not finish: 2 of 4 rollouts (2 scenarios × 2 runs)" in err
    page = (tmp_path / "partial.html").read_text()
    assert page.count('<details class="rollout"') == 2 and "the run did not finish: 2 of 4 rollouts" in page
