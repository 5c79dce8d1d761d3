"""The model layer: usage feeds the clock, retries stay off it, failures end one rollout."""

from __future__ import annotations

import anyio
import pytest

from orchestra.host import Host
from orchestra.models import ModelConfig, ModelError, complete
from orchestra.rollout import AgentConfig, Rollout, RolloutSpec
from orchestra.runs.runner import execute_all, specs_for
from orchestra.scenario_files import resolve
from orchestra.types import ModelRequest
from support.helpers import run_agent_on, write_script


def _call(name, args, usage=None):
    entry = {"tool_calls": [{"name": name, "arguments": args}]}
    if usage:
        entry["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1]}
    return entry


SCRIPT = [
    _call("Contacts__get_contacts", {}, usage=(4321, 77)),
    _call("AgentUserInterface__send_message_to_user", {"content": "Here you go."}, usage=(6000, 150)),
]


@pytest.fixture(scope="module")
def host():
    return Host.create()


def test_sim_time_is_the_formula_over_recorded_usage_and_identical_on_rerun(tmp_path, host, judge_pool, scenario_path):
    script = write_script(tmp_path, SCRIPT)
    runs = [run_agent_on(scenario_path("starter_search_lookup"), model=f"orchestra/scripted:{script}", host=host, judge_pool=judge_pool) for _ in range(2)]
    a, b = runs
    assert (a.prompt_tokens, a.completion_tokens) == (4321 + 6000, 77 + 150)
    expected = 1.0  # uncharged idle until the user's task arrives at +1 s
    expected += sum(c / 50 + p / 5000 + 2.0 for p, c in [(4321, 77), (6000, 150)])
    assert a.sim_seconds == pytest.approx(expected, abs=1e-6)
    assert (a.sim_seconds, a.event_log_sha256) == (b.sim_seconds, b.event_log_sha256)


def test_retries_do_not_charge_simulated_time(tmp_path, host, judge_pool, scenario_path):
    plain = run_agent_on(
        scenario_path("starter_search_lookup"), model=f"orchestra/scripted:{write_script(tmp_path, SCRIPT, 'a.json')}", host=host, judge_pool=judge_pool
    )
    flaky = [{"raise": "RateLimitError"}, SCRIPT[0], {"raise": "InternalServerError"}, {"raise": "Timeout"}, SCRIPT[1]]
    retried = run_agent_on(
        scenario_path("starter_search_lookup"), model=f"orchestra/scripted:{write_script(tmp_path, flaky, 'b.json')}", host=host, judge_pool=judge_pool
    )
    assert retried.error is None and retried.success
    assert retried.sim_seconds == plain.sim_seconds
    assert retried.event_log_sha256 == plain.event_log_sha256


def test_permanent_failure_ends_the_rollout_not_the_batch(tmp_path, host, judge_pool, scenario_path):
    agent = AgentConfig(model=ModelConfig(model="orchestra/scripted:/no/such/script.json", backoff_seconds=0))

    async def go():
        files = resolve([scenario_path("starter_search_lookup"), scenario_path("starter_ambiguity_clarify")])
        return [o async for o in execute_all(specs_for(files, agent=agent), host=host, judge_pool=judge_pool)]

    outcomes = anyio.run(go)
    assert len(outcomes) == 2
    for o in outcomes:
        assert o.result is not None and o.result.error and "script.json" in o.result.error
        assert o.result.stop_reason == "model_error" and o.result.reward is None  # an ERROR has no verdict


def test_retries_give_up_and_the_loop_goes_on_as_in_are(tmp_path, host, judge_pool, scenario_path):
    """A call that fails after its retries costs the iteration (ARE logs model exceptions and loops)."""
    import anyio

    from orchestra.agent import AgentContext, run_agent
    from orchestra.scaffolds.react import ReactScaffold

    answer = {"text": 'Thought: answer.\nAction:\n{"action": "AgentUserInterface__send_message_to_user", "action_input": {"content": "hi"}}<end_action>'}
    script = write_script(tmp_path, [{"raise": "RateLimitError"}] * 3 + [answer])
    with Rollout.open(RolloutSpec(scenario=str(scenario_path("starter_search_lookup"))), host=host, judge_pool=judge_pool) as rollout:
        s = rollout.session
        scaffold = ReactScaffold(s.tools)
        agent = AgentContext(
            name="main", rollout=rollout, model=ModelConfig(model=f"orchestra/scripted:{script}", max_retries=2, backoff_seconds=0), scaffold=scaffold
        )
        anyio.run(run_agent, agent)
        result = rollout.finish().result
    assert agent.steps == 2 and agent.turns == 1 and result.turns_completed == 1
    error = scaffold.messages[-3]["content"]  # then the answer and its observation
    assert error.startswith("[OUTPUT OF STEP 1] ERROR:\n***\nError: RateLimitError\nException: ")
    assert error.split("***")[1].rstrip().endswith("Category: UnhandledError")


def test_missing_usage_is_counted_locally(tmp_path, host, judge_pool, scenario_path):
    script = write_script(tmp_path, [_call("AgentUserInterface__send_message_to_user", {"content": "hi"}, usage=(0, 0))])
    result = run_agent_on(scenario_path("starter_search_lookup"), model=f"orchestra/scripted:{script}", host=host, judge_pool=judge_pool)
    assert result.prompt_tokens > 100 and result.completion_tokens > 0  # the system prompt alone is long


def test_unknown_provider_is_a_model_error():
    request = ModelRequest(messages=[{"role": "user", "content": "hi"}], action_format="tool_calls")
    with pytest.raises(ModelError, match="nosuchprovider"):
        anyio.run(complete, ModelConfig(model="nosuchprovider/x", max_retries=0), request)


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("bad.json", "not json", "bad.json: not valid JSON"),
        ("bad.jsonl", '{"text": "a"}\n{oops\n', "bad.jsonl: not valid JSONL"),
        ("bad.yaml", "x: [\n", "bad.yaml: not valid YAML"),
        ("typo.json", '[{"txt": "hello"}]', "response 0: unknown key(s) 'txt'"),
        ("num.json", '[{"text": 5}]', "response 0: 'text' is a string, got int"),
        ("raise.json", '[{"raise": "NoSuchError"}]', "response 0: 'raise' names a litellm exception"),
        ("calls.json", '[{"tool_calls": [{"arguments": {}}]}]', "response 0: 'tool_calls' is a list of"),
    ],
)
def test_a_broken_script_ends_the_rollout_with_a_clear_error(tmp_path, host, judge_pool, scenario_path, name, text, message):
    """Not retried as a failed call (with real backoff, that looked like a hang), nor played as an empty reply."""
    path = tmp_path / name
    path.write_text(text)
    agent = AgentConfig(model=ModelConfig(model=f"orchestra/scripted:{path}", backoff_seconds=0))

    async def go():
        files = resolve([scenario_path("starter_search_lookup")])
        return [o async for o in execute_all(specs_for(files, agent=agent), host=host, judge_pool=judge_pool)]

    (outcome,) = anyio.run(go)
    assert outcome.result is not None and outcome.result.stop_reason == "model_error"
    assert message in outcome.result.error


