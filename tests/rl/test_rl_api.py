"""`orchestra.rl`: the step API a trainer drives — rewards, the clock, determinism, teams, batches."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from orchestra.clock import ClockConfig
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.rl import MAX_TURNS_STOP, EnvConfig, Episode, GaiaEnv
from orchestra.rl.selection import select_scenarios
from orchestra.rollout import RolloutSpec, execute
from orchestra.scenario_files import ScenarioFile
from orchestra.teams.loading import load_team
from orchestra.types import ModelRequest
from orchestra.wire import completion_message, response_from_completion
from support.helpers import REPO, scenario
from support.rl_policies import HEAVY_USAGE, oracle_completion, oracle_without, tool_message, wrong_completion

ORACLE = "orchestra/oracle"
#: One small scenario per capability (the starter set); agent2agent plays one with a team.
BY_CAPABILITY = {
    "execution": "starter_execution_calendar",
    "search": "starter_search_lookup",
    "adaptability": "starter_adaptability_reply",
    "ambiguity": "starter_ambiguity_clarify",
    "time": "starter_time_deadline",
    "mini": "starter_multiturn_followup",
    "agent2agent": "starter_execution_calendar",
}


def team_config() -> Any:
    return load_team(REPO / "orchestra" / "teams" / "shipped" / "oracle.yaml")


async def play(env: GaiaEnv, name: Any, policy: Any, **reset: Any) -> tuple[float, dict[str, Any], list[dict[str, Any]]]:
    """One episode of `policy(episode) -> completion` on a starter scenario: reward, info, completions."""
    await env.reset(name if isinstance(name, ScenarioFile) else scenario(name), **reset)
    episode = env.episode
    assert episode is not None
    sent: list[dict[str, Any]] = []
    done, reward, info = False, 0.0, {}
    while not done:
        completion = policy(episode)
        if hasattr(completion, "__await__"):
            completion = await completion
        sent.append(completion)
        _, reward, done, info = await env.step(completion)
    env.close()
    return reward, info, sent


def replay(completions: list[dict[str, Any]]) -> Any:
    it = iter(completions)
    return lambda episode: next(it)


@pytest.mark.parametrize("capability", list(BY_CAPABILITY))
def test_oracle_completions_score_1_and_a_wrong_policy_0_for_every_capability(capability, judge_pool):
    team = team_config() if capability == "agent2agent" else None
    config = EnvConfig(team=team)
    host = Host.create(entry_points=False)

    async def go() -> tuple[Any, Any]:
        right = await play(GaiaEnv(config, host=host, judge_pool=judge_pool, model=ORACLE), BY_CAPABILITY[capability], oracle_completion)
        wrong = await play(GaiaEnv(config, host=host, judge_pool=judge_pool, model=ORACLE), BY_CAPABILITY[capability], wrong_completion)
        return right, wrong

    (reward, info, _), (bad_reward, bad_info, _) = anyio.run(go)
    assert (reward, info["success"], info["error"]) == (1.0, True, None), info["rationale"]
    assert (bad_reward, bad_info["success"]) == (0.0, False) and bad_info["rationale"]
    for key in ("rationale", "sim_seconds", "ledgers", "event_log_sha256"):
        assert key in info
    assert info["sim_seconds"] > 0 and info["ledgers"][0]["name"] == "main" and len(info["event_log_sha256"]) == 64
    if team is not None:  # the policy delegated: the app-agents ran inside its steps
        assert info["delegations"] and len(info["ledgers"]) > 1


def test_the_react_scaffold_reads_the_completions_text(judge_pool):
    env = GaiaEnv(EnvConfig(scaffold="react"), judge_pool=judge_pool, model=ORACLE)
    reward, info, sent = anyio.run(play, env, "starter_execution_calendar", oracle_completion)
    assert reward == 1.0 and all(m.get("tool_calls") is None and "Action:" in m["content"] for m in sent)


@pytest.mark.parametrize("name", ["starter_execution_calendar", "starter_adaptability_reply"])
def test_the_code_scaffold_runs_the_completions_code_block_in_the_sandbox(name, judge_pool):
    """The policy writes ARE code-agent text; its ```py block runs in the `code` scaffold's sandbox,
    whose tool calls are the rollout's: the oracle's code scores 1.0, a wrong program 0.0."""
    host = Host.create(entry_points=False)

    async def go() -> tuple[Any, Any]:
        right = await play(GaiaEnv(EnvConfig(scaffold="code"), host=host, judge_pool=judge_pool, model=ORACLE), name, oracle_completion)
        wrong = await play(GaiaEnv(EnvConfig(scaffold="code"), host=host, judge_pool=judge_pool, model=ORACLE), name, wrong_completion)
        return right, wrong

    (reward, info, sent), (bad, bad_info, bad_sent) = anyio.run(go)
    assert all(m.get("tool_calls") is None and "```py" in m["content"] for m in sent + bad_sent)
    assert (reward, info["success"]) == (1.0, True), info["rationale"]
    assert (bad, bad_info["success"]) == (0.0, False) and bad_info["rationale"]
    main = info["ledgers"][0]
    assert main["scaffold"] == "code" and main["tool_calls"] >= len(sent) - 1  # the code's calls reached the tools


