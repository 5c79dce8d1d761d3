"""One rollout as an object: `Rollout` — its spec, host, session, team, agents and their ledgers.

Every way of running a scenario goes through it: `orchestra run`, `replay` and `judge-check`
(through `execute` and the runner), the parity harness, and trainers that own the model call.

The step API (a trainer's loop; app-agents run inside `apply` when the main agent delegates)::

    with Rollout.open(spec) as rollout:               # load, preprocess, start; closed on exit
        while (request := await rollout.next_request()) is not None:
            await rollout.apply(my_model(request))    # or: await rollout.fail(model_error)
        record = rollout.finish()                     # judge; the RolloutRecord

`execute(spec)` is the thin driver over it: the `rollout` hook (which plugins wrap: a tracer's
workflow span) runs `Rollout.run()` — start, the main agent through the `agent_run` hook with
each model call through `model_call`, or the oracle replay — then `finish()`. Any exception is
kept on the record (`error`, with the event log so far in `partial`), never raised into a batch.

What a rollout owns, the session does not: the team, the agents' ledgers, the delegations, and
the record (`orchestra.record.build_record`: totals are sums over all agents). The session is
ARE's world only (`orchestra.session`). Batches of rollouts are `orchestra.runs.runner`'s.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

import anyio

from orchestra.agent import AgentContext, AgentStepper, make_agent, run_agent
from orchestra.are import agent2agent as a2a
from orchestra.are.judge_pool import JudgePool
from orchestra.are.loading import ScenarioTemplate
from orchestra.errors import OrchestraError
from orchestra.host import ATTRIBUTION_PREFIX, BUILTIN_PLUGINS, Host, PluginError
from orchestra.models import ModelError
from orchestra.record import NativeVerdictRecord, RolloutRecord, RolloutResult, build_record
from orchestra.scenario_files import ScenarioFile
from orchestra.session import PartialLog, Session
from orchestra.spec import AgentConfig, OracleConfig, RolloutSpec
from orchestra.teams.config import TeamConfig
from orchestra.training import TrainingRecorder, TrainingTrace
from orchestra.trajectory import Trajectory, TrajectoryRecorder
from orchestra.types import AgentLedger, Delegation, ModelRequest, ModelResponse

__all__ = [
    "AgentConfig",
    "OracleConfig",
    "Rollout",
    "RolloutRecord",
    "RolloutResult",
    "RolloutSpec",
    "TeamConfig",
    "execute",
    "execute_sync",
]

#: The oracle policy's ledger name (its line of the record: tool calls, simulated seconds).
ORACLE = "oracle"


class Rollout:
    """One rollout of one spec. `Rollout.open(spec)` starts it; `execute(spec)` runs it through the hooks."""

    def __init__(
        self,
        spec: RolloutSpec,
        *,
        host: Host | None = None,
        judge_pool: JudgePool | None = None,
        file: ScenarioFile | None = None,
        template: ScenarioTemplate | None = None,
    ) -> None:
        self.spec = spec
        #: The world loaded before that this rollout starts from a copy of (a group's), if any.
        self.template = template
        self.host = host or Host.create()
        self.file = file or ScenarioFile(spec.scenario)
        self.judge_pool = judge_pool
        #: What actually runs: the spec with its sampling seed in every agent's model.
        self._policy = spec.seeded()
        self.team: TeamConfig | None = self._policy.team
        #: Every agent that ran, by its unique name (main first, then sub-agents in start order).
        self.agents: dict[str, AgentLedger] = {}
        #: Every task an agent handed to a sub-agent, in the order they finished.
        self.delegations: list[Delegation] = []
        #: What every agent was asked, answered and did; built into the record's `trajectory`.
        self.trajectory = TrajectoryRecorder()
        #: The trainable agents' model calls in token ids (the `training` plugin records them); the record's `training`.
        self.training = TrainingRecorder()
        #: The main agent (None for the oracle policy), made when the rollout starts.
        self.main: AgentContext | None = None
        self._session: Session | None = None
        self._stepper: AgentStepper | None = None
        self._app_agents: list[str] | None = None
        self._error: str | None = None
        self._failure: BaseException | None = None
        self._oracle_done = False
        self._not_applicable: str | None = None
        self._note: str | None = None
        self._native_trace: str | None = None
        self._record: RolloutRecord | None = None
        self._closed = False

    # ------------------------------------------------------------------ opening and closing
    @classmethod
    def open(
        cls,
        spec: RolloutSpec,
        *,
        host: Host | None = None,
        judge_pool: JudgePool | None = None,
        file: ScenarioFile | None = None,
        template: ScenarioTemplate | None = None,
    ) -> Rollout:
        """A started rollout (scenario loaded and preprocessed, environment running, main agent
        made); use it as a context manager, or `close()` it. Raises `OrchestraError` (a bad
        scenario, an unknown scaffold or judge) — nothing has run then. `template`: start from a
        copy of a world loaded before (`Session.load_template`; the members of a group)."""
        rollout = cls(spec, host=host, judge_pool=judge_pool, file=file, template=template)
        try:
            rollout.start()
        except BaseException:
            rollout.close()
            raise
        return rollout

    def start(self) -> None:
        """Check the spec against the host, load the scenario and make the main agent."""
        if self._session is not None:
            return
        check_spec(self.spec, self.host)  # a typo'd scaffold or judge fails here, before the scenario loads
        pool = self.judge_pool or self.host.judge_pool(self.spec.session.judge)
        self._session = Session.start(self.file, self.spec.session, judge_pool=pool, run_index=self.spec.noise_run, template=self.template)
        self.trajectory.set_start_time(self._session.now - self._session.elapsed)
        main = self._policy.main_agent
        if main is not None:
            self.main = make_agent(
                self, model=main.model, scaffold=main.scaffold, scaffold_options=main.scaffold_options, max_steps=main.max_steps, a2a=main.a2a
            )

    def close(self) -> None:
        """Stop the environment, give the judge back, tell plugins (`rollout_closed`). Idempotent;
        runs on error and cancellation too (`execute` and the context manager call it)."""
        if self._closed:
            return
        self._closed = True
        try:
            self.host.hook.rollout_closed(rollout=self)
        finally:
            if self._session is not None:
                self._session.close()

    def release(self) -> None:
        """Let the world go: this closed rollout's session (ARE's scenario, apps and environment, the
        judge's trigger on them) emptied and dropped (`execute` calls this once its record is made,
        for the rollouts it makes; a rollout someone else holds is never released). The rollout, its
        agents and its record stay readable; `session` is gone.

        Why: the world refers to itself (ARE's environment and apps, the turn trigger's closure over
        the prepared scenario), so once dropped it is garbage only the cyclic collector frees — at 256
        concurrent rollouts, ~550 objects each, freed in one sweep of ~0.3 s at the end of the batch,
        on its critical path. Emptied here, it is freed by reference counting as each rollout ends.
        Only this rollout's own session objects are emptied (never a judge, a template or a tool
        spec it shares); nothing the record holds is touched."""
        session, self._session, self._stepper = self._session, None, None
        if session is not None:
            for item in (session.prepared, session.env, session):
                vars(item).clear()

    def __enter__(self) -> Rollout:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ what plugins read (RolloutView)
    @property
    def session(self) -> Session:
        if self._session is None:
            raise OrchestraError(f"{self.spec.scenario}: the rollout has not started (call start(), or use Rollout.open)")
        return self._session

    @property
    def app_agents(self) -> list[str]:
        """The scenario's apps served by app-agents (ARE's draw from the scenario seed, in the order
        ARE appends them); empty without a team, or when the scenario has none of the team's apps."""
        if self._app_agents is None:
            team = self.team
            if team is None or team.app_agents is None:
                self._app_agents = []
            else:
                scenario = self.session.scenario
                self._app_agents = team.app_agent_apps(a2a.scenario_app_names(scenario), a2a.scenario_seed(scenario))
        return list(self._app_agents)

    def register_agent(self, ledger: AgentLedger) -> None:
        """An agent starts in this rollout: its ledger goes into the record (names are unique)."""
        if ledger.name in self.agents and self.agents[ledger.name] is not ledger:
            raise OrchestraError(f"{self.session.scenario_id}: an agent named {ledger.name!r} already runs in this rollout")
        self.agents[ledger.name] = ledger

    def record_delegation(self, delegation: Delegation) -> None:
        """A sub-agent finished a task it was handed; it goes into the record's `delegations`."""
        self.delegations.append(delegation)

    @property
    def record(self) -> RolloutRecord | None:
        """The record once `finish()` built it, else None."""
        return self._record

    @property
    def done(self) -> bool:
        """No more requests: the policy finished, failed, or the scenario ended."""
        if self._failure is not None or self._error is not None or self._record is not None:
            return True
        if self.main is None:
            return self._oracle_done
        return self._stepper is not None and self._stepper.finished

    # ------------------------------------------------------------------ the step API
    async def next_request(self) -> ModelRequest | None:
        """The main agent's next model request (the loop runs up to it: tool calls, notifications,
        app-agents); None once the rollout has no more (then `finish()`). The oracle policy runs
        its whole replay here and asks for nothing."""
        if self.done:
            return None
        if self._closed:
            raise OrchestraError(f"{self.spec.scenario}: next_request() after the rollout was closed")
        if self.main is None:
            self._step_guarded(self._replay_oracle)
            return None
        if self._stepper is None:
            self._stepper = AgentStepper(self.main)
        return await self._guarded(self._stepper.next_request())

    async def apply(self, response: ModelResponse) -> None:
        """Answer the pending request: the clock is charged, the action runs (a delegation runs its
        app-agent to the end), termination is decided. Then call `next_request()` again."""
        await self._guarded(self._main_stepper("apply", response).apply(response))

    async def fail(self, error: ModelError) -> None:
        """The pending model call failed after its retries: shown to the model (ARE's behaviour,
        it costs the iteration) or, when `error.permanent`, the rollout ends with that error."""
        await self._guarded(self._main_stepper("fail", error).fail(error))

    def _main_stepper(self, what: str, answer: object) -> AgentStepper:
        """The main agent's stepper, when `answer` may answer its pending request now. A misuse
        (a wrong type, a second answer, one after the end or after `close()`) is an
        `OrchestraError` raised here, before anything runs: the rollout, its verdict included, is
        left as it was."""
        if self._closed:
            raise OrchestraError(f"{self.spec.scenario}: {what}() after the rollout was closed")
        if self._record is not None:
            raise OrchestraError(f"{self.spec.scenario}: {what}() after finish()")
        if self.done:
            raise OrchestraError(f"{self.spec.scenario}: {what}() after the rollout ended (next_request() returned None; call finish())")
        if self._stepper is None:
            raise OrchestraError(f"{what}() without a request to answer: call next_request() first")
        self._stepper.check_answer(what, answer)
        return self._stepper

    async def _guarded(self, step: Any) -> Any:
        try:
            return await step
        except ModelError as exc:  # permanent: the main agent's model cannot be called at all
            self._model_failed(exc)
            return None
        except BaseException as exc:
            self._failure = exc
            raise

    def _step_guarded(self, step: Any) -> None:
        try:
            step()
        except BaseException as exc:
            self._failure = exc
            raise

    def _model_failed(self, exc: ModelError) -> None:
        self._error = str(exc)
        if self.main is not None:
            self.main.ledger.error = self._error
            self.main.stop_reason = "model_error"

    # ------------------------------------------------------------------ the built-in driver
    async def run(self) -> RolloutRecord:
        """Start, run the policy to its end, finish: the record (errors included, never raised).

        The main agent runs through the `agent_run` hook (its model calls through `model_call`):
        the same `AgentStepper` loop the step API drives, with the model called by the host."""
        try:
            self.start()
            if self.main is None:
                self._step_guarded(self._replay_oracle)
            else:
                try:
                    await run_agent(self.main)
                except ModelError as exc:
                    self._model_failed(exc)
        except Exception as exc:
            self._failure = exc
        return self.finish()

    def _replay_oracle(self) -> None:
        from orchestra.oracle.perturbations import EXTRA_SUFFIX, JudgeRules, NotApplicable, perturb
        from orchestra.oracle.replay import build_plan, replay

        self._oracle_done = True
        config = self._policy.oracle
        assert config is not None
        session = self.session
        ledger = AgentLedger(name=ORACLE, model=ORACLE, scaffold="replay")
        self.register_agent(ledger)
        plan = build_plan(session)
        if config.perturbation is not None:
            try:
                plan = perturb(plan, config.perturbation, JudgeRules.from_judge(session.prepared.judge, session.scenario))
            except NotApplicable as exc:
                self._not_applicable = str(exc)
                return
            self._note = plan.notes[-1]
        calls = replay(session, plan, ledger=ledger)
        ledger.stop_reason = session.stop_reason
        refused = next((c for c in calls if c.event_id.endswith(EXTRA_SUFFIX) and not c.ok), None) if config.perturbation == "extra" else None
        if refused is not None:  # the app refused the repeat: nothing extra happened, nothing for the judge to catch
            self._not_applicable = f"the app refused the repeated {refused.tool} ({refused.error}): nothing extra happened"
            return
        if config.native_parity:
            from orchestra.are.native_verdict import export_trace

            self._native_trace = export_trace(session.env.env, session.scenario, session.scenario_id, self.file.text)

    # ------------------------------------------------------------------ the end
    def finish(self) -> RolloutRecord:
        """Judge the rollout and build its record (idempotent). A rollout that failed is not
        judged: its record has the error and, when the scenario had started, the event log so far."""
        if self._record is not None:
            return self._record
        source = str(self.file.path)
        common: dict[str, Any] = dict(agents=self.agents.values(), delegations=self.delegations, note=self._note)
        session = self._session
        if self._failure is not None or session is None:
            error = describe(self._failure, self.file) if self._failure is not None else f"{source}: the rollout never started"
            partial = _partial_log(session)
            stop = self.main.stop_reason if self.main is not None else None
            self._record = build_record(
                self.spec,
                source,
                scenario_id=session.scenario_id if session is not None else None,
                error=error,
                partial=partial,
                trajectory=self._trajectory(partial.event_log if partial is not None else [], stop or "error") if session is not None else None,
                **common,
            )
        elif self._not_applicable is not None:
            self._record = build_record(self.spec, source, scenario_id=session.scenario_id, not_applicable=self._not_applicable, **common)
        else:
            judgement = session.finish(error=self._error)
            stop_reason = self.main.stop_reason if self.main is not None else None
            if self._error is None and not self.spec.are_model_failures:
                self._error = self._all_model_calls_failed()
            self._record = build_record(
                self.spec,
                source,
                scenario_id=session.scenario_id,
                judgement=judgement,
                app_agents=self.app_agents,
                stop_reason=stop_reason,
                error=self._error,
                native=self._native_verdict(),
                trajectory=self._trajectory(judgement.event_log, stop_reason or judgement.stop_reason),
                **common,
            )
        if not self.training.empty:  # on every path: the turns recorded before an error are not lost
            self._record.training = self._training_trace(self._record, session)
        return self._record

    def _training_trace(self, record: RolloutRecord, session: Session | None) -> TrainingTrace:
        """The episode for a trainer: the trainable agents' turns, the reward and the judge's word
        (a failed rollout's: its turns so far, no reward, stop reason `error`)."""
        result = record.result
        credit = None
        if result is not None and record.error is None and session is not None:
            credit = 1.0 if result.success else (result.reward if result.reward_mode == "dense" else session.partial_credit())
        return TrainingTrace(
            scenario_id=record.scenario_id or str(self.file.path),
            sample_index=self.spec.sample_index,
            # the seed this member sampled with (`RolloutSpec.seeded`: seed + sample_index)
            seed=self.spec.seed + self.spec.sample_index if self.spec.seed is not None else None,
            reward=result.reward if result is not None and record.error is None else None,
            success=result.success if result is not None and record.error is None else None,
            partial_credit=credit,
            rationale=result.rationale if result is not None else None,
            event_log_sha256=result.event_log_sha256 if result is not None else (record.partial.event_log_sha256 if record.partial is not None else None),
            stop_reason=result.stop_reason if result is not None else ("error" if record.error is not None else None),
            sim_seconds=result.sim_seconds if result is not None else (record.partial.sim_seconds if record.partial is not None else 0.0),
            agents=self.training.agents(),
        )

    def _trajectory(self, event_log: list[dict[str, Any]], stop_reason: str | None) -> Trajectory:
        return self.trajectory.build(
            ledgers=self.agents.values(),
            delegations=self.delegations,
            event_log=event_log,
            stop_reason=stop_reason,
            oracle=ORACLE if self.main is None else None,
        )

    def _all_model_calls_failed(self) -> str | None:
        """A broken model never looks like a good agent: when every call of the main agent's model
        failed for good, the verdict (ARE's loop answered "Max iterations reached" for it) is not the
        agent's — the rollout is an ERROR, with the last failure (`are_model_failures` keeps ARE's way)."""
        main = self.main
        if main is None or main.ledger.model_calls or not main.ledger.model_errors:
            return None
        n = main.ledger.model_errors
        return f"every call to the main agent's model failed ({n} of {n}; the verdict is not the agent's): {main.ledger.last_model_error}"

    def _native_verdict(self) -> NativeVerdictRecord | None:
        if self._native_trace is None:
            return None
        from orchestra.are.native_verdict import are_native_verdict

        native = are_native_verdict(self._native_trace, judge=self.spec.session.judge)
        return NativeVerdictRecord(success=native.success, rationale=native.rationale)

    def failed(self, exc: BaseException) -> RolloutRecord:
        """The record of a rollout that an exception outside it ended (a plugin wrapper's bug)."""
        if self._record is None:
            self._failure = exc
        return self.finish()


