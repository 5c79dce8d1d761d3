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

from orchestra.wire import completion_message  # noqa: E402

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
        assert {t["function"]["name"] for t in tools or []} == {t["function"]["name"] for t in episode.request.tools or []}
        assert bool(tools) == (episode.request.action_format == "tool_calls")  # react / code: the tools are in the prompt's text
        self.prompts.append(prompt)
        if self.policy == "oracle":
            response = await episode.rollout.host.hook.model_call(agent=episode.rollout.main, request=episode.request)
            message = completion_message(response)
        else:
            from support.rl_policies import wrong_completion

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


@pytest.mark.parametrize("scaffold", ["code", "react"])
def test_the_text_scaffolds_oracle_scores_1_and_a_wrong_policy_0(scaffold):
    """`scaffold="code"`: the completion is ARE code-agent text whose ```py block runs in the code
    scaffold's sandbox; `react`: ARE's JSON action text. No native tools are offered to the model."""
    env = load(capability="adaptability", num_examples=1, scaffold=scaffold)
    right = evaluate(env, PolicyClient(env))
    wrong = evaluate(env, PolicyClient(env, "wrong"))
    assert [o["reward"] for o in right] == [1.0], right[0]["orchestra"]
    assert [o["reward"] for o in wrong] == [0.0]
    marker = "```py" if scaffold == "code" else "Action:"
    completions = [m for o in right + wrong for m in o["completion"] if m["role"] == "assistant"]
    assert completions and all(marker in m["content"] and not m.get("tool_calls") for m in completions)
    assert right[0]["orchestra"]["ledgers"][0]["scaffold"] == scaffold and env._episodes == {}


def test_unparseable_tool_arguments_reach_the_next_prompt_as_written_with_the_error():
    """What the policy sees next (and a trainer trains on) keeps the model's own arguments text."""
    env = load(capability="search", num_examples=1, max_turns=2)
    raw = '{"offset": 0,, oops'

    class Garbled(PolicyClient):
        async def get_native_response(self, prompt: Any, model: str, sampling_args: Any, tools: Any = None, **kwargs: Any) -> ChatCompletion:
            self.prompts.append(prompt)
            call = {"id": "c1", "type": "function", "function": {"name": "Contacts__get_contacts", "arguments": raw}}
            return chat_completion({"role": "assistant", "content": None, "tool_calls": [call]}, model)

    client = Garbled(env)
    out = evaluate(env, client)[0]
    second = client.prompts[1]
    assistant = [m for m in second if _get(m, "role") == "assistant"]
    tool = [m for m in second if _get(m, "role") == "tool"]
    assert _get(_get(_get(assistant[-1], "tool_calls")[0], "function"), "arguments") == raw
    assert "not valid JSON" in _get(tool[-1], "content") and out["orchestra"]["stop_reason"] == "max_turns"


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key)


def test_noise_reaches_the_rollouts_session():
    from orchestra.config import NoiseConfig

    clean = load(capability="search", num_examples=1)
    noisy = load(capability="search", num_examples=1, noise={"tool_failure_probability": 0.25})
    default = load(capability="search", num_examples=1, noise=True)
    assert clean.config.noise is None and load(capability="search", num_examples=1, noise=False).config.noise is None
    assert noisy.config.noise == NoiseConfig(tool_failure_probability=0.25) and default.config.noise == NoiseConfig()
    out = evaluate(noisy, PolicyClient(noisy, "wrong"))[0]
    assert out["orchestra"]["noise"] == NoiseConfig(tool_failure_probability=0.25).model_dump(mode="json")
    assert evaluate(clean, PolicyClient(clean, "wrong"))[0]["orchestra"]["noise"] is None


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
    assert params["unknown"].kind is inspect.Parameter.VAR_KEYWORD  # only to name a misspelt argument
    assert {k: v.default for k, v in params.items() if k != "unknown"} == {
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
        ({"noise": "typos"}, "noise='typos': give True"),
        ({"time_scal": 2.0, "colour": 1}, "unknown argument.*'colour', 'time_scal' \\(did you mean 'time_scale'\\?\\); the arguments are source, "),
        ({"team": "no_such_team"}, "team='no_such_team': no_such_team.*no such team file \\(shipped teams"),
        ({"source": "/no/such/folder"}, "/no/such/folder: no such file or folder"),
        ({"capability": 3}, "capability=3: expected a non-empty string"),
        ({"noise": {"failure": 0.1}}, "unknown key.*failure.*tool_failure_probability"),
        ({"scaffold": "cobol"}, "scaffold='cobol' is not registered; registered: .*code"),
        ({"capability": "agent2agent"}, "give team="),
        ({"judge_mode": "vibes"}, "choose from scripted, strict, llm"),
        ({"capability": "cooking"}, "choose from execution"),
        ({"scenario_split": "bundled/nope"}, "has the parts heldout, train"),
        ({"num_examples": 0}, r"num_examples=0: give -1 \(all scenarios\) or a positive count"),
        ({"max_turns": 0}, "max_turns=0: Input should be greater than 0"),
        ({"time_scale": -1.0}, "time_scale=-1.0"),
        ({"max_scenario_duration": -5}, "max_scenario_duration=-5"),
    ):
        with pytest.raises((ValueError, RuntimeError), match=message) as caught:
            load(**kwargs)
        assert "\n" not in str(caught.value)
    env = load(capability="time", scenario_split="bundled/heldout", time_scale=3.0, max_scenario_duration=600, reward_mode="dense", num_examples=2)
    assert env.config.clock.time_scale == 3.0 and env.config.duration == 600 and env.config.reward_mode == "dense"
    assert 0 < len(env.get_eval_dataset()) <= 2 and all(row["info"]["split"] == "heldout" for row in env.get_eval_dataset())


def test_a_scenario_that_fails_to_load_is_reported_with_its_reason(tmp_path, caplog):
    good = next(p for p in __import__("support.helpers", fromlist=["STARTER"]).STARTER if p.stem == "starter_time_deadline")
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


def test_the_readme_shows_the_vf_eval_quick_start_and_exactly_the_argument_table():
    """README "RL": the issue's `vf-eval` quick start, and one table row per argument with its real default."""
    import inspect
    import re

    import are_gaia2

    from support.helpers import REPO

    readme = (REPO / "docs" / "rl.md").read_text()
    section = readme[readme.index("## verifiers") :]
    section = section[: section.index("\n## ", 1)]
    assert 'vf-eval are-gaia2 -m policy -b "$BASE_URL"' in section  # the quick start (run by tests/rl/test_rl_docs.py)
    rows = dict(re.findall(r"^\| `(\w+)` \| `?([^`|]+?)`? \|", section, flags=re.MULTILINE))
    params = {k: v.default for k, v in inspect.signature(are_gaia2.load_environment).parameters.items() if k != "unknown"}
    assert list(rows) == list(params)
    for name, default in params.items():
        assert rows[name] == (f'"{default}"' if isinstance(default, str) else repr(default)), name
