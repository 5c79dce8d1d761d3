"""Same scenario + same actions => identical event log and reward, in separate processes.

Each process gets a different PYTHONHASHSEED on purpose: ARE seeds app RNGs with `hash(str)`,
which orchestra must neutralise without asking the user to pin the hash seed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support.helpers import REPO, SCENARIOS, STARTER

#: Corpus scenarios whose writes make ARE mint ids with uuid4 (Shopping checkout, order cancel).
UUID_MINTING = ["univ_03_adapt_size_from_friend", "univ_01_exec_shopping_discount", "univ_05_mt_exec_order_cancel"]


def _replay_json(hash_seed: str) -> dict[str, dict]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    sources = [str(p) for p in STARTER] + [str(p) for p in sorted((SCENARIOS / "corpus").rglob("*.json")) if p.stem in UUID_MINTING]
    out = subprocess.run(
        [sys.executable, "-m", "orchestra.cli", "replay", *sources, "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    return {r["scenario_id"]: r for r in map(json.loads, out.splitlines())}


def test_event_log_hash_is_identical_across_processes():
    a, b = _replay_json("1"), _replay_json("2")
    assert a.keys() == b.keys() and len(a) == len(STARTER) + len(UUID_MINTING)
    for sid in a:
        assert a[sid]["event_log_sha256"] == b[sid]["event_log_sha256"], sid
        assert (a[sid]["reward"], a[sid]["sim_seconds"]) == (b[sid]["reward"], b[sid]["sim_seconds"]), sid


HASH_SEEDS = ("0", "1", "2")
#: The corpus scenario with the most Chats conversations read by `Chats__list_recent_conversations`.
CHATS_SCENARIO = SCENARIOS / "corpus" / "search" / "validation" / "univ_02_search_party.json"
#: A read of every app the bundled scenarios have (no required argument, or an obvious one).
READS: list[tuple[str, dict[str, Any]]] = [
    ("Chats__list_recent_conversations", {}),
    ("Messages__list_recent_conversations", {}),
    ("Chats__search", {"query": "a"}),
    ("Messages__search", {"query": "a"}),
    ("Contacts__get_contacts", {}),
    ("Contacts__get_current_user_details", {}),
    ("Contacts__search_contacts", {"query": "a"}),
    ("Emails__list_emails", {}),
    ("Emails__search_emails", {"query": "the"}),
    ("Calendar__read_today_calendar_events", {}),
    ("Calendar__get_all_tags", {}),
    ("Calendar__search_events", {"query": "a"}),
    ("Calendar__get_calendar_events_from_to", {"start_datetime": "2024-01-01 00:00:00", "end_datetime": "2025-12-31 00:00:00"}),
    ("Shopping__list_all_products", {}),
    ("Shopping__list_cart", {}),
    ("Shopping__list_orders", {}),
    ("Shopping__get_all_discount_codes", {}),
    ("RentAFlat__list_all_apartments", {}),
    ("RentAFlat__list_saved_apartments", {}),
    ("RentAFlat__search_apartments", {}),
    ("Cabs__get_ride_history", {}),
    ("Cabs__get_current_ride_status", {}),
    ("Files__ls", {}),
    ("Files__tree", {}),
    ("SystemApp__get_current_time", {}),
]


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}], "usage": {"prompt_tokens": 100, "completion_tokens": 10}}


def _reader_script(tmp_path: Path, reads: list[tuple[str, dict[str, Any]]], turns: int = 3) -> Path:
    """A scripted policy: every read, then the answer, for each of up to `turns` turns."""
    entries = [
        entry for _ in range(turns) for entry in [*(_call(n, a) for n, a in reads), _call("AgentUserInterface__send_message_to_user", {"content": "Done."})]
    ]
    path = tmp_path / "reader.json"
    path.write_text(json.dumps(entries))
    return path


def _under_hash_seeds(argv: list[str], out: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """`orchestra ARGV --json` in one process per hash seed (run at once): scenario id -> the
    records, one per seed; with `out`, each process writes its run folder to `out/<seed>` too."""
    procs = {}
    for seed in HASH_SEEDS:
        env = {**os.environ, "PYTHONHASHSEED": seed, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}
        extra = ["--out", str(out / seed)] if out is not None else []
        procs[seed] = subprocess.Popen(
            [sys.executable, "-m", "orchestra.cli", *argv, *extra, "--json"], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    by_scenario: dict[str, list[dict[str, Any]]] = {}
    for seed, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=1800)
        assert proc.returncode == 0, f"PYTHONHASHSEED={seed} orchestra {' '.join(argv)}: {stderr[-2000:]}"
        for line in stdout.splitlines():
            record = json.loads(line)
            if "scenario_id" in record:
                by_scenario.setdefault(record["scenario_id"], []).append(record)
    return by_scenario


def _same_under_every_seed(by_scenario: dict[str, list[dict[str, Any]]], fields: tuple[str, ...]) -> list[str]:
    assert by_scenario and all(len(records) == len(HASH_SEEDS) for records in by_scenario.values())
    return [sid for sid, records in sorted(by_scenario.items()) if len({tuple(r.get(f) for f in fields) for r in records}) > 1]


def test_reading_chats_and_tags_gives_one_observation_and_one_hash_under_any_hash_seed(tmp_path):
    """ARE builds conversation participants and calendar tags from sets (hash-seed order): the
    code agent sees the objects themselves, and the log records them. Both must be the same."""
    code = "Thought: read.\nCode:\n```py\nconvs = Chats__list_recent_conversations()\nprint(convs[0].participant_ids)\nprint(convs)\nprint(Calendar__get_all_tags())\n```<end_action>"
    answer = "Thought: answer.\nCode:\n```py\nAgentUserInterface__send_message_to_user(content='Done.')\n```<end_action>"
    script = tmp_path / "code.json"
    script.write_text(json.dumps([{"text": code}, {"text": answer}]))
    argv = ["run", "--scaffold", "code", "--model", f"orchestra/scripted:{script}", "--scenarios", str(CHATS_SCENARIO), "--no-progress"]
    records = _under_hash_seeds(argv, out=tmp_path / "runs")[CHATS_SCENARIO.stem]
    assert all(r["error"] is None for r in records), records
    assert len({r["event_log_sha256"] for r in records}) == 1
    rollouts = [json.loads((tmp_path / "runs" / seed / "rollouts" / f"{CHATS_SCENARIO.stem}.json").read_text()) for seed in HASH_SEEDS]
    observations = [[c["observation"] for s in r["trajectory"]["agents"][0]["steps"] for c in s["tool_calls"]] for r in rollouts]
    assert "participant_ids=[" in observations[0][0] and all(o == observations[0] for o in observations)


@pytest.mark.slow
def test_the_bundled_corpus_gives_one_hash_under_any_hash_seed(tmp_path):
    """The whole bundled corpus, under three hash seeds: the oracle replay, the oracle team (its
    app-agents' reads and writes), and a policy that reads every app (so no app's reads hide a
    hash-seed order)."""
    fields = ("event_log_sha256", "reward", "success", "sim_seconds")
    replayed = _under_hash_seeds(["replay", "bundled"])
    assert len(replayed) == len(list(SCENARIOS.rglob("*.json"))) - 1  # all but manifest.json
    assert _same_under_every_seed(replayed, fields) == []
    assert (
        _same_under_every_seed(_under_hash_seeds(["run", "--team", "oracle", "--scenarios", "bundled", "--no-progress"], out=tmp_path / "team"), fields) == []
    )
    reader = _reader_script(tmp_path, READS)
    read = _under_hash_seeds(["run", "--model", f"orchestra/scripted:{reader}", "--scenarios", "bundled", "--no-progress"], out=tmp_path / "read")
    assert all(r["error"] is None for records in read.values() for r in records)
    assert _same_under_every_seed(read, fields) == []


def test_app_generated_ids_are_in_the_hash(scenario_path, judge_pool):
    """The canonical log keeps app data (e.g. the 32-hex email ids) verbatim; only uuid4 record ids are tokens."""
    from orchestra.oracle.replay import build_plan, replay
    from orchestra.session import Session

    with Session.open(scenario_path("starter_adaptability_reply"), judge_pool=judge_pool) as s:
        replay(s, build_plan(s))
        log = s.finish().event_log
    env_email = next(r for r in log if r["type"] == "ENV")
    assert isinstance(env_email["return"], str) and len(env_email["return"]) == 32
    agent_ids = [r["id"] for r in log if r["type"] == "AGENT"]
    assert agent_ids and all("uuid-" in i or not any(c == "-" for c in i[-36:]) for i in agent_ids)


def test_uuid4_is_deterministic_only_inside_a_rollout_scope():
    import uuid

    from orchestra.are.ids import stable_rng, uuid_scope

    with uuid_scope(stable_rng("x")):
        first = [uuid.uuid4() for _ in range(3)]
    with uuid_scope(stable_rng("x")):
        second = [uuid.uuid4() for _ in range(3)]
    assert first == second and all(u.version == 4 for u in first)
    assert uuid.uuid4() != uuid.uuid4() and uuid.uuid4() not in first  # the stdlib's own, outside
