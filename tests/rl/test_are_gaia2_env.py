"""`are-gaia2` through verifiers itself: `verifiers.load_environment`, its rollout loop, its rubric.

The model is a verifiers client whose "server" is the offline oracle (asked through the host's
`model_call` hook with the rollout's main agent) or a wrong policy; its answers are openai
`ChatCompletion` objects, parsed by verifiers' own OpenAI client code as a real server's would be.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anyio
import pytest

pytest.importorskip("verifiers")

import verifiers as vf  # noqa: E402
from openai.types.chat import ChatCompletion  # noqa: E402
from verifiers.clients import OpenAIChatCompletionsClient  # noqa: E402

from orchestra.rl import completion_message  # noqa: E402

ORACLE = "orchestra/oracle"
CAPABILITIES = ("execution", "search", "adaptability", "ambiguity", "time", "mini", "agent2agent")


def chat_completion(message: dict[str, Any], model: str) -> ChatCompletion:
    usage = message.pop("usage", None)
    calls = message.get("tool_calls")
    data = {
        "id": "cmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop", "message": {"role": "assistant", **message}}],
    }
    if usage is not None:
        data["usage"] = {
            "prompt_tokens": usage["prompt_tokens"],
            "completion_tokens": usage["completion_tokens"],
            "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
        }
    return ChatCompletion.model_validate(data)


class PolicyClient(OpenAIChatCompletionsClient):
    """A verifiers client answering from a policy over the rollout's orchestra episode."""

    def __init__(self, env: Any, policy: str = "oracle", *, drop_usage: bool = False) -> None:
        super().__init__(object())
        self.env, self.policy, self.drop_usage = env, policy, drop_usage
        self.prompts: list[list[dict[str, Any]]] = []

    async def get_native_response(self, prompt: Any, model: str, sampling_args: Any, tools: Any = None, **kwargs: Any) -> ChatCompletion:
        state = kwargs["state"]
        episode = self.env.episode(state)
        assert episode is not None and episode.request is not None
        assert [m["role"] for m in prompt] == [m["role"] for m in episode.request.messages]  # the prompt is orchestra's request
        assert tools and {t["function"]["name"] for t in tools} == {t["function"]["name"] for t in episode.request.tools}
        self.prompts.append(prompt)
        if self.policy == "oracle":
            response = await episode.rollout.host.hook.model_call(agent=episode.rollout.main, request=episode.request)
            message = completion_message(response)
        else:
            from rl_policies import wrong_completion

            message = wrong_completion(episode)
        if self.drop_usage:
            message.pop("usage", None)
        return chat_completion(message, model)

    async def close(self) -> None:
        return None


def evaluate(env: Any, client: Any, n: int = -1, concurrent: int = 1) -> list[dict[str, Any]]:
    async def go() -> Any:
        return await env.evaluate(
            client, ORACLE, num_examples=n, rollouts_per_example=1, max_concurrent=concurrent, state_columns=["orchestra"], on_progress=lambda *a, **k: None
        )

    return list(anyio.run(go)["outputs"])


def load(**kwargs: Any) -> Any:
    return vf.load_environment("are-gaia2", **{"source": "bundled", **kwargs})


@pytest.mark.parametrize("capability", CAPABILITIES)
def test_verifiers_loads_are_gaia2_and_the_oracle_scores_1_a_wrong_policy_0(capability):
    team = "oracle" if capability == "agent2agent" else None
    env = load(capability=capability, num_examples=1, team=team, **({"scenario_split": None}))
    assert isinstance(env, vf.MultiTurnEnv) and env.load_failures == []
    right = evaluate(env, PolicyClient(env))
    wrong = evaluate(env, PolicyClient(env, "wrong"))
    assert [o["reward"] for o in right] == [1.0], right[0]["orchestra"]
    assert [o["reward"] for o in wrong] == [0.0]
    info = right[0]["orchestra"]
    assert info["success"] and info["error"] is None and info["sim_seconds"] > 0 and len(info["event_log_sha256"]) == 64
    assert info["ledgers"][0]["model"] == ORACLE and info["ledgers"][0]["steps"] == right[0]["metrics"]["num_turns"]
    assert right[0]["metrics"]["sim_seconds"] == info["sim_seconds"]
    if team is not None:
        assert info["delegations"] and right[0]["metrics"]["delegations"] > 0
    assert env._episodes == {}  # every rollout's episode was released


def test_usage_advances_the_clock_and_is_counted_locally_without_it():
    env = load(capability="execution", num_examples=1)
    with_usage = evaluate(env, PolicyClient(env))[0]["orchestra"]
    without = evaluate(env, PolicyClient(env, drop_usage=True))[0]["orchestra"]
    assert with_usage["reward"] == without["reward"] == 1.0
    a, b = with_usage["ledgers"][0], without["ledgers"][0]
    assert a["prompt_tokens"] > 0 and b["prompt_tokens"] > 0 and a["prompt_tokens"] != b["prompt_tokens"]  # the server's vs counted here
    assert a["sim_seconds"] > 0 and b["sim_seconds"] > 0 and with_usage["event_log_sha256"] != "" != without["event_log_sha256"]


