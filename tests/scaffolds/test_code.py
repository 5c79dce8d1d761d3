"""The `code` scaffold: ARE's code-agent prompt, the oracle writing code at 1.0 (alone and as
app-agents, on both sandboxes, one call per block and a batched loop), the same app calls as
`tool_calling` on the same trajectory, deterministic across processes, compute on the clock."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from orchestra.clock import ClockConfig
from orchestra.config import SessionConfig
from orchestra.host import Host
from support.helpers import STARTER, run_agent_on, scenario, stratified, write_script
from support.oracle_team_helpers import ALL_SCENARIOS, CallRecorder, assert_scores_one_through_app_agents, load_shipped_team, run_team, with_roles
from support.sandboxes import BACKENDS, require_backend

ORACLES = ("orchestra/oracle", "orchestra/oracle:batch")


@pytest.fixture(scope="module")
def host():
    return Host.create()


#: Arguments the oracle fills from the simulated "now" (a cab's `ride_time`): the code prompt is
#: longer than tool_calling's, so the clock reads a few seconds later; the judge accepts both.
CLOCK_DERIVED_ARGS = ("ride_time",)


def app_calls(result):
    """The agent's app calls as ARE logged them: (tool, arguments), in order (waits aside; the
    arguments taken from the clock left out)."""
    return [
        (e["tool"], json.dumps({k: v for k, v in e["args"].items() if k not in CLOCK_DERIVED_ARGS}, sort_keys=True, default=str))
        for e in result.event_log
        if e["type"] == "AGENT" and not e["tool"].endswith("wait_for_notification")
    ]


def test_the_prompt_is_ares_code_agent_prompt(host):
    from orchestra.agent import make_agent
    from orchestra.are import agent_format
    from orchestra.models import ModelConfig
    from orchestra.rollout import AgentConfig, Rollout, RolloutSpec

    spec = RolloutSpec(scenario=str(scenario("starter_search_lookup")), agent=AgentConfig(scaffold="code", model=ModelConfig(model="orchestra/oracle")))
    with Rollout.open(spec, host=host) as rollout:
        agent = rollout.main
        assert agent is not None
        agent.scaffold.start(agent)
        react = make_agent(rollout, model=ModelConfig(model="orchestra/oracle"), scaffold="react", name="r")
        react.scaffold.start(react)
        prompt = agent.scaffold.messages[0]["content"]
    import_are = __import__("orchestra.are.imports", fromlist=["import_are"]).import_are
    import_are()
    from are.simulation.agents.default_agent.prompts.system_prompt import REACT_LOOP_CODE_SYSTEM_PROMPT, REACT_LOOP_JSON_SYSTEM_PROMPT

    # the same prompt as ARE's JSON agent, with the code instructions in place of the JSON ones
    expected = react.scaffold.messages[0]["content"].replace(
        REACT_LOOP_JSON_SYSTEM_PROMPT.format(json_agent_hints=""), REACT_LOOP_CODE_SYSTEM_PROMPT.format(code_agent_hints="")
    )
    assert prompt == expected
    assert "Code:\n```py" in prompt and agent_format.are_tool_descriptions(agent.scaffold.are_tools) in prompt


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("model", ORACLES)
def test_the_oracle_writing_code_scores_one_on_the_starters(backend, model, host, judge_pool, monkeypatch):
    require_backend(backend)
    monkeypatch.setenv("ORCHESTRA_SANDBOX", backend)
    for path in STARTER:
        result = run_agent_on(path, model=model, scaffold="code", host=host, judge_pool=judge_pool)
        assert result.error is None and result.success and result.reward == 1.0, (path.stem, result.rationale)
        baseline = run_agent_on(path, model="orchestra/oracle", scaffold="tool_calling", host=host, judge_pool=judge_pool)
        assert app_calls(result) == app_calls(baseline), path.stem


def test_batch_puts_a_turns_due_calls_in_one_block(host, judge_pool):
    # starter_execution_calendar: two writes due together; one block runs both, in order
    one = run_agent_on(scenario("starter_execution_calendar"), model="orchestra/oracle", scaffold="code", host=host, judge_pool=judge_pool)
    batch = run_agent_on(scenario("starter_execution_calendar"), model="orchestra/oracle:batch", scaffold="code", host=host, judge_pool=judge_pool)
    assert batch.success and one.success
    assert app_calls(batch) == app_calls(one)
    assert batch.steps < one.steps


class CodeTeam:
    """orchestra/teams/shipped/code.yaml run by the oracle: the main agent and every app-agent on `code`, calls recorded."""

    def __init__(self) -> None:
        self.recorder = CallRecorder()
        self.host = Host.create([self.recorder])
        self.team = with_roles(load_shipped_team("code"), "code", "code")

    def assert_scores_one(self, path, judge_pool) -> None:
        assert_scores_one_through_app_agents(run_team(path, self.team, self.host, judge_pool, self.recorder), self.recorder)


@pytest.mark.parametrize("backend", BACKENDS)
def test_code_app_agents_in_a_team_score_one(backend, judge_pool, monkeypatch):
    require_backend(backend)
    monkeypatch.setenv("ORCHESTRA_SANDBOX", backend)
    team = CodeTeam()
    for path in STARTER:
        team.assert_scores_one(path, judge_pool)


#: A clock on which only tool calls take time (tokens and compute all but free): the code agent's
#: timeline is then the JSON agent's, so time-derived arguments (a ride at "now + 2 min") match too.
TOOLS_ONLY = SessionConfig(clock=ClockConfig(decode_rate_tps=1e12, prefill_rate_tps=1e12))
FREE_COMPUTE = {"fuel_per_second": 1e18}


@pytest.fixture(scope="module")
def tool_calling_calls(host, judge_pool):
    """tool_calling's app calls per bundled scenario on the tools-only clock (computed once per worker)."""
    cache: dict[str, list] = {}

    def calls(path):
        if path.stem not in cache:
            result = run_agent_on(path, model="orchestra/oracle", scaffold="tool_calling", host=host, judge_pool=judge_pool, session_config=TOOLS_ONLY)
            cache[path.stem] = app_calls(result)
        return cache[path.stem]

    return calls