def test_the_code_scaffold_runs_no_native_tool_call_it_asks_again_as_are_does(judge_pool):
    """A completion with native tool calls and no text is no code: nothing runs, and (ARE's rule for
    an output with neither `Thought:` nor code) the same request is asked again."""
    env = GaiaEnv(EnvConfig(scaffold="code"), judge_pool=judge_pool)
    call = tool_message("Contacts__get_contacts", {"offset": 0})

    async def go() -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
        first = await env.reset(scenario("starter_search_lookup"))
        obs, _, done, info = await env.step(call)
        assert not done and obs is not None
        env.close()
        return first.messages, obs.messages, info

    first, again, info = anyio.run(go)
    assert again == first and info["ledgers"][0]["tool_calls"] == 0


def test_unparseable_tool_arguments_stay_in_the_history_exactly_as_written_with_the_error(judge_pool):
    """A call whose arguments are not JSON: the next observation (what the policy sees and a trainer
    trains on) shows the model's own text, not `{}`, and the tool message says what was wrong."""
    env = GaiaEnv(EnvConfig(), judge_pool=judge_pool)
    raw = '{"offset": 0,, oops'
    bad = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "Contacts__get_contacts", "arguments": raw}}],
    }
    not_object = tool_message("Contacts__get_contacts", {}, call_id="c2")
    not_object["tool_calls"][0]["function"]["arguments"] = "[1, 2]"

    async def go() -> list[dict[str, Any]]:
        await env.reset(scenario("starter_search_lookup"))
        await env.step(bad)
        obs, _, done, _ = await env.step(not_object)
        assert not done and obs is not None
        env.close()
        return obs.messages

    messages = anyio.run(go)
    assistant = [m for m in messages if m["role"] == "assistant"]
    assert [m["tool_calls"][0]["function"]["arguments"] for m in assistant[-2:]] == [raw, "[1, 2]"]
    tools = [m for m in messages if m["role"] == "tool"]
    assert tools[-2]["tool_call_id"] == "c1" and "not valid JSON" in tools[-2]["content"] and raw[:10] in tools[-2]["content"]
    assert tools[-1]["tool_call_id"] == "c2" and "must be a JSON object" in tools[-1]["content"]
    assert (
        completion_message(response_from_completion(bad, ModelRequest(messages=[], action_format="tool_calls")))["tool_calls"][0]["function"]["arguments"]
        == raw
    )


def test_noise_is_carried_into_the_rollouts_session_and_reported(judge_pool):
    """`EnvConfig.noise` and `reset(noise=...)`: the spec's session holds it, the info says which ran."""
    from orchestra.config import NoiseConfig

    env = GaiaEnv(EnvConfig(noise=NoiseConfig(tool_failure_probability=0.3)), judge_pool=judge_pool, model=ORACLE)

    async def go() -> list[tuple[Any, Any]]:
        seen = []
        for noise in (None, False, True, {"env_events_per_minute": 2.0, "env_events_seed": 7}):
            await env.reset(scenario("starter_search_lookup"), noise=noise)
            episode = env.episode
            assert episode is not None
            start = episode.info()["noise"]
            episode.finish()
            seen.append((episode.rollout.spec.session.noise, start, episode.info()["noise"]))
            env.close()
        return seen

    configured, off, defaults, custom = anyio.run(go)
    assert (
        configured[0] == NoiseConfig(tool_failure_probability=0.3)
        and configured[1]["tool_failure_probability"] == 0.3 == configured[2]["tool_failure_probability"]
    )
    assert off == (None, None, None)
    assert defaults[0] == NoiseConfig() and defaults[2] == NoiseConfig().model_dump(mode="json")
    assert custom[0] == NoiseConfig(env_events_per_minute=2.0, env_events_seed=7) and custom[2]["env_events_seed"] == 7
    assert EnvConfig(noise=NoiseConfig()).spec(scenario("starter_search_lookup")).session.noise == NoiseConfig()


