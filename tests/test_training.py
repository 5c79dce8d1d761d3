"""Training traces (`orchestra.training`): per trainable agent, the token ids the model saw and sampled,
one sequence with an interleaved mask where prompts extend, the episode's reward and the judge's word;
written by a run folder, equal across processes and concurrency; frozen agents in no trace."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from orchestra.models import ModelConfig
from orchestra.openai_client import TOKEN_REQUEST
from orchestra.rl import rollouts
from orchestra.rollout import execute
from orchestra.runs.batch import run_into
from orchestra.runs.run_dir import TRAINING
from orchestra.scenario_files import resolve
from orchestra.spec import AgentConfig, RolloutSpec
from orchestra.teams.config import TeamConfig
from orchestra_dev.mock_openai import MockServer
from support.training import batch, policy, traces

REPO = Path(__file__).resolve().parents[1]


def _policy(server: MockServer, scaffold: str = "tool_calling", max_steps: int = 4) -> AgentConfig:
    return policy(server.base_url, scaffold, max_steps)


def _one(scaffold: str) -> Any:
    file = next(iter(resolve(["bundled:search"], limit=1)))
    with MockServer(0.0, token_ids=True) as server:  # reads until the step budget: several turns
        return anyio.run(lambda: execute(RolloutSpec(scenario=str(file.path), agent=_policy(server, scaffold)), file=file))


def test_native_tool_calls_extend_turn_after_turn_into_one_masked_sequence() -> None:
    record = _one("tool_calling")
    [main] = record.training.agents
    assert len(main.turns) == 4 and main.extends and main.breaks is None
    seq = main.sequence
    assert seq is not None and seq.prompt_token_ids == main.turns[0].prompt_token_ids
    model_tokens = [t for turn in main.turns for t in turn.completion_token_ids]
    assert [t for t, m in zip(seq.completion_token_ids, seq.loss_mask) if m == 1] == model_tokens
    # the environment's tokens between two completions are exactly what the next prompt added
    whole = seq.prompt_token_ids + seq.completion_token_ids
    assert whole[: len(main.turns[-1].prompt_token_ids)] == main.turns[-1].prompt_token_ids
    assert seq.per_token_logps is not None and [lp for lp, m in zip(seq.per_token_logps, seq.loss_mask) if m == 0] == [0.0] * seq.loss_mask.count(0)
    trace = record.training
    assert (trace.scenario_id, trace.reward, trace.event_log_sha256) == (record.scenario_id, record.result.reward, record.result.event_log_sha256)


def test_ares_react_history_is_rebuilt_so_its_turns_are_separate_samples() -> None:
    record = _one("react")
    [main] = record.training.agents
    assert not main.extends and main.sequence is None and "prompt differs" in (main.breaks or "")
    assert all(turn.loss_mask == [1] * len(turn.completion_token_ids) for turn in main.turns)


TEAM = """
name: trainable-calendar
main: {scaffold: tool_calling, model: orchestra/oracle, max_steps: 3}
app_agents:
  apps: [Calendar, Contacts]
  defaults: {scaffold: tool_calling, max_steps: 2}
  overrides:
    Calendar: {trainable: true}