@pytest.mark.slow
@pytest.mark.parametrize("backend,mode", [("wasm", ORACLES[0]), ("wasm", ORACLES[1]), ("wasm", "team"), ("bwrap", ORACLES[0]), ("bwrap", "team")])
def test_the_oracle_writing_code_scores_one_on_every_bundled_scenario(backend, mode, host, judge_pool, monkeypatch, tool_calling_calls):
    """Alone (one call per block, and batched) at 1.0 on the default clock, and with the same app
    calls, arguments and order as `tool_calling` on the same timeline; as app-agents of a team
    (main agent `code` too) at 1.0 — on every bundled scenario with the default sandbox and one
    call per block, and on a subset that covers every capability, universe and turn count
    (`helpers.stratified`) for the batched oracle, the team and the other sandbox."""
    require_backend(backend)
    monkeypatch.setenv("ORCHESTRA_SANDBOX", backend)
    team = CodeTeam() if mode == "team" else None
    for path in ALL_SCENARIOS if (backend, mode) == ("wasm", ORACLES[0]) else stratified(ALL_SCENARIOS):
        if team is not None:
            team.assert_scores_one(path, judge_pool)
            continue
        result = run_agent_on(path, model=mode, scaffold="code", host=host, judge_pool=judge_pool)
        assert result.error is None and result.success and result.reward == 1.0, (path.stem, mode, result.rationale)
        same_clock = run_agent_on(path, model=mode, scaffold="code", host=host, judge_pool=judge_pool, session_config=TOOLS_ONLY, scaffold_options=FREE_COMPUTE)
        assert same_clock.success, (path.stem, mode, same_clock.rationale)
        assert app_calls(same_clock) == tool_calling_calls(path), (path.stem, mode)


def test_compute_costs_simulated_time(tmp_path, host, judge_pool):
    loop = "n = 0\nfor i in range(300_000):\n    n += i\nprint(n)"
    entries = [
        {"text": f"Thought: t\nCode:\n```py\n{loop}\n```<end_action>"},
        {"text": "Thought: t\nCode:\n```py\nwhile True:\n    pass\n```<end_action>"},
        {"text": "Thought: t\nCode:\n```py\nAgentUserInterface__send_message_to_user(content='done')\n```<end_action>"},
    ]
    script = write_script(tmp_path, entries)

    def run(fuel_per_second: float):
        options = {"sandbox": "wasm", "sandbox_limits": {"fuel_per_cell": 2_000_000_000}, "fuel_per_second": fuel_per_second}
        return run_agent_on(
            scenario("starter_search_lookup"), model=f"orchestra/scripted:{script}", scaffold="code", host=host, judge_pool=judge_pool, scaffold_options=options
        )

    slow, fast = run(1e9), run(1e15)  # the same blocks; compute all but free in the second
    assert slow.error is None and slow.turns_completed == 1 and fast.turns_completed == 1
    # the loop (about 1.5e9 fuel) and the endless loop's whole budget (2e9), at 1e9 fuel per simulated second
    assert 3.4 < slow.sim_seconds - fast.sim_seconds < 3.7
    assert slow.agents[0].sim_seconds - fast.agents[0].sim_seconds == pytest.approx(slow.sim_seconds - fast.sim_seconds, abs=1e-3)


DETERMINISM = """
import json, sys
sys.path[:0] = ["tests"]
from support.helpers import run_agent_on, scenario
r = run_agent_on(scenario("starter_execution_calendar"), model="orchestra/scripted:" + sys.argv[1], scaffold="code")
print(json.dumps([r.event_log_sha256, r.sim_seconds, r.success]))
"""


def test_same_code_same_log_and_times_across_processes(tmp_path):
    """Fuel charging included: a block that computes before and between its calls."""
    code = (
        "events = Calendar__get_calendar_events_from_to(start_datetime='2024-10-15 00:00:00', end_datetime='2024-10-20 00:00:00')\n"
        "total = sum(i * i for i in range(200_000))\nimport time\nprint(total, time.time())\n"
        "AgentUserInterface__send_message_to_user(content=f'checked at {time.time()}')"
    )
    script = write_script(tmp_path, [{"text": f"Thought: t\nCode:\n```py\n{code}\n```<end_action>"}])
    runs = [subprocess.run([sys.executable, "-c", DETERMINISM, script], capture_output=True, text=True, check=True).stdout.splitlines()[-1] for _ in range(2)]
    assert runs[0] == runs[1]
    sha, sim, _ = json.loads(runs[0])
    assert sim > 3.0  # idle 1 s + 2 calls x 2 s + compute (not a round number: fuel was charged)
