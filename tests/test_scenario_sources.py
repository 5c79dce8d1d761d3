"""Scenario sources: files, folders, bundled[:CONFIG], hf:CONFIG — deterministic and clear."""

from __future__ import annotations

import json
import os

import pytest

from orchestra.cli import main
from orchestra.errors import ScenarioError
from orchestra.rollout import RolloutSpec, execute_sync
from orchestra.scenario_files import files_from_rows, parse_hf_source, resolve
from support.helpers import STARTER


def test_bundled_and_folder_agree_and_are_sorted():
    bundled = [f.path for f in resolve(["bundled"])]
    assert bundled == sorted(bundled)
    assert set(STARTER) <= set(bundled)
    time_only = [f.stem for f in resolve(["bundled:time"])]
    assert "starter_time_deadline" in time_only and "starter_search_lookup" not in time_only


def test_filters():
    timed = list(resolve(["bundled"], capabilities=["time"]))
    assert timed and all("Time" in json.loads(f.text)["metadata"]["definition"]["tags"] for f in timed)
    assert "starter_time_deadline" in {f.stem for f in timed}
    assert [f.stem for f in resolve(["bundled"], scenario_ids=["starter_search_lookup"])] == ["starter_search_lookup"]
    assert len(list(resolve(["bundled"], limit=3))) == 3


def test_unknown_sources_are_clear_errors():
    with pytest.raises(ScenarioError, match="bundled:nope: no bundled scenarios for config 'nope'"):
        list(resolve(["bundled:nope"]))
    with pytest.raises(ScenarioError, match="unknown Gaia2 config 'exec'"):
        parse_hf_source("hf:exec")
    assert parse_hf_source("hf:time/validation@abc") == ("time", "validation", "abc")


def test_hf_without_cache_fails_fast_with_instructions(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("ORCHESTRA_HF_ONLINE", raising=False)
    with pytest.raises(ScenarioError) as err:
        list(resolve(["hf:execution/validation"]))
    text = str(err.value)
    assert "not in the local Hugging Face cache" in text and "datasets.load_dataset(" in text and "ORCHESTRA_HF_ONLINE=1" in text
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_gaia2_rows_become_scenarios(tmp_path, judge_pool, scenario_path):
    """The HF row format (scenario_id + the whole JSON in `data`), through `datasets` itself, replays."""
    import datasets

    rows = [{"id": str(i), "scenario_id": p.stem, "split": "validation", "data": p.read_text()} for i, p in enumerate(STARTER[:2])]
    parquet = tmp_path / "validation-00000-of-00001.parquet"
    datasets.Dataset.from_list(rows).to_parquet(str(parquet))
    ds = datasets.load_dataset("parquet", data_files=str(parquet), split="train", cache_dir=str(tmp_path / "cache"))
    files = list(files_from_rows(ds, label="hf/execution/validation"))
    assert [f.stem for f in files] == sorted(r["scenario_id"] for r in rows)
    outcome = execute_sync(RolloutSpec(scenario=str(files[0].path)), file=files[0], judge_pool=judge_pool)
    assert outcome.error is None and outcome.result.success


def test_scenarios_command(capsys):
    assert main(["scenarios", "bundled", "--json"]) == 0
    out = capsys.readouterr()
    recs = [json.loads(line) for line in out.out.splitlines()]
    by_id = {r["scenario_id"]: r for r in recs}
    assert by_id["starter_multiturn_followup"]["turns"] == 2
    assert by_id["starter_time_deadline"]["capabilities"] == ["Time"]
    assert all(r["universe_bytes"] > 1000 for r in recs)
    assert "per capability:" in out.err


def test_files_app_offline_is_said_once(judge_pool):
    from orchestra.are import loading

    class Fake:
        apps = [type("SandboxLocalFileSystem", (), {})()]

    with pytest.warns(loading.FilesContentWarning, match="DEMO_FS_PATH"):
        assert loading.warn_if_file_contents_unavailable(Fake())
