"""Shared by the team oracle tests (not a test module): the teams, a call recorder, one rollout."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio

from orchestra.hookspecs import hookimpl
from orchestra.host import Host
from orchestra.rollout import RolloutRecord, RolloutSpec, execute
from orchestra.scenario_files import read_scenario_file
from orchestra.teams.config import EXPERT_TOOL_SUFFIX, TeamConfig
from support.helpers import REPO, SCENARIOS, stratified

SCAFFOLDS = ("react", "tool_calling", "parallel_tools")
#: (main agent's scaffold, app-agents' scaffold)
PAIRS = [(m, a) for m in SCAFFOLDS for a in SCAFFOLDS]
#: The pairs the slow matrix runs over the stratified subset (tool_calling in both roles runs every scenario, in the fast test).
OTHER_PAIRS = [p for p in PAIRS if p != ("tool_calling", "tool_calling")]
ORACLE = "orchestra/oracle"
#: Every bundled scenario (the 7 starters and the 44-scenario corpus).
ALL_SCENARIOS = sorted(p for p in SCENARIOS.rglob("*.json") if p.name != "manifest.json")
#: Apps that stay with the main agent in every team (ARE never turns them into app-agents).
MAIN_ONLY_APPS = ("AgentUserInterface", "SystemApp", "InternalContacts")


def load_shipped_team(name: str) -> TeamConfig:
    """A team file of `teams/`, loaded (and checked) as `orchestra run --team NAME` loads it."""
    from orchestra.teams.loading import load_team

    return load_team(REPO / "orchestra" / "teams" / "shipped" / f"{name}.yaml")


def with_roles(team: TeamConfig, main: str, app_agents: str) -> TeamConfig:
    """`team` run by the oracle model: the main agent on scaffold `main`, every app-agent on `app_agents`."""
    oracle = team.with_overrides(model=ORACLE, scaffold=app_agents)
    return oracle.model_copy(update={"main": oracle.main.model_copy(update={"scaffold": main})})


class CallRecorder:
    """Every tool call of every agent, per scenario: (agent name, role, tool, arguments, ok).

    Also the main agent's expert tools (which apps app-agents serve in that rollout)."""

    def __init__(self) -> None:
        self.calls: dict[str, list[tuple[str, str, str, dict[str, Any], bool]]] = defaultdict(list)
        self.experts: dict[str, set[str]] = defaultdict(set)

    @hookimpl(wrapper=True)
    def tool_call(self, agent: Any, call: Any) -> Any:
        inner = yield
        scenario = agent.session.scenario_id
        if agent.is_main:
            self.experts[scenario] |= {n for n in agent.tools if n.endswith(EXPERT_TOOL_SUFFIX)}

        async def recorded() -> Any:
            outcome = await inner
            self.calls[scenario].append((agent.name, agent.role, call.name, dict(call.arguments), outcome.ok))
            return outcome

        return recorded()


def oracle_apps(path: Path) -> set[str]:
    """The apps (other than the user interface and the system app) the scenario's oracle acts on."""
    events = json.loads(path.read_text(encoding="utf-8"))["events"]
    return {e["action"]["app"] for e in events if e["class_name"] == "OracleEvent"} - set(MAIN_ONLY_APPS)


def run_team(path: Path, team: TeamConfig, host: Host, judge_pool: Any, recorder: CallRecorder | None = None) -> RolloutRecord:
    """One rollout of `team` on `path` (the recorder, if given, forgets earlier rollouts: runs are sequential)."""
    if recorder is not None:
        recorder.calls.clear()
        recorder.experts.clear()
    file = read_scenario_file(path)
    spec = RolloutSpec(scenario=str(file.path), team=team)
    return anyio.run(lambda: execute(spec, host=host, judge_pool=judge_pool, file=file))


def app_of(tool: str) -> str:
    return tool.split("__", 1)[0]


def check_delegated(record: RolloutRecord, recorder: CallRecorder) -> int:
    """Assert the team really delegated: the main agent touched no app an app-agent serves; the
    app-agents made their app's calls, each one in ARE's log. Returns how many app calls they made."""
    result = record.result
    assert result is not None, record.error
    sid = record.scenario_id
    served = {t.removesuffix(EXPERT_TOOL_SUFFIX) for t in recorder.experts[sid]}
    calls = recorder.calls[sid]
    main_app_calls = [c for c in calls if c[1] == "main" and not c[2].endswith(EXPERT_TOOL_SUFFIX) and app_of(c[2]) not in MAIN_ONLY_APPS]
    assert not [c for c in main_app_calls if app_of(c[2]) in served], f"{sid}: the main agent called a served app itself"
    sub_app_calls = [c for c in calls if c[1] == "sub" and c[2] != "final_answer"]
    assert all(app_of(c[2]) in served for c in sub_app_calls), f"{sid}: an app-agent called another app's tool"
    assert all(c[4] for c in sub_app_calls), f"{sid}: an app-agent's call failed: {[c for c in sub_app_calls if not c[4]]}"
    # each app-agent call reached ARE: an AGENT event of that method with those arguments (ARE also
    # logs calls an app makes inside another, e.g. send_message looking up the conversation)
    logged = [(e["tool"].split("__", 1)[1], json.dumps(e["args"], sort_keys=True, default=str)) for e in result.event_log if e["type"] == "AGENT"]
    for c in sub_app_calls:
        assert (c[2].split("__", 1)[1], json.dumps(c[3], sort_keys=True, default=str)) in logged, f"{sid}: {c} is not in ARE's log"
    experts_called = [c for c in calls if c[1] == "main" and c[2].endswith(EXPERT_TOOL_SUFFIX)]
    assert bool(experts_called) == bool(sub_app_calls), f"{sid}: delegations {len(experts_called)}, app-agent calls {len(sub_app_calls)}"
    return len(sub_app_calls)


def assert_scores_one_through_app_agents(record: RolloutRecord, recorder: CallRecorder) -> int:
    """1.0, and delegated for real (`check_delegated`); returns how many app calls the app-agents made."""
    assert record.error is None, (record.scenario_id, record.error)
    result = record.result
    assert result is not None and result.success and result.reward == 1.0, (record.scenario_id, result and result.rationale)
    return check_delegated(record, recorder)


def check_every_scenario(team_name: str, main: str, app_agents: str, judge_pool: Any) -> None:
    """The slow matrix's body: the stratified subset (every capability, every universe, single- and
    multi-turn: `helpers.stratified`) and the tightest-timed scenario score 1.0 through app-agents;
    that one, run again, has the same event log (three actions on two apps due 5 s after an
    environment event). Every bundled scenario is run by the tool_calling pair of each team
    (`test_every_bundled_scenario_scores_one_through_app_agents`)."""
    recorder = CallRecorder()
    host = Host.create([recorder])
    team = with_roles(load_shipped_team(team_name), main, app_agents)
    hashes = {}
    tight = next(p for p in ALL_SCENARIOS if p.stem == "univ_02_mt_adapt_one_on_one_slot")
    for path in sorted({*stratified(ALL_SCENARIOS), tight}):
        record = run_team(path, team, host, judge_pool, recorder)
        assert_scores_one_through_app_agents(record, recorder)
        assert record.result is not None
        hashes[path.stem] = record.result.event_log_sha256
    again = run_team(tight, team, host, judge_pool)
    assert again.result is not None and again.result.event_log_sha256 == hashes[tight.stem]