from orchestra.hookspecs import hookimpl  # noqa: E402


class _RecordingProvider:
    """A plugin whose litellm provider `keyprobe/<m>` records the api_key and api_base it receives."""

    seen: list[tuple[object, object]] = []

    @hookimpl
    def register_models(self, register):
        from litellm.types.utils import Choices, Message

        from orchestra.litellm_setup import import_litellm

        litellm = import_litellm()
        seen = self.seen

        class Probe(litellm.CustomLLM):
            async def acompletion(
                self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose, encoding, api_key, logging_obj, optional_params, *a, **kw
            ):
                seen.append((api_key, api_base))
                model_response.choices = [Choices(index=0, finish_reason="stop", message=Message(role="assistant", content="ok"))]
                return model_response

        register("keyprobe", Probe())


def test_env_references_are_expanded_only_at_the_model_call(monkeypatch):
    providers = Host.create([_RecordingProvider()]).models  # what the built-in litellm_models plugin passes
    monkeypatch.setenv("PROBE_KEY", "sk-probe-value")
    monkeypatch.setenv("PROBE_HOST", "127.0.0.1:9")
    config = ModelConfig(model="keyprobe/m", api_key="${PROBE_KEY}", endpoint="http://${PROBE_HOST}/v1", max_retries=0)
    request = ModelRequest(messages=[{"role": "user", "content": "hi"}], action_format="react")
    response = anyio.run(lambda: complete(config, request, providers=providers))
    assert response.text == "ok"
    assert _RecordingProvider.seen[-1] == ("sk-probe-value", "http://127.0.0.1:9/v1")
    assert config.api_key == "${PROBE_KEY}" and "sk-probe-value" not in config.model_dump_json()  # the config keeps the reference

    monkeypatch.delenv("PROBE_KEY")
    with pytest.raises(ModelError, match=r"keyprobe/m: api_key: environment variable PROBE_KEY is not set") as info:
        anyio.run(lambda: complete(config, request, providers=providers))
    assert info.value.permanent
