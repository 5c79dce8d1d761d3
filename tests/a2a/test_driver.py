"""An A2A agent (a2a-sdk's server, in its own process: tests/support/a2a_agent.py) as the agent under test
and as a team's app-agent, through orchestra's A2A client (`orchestra/a2a/`).

The remote agent is an ordinary tool-calling loop over the MCP endpoint and model proxy orchestra
gives it in the message metadata; its policy is the proxy's upstream model — `orchestra/oracle`
(right) or `orchestra/scripted:FILE` (wrong), as tests/serve/test_outside_agent.py scripts the
Agents SDK agent.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

import orchestra
from orchestra.a2a.config import A2AConfig
from orchestra.models import ModelConfig
from orchestra.record import RolloutRecord
from orchestra.runs.runner import execute_all
from orchestra.scenario_files import ScenarioFile
from orchestra.spec import AgentConfig, RolloutSpec, TeamConfig
from orchestra.teams.config import AppAgentsConfig, AppAgentSettings
from support.a2a_process import RemoteAgentProcess
from support.helpers import REPO, scenario

#: One scenario per capability, and a two-turn one (the user writes again after the first answer).
RIGHT = [
    "starter_execution_calendar",  # Execution
    "starter_search_lookup",  # Search
    "starter_time_deadline",  # Time: a text due exactly 3 minutes after the request
    "starter_adaptability_reply",  # Adaptability: an email arrives mid-task
    "starter_ambiguity_clarify",  # Ambiguity
    "starter_multiturn_followup",  # two turns
]
TIME = "starter_time_deadline"
WRONG = REPO / "tests" / "serve" / "agent_side" / "wrong_time_too_early.json"


def a2a_spec(name: str, url: str, model: str = "orchestra/oracle", timeout: float = 120, max_steps: int = 80, **a2a: Any) -> RolloutSpec:
    agent = AgentConfig(model=ModelConfig(model=model), a2a=A2AConfig(url=url, timeout_seconds=timeout, **a2a), max_steps=max_steps)
    return RolloutSpec(scenario=str(scenario(name)), agent=agent)


def run_all(specs: list[RolloutSpec]) -> list[RolloutRecord]:
    async def go() -> list[RolloutRecord]:
        return [r async for r in execute_all([(s, ScenarioFile(s.scenario)) for s in specs])]

    return anyio.run(go)


def table(records: list[RolloutRecord]) -> str:
    rows = []
    for r in records:
        res = r.result
        rows.append(json.dumps({"id": r.scenario_id, "status": r.status, "sim": res.sim_seconds if res else None, "error": r.error}))
    return "\n".join(rows)


def test_the_a2a_agent_under_test_passes_fails_and_reruns_identically(remote: RemoteAgentProcess) -> None:
    url = remote["loop"]
    specs = [a2a_spec(name, url) for name in RIGHT]
    specs.append(a2a_spec(TIME, url))  # the rerun: the same episode
    specs.append(a2a_spec(TIME, url, model=f"orchestra/scripted:{WRONG}"))  # right text, sent 3 minutes early
    records = run_all(specs)
    n = len(RIGHT)
    right, rerun, wrong = records[:n], records[n], records[n + 1]
    shown = table(records)
    for record in right:
        assert record.status == "PASS" and record.result is not None and record.result.reward == 1.0, shown
        main = record.result.agents[0]
        assert main.a2a is not None and main.a2a["url"] == url and main.a2a["messages"] >= 1, main
        # what the clock charged from what: the agent's MCP tool calls, and its tokens through the proxy
        assert main.a2a["tool_calls"] == main.tool_calls > 0 and main.a2a["proxy_model_calls"] == main.model_calls > 0
        assert main.a2a["tool_call_sim_seconds"] == pytest.approx(2.0 * main.tool_calls)
        assert main.a2a["proxy_sim_seconds"] + main.a2a["tool_call_sim_seconds"] == pytest.approx(main.sim_seconds, abs=1e-5)
        assert record.spec.policy == f"a2a:{url}"
    time_run = right[RIGHT.index(TIME)]
    assert time_run.result is not None and time_run.result.sim_seconds >= 180, shown  # its three simulated minutes passed
    assert rerun.result is not None and rerun.result.event_log_sha256 == time_run.result.event_log_sha256, shown
    assert wrong.status == "FAIL" and wrong.result is not None and wrong.result.reward == 0.0, shown


def test_a_remote_agent_that_hangs_answers_garbage_or_drops_is_an_error_and_the_batch_goes_on(remote: RemoteAgentProcess) -> None:
    specs = [
        a2a_spec("starter_search_lookup", remote["hang"], timeout=1.5),
        a2a_spec("starter_search_lookup", remote["malformed"]),
        a2a_spec("starter_search_lookup", remote["drop"]),
        a2a_spec("starter_search_lookup", "http://127.0.0.1:9"),  # nothing listens (no preflight here: the batch API)
        a2a_spec("starter_search_lookup", remote["loop"], model="orchestra/no-model"),  # its proxy has no model: the agent fails
        a2a_spec("starter_search_lookup", remote["grpc"]),  # a card offering only gRPC
        a2a_spec("starter_search_lookup", remote["badiface"]),  # a card naming an interface nobody listens on
        a2a_spec("starter_search_lookup", remote["loop"]),
        a2a_spec("starter_search_lookup", remote["rest"]),  # the HTTP+JSON binding
    ]
    records = run_all(specs)
    hang, malformed, drop, nobody, failing, grpc, badiface, good, rest = records
    shown = table(records)
    for record, words in (
        (hang, "no answer within 1.5 s (its timeout: --a2a-timeout"),
        (malformed, "a malformed A2A reply"),
        (drop, "the connection dropped"),
        (nobody, "cannot read its agent card"),
        (failing, "it answered with an A2A error"),
        (grpc, "its agent card offers no A2A binding orchestra speaks (it offers: GRPC; orchestra speaks: JSONRPC, HTTP+JSON)"),
        (badiface, "cannot connect to http://127.0.0.1:9/rpc (the JSONRPC interface its card names; ConnectError"),
    ):
        assert record.status == "ERROR" and record.error is not None, shown
        assert "\n" not in record.error and record.error.startswith("A2A agent at http://127.0.0.1:") and words in record.error, shown
        assert "(the agent under test)" in record.error
        # the agent's ledger says so too, as a failing app-agent's does
        assert record.partial is not None and record.trajectory is not None, shown
        (main,) = record.partial.agents
        assert main.stop_reason == "a2a_error" and main.error == record.error, main
        assert record.trajectory.stop_reason == "a2a_error"
    assert good.status == "PASS" and rest.status == "PASS", shown
    assert rest.result is not None and rest.result.agents[0].tool_calls > 0


def test_a_remote_agent_that_does_its_work_then_never_answers_is_judged_within_seconds(remote: RemoteAgentProcess) -> None:
    """The episode is over (its one turn answered) while the A2A task stays open: orchestra stops
    waiting after the grace, cancels the task and judges; the same for an app-agent whose
    final_answer is in."""
    from orchestra.a2a.driver import ENDED_GRACE_SECONDS

    team = TeamConfig(
        name="a2a-hang-after",
        main=AgentConfig(model="orchestra/oracle"),
        app_agents=AppAgentsConfig(apps=["Calendar"], overrides={"Calendar": AppAgentSettings(a2a=A2AConfig(url=remote["work_then_hang"]))}),
    )
    calendar = str(scenario("starter_execution_calendar"))
    started = time.monotonic()
    main_record, team_record = run_all(
        [a2a_spec("starter_execution_calendar", remote["work_then_hang"], timeout=300), RolloutSpec(scenario=calendar, team=team)]
    )
    elapsed = time.monotonic() - started
    shown = table([main_record, team_record])
    assert main_record.status == "PASS" and team_record.status == "PASS", shown
    assert elapsed < 120, elapsed  # not the 300 s / 600 s timeouts
    assert main_record.result is not None and team_record.result is not None
    for ledger in (main_record.result.agents[0], next(a for a in team_record.result.agents if a.name == "Calendar")):
        assert ledger.a2a is not None and ledger.error is None, ledger
        cancelled = ledger.a2a["cancelled"]
        assert cancelled.startswith("orchestra cancelled the A2A task of message 1: ") and f"had not answered {ENDED_GRACE_SECONDS:g} s later" in cancelled
        assert "TASK_STATE_CANCELED" in cancelled, cancelled  # the agent's task store says it was cancelled
    assert "the episode ended (all_turns_completed)" in main_record.result.agents[0].a2a["cancelled"]
    delegation = next(d for d in team_record.result.delegations if d.callee == "Calendar")
    assert delegation.ok and delegation.answer and "RESULTS" in delegation.answer  # its final_answer is the expert tool's result


def test_max_steps_bounds_the_steps_the_record_counts(remote: RemoteAgentProcess) -> None:
    """Two steps (two proxy calls and their tool calls) and no more: the third is refused, the user is
    answered ARE's "Max iterations" message, the rollout is judged; an app-agent past its budget is a
    failed expert call, as orchestra's own app-agent's."""
    team = TeamConfig(
        name="a2a-budget",
        main=AgentConfig(model="orchestra/oracle"),
        app_agents=AppAgentsConfig(apps=["Calendar"], overrides={"Calendar": AppAgentSettings(a2a=A2AConfig(url=remote["loop"]), max_steps=1)}),
    )
    calendar = str(scenario("starter_execution_calendar"))
    spent, full, tight_team = run_all(
        [
            a2a_spec("starter_execution_calendar", remote["loop"], max_steps=2),
            a2a_spec("starter_execution_calendar", remote["loop"]),
            RolloutSpec(scenario=calendar, team=team),
        ]
    )
    shown = table([spent, full, tight_team])
    assert full.status == "PASS" and full.result is not None and full.result.agents[0].steps > 2, shown
    assert spent.status == "FAIL" and spent.result is not None, shown
    main = spent.result.agents[0]
    assert main.steps == 2 and main.stop_reason == "step_budget" and spent.result.stop_reason == "step_budget", main
    assert spent.trajectory is not None
    told = [c.arguments.get("content") for a in spent.trajectory.agents for s in a.steps for c in s.tool_calls if c.name.endswith("send_message_to_user")]
    assert told[-1] == "Max iterations (2) reached. Stopping.", told
    assert tight_team.result is not None, shown
    delegation = next(d for d in tight_team.result.delegations if d.callee == "Calendar")
    assert not delegation.ok and delegation.error == "sub-agent 'Calendar' failed: it spent its 1-step budget without calling final_answer", delegation
    assert delegation.steps == 1


def test_the_session_id_is_the_rollouts_and_the_loopback_host_can_be_advertised(remote: RemoteAgentProcess) -> None:
    """`orchestra.session_id` differs between rollouts and is the same for the same rollout run again;
    with advertise_host the agent is given URLs naming that host, and reaches them."""
    before = len(remote.spans.read_text().splitlines()) if remote.spans.exists() else 0
    first = a2a_spec("starter_search_lookup", remote["loop"])
    other = first.model_copy(update={"sample_index": 1})
    advertised = a2a_spec("starter_search_lookup", remote["loop"], advertise_host="localhost")
    records = run_all([first, other, first, advertised])
    assert [r.status for r in records] == ["PASS"] * 4, table(records)
    theirs = [json.loads(line) for line in remote.spans.read_text().splitlines()[before:]]
    seen = [s["attributes"] for s in theirs if s["name"] == "a2a_agent"]
    assert len(seen) == 4, seen
    ids = [a["session_id"] for a in seen]
    assert ids[0] == ids[2] != ids[1] and all(i.startswith("a2a-main-") for i in ids), ids
    assert ids[3] != ids[0]  # another spec (its A2A settings), another id
    assert all(a["mcp_url"].startswith("http://127.0.0.1:") for a in seen[:3]) and seen[3]["mcp_url"].startswith("http://localhost:"), seen


def test_an_a2a_app_agent_in_a_team(remote: RemoteAgentProcess) -> None:
    team = TeamConfig(
        name="a2a-calendar",
        main=AgentConfig(model="orchestra/oracle"),
        app_agents=AppAgentsConfig(apps="all", overrides={"Calendar": AppAgentSettings(a2a=A2AConfig(url=remote["loop"]))}),
    )
    in_process = team.model_copy(update={"app_agents": AppAgentsConfig(apps="all")})
    calendar = str(scenario("starter_execution_calendar"))
    record, reference = run_all([RolloutSpec(scenario=calendar, team=team), RolloutSpec(scenario=calendar, team=in_process)])
    shown = table([record, reference])
    assert record.status == "PASS" and reference.status == "PASS", shown
    assert record.result is not None
    by_name = {a.name: a for a in record.result.agents}
    remote_agent = by_name["Calendar"]
    assert remote_agent.a2a is not None and remote_agent.a2a["url"] == remote["loop"] and remote_agent.app == "Calendar"
    assert remote_agent.tool_calls >= 1 and remote_agent.model_calls >= 1 and remote_agent.sim_seconds > 0
    assert by_name["Emails"].a2a is None  # the other apps' agents run in process
    delegation = next(d for d in record.result.delegations if d.callee == "Calendar")
    assert delegation.ok and delegation.answer and "RESULTS" in delegation.answer  # the remote's answer is the expert tool's result


def test_a_failing_a2a_app_agent_is_a_failed_expert_call(remote: RemoteAgentProcess) -> None:
    def team(url: str, timeout: float = 120) -> RolloutSpec:
        config = TeamConfig(
            name="a2a-failing",
            main=AgentConfig(model="orchestra/oracle"),
            app_agents=AppAgentsConfig(apps=["Calendar"], overrides={"Calendar": AppAgentSettings(a2a=A2AConfig(url=url, timeout_seconds=timeout))}),
        )
        return RolloutSpec(scenario=str(scenario("starter_execution_calendar")), team=config)

    records = run_all([team(remote["drop"]), team(remote["hang"], timeout=1.5)])
    for record, words in (
        (records[0], "the connection dropped"),
        # the hint names the team file's field (`--team` takes no --a2a-timeout)
        (records[1], "no answer within 1.5 s (its timeout: app_agents.overrides.Calendar.a2a.timeout_seconds in the team file)"),
    ):
        assert record.result is not None and record.error is None, table(records)
        delegation = next(d for d in record.result.delegations if d.callee == "Calendar")
        assert not delegation.ok and delegation.error is not None and words in delegation.error, delegation.error
        ledger = next(a for a in record.result.agents if a.name == "Calendar")
        assert ledger.stop_reason == "a2a_error" and ledger.error is not None and words in ledger.error


def test_the_a2a_request_carries_the_trace_context(remote: RemoteAgentProcess) -> None:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from orchestra.tracing import Tracing

    exporter = InMemorySpanExporter()
    before = remote.spans.read_text().splitlines() if remote.spans.exists() else []
    with Tracing(exporter):
        record = orchestra.execute_sync(a2a_spec("starter_search_lookup", remote["loop"]))
    assert record.status == "PASS"
    ours = exporter.get_finished_spans()
    agent_span = next(s for s in ours if s.name.startswith("invoke_agent"))
    assert agent_span.attributes["orchestra.agent.a2a_url"] == remote["loop"]  # the span says a remote agent played it
    assert agent_span.attributes["orchestra.agent.scaffold"] == "a2a"
    assert record.result.agents[0].scaffold == "a2a"
    theirs = [json.loads(line) for line in remote.spans.read_text().splitlines()[len(before) :]]
    top = [s for s in theirs if s["name"] == "a2a_agent"]
    assert len(top) == 1, theirs
    trace_id = f"{agent_span.context.trace_id:032x}"
    assert top[0]["attributes"]["header_traceparent"].startswith(f"00-{trace_id}-")  # the W3C header on the HTTP request
    assert top[0]["trace_id"] == trace_id and top[0]["parent_span_id"] == f"{agent_span.context.span_id:016x}"  # a child of the agent span
    tools = [s for s in theirs if s["name"] == "mcp_tool"]
    assert tools and all(s["trace_id"] == trace_id and s["parent_span_id"] == top[0]["span_id"] for s in tools)
    # orchestra's side of those calls (the loopback's MCP tool calls and proxy model calls) is in the same trace, under the agent span
    served = [s for s in ours if s.name.startswith(("execute_tool", "chat"))]
    assert len([s for s in served if s.name.startswith("execute_tool")]) == len(tools)
    assert all(s.context.trace_id == agent_span.context.trace_id and s.parent is not None and s.parent.span_id == agent_span.context.span_id for s in served)


def test_team_files_and_the_command_line_take_an_a2a_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from orchestra.cli import main
    from orchestra.teams.loading import load_team

    path = tmp_path / "team.yaml"
    path.write_text(
        "name: remote\nmain:\n  a2a: http://127.0.0.1:9999/\napp_agents:\n  apps: [Calendar]\n  overrides:\n    Calendar: {a2a: {url: 'http://h:1', timeout_seconds: 5}}\n"
    )
    team = load_team(path)
    assert team.main.a2a == A2AConfig(url="http://127.0.0.1:9999") and team.main.model.model == "orchestra/no-model"
    assert team.app_agent("Calendar").a2a == A2AConfig(url="http://h:1", timeout_seconds=5)
    assert team.app_agent("Emails").a2a is None
    assert "a2a" not in AgentConfig(model="orchestra/oracle").model_dump()  # a record without A2A is unchanged
    assert main(["run", "--agent", "http://x", "--scenarios", "bundled", "--no-preflight"]) != 0
    assert "--agent 'http://x': the form is a2a:URL" in capsys.readouterr().err
    assert main(["run", "--agent", "a2a:http://x", "--team", "oracle", "--scenarios", "bundled", "--no-preflight"]) != 0
    assert "--agent: not with --team" in capsys.readouterr().err


def test_without_the_sdk_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from orchestra.a2a.client import require_sdk
    from orchestra.errors import OrchestraError

    monkeypatch.setitem(sys.modules, "a2a.client", None)
    with pytest.raises(OrchestraError, match=r"pip install 'orchestra-agents\[a2a\]'"):
        require_sdk()


def test_orchestra_run_agent_a2a(remote: RemoteAgentProcess, capsys: pytest.CaptureFixture[str]) -> None:
    from orchestra.cli import main

    search = str(scenario("starter_search_lookup"))
    assert main(["run", "--agent", f"a2a:{remote['loop']}", "--model", "orchestra/oracle", "--scenarios", search]) == 0
    out = capsys.readouterr().out
    assert "starter_search_lookup" in out and " PASS " in out, out
    # preflight: an agent whose card does not answer stops the batch before anything runs
    assert main(["run", "--agent", "a2a:http://127.0.0.1:9", "--scenarios", search]) == 2
    assert "preflight: A2A agent at http://127.0.0.1:9 (the agent under test): cannot read its agent card" in capsys.readouterr().err


def test_preflight_names_the_team_files_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from orchestra.cli import main

    path = tmp_path / "team.yaml"
    path.write_text("name: t\nmain: {model: orchestra/oracle}\napp_agents:\n  apps: [Calendar]\n  overrides:\n    Calendar: {a2a: 'http://127.0.0.1:9'}\n")
    assert main(["run", "--team", str(path), "--scenarios", str(scenario("starter_search_lookup"))]) == 2
    err = capsys.readouterr().err
    assert f"preflight: A2A agent at http://127.0.0.1:9 (app_agents.overrides.Calendar in {path}): cannot read its agent card" in err, err