def _partial_log(session: Session | None) -> PartialLog | None:
    """The event log so far of a failed rollout, if it can still be read (the failure may be the environment's)."""
    if session is None:
        return None
    try:
        return session.partial_log()
    except Exception:
        return None


def check_spec(spec: RolloutSpec, host: Host) -> None:
    """Every scaffold the spec's agents may use and its judge are registered (`PluginError`
    naming the agent and the scaffold otherwise): the main agent's and, for a team, the
    app-agents' defaults and every per-app override — also for apps a given scenario lacks, so a
    typo fails up front, never depending on which scenario runs or whether an expert is called."""
    host.judge_builder(spec.session.judge.mode)
    wanted: list[tuple[str, str]] = []
    if spec.team is not None:
        team = spec.team
        for label, settings in team.agent_settings():
            who = "the main agent" if label == "main" else label
            wanted.append((who, settings.scaffold or team.main.scaffold))
    elif spec.agent is not None:
        wanted.append(("the agent", spec.agent.scaffold))
    for who, scaffold in wanted:
        if scaffold not in host.scaffolds:
            where = f"team {spec.team.name!r}, " if spec.team is not None else ""
            raise PluginError(f"{where}{who}: unknown scaffold {scaffold!r}; registered: {', '.join(sorted(host.scaffolds)) or 'none'}")


