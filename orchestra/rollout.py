"""The one rollout path: `RolloutSpec` → `execute()` → `RolloutRecord`.

`orchestra run` (an agent), `orchestra replay` and `orchestra judge-check` (the oracle policy,
plain or perturbed) and every later runner build specs and call `execute`; a record is the same
type whatever produced it, and one formatter (`orchestra.cli._output`) prints it. A spec is
plain, serialisable data (a Ray worker or a resumable runner can ship and store it); the record
is too (`model_dump()`).

`execute` goes through the `rollout` hook (the built-in `drivers` plugin answers with `run_spec`),
so a plugin can wrap the whole rollout; each agent run goes through the `agent_run` hook. Any
exception — a bad scenario file, a permanent model failure, a plugin's bug — is recorded on the
rollout's record (`error`) and never escapes into a batch.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field, model_validator

from orchestra.agent import make_agent, run_agent
from orchestra.are.judge_pool import JudgePool
from orchestra.errors import OrchestraError
from orchestra.host import Host, PluginError
from orchestra.models import ModelConfig, ModelError
from orchestra.perturbations import PerturbationKind
from orchestra.scenario_files import ScenarioFile, resolve
from orchestra.session import RolloutResult, Session, SessionConfig
from orchestra.teams.config import AgentConfig, AppAgentSettings, TeamConfig
from orchestra.types import AgentLedger


class OracleConfig(BaseModel):
    """The oracle policy: the scenario's own oracle actions at the oracle's timing, optionally perturbed."""

    model_config = ConfigDict(extra="forbid")

    perturbation: PerturbationKind | None = None
    #: Also judge the trajectory with ARE's own offline harness (slow: ARE builds a judge per call).
    native_parity: bool = False


class RolloutSpec(BaseModel):
    """Everything that determines one rollout, as data: what runs, on which scenario, how it is judged."""

    model_config = ConfigDict(extra="forbid")

    scenario: str = Field(description="the scenario file (or the name a source resolved it to)")
    agent: AgentConfig | None = Field(None, description="one agent; None (and no team): the oracle policy")
    team: TeamConfig | None = Field(None, description="a team (main agent + app-agents); its `main` is the main agent")
    oracle: OracleConfig | None = None
    session: SessionConfig = Field(default_factory=SessionConfig, description="clock, notifications, duration, judge, reward mode")
    seed: int | None = Field(
        None, description="sampling seed: sent to every agent's model (a team's app-agents too) as `seed + sample_index` (OpenAI-style `seed`) when set"
    )
    sample_index: int = Field(0, ge=0, description="which sample of this scenario (several rollouts of one spec)")

    @model_validator(mode="after")
    def _one_policy(self) -> RolloutSpec:
        given = [name for name, value in (("agent", self.agent), ("team", self.team), ("oracle", self.oracle)) if value is not None]
        if len(given) > 1:
            raise ValueError(f"a rollout runs one policy: an agent, a team or the oracle (got {' and '.join(given)})")
        if not given:
            self.oracle = OracleConfig()
        return self

    @property
    def main_agent(self) -> AgentConfig | None:
        """The agent that talks to the user: the one agent, or the team's main agent."""
        return self.team.main if self.team is not None else self.agent

    @property
    def policy(self) -> str:
        """A short label: `oracle`, `oracle:<perturbation>`, `<scaffold>:<model>` or `team:<name>`."""
        if self.team is not None:
            return f"team:{self.team.name}"
        if self.agent is not None:
            return f"{self.agent.scaffold}:{self.agent.model.model}"
        assert self.oracle is not None
        return "oracle" + (f":{self.oracle.perturbation}" if self.oracle.perturbation else "")


class NativeVerdictRecord(BaseModel):
    success: bool
    rationale: str | None = None