@pytest.mark.parametrize(
    ("noise", "message"),
    [
        ({"tool_failure_rate": 0.2}, "unknown key.*tool_failure_rate.*tool_failure_probability"),
        ({"tool_failure_probability": 2}, "tool_failure_probability.*less than or equal to 1"),
        ("typos", "give True"),
        (0.1, "give True"),
    ],
)
def test_a_bad_noise_argument_is_one_clear_error(noise, message):
    from orchestra.rl import noise_config

    with pytest.raises(OrchestraError, match=message) as caught:
        noise_config(noise)
    assert "\n" not in str(caught.value) and str(caught.value).startswith("noise")


def test_usage_moves_the_clock_and_a_completion_without_usage_is_counted_locally(judge_pool):
    env = GaiaEnv(EnvConfig(), judge_pool=judge_pool)
    call = tool_message("Contacts__get_contacts", {"offset": 0})

    async def go() -> list[float]:
        seconds = []
        for usage in ({"prompt_tokens": 5000, "completion_tokens": 100}, None):
            await env.reset(scenario("starter_search_lookup"))
            before = env.episode.info()["sim_seconds"]
            _, _, done, info = await env.step(call if usage is None else {**call, "usage": usage})
            assert not done
            seconds.append(info["sim_seconds"] - before)
            ledger = info["ledgers"][0]
            if usage is None:
                assert ledger["prompt_tokens"] > 0 and ledger["completion_tokens"] > 0  # counted locally
            else:
                assert (ledger["prompt_tokens"], ledger["completion_tokens"]) == (5000, 100)
        env.close()
        return seconds

    charged, local = anyio.run(go)
    clock = ClockConfig()
    assert charged == pytest.approx(clock.turn_seconds(5000, 100, 1), abs=1e-6)  # 1 + 2 + 2 s
    assert 0 < local < charged