"""


def test_a_team_traces_the_main_agent_and_its_trainable_app_agent_only(tmp_path: Path) -> None:
    import yaml

    team = TeamConfig.model_validate(yaml.safe_load(TEAM))
    file = next(iter(resolve(["bundled:execution"], scenario_ids=["starter_execution_calendar"])))
    prefer = ("Calendar__expert_agent", "Contacts__expert_agent", "__get_contacts", "__get_current_time")
    with MockServer(0.0, token_ids=True, prefer=prefer, once=True) as server:
        policy = ModelConfig(model="openai/policy", endpoint=server.base_url, api_key="x", extra=TOKEN_REQUEST)
        # every agent on the endpoint, so the frozen Contacts app-agent's calls carry ids too
        spec = RolloutSpec(scenario=str(file.path), team=team.with_overrides(model=policy))

        async def go() -> list[Any]:
            return [r async for r in rollouts([(spec, file)], policy, preflight=False)]

        [record] = anyio.run(go)
    assert record.training is not None, record.error
    agents = {a.agent: a for a in record.training.agents}
    assert set(agents) == {"main", "Calendar"}, sorted(agents)
    assert agents["Calendar"].app == "Calendar" and agents["Calendar"].role != "main"
    ledgers = {a.name: a for a in record.result.agents}
    assert ledgers["Contacts"].model_calls > 0  # it ran, on the same server, and is in no trace
    for trace in agents.values():
        for turn in trace.turns:
            assert turn.agent == trace.agent and turn.loss_mask == [1] * len(turn.completion_token_ids)


def test_traces_are_the_same_at_any_concurrency_and_in_another_process(tmp_path: Path) -> None:
    files = list(resolve(["bundled:search", "bundled:time"], limit=4))
    with MockServer(0.0, token_ids=True) as server:

        async def run(concurrency: int) -> list[Any]:
            return [r async for r in rollouts(batch(server.base_url, files), server.base_url, concurrency=concurrency, preflight=False)]

        one, many = anyio.run(lambda: run(1)), anyio.run(lambda: run(32))
        assert traces(one) == traces(many) and len(traces(one)) == len(files)
        script = (
            "import anyio, json, sys\n"
            "from orchestra.rl import rollouts\n"
            "from orchestra.scenario_files import resolve\n"
            "sys.path.insert(0, sys.argv[2])\n"
            "from support.training import batch, traces\n"
            "files = list(resolve(['bundled:search', 'bundled:time'], limit=4))\n"
            "async def go():\n"
            "    return [r async for r in rollouts(batch(sys.argv[1], files), sys.argv[1], concurrency=4, preflight=False)]\n"
            "print(json.dumps(traces(anyio.run(go))))\n"
        )
        other = subprocess.run([sys.executable, "-c", script, server.base_url, str(Path(__file__).parent)], capture_output=True, text=True, timeout=600)
        assert other.returncode == 0, other.stderr[-2000:]
        assert json.loads(other.stdout.strip().splitlines()[-1]) == traces(one)


def test_a_run_folder_keeps_each_episodes_trace_in_its_own_file(tmp_path: Path) -> None:
    files = list(resolve(["bundled:search"], limit=2))
    with MockServer(0.0, token_ids=True) as server:
        result = anyio.run(lambda: run_into(batch(server.base_url, files), tmp_path / "run"))
    traces = sorted((tmp_path / "run" / TRAINING).glob("*.json"))
    assert [p.stem for p in traces] == sorted(r.scenario_id for r in result.records)
    data = json.loads(traces[0].read_text())
    assert data["schema_version"] == 1 and data["agents"][0]["turns"][0]["prompt_token_ids"]
    line = json.loads((tmp_path / "run" / "results.jsonl").read_text().splitlines()[0])
    assert "training" not in line and "trajectory" not in line
    rollout_file = json.loads((tmp_path / "run" / "rollouts" / f"{traces[0].stem}.json").read_text())
    assert "training" not in rollout_file


@pytest.mark.parametrize("vary", [False, True])
def test_a_group_shares_its_noise_unless_asked_to_vary_it(vary: bool) -> None:
    from orchestra.config import NoiseConfig

    file = next(iter(resolve(["bundled:search"], limit=1)))
    with MockServer(0.0, token_ids=True) as server:
        spec = RolloutSpec(scenario=str(file.path), agent=_policy(server, max_steps=6))
        spec = spec.model_copy(update={"session": spec.session.model_copy(update={"noise": NoiseConfig(tool_failure_probability=0.5)})})

        async def go() -> list[Any]:
            return [r async for r in rollouts([(spec, file)], server.base_url, group_size=3, vary_noise=vary, preflight=False)]

        records = anyio.run(go)
    assert sorted(r.sample_index for r in records) == [0, 1, 2]
    failures = {json.dumps(r.result.noise.model_dump(mode="json") if r.result.noise else None, sort_keys=True) for r in records}
    assert (len(failures) > 1) is vary


def _with_ids(message: dict[str, Any], prompt: list[int], completion: list[int], logps: list[float] | None = None) -> dict[str, Any]:
    """A chat completion carrying token ids (vLLM's `return_token_ids`) and, given, logprobs."""
    choice: dict[str, Any] = {"message": message, "token_ids": completion, "finish_reason": "tool_calls"}
    if logps is not None:
        choice["logprobs"] = {"content": [{"token": "t", "logprob": lp} for lp in logps]}
    return {"choices": [choice], "prompt_token_ids": prompt}


def _stepped(completions: list[dict[str, Any]], judge_pool: Any) -> Any:
    """The step API fed `completions` on a Search scenario, then ended: the record."""
    from orchestra.rl import EnvConfig, GaiaEnv
    from support.helpers import scenario

    env = GaiaEnv(EnvConfig(max_turns=len(completions) + 1), judge_pool=judge_pool)

    async def go() -> Any:
        await env.reset(scenario("starter_search_lookup"), seed=0)
        for completion in completions:
            await env.step(completion)
        assert env.episode is not None
        record = env.episode.finish()
        env.close()
        return record

    return anyio.run(go)


LOOK = {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "Contacts__get_contacts", "arguments": "{}"}}]}