class RolloutRecord(BaseModel):
    """What one rollout produced — or why it produced no verdict. The batch goes on either way."""

    scenario_id: str
    source: str
    policy: str
    perturbation: str | None = None
    sample_index: int = 0
    seed: int | None = None
    #: The judged rollout: verdict, reward, per-turn verdicts, ledgers, event log and hash, judge label.
    result: RolloutResult | None = None
    #: Why this rollout failed (a bad scenario, a permanent model failure, a plugin's exception).
    error: str | None = None
    #: A perturbation that cannot apply to this scenario (the reason): no rollout ran.
    not_applicable: str | None = None
    #: What a perturbation changed.
    note: str | None = None
    #: ARE's own offline verdict on the same trajectory (`OracleConfig.native_parity`).
    native: NativeVerdictRecord | None = None

    @property
    def agents(self) -> list[AgentLedger]:
        return self.result.agents if self.result is not None else []

    @property
    def expected_success(self) -> bool:
        return self.perturbation is None


async def execute(spec: RolloutSpec, *, host: Host | None = None, judge_pool: JudgePool | None = None, file: ScenarioFile | None = None) -> RolloutRecord:
    """Run `spec` through the `rollout` hook; every exception ends up in the record's `error`."""
    host = host or Host.create()
    try:
        pending = host.hook.rollout(spec=spec, scenario_file=file, host=host, judge_pool=judge_pool)
        if pending is None:  # pragma: no cover - the built-in drivers plugin always answers
            raise OrchestraError("no plugin runs rollouts (the built-in `drivers` plugin is missing)")
        record: RolloutRecord = await pending
        return record
    except Exception as exc:  # a plugin's bug included: recorded, never raised into the batch
        return _blank(spec, file, error=_describe(exc, file or spec.scenario))


def execute_sync(spec: RolloutSpec, **kwargs: Any) -> RolloutRecord:
    """`execute` from synchronous code (its own event loop)."""
    return anyio.run(lambda: execute(spec, **kwargs))


async def run_spec(rs: RolloutSpec, *, host: Host, judge_pool: JudgePool | None, scenario_file: ScenarioFile | None = None) -> RolloutRecord:
    """The built-in rollout: open the session, run the policy, judge. (The `drivers` plugin calls it.)

    `scenario_file` is the already-resolved file when there is one (an `hf:` source has no file on disk)."""
    file = scenario_file or ScenarioFile(rs.scenario)
    record = _blank(rs, file)
    try:
        check_scaffolds(rs, host)  # a typo'd scaffold fails here, before the scenario is even loaded
        with Session.open(file, rs.session, judge_pool=judge_pool) as session:
            record.scenario_id = session.scenario_id
            trace = None
            team = rs.team
            agent_config = rs.main_agent
            if rs.seed is not None:  # sampling seed per sample: the same spec, different samples — every agent's model
                seed = rs.seed + rs.sample_index
                if team is not None:
                    team = _seeded_team(team, seed)
                    agent_config = team.main
                elif agent_config is not None:
                    agent_config = agent_config.model_copy(update={"model": _seeded(agent_config.model, seed)})
            if team is not None:
                session.team = team  # the Agent2Agent plugin reads it (app-agents' settings)
            if agent_config is not None:
                await _run_agent_policy(session, agent_config, host, record)
            else:
                assert rs.oracle is not None
                if not _run_oracle_policy(session, rs.oracle, record):
                    return record
                if rs.oracle.native_parity:
                    from orchestra.are.native_verdict import export_trace

                    trace = export_trace(session.env.env, session.scenario, session.scenario_id, file.text)
            if record.result is None:
                record.result = session.finish()
            # a judge error (an unreachable judge model, ...): the rollout is kept, its verdict is not one
            record.error = record.error or record.result.error
        if trace is not None:
            from orchestra.parity.native_verdict import are_native_verdict

            native = are_native_verdict(trace, judge=rs.session.judge)
            record.native = NativeVerdictRecord(success=native.success, rationale=native.rationale)
    except OrchestraError as exc:
        record.error = str(exc)
    except Exception as exc:  # keep the batch going; the message names the scenario
        record.error = _describe(exc, file)
    return record


def _seeded(model: ModelConfig, seed: int) -> ModelConfig:
    return model.model_copy(update={"extra": {**model.extra, "seed": seed}})


