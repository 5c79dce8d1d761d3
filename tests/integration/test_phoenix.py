"""Orchestra's traces in a real backend: Arize Phoenix, started from its own venv (``.venv-phoenix``).

The runs are the shipped offline team (``orchestra run --team oracle ... --trace otlp``: an oracle
main agent delegating to oracle app-agents). The spans go out over OTLP/HTTP, configured the way a
user configures it (the standard ``OTEL_EXPORTER_OTLP_*`` variables), and come back through
Phoenix's own REST API (``GET /v1/projects/{project}/spans``), never from the exporter's memory.
What is checked is the tree Phoenix stores — workflow → main agent → ``<App>__expert_agent`` tool →
app-agent → chat / execute_tool — against the command's own JSON record: token usage per chat and
per agent, each delegation's simulated start and duration, the verdict, and one trace per rollout.

A team whose Calendar app-agent is a remote A2A agent (``tests/support/a2a_agent.py``, its own process,
exporting its own spans to the same Phoenix project over OTLP) is one trace too: the remote agent's top
span a child of the span orchestra sent the request under (the app-agent's ``invoke_agent``).

Each test writes to a project of its own (the ``x-project-name`` header Phoenix reads), so tests
that share the session's server never see each other's spans.
"""

from __future__ import annotations

import json
import os
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestra_dev.phoenix import PhoenixError, PhoenixServer

Span = dict[str, Any]


# --- what a team run's trace must look like, read back from Phoenix ------------------------------------


def _children(spans: list[Span], parent: Span) -> list[Span]:
    return [s for s in spans if s.get("parent_id") == parent["context"]["span_id"]]


def _named(spans: list[Span], prefix: str, where: str) -> list[Span]:
    found = [s for s in spans if str(s["name"]).startswith(prefix)]
    assert found, f"no span named {prefix!r}... {where}; spans there: {sorted(str(s['name']) for s in spans)}"
    return found


def check_team_trace(spans: list[Span]) -> dict[str, Any]:
    """Assert the team-run shape on one trace's spans; return the spans on the delegation path (for more checks)."""
    trace_ids = {s["context"]["trace_id"] for s in spans}
    assert len(trace_ids) == 1, f"expected one trace, got {len(trace_ids)}"
    ids = {s["context"]["span_id"] for s in spans}
    roots = [s for s in spans if not s.get("parent_id")]
    assert len(roots) == 1, f"expected one root span, got {[r['name'] for r in roots]}"
    orphans = [s["name"] for s in spans if s.get("parent_id") and s["parent_id"] not in ids]
    assert not orphans, f"spans whose parent never reached Phoenix: {orphans}"

    workflow = roots[0]
    assert str(workflow["name"]).startswith("invoke_workflow "), workflow["name"]
    # semconv-genai v0.1.0: the root is an internal agent span, operation invoke_workflow, named by gen_ai.agent.name
    root_attrs = workflow["attributes"]
    assert root_attrs.get("gen_ai.operation.name") == "invoke_workflow" and workflow["name"] == f"invoke_workflow {root_attrs.get('gen_ai.agent.name')}"
    assert "gen_ai.workflow.name" not in root_attrs
    # one conversation per rollout: the root's id on every span
    conversation = root_attrs.get("gen_ai.conversation.id")
    assert conversation, f"no gen_ai.conversation.id on the root: {sorted(root_attrs)}"
    strays = [s["name"] for s in spans if s["attributes"].get("gen_ai.conversation.id") != conversation]
    assert not strays, f"spans without the rollout's conversation id {conversation!r}: {strays}"
    main_agent = _named(_children(spans, workflow), "invoke_agent ", "under the workflow span")[0]
    experts = [s for s in _children(spans, main_agent) if str(s["name"]).startswith("execute_tool ") and str(s["name"]).endswith("__expert_agent")]
    assert experts, f"no execute_tool <App>__expert_agent under the main agent: {[s['name'] for s in _children(spans, main_agent)]}"
    delegated = [(expert, agent) for expert in experts for agent in _children(spans, expert) if str(agent["name"]).startswith("invoke_agent ")]
    assert delegated, "no app-agent invoke_agent span under any <App>__expert_agent tool span"
    for _, agent in delegated:  # v0.1.0's internal agent span: operation, name, no gen_ai.agent.id
        attrs = agent["attributes"]
        assert attrs.get("gen_ai.operation.name") == "invoke_agent" and agent["name"] == f"invoke_agent {attrs.get('gen_ai.agent.name')}", agent["name"]
        assert "gen_ai.agent.id" not in attrs, agent["name"]
    expert, app_agent = delegated[0]
    below = _children(spans, app_agent)
    chats = _named(below, "chat ", f"under the app-agent span {app_agent['name']!r}")
    tools = _named(below, "execute_tool ", f"under the app-agent span {app_agent['name']!r}")
    for chat in [s for s in spans if str(s["name"]).startswith("chat ")]:
        attrs = chat["attributes"]
        for key in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"):
            assert isinstance(attrs.get(key), int) and attrs[key] >= 0, f"{chat['name']}: {key}={attrs.get(key)!r}"
        assert attrs.get("gen_ai.operation.name") == "chat", chat["name"]
    for span in spans:
        attrs = span["attributes"]
        assert isinstance(attrs.get("orchestra.sim.start"), int | float), f"{span['name']}: no orchestra.sim.start in {sorted(attrs)}"
        assert isinstance(attrs.get("orchestra.sim.duration_s"), int | float), f"{span['name']}: no orchestra.sim.duration_s"
    return {"workflow": workflow, "main": main_agent, "expert": expert, "app_agent": app_agent, "chats": chats, "tools": tools}