def test_completion_formats_openai_message_whole_completion_and_verifiers_flat_calls():
    request = ModelRequest(messages=[{"role": "user", "content": "hi"}], action_format="tool_calls")
    message = tool_message("Emails__send_email", {"recipients": ["a@b.c"]})
    whole = {"choices": [{"message": message, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 7, "completion_tokens": 3}}
    flat = {"role": "assistant", "content": "", "tool_calls": [{"id": "x", "name": "Emails__send_email", "arguments": '{"recipients": ["a@b.c"]}'}]}
    a, b, c = (response_from_completion(m, request) for m in (message, whole, flat))
    assert [t.arguments for t in a.tool_calls] == [t.arguments for t in b.tool_calls] == [t.arguments for t in c.tool_calls] == [{"recipients": ["a@b.c"]}]
    assert (b.usage.prompt_tokens, b.usage.completion_tokens, b.usage.counted_locally) == (7, 3, False) and b.finish_reason == "tool_calls"
    assert a.usage.counted_locally and a.usage.prompt_tokens > 0
    broken = response_from_completion(tool_message("X__y", {}) | {"tool_calls": [{"id": "1", "function": {"name": "X__y", "arguments": "{nope"}}]}, request)
    assert broken.tool_calls[0].error and "not valid JSON" in broken.tool_calls[0].error
    react = response_from_completion(message | {"content": "Thought: t\nAction:\n{}"}, ModelRequest(messages=[], action_format="react"))
    assert react.tool_calls == [] and react.text is not None and react.text.startswith("Thought:")


def test_a_time_rollout_that_passes_at_time_scale_1_fails_at_3(judge_pool):
    """The same completions (the oracle's, each a 400-token answer) at a tighter clock: the reply
    to Sofia lands after the judge's window closes."""

    async def go() -> tuple[float, float, float]:
        base = GaiaEnv(EnvConfig(), judge_pool=judge_pool, model=ORACLE)
        ok, _, sent = await play(base, "starter_time_deadline", lambda e: oracle_completion(e, usage=HEAVY_USAGE))
        same, _, _ = await play(GaiaEnv(EnvConfig(), judge_pool=judge_pool, model=ORACLE), "starter_time_deadline", replay(sent))
        tight, info, _ = await play(
            GaiaEnv(EnvConfig(clock=ClockConfig(time_scale=3.0)), judge_pool=judge_pool, model=ORACLE), "starter_time_deadline", replay(sent)
        )
        assert "oracle tool call" in (info["rationale"] or "")
        return ok, same, tight

    assert anyio.run(go) == (1.0, 1.0, 0.0)


def _hashes(records: list[tuple[float, dict[str, Any]]]) -> list[tuple[float, str]]:
    return [(reward, info["event_log_sha256"]) for reward, info in records]


def test_same_completions_same_rewards_and_hashes_across_reruns_and_a_fresh_process(judge_pool, tmp_path):
    async def record() -> tuple[float, dict[str, Any], list[dict[str, Any]]]:
        return await play(GaiaEnv(EnvConfig(), judge_pool=judge_pool, model=ORACLE), "starter_adaptability_reply", oracle_completion)

    reward, info, sent = anyio.run(record)
    rerun = anyio.run(play, GaiaEnv(EnvConfig(), judge_pool=judge_pool, model=ORACLE), "starter_adaptability_reply", replay(sent))
    assert (rerun[0], rerun[1]["event_log_sha256"]) == (reward, info["event_log_sha256"]) == (1.0, info["event_log_sha256"])
    path = tmp_path / "completions.json"
    path.write_text(json.dumps(sent))
    code = (
        "import json, sys, anyio\n"
        "from orchestra.rl import EnvConfig, GaiaEnv\n"
        "sent = json.load(open(sys.argv[1]))\n"
        "async def go():\n"
        "    env = GaiaEnv(EnvConfig(), model='orchestra/oracle')\n"
        "    await env.reset(sys.argv[2])\n"
        "    for c in sent:\n"
        "        _, reward, done, info = await env.step(c)\n"
        "    print(json.dumps([reward, done, info['event_log_sha256']]))\n"
        "anyio.run(go)\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code, str(path), str(scenario("starter_adaptability_reply"))], capture_output=True, text=True, env=env, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [reward, True, info["event_log_sha256"]]


@pytest.mark.slow
def test_same_completions_same_rewards_and_hashes_at_1_and_32_concurrent_episodes(judge_pool):
    names = ["starter_execution_calendar", "starter_adaptability_reply", "starter_time_deadline", "starter_search_lookup"]

    async def recorded() -> dict[str, tuple[float, str, list[dict[str, Any]]]]:
        out = {}
        for name in names:
            reward, info, sent = await play(GaiaEnv(EnvConfig(), judge_pool=judge_pool, model=ORACLE), name, oracle_completion)
            out[name] = (reward, info["event_log_sha256"], sent)
        return out

    base = anyio.run(recorded)
    jobs = [names[i % len(names)] for i in range(32)]

    async def concurrently() -> list[tuple[float, str]]:
        results: list[tuple[float, str]] = [(-1.0, "")] * len(jobs)

        async def one(i: int, name: str) -> None:
            reward, info, _ = await play(GaiaEnv(EnvConfig(), judge_pool=judge_pool, model=ORACLE), name, replay(base[name][2]))
            results[i] = (reward, info["event_log_sha256"])

        async with anyio.create_task_group() as tg:
            for i, name in enumerate(jobs):
                tg.start_soon(one, i, name)
        return results

    assert anyio.run(concurrently) == [(base[n][0], base[n][1]) for n in jobs]
    assert all(base[n][0] == 1.0 for n in names)


def _subset_rewards(name: str, judge_pool: Any) -> dict[frozenset[int], float]:
    """Dense rewards of the oracle with every subset of its writes left out."""

    async def writes() -> int:
        counter = [0]
        await play(
            GaiaEnv(EnvConfig(reward_mode="dense"), judge_pool=judge_pool, model=ORACLE), scenario(name).stem, lambda e: oracle_without(e, frozenset(), counter)
        )
        return counter[0]

    n = anyio.run(writes)
    assert n >= 2, f"{name}: the oracle makes {n} writes"
    rewards = {}
    for k in range(n + 1):
        for skipped in itertools.combinations(range(n), k):
            counter = [0]
            env = GaiaEnv(EnvConfig(reward_mode="dense"), judge_pool=judge_pool, model=ORACLE)
            reward, _, _ = anyio.run(play, env, name, lambda e, s=frozenset(skipped), c=counter: oracle_without(e, s, c))
            rewards[frozenset(range(n)) - frozenset(skipped)] = reward
    return rewards


@pytest.mark.parametrize("name", ["starter_execution_calendar", "starter_adaptability_reply"])
def test_the_dense_reward_is_monotone_more_correct_writes_never_score_lower(name, judge_pool):
    """Exhaustive over the oracle's writes: for every pair of write sets A ⊂ B, reward(A) <= reward(B);
    all writes is 1.0, a failure stays within [0, 0.8]."""
    rewards = _subset_rewards(name, judge_pool)
    everything = max(rewards, key=len)
    assert rewards[everything] == 1.0
    for a, b in itertools.permutations(rewards, 2):
        if a < b:
            assert rewards[a] <= rewards[b], (sorted(a), rewards[a], sorted(b), rewards[b])
    assert all(0.0 <= r <= 0.8 for s, r in rewards.items() if s != everything)
    assert rewards[frozenset()] < rewards[everything]


def test_max_turns_cuts_the_episode_and_judges_it_as_it_stands(judge_pool):
    env = GaiaEnv(EnvConfig(max_turns=2), judge_pool=judge_pool)
    look = tool_message("Contacts__get_contacts", {"offset": 0})

    async def go() -> list[tuple[bool, float, Any]]:
        await env.reset(scenario("starter_execution_calendar"))
        steps = []
        for _ in range(2):
            obs, reward, done, info = await env.step(look)
            steps.append((done, reward, obs is None, info.get("stop_reason")))
        with pytest.raises(OrchestraError, match="after the episode ended"):
            await env.step(look)
        return steps

    assert anyio.run(go) == [(False, 0.0, False, None), (True, 0.0, True, MAX_TURNS_STOP)]


def test_with_a_team_the_policys_delegation_runs_the_app_agent_on_the_same_clock(judge_pool):
    """The policy plays the main agent of the oracle team: its `<App>__expert_agent` calls run the
    app-agents inside its steps; the reward and event log are the team's own (`orchestra run`)."""
    team = team_config()
    host = Host.create(entry_points=False)
    env = GaiaEnv(EnvConfig(team=team, scaffold="react"), host=host, judge_pool=judge_pool, model=ORACLE)
    reward, info, sent = anyio.run(play, env, "starter_multiturn_followup", oracle_completion)
    experts = [m for m in sent if "__expert_agent" in (m.get("content") or "")]
    assert reward == 1.0 and experts and info["delegations"]
    apps = [ledger for ledger in info["ledgers"] if ledger["role"] != "main"]
    assert apps and all(a["sim_seconds"] > 0 for a in apps)
    main = info["ledgers"][0]
    assert info["sim_seconds"] >= main["sim_seconds"] + sum(a["sim_seconds"] for a in apps) - 1e-6  # one clock: all of them moved it
    ran = anyio.run(
        lambda: execute(
            RolloutSpec(scenario=str(scenario("starter_multiturn_followup")), team=team, session=EnvConfig().session()), host=host, judge_pool=judge_pool
        )
    )
    assert ran.result is not None and (ran.result.reward, ran.result.event_log_sha256) == (reward, info["event_log_sha256"])


@pytest.mark.parametrize(("max_turns", "stop"), [(1, MAX_TURNS_STOP), (5, "all_turns_completed")])
def test_with_a_team_the_top_level_stop_reason_is_the_main_agents(max_turns, stop, judge_pool):
    """A team's episode cut at `max_turns` (or played to its end): the info's top-level stop reason,
    the main agent's ledger and the trajectory say the same; the app-agents keep their own."""
    env = GaiaEnv(
        EnvConfig(team=team_config(), scaffold="react", max_turns=max_turns), host=Host.create(entry_points=False), judge_pool=judge_pool, model=ORACLE
    )

    async def go() -> tuple[dict[str, Any], Any]:
        await env.reset(scenario("starter_multiturn_followup"))
        episode = env.episode
        assert episode is not None
        done, info = False, {}
        while not done:
            _, _, done, info = await env.step(await oracle_completion(episode))
        env.close()
        return info, episode.record

    info, record = anyio.run(go)
    main, *apps = info["ledgers"]
    assert (info["stop_reason"], main["role"], main["stop_reason"], record.trajectory.stop_reason) == (stop, "main", stop, stop)
    assert apps and {a["stop_reason"] for a in apps} == {"returned"}


def test_opening_an_episode_does_not_block_other_episodes_on_the_event_loop(judge_pool, monkeypatch):
    """One episode's scenario load (oracle pre-run, judge set-up) is held until another episode,
    on the same event loop, has played to its end: a load on the loop itself would deadlock."""
    import threading

    from orchestra.rl import env as rl

    gate = threading.Event()
    real_open = rl.Rollout.open

    def held_open(spec: RolloutSpec, **kw: Any) -> Any:
        if "adaptability" in spec.scenario:
            assert gate.wait(120), "the other episode never finished while this one loaded"
        return real_open(spec, **kw)

    monkeypatch.setattr(rl.Rollout, "open", held_open)
    order: list[str] = []

    async def go() -> None:
        async def slow() -> None:
            await play(GaiaEnv(EnvConfig(), judge_pool=judge_pool, model=ORACLE), "starter_adaptability_reply", oracle_completion)
            order.append("held")

        async def quick() -> None:
            await play(GaiaEnv(EnvConfig(), judge_pool=judge_pool, model=ORACLE), "starter_search_lookup", oracle_completion)
            order.append("quick")
            gate.set()

        with anyio.fail_after(300):  # a deadlock guard, not a timing assertion
            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                tg.start_soon(quick)

    anyio.run(go)
    assert order == ["quick", "held"]


def test_select_scenarios_per_capability_splits_and_failures(tmp_path):
    for capability, expected in {"execution": 13, "search": 9, "adaptability": 13, "ambiguity": 8, "time": 8, "mini": 7, "agent2agent": 51}.items():
        files, failures = select_scenarios("bundled", capability)
        assert (len(files), failures) == (expected, []), capability
    train, _ = select_scenarios("bundled", "execution", scenario_split="bundled/train")
    held, _ = select_scenarios("bundled", "execution", scenario_split="bundled/heldout")
    assert len(train) + len(held) == 13 and held and not {f.stem for f in train} & {f.stem for f in held}
    assert len(select_scenarios("bundled", "execution", num_examples=2)[0]) == 2
    (tmp_path / "ok.json").write_text(Path(scenario("starter_time_deadline")).read_text())
    (tmp_path / "broken.json").write_text("{not json")
    files, failures = select_scenarios(str(tmp_path), "time")
    assert [f.stem for f in files] == ["ok"] and len(failures) == 1 and "broken.json" in failures[0].source and "malformed JSON" in failures[0].reason
    with pytest.raises(OrchestraError, match="unknown capability 'cooking'"):
        select_scenarios("bundled", "cooking")
    with pytest.raises(OrchestraError, match="has the parts heldout, train"):
        select_scenarios("bundled", "time", scenario_split="bundled/test")
    for bad in (0, -2, 1.5, True):
        with pytest.raises(OrchestraError, match=r"num_examples=.*give -1 \(all scenarios\) or a positive count"):
            select_scenarios("bundled", "time", num_examples=bad)  # type: ignore[arg-type]
    assert len(select_scenarios("bundled", "time", num_examples=-1)[0]) == 8 == len(select_scenarios("bundled", "time", num_examples=100)[0])


def test_episode_open_closes_the_rollout_when_the_first_step_fails(judge_pool):
    spec = EnvConfig().spec(scenario("starter_search_lookup"))
    with pytest.raises(OrchestraError, match="unknown scaffold"):
        anyio.run(lambda: Episode.open(spec.model_copy(update={"agent": spec.agent.model_copy(update={"scaffold": "nope"})}), judge_pool=judge_pool))


@pytest.mark.slow
def test_the_are_source_exports_ares_registered_scenarios_and_reports_those_it_cannot(judge_pool):
    """ARE's demo scenarios carry no user contact (the judge needs one): the export adds it, so they
    pass the scenario check (before, every one was rejected there and the source was empty); those
    ARE cannot build offline are reported; the one ARE's importer can load plays: oracle 1.0, wrong 0.0."""
    from orchestra.scenario_info import describe

    files, failures = select_scenarios("are", "execution")
    assert {f.stem for f in files} >= {"scenario_tutorial", "scenario_validation_tutorial"}
    assert all(str(f.path).startswith("are/") and json.loads(f.text)["metadata"] for f in files)
    assert all(describe(f).scenario_id == f.stem for f in files)
    assert all(f.source.startswith("are:") and f.reason for f in failures)  # the MCP / HF demos, offline
    assert {f.stem for f in files}.isdisjoint({f.source.removeprefix("are:") for f in failures})
    validation = next(f for f in files if f.stem == "scenario_validation_tutorial")

    async def go() -> tuple[Any, Any]:
        right = await play(GaiaEnv(EnvConfig(), judge_pool=judge_pool, model=ORACLE), validation, oracle_completion)
        wrong = await play(GaiaEnv(EnvConfig(), judge_pool=judge_pool, model=ORACLE), validation, wrong_completion)
        return right[0], wrong[0]

    assert anyio.run(go) == (1.0, 0.0)


def test_the_are_export_adds_the_user_contact_and_types_the_root_task_user():
    """The two fix-ups that make ARE's demo scenarios judgeable, each on its own (fast)."""
    from are.simulation.apps.contacts import ContactsApp

    from orchestra.are.registered import DEMO_USER, root_task_as_user_event, with_user_contact

    class Bare:
        apps: list[Any] = []

    bare = Bare()
    with_user_contact(bare)
    [contacts] = bare.apps
    assert contacts.name == "Contacts" and [c.contact_id for c in contacts.contacts.values() if c.is_user] == [DEMO_USER["contact_id"]]
    mine = ContactsApp(name="ContactsApp")
    with_user_contact(type("S", (), {"apps": [mine]})())
    with_user_contact(type("S", (), {"apps": [mine]})())  # idempotent: one user contact
    assert sum(c.is_user for c in mine.contacts.values()) == 1
    task = {"event_id": "t", "event_type": "ENV", "dependencies": [], "action": {"app": "AgentUserInterface", "function": "send_message_to_agent"}}
    later = {**task, "event_id": "u", "dependencies": ["t"]}
    other = {"event_id": "e", "event_type": "ENV", "dependencies": [], "action": {"app": "Emails", "function": "create_and_add_email"}}
    fixed = json.loads(root_task_as_user_event(json.dumps({"events": [task, later, other]})))
    assert [e["event_type"] for e in fixed["events"]] == ["USER", "ENV", "ENV"]


@pytest.mark.parametrize("garbage", [None, 42, "just text", {"foo": 1}, {"choices": [{"message": {"role": "assistant"}}]}])
def test_a_completion_that_is_no_completion_is_a_type_error_and_spends_no_turn(garbage):
    from orchestra.types import ModelRequest
    from orchestra.wire import response_from_completion

    request = ModelRequest(messages=[{"role": "user", "content": "hi"}], action_format="tool_calls")
    with pytest.raises(TypeError, match="a completion is an assistant message or a chat completion"):
        response_from_completion(garbage, request)
    assert response_from_completion({"role": "assistant", "content": "ok"}, request).text == "ok"


_CALL = {"id": "c", "type": "function", "function": {"name": "Contacts__get_contacts", "arguments": "{}"}}
_IDS = {"prompt_token_ids": [1, 2], "choices": [{"message": {"role": "assistant", "content": "", "tool_calls": [_CALL]}, "token_ids": [3]}]}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"choices": []}, r"`choices` is a non-empty list, got \[\]"),
        ({"choices": None}, "`choices` is a non-empty list, got None"),
        ({"choices": [{"message": None}]}, r"choices\[0\].message is an assistant message"),
        ({"role": "assistant", "content": 5}, "content is a string, a list of content parts or null, got int 5"),
        ({"role": "assistant", "content": "", "tool_calls": "Contacts__get_contacts"}, "tool_calls is a list of tool calls, got str"),
        ({"role": "assistant", "content": "", "tool_calls": _CALL}, "tool_calls is a list of tool calls, got dict"),
        ({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": 5}}]}, r"tool_calls\[0\].function.name is the tool's name"),
        (
            {"role": "assistant", "content": "hi", "usage": {"prompt_tokens": "ten", "completion_tokens": 3}},
            "usage.prompt_tokens is a non-negative integer token count, got 'ten'",
        ),
        ({"role": "assistant", "content": "hi", "usage": {"prompt_tokens": 10, "completion_tokens": -5}}, "usage.completion_tokens is a non-negative integer"),
        ({**_IDS, "prompt_token_ids": ["a", "b"]}, r"prompt_token_ids\[0\] is a token id \(a non-negative integer\), got 'a'"),
        ({**_IDS, "choices": [{**_IDS["choices"][0], "token_ids": [1, None]}]}, r"choices\[0\].token_ids\[1\] is a token id"),
        ({**_IDS, "choices": [{**_IDS["choices"][0], "logprobs": {"content": [{"logprob": "high"}]}}]}, r"logprobs.content\[0\].logprob is a number"),
    ],
    ids=[
        "no-choices",
        "choices-None",
        "message-None",
        "content-int",
        "tool-calls-str",
        "tool-calls-dict",
        "name-int",
        "usage-str",
        "usage-negative",
        "prompt-ids-str",
        "token-id-None",
        "logprob-str",
    ],
)
def test_a_malformed_completion_names_the_field_and_spends_no_turn(bad, message, judge_pool):
    env = GaiaEnv(EnvConfig(max_turns=3), judge_pool=judge_pool)

    async def go() -> tuple[int, bool]:
        await env.reset(scenario("starter_search_lookup"), seed=0)
        with pytest.raises((TypeError, ValueError), match=message):
            await env.step(bad)
        turns = env.episode.turns
        _, _, done, _ = await env.step(tool_message("Contacts__get_contacts", {}))  # the episode goes on
        env.close()
        return turns, done

    assert anyio.run(go) == (0, False)


