"""`orchestra scenarios` lists every valid scenario of a folder and names each file that is not one."""

from __future__ import annotations

import json
import shutil

from orchestra.cli import main


def test_scenarios_lists_the_valid_ones_and_rejects_the_rest(tmp_path, capsys, scenario_path):
    good = scenario_path("starter_search_lookup")
    shutil.copy(good, tmp_path / "a_good.json")
    raw = json.loads(good.read_text())
    (tmp_path / "b_empty.json").write_text("")
    (tmp_path / "c_list.json").write_text("[1, 2]")
    (tmp_path / "d_not_a_scenario.json").write_text(json.dumps({"hello": "world"}))
    (tmp_path / "e_wrong_version.json").write_text(json.dumps({**raw, "version": "are_simulation_v0"}))
    (tmp_path / "f_no_apps.json").write_text(json.dumps({**raw, "apps": []}))
    shutil.copy(good, tmp_path / "g_good_too.json")
    code = main(["scenarios", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 1 and "Traceback" not in captured.err
    listed = [line.split()[0] for line in captured.out.splitlines()[1:] if line.strip() and not line.startswith(("2 scenario",))]
    assert listed.count("starter_search_lookup") == 2 and "2 scenario(s)" in captured.out
    for name, why in [
        ("b_empty", "empty file"),
        ("c_list", "expected a JSON object"),
        ("d_not_a_scenario", "unsupported scenario version None"),
        ("e_wrong_version", "unsupported scenario version 'are_simulation_v0'"),
        ("f_no_apps", "no apps"),
    ]:
        assert any(name in line and why in line for line in captured.err.splitlines()), (name, captured.err)
    assert "5 file(s) rejected" in captured.err