@pytest.mark.parametrize("missing", [{}, {"prompt_token_ids": []}], ids=["no-ids", "empty-prompt-ids"])
def test_a_call_without_token_ids_is_kept_marked_and_breaks_the_sequence_there(
    missing: dict[str, Any], judge_pool: Any, caplog: pytest.LogCaptureFixture
) -> None:
    good = [_with_ids(LOOK, [1, 2], [3]), _with_ids(LOOK, [1, 2, 3, 4], [5])]
    without = {k: v for k, v in _with_ids(LOOK, [1, 2, 3, 4, 5, 6], [7]).items() if k != "prompt_token_ids"} | missing
    after = _with_ids(LOOK, [1, 2, 3, 4, 5, 6, 7, 8], [9])
    with caplog.at_level("WARNING", logger="orchestra.training"):
        record = _stepped([*good, without, after], judge_pool)
    assert [r.getMessage().split(" (")[0] for r in caplog.records if "training trace" in r.getMessage()] == [
        "training trace: main/2: the server sent no token ids"
    ]
    [main] = record.training.agents
    assert [t.node_id for t in main.turns] == ["main/0", "main/1", "main/2", "main/3"]  # the real call indices
    assert [t.token_ids_missing for t in main.turns] == [False, False, True, False]
    assert main.turns[2].completion_token_ids == [] and main.turns[3].completion_token_ids == [9]
    assert not main.extends and main.sequence is None and (main.breaks or "").startswith("main/2: the server sent no token ids")


def test_logprobs_of_another_count_are_dropped_for_that_turn_marked_and_warned_once(judge_pool: Any, caplog: pytest.LogCaptureFixture) -> None:
    completions = [
        _with_ids(LOOK, [1, 2], [3, 4], [-0.5]),  # one logprob for two tokens
        _with_ids(LOOK, [1, 2, 3, 4, 5], [6], [None]),  # a null one
        _with_ids(LOOK, [1, 2, 3, 4, 5, 6, 7], [8], [-0.25]),
    ]
    with caplog.at_level("WARNING", logger="orchestra.training"):
        record = _stepped(completions, judge_pool)
    [main] = record.training.agents
    first, second, third = main.turns
    assert first.completion_token_ids == [3, 4] and first.per_token_logps is None
    assert first.logprobs_dropped == "the server sent 1 logprobs for 2 completion tokens"
    assert second.per_token_logps is None and "null" in (second.logprobs_dropped or "")
    assert third.per_token_logps == [-0.25] and third.logprobs_dropped is None
    assert main.extends and main.sequence is not None and main.sequence.per_token_logps is None
    assert len([r for r in caplog.records if "training trace" in r.getMessage()]) == 1


def test_a_failed_rollout_keeps_the_turns_it_recorded(judge_pool: Any) -> None:
    from orchestra.rl import EnvConfig, GaiaEnv
    from orchestra.types import ModelResponse, Usage
    from support.helpers import scenario

    env = GaiaEnv(EnvConfig(max_turns=5), judge_pool=judge_pool)

    async def go() -> Any:
        await env.reset(scenario("starter_search_lookup"), seed=0)
        await env.step(_with_ids(LOOK, [1, 2], [3]))
        await env.step(_with_ids(LOOK, [1, 2, 3, 4], [5]))
        episode = env.episode
        assert episode is not None
        with pytest.raises(ValueError, match="usage.prompt_tokens"):  # a driver's bug inside the rollout
            await episode.rollout.apply(ModelResponse(text="x", tool_calls=[], usage=Usage(-1000, 3, 0)))
        record = episode.finish()
        env.close()
        return record

    record = anyio.run(go)
    assert record.error is not None and record.training is not None
    [main] = record.training.agents
    assert [t.completion_token_ids for t in main.turns] == [[3], [5]]
    assert record.training.reward is None and record.training.stop_reason == "error"


def test_each_group_members_trace_records_the_seed_it_sampled_with(judge_pool: Any) -> None:
    from orchestra.rl import EnvConfig, GaiaEnv
    from support.helpers import scenario

    env = GaiaEnv(EnvConfig(max_turns=1), judge_pool=judge_pool)

    async def go() -> list[Any]:
        group = await env.reset_group(scenario("starter_search_lookup"), n=2, seed=5)
        for member in group:
            await member.step(_with_ids(LOOK, [1, 2], [3]))
        seeds = [(m.rollout.spec.seeded().agent.model.extra["seed"], m.training.seed) for m in group]  # type: ignore[union-attr]
        env.close()
        return seeds

    assert anyio.run(go) == [(5, 5), (6, 6)]


def test_a_rollout_that_asked_for_no_token_ids_warns_of_none(judge_pool: Any, caplog: pytest.LogCaptureFixture, scenario_path: Any) -> None:
    """An ordinary run (an offline model, or a server asked for no ids) has no trace and nothing to say about one."""
    from support.helpers import run_agent_on

    with caplog.at_level("WARNING", logger="orchestra.training"):
        result = run_agent_on(scenario_path("starter_search_lookup"), model="orchestra/oracle", judge_pool=judge_pool)
    assert result.success and not [r for r in caplog.records if "training trace" in r.getMessage()]
