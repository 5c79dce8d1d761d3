"""A GRPO group starts from one state: the members' initial-state hashes are equal, each member has
its own apps and Files folder (one member's writes reach no other), and a member plays exactly as a
cold-started episode does."""

from __future__ import annotations

import json
from typing import Any

import anyio

from orchestra.rl import EnvConfig, GaiaEnv

#: A 2.6 MB universe with a Files app and a calendar.
SCENARIO = "bundled/univ_00_adapt_group_vote"


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20},
    }


def test_members_start_equal_and_stay_apart() -> None:
    async def go() -> tuple[list[str], dict[str, Any]]:
        env = GaiaEnv(EnvConfig(max_turns=6))
        a, b, c = await env.reset_group(SCENARIO, 3, seed=1)
        hashes = [m.initial_state_sha256 for m in (a, b, c)]
        event = {"title": "Only in A", "start_datetime": "2024-10-20 09:00:00", "end_datetime": "2024-10-20 10:00:00"}
        await a.step(_call("Calendar__add_calendar_event", event))
        await a.step(_call("Files__mkdir", {"path": "only_in_a"}))
        obs_b, *_ = await b.step(_call("Files__ls", {"path": "/"}))
        apps_b = {app.name: app for app in b.rollout.session.scenario.apps}
        apps_a = {app.name: app for app in a.rollout.session.scenario.apps}
        seen = {
            "b_titles": [e.title for e in apps_b["Calendar"].events.values()],
            "a_titles": [e.title for e in apps_a["Calendar"].events.values()],
            "b_listing": obs_b.messages[-1]["content"] if obs_b else "",
            "folders": {apps_a["Files"].tmpdir, apps_b["Files"].tmpdir},
            "c_hash_after": c.initial_state_sha256,
        }
        env.close()
        return hashes, seen

    hashes, seen = anyio.run(go)
    assert len(set(hashes)) == 1 and seen["c_hash_after"] == hashes[0]
    assert "Only in A" in seen["a_titles"] and "Only in A" not in seen["b_titles"]
    assert "only_in_a" not in seen["b_listing"] and len(seen["folders"]) == 2


async def _play(episode: Any) -> tuple[float, str, float]:
    from support.rl_policies import oracle_completion

    done, reward, info = False, 0.0, {}
    while not done:
        _, reward, done, info = await episode.step(await oracle_completion(episode))
    return reward, info["event_log_sha256"], info["sim_seconds"]


def test_a_member_plays_as_a_cold_start() -> None:
    async def go() -> tuple[Any, list[Any]]:
        env = GaiaEnv(EnvConfig(), model="orchestra/oracle")  # the offline oracle plays the policy
        await env.reset("bundled/starter_adaptability_reply")
        assert env.episode is not None
        cold = await _play(env.episode)
        members = await env.reset_group("bundled/starter_adaptability_reply", 2)
        warm = [await _play(m) for m in members]
        env.close()
        return cold, warm

    cold, warm = anyio.run(go)
    assert warm == [cold, cold] and cold[0] == 1.0