def _seeded_team(team: TeamConfig, seed: int) -> TeamConfig:
    """`team` with `seed` sent by every agent's model: the main agent's, the app-agents' defaults and
    overrides (an app-agent without a model of its own uses the main agent's, seeded too)."""
    main = team.main.model_copy(update={"model": _seeded(team.main.model, seed)})
    app_agents = team.app_agents
    if app_agents is not None:
        def seed_settings(settings: AppAgentSettings) -> AppAgentSettings:
            return settings if settings.model is None else settings.model_copy(update={"model": _seeded(settings.model, seed)})

        app_agents = app_agents.model_copy(
            update={"defaults": seed_settings(app_agents.defaults), "overrides": {app: seed_settings(s) for app, s in app_agents.overrides.items()}}
        )
    return team.model_copy(update={"main": main, "app_agents": app_agents})


def check_scaffolds(spec: RolloutSpec, host: Host) -> None:
    """Every scaffold the spec's agents may use is registered (`PluginError` naming the agent and
    the scaffold otherwise): the main agent's and, for a team, the app-agents' default and every
    per-app override — also for apps a given scenario lacks, so a typo fails up front, never
    depending on which scenario runs or whether an expert is ever called."""
    wanted: list[tuple[str, str]] = []
    if spec.team is not None:
        team = spec.team
        wanted.append(("the main agent", team.main.scaffold))
        if team.app_agents is not None:
            wanted.append(("app_agents.defaults", team.app_agents.defaults.scaffold or team.main.scaffold))
            wanted += [(f"app_agents.overrides.{app}", team.app_agent(app).scaffold) for app in team.app_agents.overrides]
    elif spec.agent is not None:
        wanted.append(("the agent", spec.agent.scaffold))
    for who, scaffold in wanted:
        if scaffold not in host.scaffolds:
            where = f"team {spec.team.name!r}, " if spec.team is not None else ""
            raise PluginError(f"{where}{who}: unknown scaffold {scaffold!r}; registered: {', '.join(sorted(host.scaffolds)) or 'none'}")


async def _run_agent_policy(session: Session, config: AgentConfig, host: Host, record: RolloutRecord) -> None:
    agent = make_agent(session, host, model=config.model, scaffold=config.scaffold, scaffold_options=config.scaffold_options, max_steps=config.max_steps)
    error = None
    try:
        await run_agent(agent)
    except ModelError as exc:
        error = str(exc)
        agent.ledger.error = error
    result = session.finish(error=error)
    record.error = error
    record.result = result.model_copy(
        update={
            "steps": agent.steps,
            "reasoning_tokens": agent.reasoning_tokens,
            "cost_usd": agent.cost_usd,
            "stop_reason": "model_error" if error else (agent.stop_reason or result.stop_reason),
        }
    )


def _run_oracle_policy(session: Session, config: OracleConfig, record: RolloutRecord) -> bool:
    """Replay the (perturbed) oracle plan; False when the perturbation cannot apply here."""
    from orchestra.oracle import build_plan, replay
    from orchestra.perturbations import JudgeRules, NotApplicable, perturb

    plan = build_plan(session)
    if config.perturbation is not None:
        try:
            plan = perturb(plan, config.perturbation, JudgeRules.from_judge(session.prepared.judge, session.scenario))
        except NotApplicable as exc:
            record.not_applicable = str(exc)
            return False
        record.note = plan.notes[-1]
    replay(session, plan)
    return True


def _blank(spec: RolloutSpec, file: ScenarioFile | str | None, error: str | None = None) -> RolloutRecord:
    source = str(file.path) if isinstance(file, ScenarioFile) else str(file or spec.scenario)
    return RolloutRecord(
        scenario_id=Path(source).stem, source=source, policy=spec.policy,
        perturbation=spec.oracle.perturbation if spec.oracle is not None else None,
        sample_index=spec.sample_index, seed=spec.seed, error=error,
    )


def _describe(exc: BaseException, where: object) -> str:
    if isinstance(exc, OrchestraError):
        return str(exc)
    path = where.path if isinstance(where, ScenarioFile) else where
    return f"{path}: {type(exc).__name__}: {exc}"


# ------------------------------------------------------------------------------ batches