def test_the_same_completions_give_the_same_rewards_and_hashes_serially_and_concurrently():
    env = load(capability="adaptability", num_examples=4)
    one = evaluate(env, PolicyClient(env))
    many = evaluate(env, PolicyClient(env), concurrent=4)
    key = lambda outputs: sorted((o["example_id"], o["reward"], o["orchestra"]["event_log_sha256"]) for o in outputs)
    assert key(one) == key(many) and all(o["reward"] == 1.0 for o in one)


def test_max_turns_cuts_the_rollout_and_its_last_completion_still_counts():
    env = load(capability="execution", num_examples=1, max_turns=1)
    out = evaluate(env, PolicyClient(env))[0]
    info = out["orchestra"]
    assert out["metrics"]["num_turns"] == 1 and info["stop_reason"] == "max_turns" and info["ledgers"][0]["steps"] == 1


def test_the_arguments_are_exactly_the_issues_table_plus_scaffold_team_noise():
    import inspect

    import are_gaia2

    params = inspect.signature(are_gaia2.load_environment).parameters
    assert {k: v.default for k, v in params.items()} == {
        "source": "gaia2",
        "capability": "execution",
        "split": "validation",
        "judge_mode": "scripted",
        "max_scenario_duration": None,
        "num_examples": -1,
        "decode_rate_tps": 50.0,
        "prefill_rate_tps": 5000.0,
        "tool_call_seconds": 2.0,
        "time_scale": 1.0,
        "max_turns": 20,
        "reward_mode": "binary",
        "scenario_split": None,
        "scaffold": "tool_calling",
        "team": None,
        "noise": None,
    }
    for kwargs, message in (
        ({"noise": "typos"}, "noise= is not available yet"),
        ({"scaffold": "code"}, "does not exist yet"),
        ({"capability": "agent2agent"}, "give team="),
        ({"judge_mode": "vibes"}, "choose from scripted, strict, llm"),
        ({"capability": "cooking"}, "choose from execution"),
        ({"scenario_split": "bundled/nope"}, "has the parts heldout, train"),
    ):
        with pytest.raises((ValueError, RuntimeError), match=message):
            load(**kwargs)
    env = load(capability="time", scenario_split="bundled/heldout", time_scale=3.0, max_scenario_duration=600, reward_mode="dense", num_examples=2)
    assert env.config.clock.time_scale == 3.0 and env.config.duration == 600 and env.config.reward_mode == "dense"
    assert 0 < len(env.get_eval_dataset()) <= 2 and all(row["info"]["split"] == "heldout" for row in env.get_eval_dataset())


def test_a_scenario_that_fails_to_load_is_reported_with_its_reason(tmp_path, caplog):
    good = next(p for p in __import__("helpers").STARTER if p.stem == "starter_time_deadline")
    (tmp_path / "a_unreadable.json").write_text("{oops")
    data = json.loads(good.read_text())
    data["apps"] = "not a list of apps"
    (tmp_path / "b_are_rejects.json").write_text(json.dumps(data))
    (tmp_path / "c_good.json").write_text(good.read_text())
    with caplog.at_level("WARNING", logger="are_gaia2"):
        env = vf.load_environment("are-gaia2", source=str(tmp_path), capability="time")
    # both bad files are reported at loading, with their reasons (the precheck catches a non-list `apps` before ARE)
    failures = {f.source.rsplit("/", 1)[-1]: f.reason for f in env.load_failures}
    assert sorted(failures) == ["a_unreadable.json", "b_are_rejects.json"] and "malformed JSON" in failures["a_unreadable.json"]
    assert "apps" in failures["b_are_rejects.json"]
    assert "a_unreadable.json" in caplog.text and "b_are_rejects.json" in caplog.text
    outputs = evaluate(env, PolicyClient(env))
    assert [o["info"]["scenario_id"] for o in outputs] == ["starter_time_deadline"] and outputs[0]["reward"] == 1.0


def test_a_cancelled_rollout_releases_its_episode():
    env = load(capability="execution", num_examples=1)
    release = asyncio.Event()
    closed: list[str] = []

    class Stalling(PolicyClient):
        async def get_native_response(self, prompt: Any, model: str, sampling_args: Any, tools: Any = None, **kwargs: Any) -> ChatCompletion:
            episode = self.env.episode(kwargs["state"])
            original = episode.rollout.close
            episode.rollout.close = lambda: (closed.append("closed"), original())[1]
            release.set()
            await asyncio.Event().wait()  # never answers
            raise AssertionError("unreachable")

    async def go() -> None:
        task = asyncio.ensure_future(env.evaluate(Stalling(env), ORACLE, num_examples=1, rollouts_per_example=1, on_progress=lambda *a, **k: None))
        await release.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert closed and env._episodes == {}