def describe(exc: BaseException, where: ScenarioFile | str) -> str:
    """One line for a rollout's error: the message, and for a bug the scenario, the exception type,
    and the plugin and hook it came from (when a plugin raised it)."""
    notes = [n for n in getattr(exc, "__notes__", []) if n.startswith(ATTRIBUTION_PREFIX)]
    if isinstance(exc, OrchestraError):  # a message for the user; a third-party plugin's is named
        builtin = any(note.startswith(f"{ATTRIBUTION_PREFIX}{name!r},") for note in notes[:1] for name, _ in BUILTIN_PLUGINS)
        return f"{exc} ({notes[0]})" if notes and not builtin else str(exc)
    path = where.path if isinstance(where, ScenarioFile) else where
    text = f"{path}: {type(exc).__name__}: {exc}"
    if notes:
        text += f" ({notes[0]})"
    else:
        frames = traceback.extract_tb(exc.__traceback__)
        if frames:  # where it was raised: the file's name only (the same on every machine)
            text += f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})"
    return text


async def execute(spec: RolloutSpec, *, host: Host | None = None, judge_pool: JudgePool | None = None, file: ScenarioFile | None = None) -> RolloutRecord:
    """Run `spec` to its record through the `rollout` hook; every exception ends up in the record's `error`.

    The rollout is closed on every path (cancellation and Ctrl-C included); a plugin failing to
    release its resources (`rollout_closed`) is noted on the record, after the verdict."""
    host = host or Host.create()
    rollout = Rollout(spec, host=host, judge_pool=judge_pool, file=file)
    record: RolloutRecord | None = None
    try:
        pending = host.hook.rollout(rollout=rollout)
        if pending is None:  # pragma: no cover - the built-in drivers plugin always answers
            raise OrchestraError("no plugin runs rollouts (the built-in `drivers` plugin is missing)")
        record = await pending
    except Exception as exc:  # a plugin's bug included: recorded, never raised into the batch
        record = rollout.failed(exc)
    finally:
        try:
            rollout.close()
        except Exception as exc:
            if record is not None:  # else a cancellation is on its way out: it wins
                closing = f"closing the rollout failed: {describe(exc, rollout.file)}"
                result = record.result.model_copy(update={"success": None, "reward": None}) if record.result is not None else None
                record = record.model_copy(update={"error": f"{record.error}; {closing}" if record.error else closing, "result": result})
    assert record is not None
    rollout.release()  # the record is made and the rollout closed: nothing reads it again
    return record


def execute_sync(spec: RolloutSpec, **kwargs: Any) -> RolloutRecord:
    """`execute` from synchronous code (its own event loop)."""
    return anyio.run(lambda: execute(spec, **kwargs))
