"""Same scenario + same actions => identical event log and reward, in separate processes.

Each process gets a different PYTHONHASHSEED on purpose: ARE seeds app RNGs with `hash(str)`,
which orchestra must neutralise without asking the user to pin the hash seed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

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
