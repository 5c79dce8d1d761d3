"""Agent-loop parity: ARE's real default agent vs orchestra's `react`, same scripted policy.

Each case runs both agents (`orchestra.parity.harness.run_parity`) and requires byte-identical
behaviour: same verdict, same agent tool calls and arguments, same prompts, same request
parameters. A failing case prints the first difference of each kind (first differing prompt:
message, line, both texts, then a unified diff).

The harness is itself tested: the comparator must catch a difference planted in one prompt, an
orchestra-side change in what the model sees must be reported, and ARE's side must be
deterministic (two runs byte-identical), or the parity cases would prove nothing.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from orchestra.hookspecs import hookimpl
from orchestra.parity.are_agent import run_are_agent
from orchestra.parity.compare import compare
from orchestra.parity.harness import run_parity
from orchestra.parity.policy import as_factory
from orchestra.scenario_files import ScenarioFile
from support.parity_cases import ANSWER_SEARCH, CASES, SEND, act
from support.parity_scenarios import starter

LOOP_CASES = [n for n in CASES if not n.startswith("capability_")]
CAPABILITY_CASES = [n for n in CASES if n.startswith("capability_")]


def _run(name: str, tmp_path: Path, judge_pool: object):
    case = CASES[name]
    return run_parity(ScenarioFile(case.path(tmp_path)), case.policy, max_iterations=case.max_iterations, judge_pool=judge_pool)


@pytest.mark.parametrize("name", LOOP_CASES)
def test_react_matches_are_default_agent(name: str, tmp_path: Path, judge_pool: object) -> None:
    report = _run(name, tmp_path, judge_pool)
    assert report.are.error is None, report.are.error  # the harness ran ARE's agent to the end
    assert report.identical, report.render()


@pytest.mark.slow
@pytest.mark.parametrize("name", CAPABILITY_CASES)
def test_react_matches_are_on_each_bundled_capability(name: str, tmp_path: Path, judge_pool: object) -> None:
    report = _run(name, tmp_path, judge_pool)
    assert report.are.success, f"the oracle-derived policy should pass in ARE: {report.are.rationale}"
    assert report.identical, report.render()


# ------------------------------------------------------------------------------------------------
# The harness itself
# ------------------------------------------------------------------------------------------------

SEARCH_POLICY = [act("Emails__list_emails", {"folder_name": "INBOX"}), act(SEND, {"content": ANSWER_SEARCH})]


@pytest.fixture(scope="module")
def are_search_trace():
    path = starter("starter_search_lookup")
    return run_are_agent(path.read_text(), str(path), as_factory(SEARCH_POLICY))


def test_are_side_runs_the_real_agent_and_records_what_it_saw(are_search_trace) -> None:
    trace = are_search_trace
    assert trace.success and trace.error is None
    assert [c.tool for c in trace.tool_calls] == ["EmailClientV2__list_emails", SEND]
    assert len(trace.requests) == 2
    first, second = trace.requests
    assert [m["role"] for m in first.messages] == ["system", "user"]
    assert first.messages[1]["content"].startswith("[TASK]: \nReceived at: 2024-10-15 07:00:01\nSender: User\n")
    assert "Acts on app Emails: Lists emails" in first.messages[0]["content"]  # ARE's AppToolAdapter text
    assert second.messages[-1]["content"].startswith("[OUTPUT OF STEP 1] Observation:\n***\nReturnedEmails(")
    assert first.params == {}  # ARE's LiteLLMEngine sends neither temperature nor stop


def test_are_side_is_deterministic(are_search_trace) -> None:
    path = starter("starter_search_lookup")
    again = run_are_agent(path.read_text(), str(path), as_factory(SEARCH_POLICY))
    report = compare(are_search_trace, again)
    assert report.identical, report.render()
    assert [r.messages for r in again.requests] == [r.messages for r in are_search_trace.requests]


def test_comparator_reports_a_planted_prompt_difference(are_search_trace) -> None:
    other = copy.deepcopy(are_search_trace)
    other.side = "orchestra"
    other.requests[1].messages[2]["content"] = other.requests[1].messages[2]["content"].replace("\n", "\n\n", 1)
    report = compare(are_search_trace, other)
    assert not report.identical
    assert report.first_prompt_difference == 1
    assert not report.verdict and not report.tool_calls
    assert any("message 3 (assistant / assistant), line 2:" in line for line in report.prompts), report.render()


def test_comparator_reports_tool_call_verdict_and_parameter_differences(are_search_trace) -> None:
    other = copy.deepcopy(are_search_trace)
    other.success = False
    other.tool_calls[0].args = {**other.tool_calls[0].args, "limit": 5}
    other.requests[0].params = {"temperature": 0.0}
    report = compare(are_search_trace, other)
    assert report.verdict and report.tool_calls and report.requests
    assert any('"limit": 5' in line for line in report.tool_calls)
    assert "temperature" in report.requests[0]


def test_comparator_masks_only_wall_clock_timestamps(are_search_trace) -> None:
    from orchestra.parity.compare import WallClockWindow

    window = WallClockWindow(start=1_790_000_000.0, end=1_790_000_100.0)
    text = "sim 1728975601.0 at 2024-10-15 07:00:01; wall 1790000050.25 at " + "2026-09-21 14:00:00"
    masked = window.normalise(text)
    assert "1728975601.0" in masked and "2024-10-15 07:00:01" in masked  # simulated times stay
    assert "1790000050.25" not in masked and "2026-09-21 14:00:00" not in masked


class _ExtraNote:
    """A deliberately broken orchestra-side prompt: one extra message before every model call."""

    @hookimpl
    def pre_step(self, agent: object) -> list[dict[str, str]]:
        return [{"role": "user", "content": "(an extra note ARE never sends)"}]


def test_harness_reports_a_broken_orchestra_prompt(tmp_path: Path, judge_pool: object) -> None:
    file = ScenarioFile(starter("starter_search_lookup"))
    clean = run_parity(file, SEARCH_POLICY, judge_pool=judge_pool)
    broken = run_parity(file, SEARCH_POLICY, judge_pool=judge_pool, plugins=(_ExtraNote(),))
    assert not broken.identical
    assert broken.first_prompt_difference == 0
    # The note makes request 1 one message longer than ARE's; without it the counts agree.
    assert broken.prompts[0] == "request 1: ARE sent 2 messages, orchestra 3", broken.render()
    assert not clean.prompts or clean.prompts[0] == "request 1: ARE sent 2 messages, orchestra 2", clean.render()


_DUMP_ARE_RUN = """
import json, sys
from orchestra.parity.are_agent import run_are_agent
from orchestra.parity.policy import as_factory
path, policy = sys.argv[1], json.loads(sys.argv[2])
trace = run_are_agent(open(path).read(), path, as_factory(policy))
print(json.dumps({"requests": [r.messages for r in trace.requests], "events": trace.event_log, "success": trace.success}))
"""


@pytest.mark.slow
def test_are_side_is_identical_across_processes_and_hash_seeds(tmp_path: Path) -> None:
    """App ids, prompts and event logs must not depend on the process (ARE seeds apps with hash())."""
    import json
    import os
    import subprocess
    import sys

    path = CASES["env_started_turn"].path(tmp_path)
    policy = json.dumps(CASES["env_started_turn"].policy)
    outs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-c", _DUMP_ARE_RUN, str(path), policy], capture_output=True, text=True, env=env, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        outs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert outs[0]["success"] is True
    assert outs[0] == outs[1]