def by_trace(spans: list[Span]) -> dict[str, list[Span]]:
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span["context"]["trace_id"], []).append(span)
    return traces


# --- real team runs, traced by the tracing plugin, exported as a user would ------------------------------

CALENDAR = "starter_execution_calendar"  # the main agent delegates to a Calendar and an Emails app-agent
GROUP_CHAT = "starter_execution_group_chat"  # ... and twice to a Messages app-agent


@pytest.fixture
def project(phoenix_server: PhoenixServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh Phoenix project, with the standard OTLP variables pointing at the session's server, as a user sets them."""
    name = f"orchestra-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix_server.otlp_endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"x-project-name={name}")
    for var in (
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        "OTEL_SDK_DISABLED",
        "OTEL_SEMCONV_STABILITY_OPT_IN",
    ):
        monkeypatch.delenv(var, raising=False)
    yield name


def run_oracle_team(capsys: pytest.CaptureFixture[str], scenario_path: Any, *scenarios: str) -> list[dict[str, Any]]:
    """`orchestra run --team oracle --scenarios ... --trace otlp --json` (in process): the shipped offline team,
    exported over OTLP/HTTP by `--trace otlp` with nothing but the OTEL_* variables; one JSON record per rollout."""
    from orchestra.cli import main

    sources = [str(scenario_path(name)) for name in scenarios]
    code = main(["run", "--team", "oracle", "--scenarios", *sources, "--concurrency", str(len(sources)), "--json", "--trace", "otlp"])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert code == 0 and all(r["status"] == "PASS" for r in records), records
    return records


def expected_spans(record: dict[str, Any]) -> int:
    """The workflow, and per agent its invoke_agent span, one chat span per model call and one execute_tool span per tool call."""
    return 1 + sum(1 + agent["model_calls"] + agent["tool_calls"] for agent in record["agents"])


def check_against_record(spans: list[Span], record: dict[str, Any]) -> None:
    """The trace Phoenix holds is the rollout the command reported: tree, verdict, per-agent tokens, delegations."""
    path = check_team_trace(spans)
    workflow = path["workflow"]
    assert workflow["name"] == "invoke_workflow oracle"
    attrs = workflow["attributes"]
    assert (attrs["orchestra.scenario.id"], attrs["orchestra.verdict"], attrs["orchestra.reward"]) == (record["scenario_id"], True, 1.0)
    assert attrs["orchestra.sim.duration_s"] == pytest.approx(record["sim_seconds"])

    agents = {str(s["attributes"]["gen_ai.agent.name"]): s for s in spans if str(s["name"]).startswith("invoke_agent ")}
    assert sorted(agents) == sorted(a["name"] for a in record["agents"])
    for ledger in record["agents"]:
        span = agents[ledger["name"]]
        usage = (span["attributes"]["gen_ai.usage.input_tokens"], span["attributes"]["gen_ai.usage.output_tokens"])
        assert usage == (ledger["prompt_tokens"], ledger["completion_tokens"]), ledger["name"]
        chats = [c for c in _children(spans, span) if str(c["name"]).startswith("chat ")]
        assert len(chats) == ledger["model_calls"] and all(c["attributes"]["gen_ai.usage.input_tokens"] > 0 for c in chats)
        assert sum(c["attributes"]["gen_ai.usage.input_tokens"] for c in chats) == ledger["prompt_tokens"]
        assert sum(c["attributes"]["gen_ai.usage.output_tokens"] for c in chats) == ledger["completion_tokens"]

    main_children = _children(spans, path["main"])
    for delegation in record["delegations"]:  # each delegation: its tool span under the main agent, the app-agent under it
        [app_agent] = [
            a
            for t in main_children
            if t["name"] == f"execute_tool {delegation['tool']}"
            for a in _children(spans, t)
            if a["name"] == f"invoke_agent {delegation['callee']}"
        ]
        assert app_agent["attributes"]["orchestra.sim.start"] == pytest.approx(delegation["start"])
        assert app_agent["attributes"]["orchestra.sim.duration_s"] == pytest.approx(delegation["duration"])


def test_an_oracle_team_run_in_phoenix(phoenix_server: PhoenixServer, project: str, capsys: pytest.CaptureFixture[str], scenario_path: Any) -> None:
    [record] = run_oracle_team(capsys, scenario_path, CALENDAR)
    assert [d["tool"] for d in record["delegations"]] == ["Calendar__expert_agent", "Emails__expert_agent"]

    spans = phoenix_server.wait_for_spans(project, expected_spans(record))
    assert len(spans) == expected_spans(record), sorted(s["name"] for s in spans)
    check_against_record(spans, record)

    # the check is not one that always passes: without the delegations' spans the same trace is rejected
    expert_ids = {s["context"]["span_id"] for s in spans if str(s["name"]).endswith("__expert_agent")}
    kept = [s for s in spans if s["context"]["span_id"] not in expert_ids and s.get("parent_id") not in expert_ids]
    kept = [s for s in kept if not s.get("parent_id") or s["parent_id"] in {k["context"]["span_id"] for k in kept}]
    with pytest.raises(AssertionError, match="no execute_tool <App>__expert_agent under the main agent"):
        check_team_trace(kept)
    # ... nor one that a span of another conversation passes
    stray = [{**s, "attributes": {**s["attributes"], "gen_ai.conversation.id": "another"}} if s["name"].startswith("chat ") else s for s in spans]
    with pytest.raises(AssertionError, match="without the rollout's conversation id"):
        check_team_trace(stray)


def test_two_concurrent_rollouts_are_two_traces(phoenix_server: PhoenixServer, project: str, capsys: pytest.CaptureFixture[str], scenario_path: Any) -> None:
    records = run_oracle_team(capsys, scenario_path, CALENDAR, GROUP_CHAT)  # --concurrency 2

    expected = {r["scenario_id"]: expected_spans(r) for r in records}
    traces = by_trace(phoenix_server.wait_for_spans(project, sum(expected.values())))
    assert len(traces) == 2, {k: len(v) for k, v in traces.items()}
    for spans in traces.values():
        [workflow] = [s for s in spans if not s.get("parent_id")]
        record = next(r for r in records if r["scenario_id"] == workflow["attributes"]["orchestra.scenario.id"])
        assert len(spans) == expected[record["scenario_id"]]
        check_against_record(spans, record)  # every span of the trace belongs to this rollout: tokens add up to its ledgers
        assert len({s["attributes"]["gen_ai.conversation.id"] for s in spans}) == 1
    assert len({workflow["attributes"]["gen_ai.conversation.id"] for spans in traces.values() for workflow in spans if not workflow.get("parent_id")}) == 2


def test_a_remote_a2a_app_agent_s_spans_are_in_the_rollout_s_trace_under_its_delegation(
    phoenix_server: PhoenixServer, project: str, capsys: pytest.CaptureFixture[str], scenario_path: Any, tmp_path: Path
) -> None:
    pytest.importorskip("a2a", reason="the a2a extra (a2a-sdk) is not installed")
    from orchestra.cli import main
    from support.a2a_process import remote_agent

    spans_file = tmp_path / "remote-spans.jsonl"
    # the agent's environment has the project's OTEL_EXPORTER_OTLP_HEADERS (the `project` fixture set them)
    with remote_agent(spans_file, otlp=phoenix_server.otlp_endpoint) as remote:
        team = tmp_path / "team.yaml"
        team.write_text(
            f"name: a2a-calendar\nmain:\n  model: orchestra/oracle\napp_agents:\n  apps: all\n  overrides:\n    Calendar: {{a2a: '{remote['loop']}'}}\n"
        )
        code = main(["run", "--team", str(team), "--scenarios", str(scenario_path(CALENDAR)), "--json", "--trace", "otlp"])
        [record] = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
        assert code == 0 and record["status"] == "PASS", record
        theirs = [json.loads(line) for line in spans_file.read_text().splitlines()]  # what the remote agent exported
    calendar = next(a for a in record["agents"] if a["name"] == "Calendar")
    assert calendar["a2a"]["url"] == remote["loop"] and calendar["tool_calls"] >= 1, calendar
    assert [s["name"] for s in theirs].count("a2a_agent") == 1 and len(theirs) == 1 + calendar["tool_calls"], theirs

    spans = phoenix_server.wait_for_spans(project, expected_spans(record) + len(theirs))
    assert len(spans) == expected_spans(record) + len(theirs), sorted(s["name"] for s in spans)
    assert len(by_trace(spans)) == 1  # one trace: both processes' spans
    remote_ids = {s["span_id"] for s in theirs}
    ours = [s for s in spans if s["context"]["span_id"] not in remote_ids]
    remotes = [s for s in spans if s["context"]["span_id"] in remote_ids]
    assert len(remotes) == len(theirs)
    path = check_team_trace(ours)  # orchestra's side: the team tree, one conversation id on every span
    assert path["workflow"]["name"] == "invoke_workflow a2a-calendar"
    [app_agent] = [s for s in ours if s["name"] == "invoke_agent Calendar"]
    expert = next(s for s in ours if s["context"]["span_id"] == app_agent["parent_id"])
    assert expert["name"] == "execute_tool Calendar__expert_agent" and expert["parent_id"] == path["main"]["context"]["span_id"]
    # the remote agent under its delegation: its top span a child of the app-agent's invoke_agent (the traceparent's span),
    # its MCP tool calls under that
    [top] = [s for s in remotes if s["name"] == "a2a_agent"]
    assert top["parent_id"] == app_agent["context"]["span_id"]
    assert top["attributes"]["header_traceparent"].startswith(f"00-{app_agent['context']['trace_id']}-{app_agent['context']['span_id']}-")
    tools = [s for s in remotes if s["name"] == "mcp_tool"]
    assert len(tools) == calendar["tool_calls"] and all(s["parent_id"] == top["context"]["span_id"] for s in tools)


# --- the server's start-up errors, on a stand-in executable (no Phoenix needed) ------------------------


def _fake_phoenix(tmp_path: Path, script: str) -> Path:
    path = tmp_path / "phoenix"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_server_that_exits_fails_with_its_output(tmp_path: Path) -> None:
    server = PhoenixServer(executable=_fake_phoenix(tmp_path, "echo 'migration failed: database is locked'\nexit 3\n"))
    with pytest.raises(PhoenixError, match=r"(?s)exited with code 3 .*migration failed: database is locked"):
        server.start()
    assert server.log_tail == "<not started>"  # stopped and cleaned up


def test_a_server_that_never_answers_is_stopped_after_the_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    server = PhoenixServer(executable=_fake_phoenix(tmp_path, f"echo $$ > {pid_file}; echo starting; exec sleep 60\n"), startup_timeout=1.5)
    with pytest.raises(PhoenixError, match=r"(?s)did not answer GET http://127\.0\.0\.1:\d+/healthz within 2 s.*starting"):
        server.start()
    with pytest.raises(ProcessLookupError):  # terminated and reaped, not left running
        os.kill(int(pid_file.read_text()), 0)