def specs_for(
    files: Iterable[ScenarioFile],
    *,
    agent: AgentConfig | None = None,
    team: TeamConfig | None = None,
    perturbations: Iterable[PerturbationKind | None] = (None,),
    session: SessionConfig | None = None,
    native_parity: bool = False,
) -> list[tuple[RolloutSpec, ScenarioFile]]:
    """One spec per file (an agent or a team), or per file and perturbation (the oracle), in deterministic order.

    A team runs with `session` when given, else with the team file's own session settings."""
    out = []
    for file in files:
        if team is not None:
            out.append((RolloutSpec(scenario=str(file.path), team=team, session=session or team.session), file))
            continue
        session = session or SessionConfig()
        if agent is not None:
            out.append((RolloutSpec(scenario=str(file.path), agent=agent, session=session), file))
            continue
        for kind in perturbations:
            oracle = OracleConfig(perturbation=kind, native_parity=native_parity)
            out.append((RolloutSpec(scenario=str(file.path), oracle=oracle, session=session), file))
    return out


async def execute_all(
    specs: Iterable[tuple[RolloutSpec, ScenarioFile | None]],
    *,
    host: Host | None = None,
    judge_pool: JudgePool | None = None,
    concurrency: int = 1,
) -> AsyncIterator[RolloutRecord]:
    """Yield one record per spec as each finishes (spec order when `concurrency` is 1).

    With `concurrency > 1`, up to that many rollouts run at once on one event loop — worthwhile
    when the model is a remote API and rollouts mostly wait for it. Each rollout has its own
    session and judge (the pool builds more judges as needed).
    """
    host = host or Host.create()
    if concurrency <= 1:
        for spec, file in specs:
            yield await execute(spec, host=host, judge_pool=judge_pool, file=file)
        return
    send, receive = anyio.create_memory_object_stream[RolloutRecord](max_buffer_size=concurrency)
    limiter = anyio.CapacityLimiter(concurrency)

    async def worker(spec: RolloutSpec, file: ScenarioFile | None) -> None:
        async with limiter:
            record = await execute(spec, host=host, judge_pool=judge_pool, file=file)
        await send.send(record)

    async def feed() -> None:
        async with anyio.create_task_group() as tg:
            for spec, file in specs:  # each file's text is read only once its rollout holds the limiter
                tg.start_soon(worker, spec, file)
        await send.aclose()

    async with anyio.create_task_group() as tg:
        tg.start_soon(feed)
        async with receive:
            async for record in receive:
                yield record


def execute_sources_sync(
    sources: Iterable[str | Path],
    *,
    perturbations: Iterable[PerturbationKind | None] = (None,),
    session: SessionConfig | None = None,
    judge_pool: JudgePool | None = None,
    native_parity: bool = False,
    capabilities: Iterable[str] = (),
    scenario_ids: Iterable[str] = (),
    limit: int | None = None,
    host: Host | None = None,
) -> list[RolloutRecord]:
    """The oracle (plain and/or perturbed) over resolved sources, one record per rollout, in order."""
    files = resolve(sources, capabilities=capabilities, scenario_ids=scenario_ids, limit=limit)
    specs = specs_for(files, perturbations=perturbations, session=session, native_parity=native_parity)

    async def go() -> list[RolloutRecord]:
        return [r async for r in execute_all(specs, host=host, judge_pool=judge_pool)]

    return anyio.run(go)


async def rollout_result(
    file: ScenarioFile,
    agent: AgentConfig,
    *,
    host: Host,
    session_config: SessionConfig | None = None,
    judge_pool: JudgePool | None = None,
) -> RolloutResult:
    """One agent on one scenario through `execute`, returning the judged result (for callers that
    need one: a rollout that produced none raises `OrchestraError` with the record's error)."""
    spec = RolloutSpec(scenario=str(file.path), agent=agent, session=session_config or SessionConfig())
    record = await execute(spec, host=host, judge_pool=judge_pool, file=file)
    if record.result is None:
        raise OrchestraError(record.error or f"{file.path}: the rollout produced no result")
    return record.result