def test_a_huge_completion_that_runs_the_clock_out_ends_the_episode(judge_pool):
    env = GaiaEnv(EnvConfig(max_turns=5), judge_pool=judge_pool)

    async def go() -> tuple[bool, Any, Any]:
        await env.reset(scenario("starter_search_lookup"), seed=0)
        huge = {"role": "assistant", "content": "words " * 10, "usage": {"prompt_tokens": 100, "completion_tokens": 300_000}}  # 6000 s
        obs, _, done, info = await env.step(huge)
        env.close()
        return done, obs, info["stop_reason"]

    assert anyio.run(go) == (True, None, "duration_reached")


def test_wrong_argument_types_are_one_clear_error_naming_the_argument():
    from orchestra.rl import rollouts

    spec = EnvConfig().spec(scenario("starter_search_lookup"), seed=0)

    async def first(specs: Any) -> Any:
        async for record in rollouts(specs, "http://127.0.0.1:9/v1", preflight=False):
            return record

    env = GaiaEnv(EnvConfig())
    cases = [
        (lambda: env.reset(123), "reset: scenario is a scenario file path"),
        (lambda: env.reset(scenario("starter_search_lookup"), seed="x"), "reset: seed is an int or None, got str 'x'"),
        (lambda: env.reset_group(scenario("starter_search_lookup"), n="4"), "reset_group: n .* is an int, got str '4'"),
        (lambda: first(spec), "specs is a list of RolloutSpec .* got one RolloutSpec: put it in a list"),
        (lambda: first(["x.json"]), r"specs\[0\] is a RolloutSpec .* got str 'x.json' \(make one with EnvConfig\(\).spec"),
    ]
    for call, message in cases:
        with pytest.raises(TypeError, match=message):
            anyio.run(call)
