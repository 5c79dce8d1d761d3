"""One rollout: a Gaia2-format scenario running inside ARE on the token-metered clock.

The session is the only thing a policy (a scaffold with its model, or the oracle replay) touches.
Its contract:

* `notifications()` pops what ARE's notification system delivered up to the simulated now
  (user messages and environment notifications, as ARE's agent pre-step does);
* `charge_model(prompt_tokens, completion_tokens)` moves the clock by the token part of the formula;
* `call_tool(name, arguments)` executes an ARE app tool at the simulated now, then moves the clock
  by `tool_call_seconds`; errors come back in the outcome, they never raise;
* `SystemApp__wait_for_notification(timeout)` idles, through ARE's own tool, to the next
  event/notification or the timeout;
* a turn ends when the policy says so (`end_turn()`; `call_tool` ends it on an answer to the user,
  the agent loop when its run ends, as ARE's agent counts finished runs);
* `finish()` runs the judge (`SessionConfig.judge`: ARE's scripted judge by default, or the `llm` /
  `strict` modes of `orchestra.judging.settings`) and returns a `Judgement` (verdict, reward, timeline, event log) that names the judge.

Between those calls simulated time does not move, whatever the wall clock does.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from orchestra.are import ids, loading, tools
from orchestra.are import judges as are_judges
from orchestra.are import noise as are_noise
from orchestra.are.environment import DrivenEnvironment
from orchestra.are.event_log import canonical_events, event_log_sha256
from orchestra.are.judge_pool import JudgePool
from orchestra.are.loading import PreparedScenario
from orchestra.are.reward import dense_credit
from orchestra.config import RewardMode, SessionConfig
from orchestra.errors import SessionError
from orchestra.judging.settings import JudgeUsage
from orchestra.scenario_files import ScenarioFile
from orchestra.tool_schemas import validate_arguments
from orchestra.types import Notification, ToolOutcome, ToolSpec

__all__ = ["MAIN_AGENT", "SEND_TO_USER_TOOL", "WAIT_TOOL", "Judgement", "PartialLog", "Session", "SessionConfig", "TurnVerdict"]

WAIT_TOOL = "SystemApp__wait_for_notification"
#: The agent ARE's notification system talks to (the one that answers the user).
MAIN_AGENT = "main"
SEND_TO_USER_TOOL = "AgentUserInterface__send_message_to_user"


class TurnVerdict(BaseModel):
    turn: int
    success: bool
    rationale: str | None
    sim_seconds: float


class Judgement(BaseModel):
    """What the world says about a rollout: the judge's verdict, the reward, the timeline and the
    full event log. Who acted and what they spent is the rollout's business (`orchestra.record`)."""

    scenario_id: str
    source: str
    success: bool
    reward: float
    reward_mode: RewardMode
    rationale: str | None
    turns: list[TurnVerdict]
    nb_turns: int
    turns_completed: int
    sim_seconds: float
    stop_reason: str
    event_log_sha256: str
    event_log: list[dict[str, Any]]
    error: str | None = None
    #: Which judge produced the verdict: "scripted", "strict", "llm:<model>" or a plugin judge's label.
    judge: str = "scripted"
    #: The LLM judge's calls in this rollout (never the agent's tokens, never on the clock).
    judge_usage: JudgeUsage | None = None
    #: The strict judge's fact checks of free-text arguments (oracle event, argument, facts, verdict).
    judge_checks: list[dict[str, Any]] = Field(default_factory=list)
    #: Which noise ran and what fired (tool failures, environment events); None: the rollout ran clean.
    noise: are_noise.NoiseReport | None = None


class PartialLog(BaseModel):
    """What an unfinished session had done when its rollout failed: the event log so far, unjudged."""

    sim_seconds: float
    turns_completed: int
    event_log_sha256: str
    event_log: list[dict[str, Any]]


class Session:
    """One rollout of one scenario. Create it with `Session.open(...)`."""

    def __init__(self, prepared: PreparedScenario, config: SessionConfig, *, run_index: int = 0) -> None:
        self.prepared = prepared
        self.config = config
        self.scenario = prepared.scenario
        #: Tool failures (`SessionConfig.noise`), drawn per (scenario, run index, agent, call index).
        self.tool_failures: are_noise.ToolFailures | None = None
        if prepared.noise is not None:
            seed = int(self.scenario.seed or 0)
            self.tool_failures = are_noise.ToolFailures(prepared.noise, scenario_id=prepared.scenario_id, scenario_seed=seed, run_index=run_index)
        self.env = DrivenEnvironment(self.scenario, verbosity=config.notification_verbosity)
        self._tools = tools.agent_tools(self.scenario)
        #: Turns the policy finished (the scenario's turn structure: `done` once all are answered).
        self.turns_completed = 0
        self._result: Judgement | None = None
        self._judge_usage_before = are_judges.usage_snapshot(prepared.judge)
        #: Per-agent mailboxes. ARE's notification system feeds the main agent (`MAIN_AGENT`);
        #: any other agent only sees what is posted to it (`post`).
        self._mailboxes: dict[str, list[Notification]] = {}
        self._judge_release: Any = None
        self.env.start()

    # ------------------------------------------------------------------ construction
    @classmethod
    def start(
        cls,
        scenario: str | Path | ScenarioFile,
        config: SessionConfig | None = None,
        *,
        judge_pool: JudgePool | None = None,
        run_index: int = 0,
        template: loading.ScenarioTemplate | None = None,
    ) -> Session:
        """Load, preprocess (oracle run, judge, turns) and start a scenario; `close()` it when done.

        The explicit form of `Session.open(...)`, for a session driven step by step from outside
        (a trainer's environment keeps it open across calls). `run_index` (a spec's
        `sample_index`) seeds the noise's tool failures, with the scenario and the calling agent.
        `template` (`load_template`, the same file and settings): start from a copy of a world
        loaded before — the members of a GRPO group, a file run again — instead of loading it."""
        config = config or SessionConfig()
        file = scenario if isinstance(scenario, ScenarioFile) else ScenarioFile(scenario)
        if judge_pool is None:
            try:
                judge_pool = are_judges.judge_pool_for(config.judge)
            except ValueError as exc:  # a plugin's judge: only its host knows how to build it
                raise SessionError(f"{exc} (open the session with judge_pool=Host.judge_pool(config.judge), or run it through a Rollout)") from None
        pool = judge_pool
        if are_judges.pool_mode(pool) != config.judge.mode:
            raise SessionError(f"the judge pool holds {are_judges.pool_mode(pool)} judges but the session asks for {config.judge.mode!r}")
        acquired = pool.acquire()
        judge = acquired.__enter__()
        try:
            # Loading and preprocessing mint ids too (ARE's uuid4 defaults): same file, same ids.
            with ids.uuid_scope(ids.stable_rng("uuid", "load", hashlib.sha256(file.text.encode()).hexdigest())):
                key = loading.template_key(file.text, config.duration, config.noise)
                if template is not None and template.key != key:
                    raise SessionError(f"{file.path}: the template was loaded from another file or with other settings (duration, noise)")
                cache = loading.process_templates()
                prepared = None
                if template is None:
                    with cache.loading(key):  # the same file started together: one loads, the others start from its template
                        template = cache.get(key)
                        if template is None:
                            sc = loading.parse_scenario_json(file.text, file.path)
                            prepared = loading.prepare_for_rollout(sc, judge, source=str(file.path), duration=config.duration, noise=config.noise)
                            cache.put(loading.template_of(prepared, file.text, duration=config.duration, noise=config.noise))
                if prepared is None:
                    assert template is not None
                    prepared = loading.instantiate(template, judge, source=str(file.path))
            session = cls(prepared, config, run_index=run_index)
        except BaseException:
            acquired.__exit__(None, None, None)
            raise
        session._judge_release = acquired
        return session

    @staticmethod
    def load_template(scenario: str | Path | ScenarioFile, config: SessionConfig | None = None) -> loading.ScenarioTemplate:
        """Load a scenario once (parse, initialize, oracle run) for many sessions to start from
        (`start(..., template=)`): what a cold start does but attach a judge."""
        config = config or SessionConfig()
        file = scenario if isinstance(scenario, ScenarioFile) else ScenarioFile(scenario)
        with ids.uuid_scope(ids.stable_rng("uuid", "load", hashlib.sha256(file.text.encode()).hexdigest())):
            return loading.load_template(file.text, str(file.path), duration=config.duration, noise=config.noise)

    def close(self) -> None:
        """Stop the environment and give the judge back to its pool. Idempotent."""
        self.env.stop()
        loading.discard_pending_trees(self.scenario)
        release, self._judge_release = self._judge_release, None
        if release is not None:
            release.__exit__(None, None, None)

    @classmethod
    @contextlib.contextmanager
    def open(
        cls,
        scenario: str | Path | ScenarioFile,
        config: SessionConfig | None = None,
        *,
        judge_pool: JudgePool | None = None,
        run_index: int = 0,
    ) -> Iterator[Session]:
        """`Session.start(...)` as a context manager: the session is closed on exit."""
        session = cls.start(scenario, config, judge_pool=judge_pool, run_index=run_index)
        try:
            yield session
        finally:
            session.close()

    # ------------------------------------------------------------------ state
    @property
    def scenario_id(self) -> str:
        return self.prepared.scenario_id

    @property
    def nb_turns(self) -> int:
        return self.prepared.nb_turns

    @property
    def now(self) -> float:
        """Simulated epoch seconds."""
        return self.env.now

    @property
    def elapsed(self) -> float:
        """Simulated seconds since the scenario started."""
        return self.env.now - self.env.start_time

    @property
    def tools(self) -> dict[str, ToolSpec]:
        return {name: spec for name, (spec, _) in self._tools.items()}

    @property
    def app_tools(self) -> dict[str, Any]:
        """ARE's own `AppTool` objects behind `tools`, same keys and order (ARE's agent wraps them);
        asking builds every app's tools (`tools.resolve`): `app_tool_names` names them without."""
        return {name: self._tool(name) for name in self._tools}

    @property
    def app_tool_names(self) -> set[str]:
        """The names of `app_tools` (ARE's app tools, not plugins')."""
        return set(self._tools)

    def _tool(self, name: str) -> Any:
        spec, tool = self._tools[name]
        if type(tool) is tools.DeferredTool:
            tool = tools.resolve(tool)
            self._tools[name] = (spec, tool)
        return tool

    @property
    def done(self) -> bool:
        """True once every turn is answered, the judge rejected a turn, or the duration ran out."""
        return self.env.stopped or self.turns_completed >= self.nb_turns

    @property
    def stop_reason(self) -> str:
        if self.turns_completed >= self.nb_turns:
            return "all_turns_completed"
        if self.env.duration_reached:
            return "duration_reached"
        if self.env.stopped:
            return "environment_stopped"
        return "policy_stopped"

    def _check_open(self) -> None:
        if self._result is not None:
            raise SessionError(f"{self.scenario_id}: the rollout is finished; no more actions")

    # ------------------------------------------------------------------ the agent's actions
    def notifications(self, agent: str = MAIN_AGENT) -> list[Notification]:
        """Pop `agent`'s mailbox: for the main agent, every notification ARE delivered up to now
        (user messages, env notifications, stop); for another agent, what was posted to it."""
        if agent == MAIN_AGENT:
            return self.env.drain_notifications()
        box = self._mailboxes.get(agent, [])
        self._mailboxes[agent] = []
        return box

    def post(self, agent: str, text: str, *, kind: str = "message") -> None:
        """Put a message in `agent`'s mailbox (it reaches the agent before its next model call)."""
        self._mailboxes.setdefault(agent, []).append(Notification(kind=kind, text=text, timestamp=self.now))

    def charge_model(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Charge one model call to the clock; returns the simulated seconds it cost.

        As ARE's agent does with simulated generation time, the environment is paused during the
        call and resumed with the offset: events due meanwhile run at the end of the call.
        """
        self._check_open()
        dt = self.config.clock.model_seconds(prompt_tokens, completion_tokens)
        if self.env.running:
            self.env.resume_with_offset(dt)
        return dt

    def idle_until(self, t: float) -> None:
        """Let simulated time pass without acting (used by replays that follow a recorded timeline)."""
        self._check_open()
        if t > self.now and self.env.running:
            self.env.advance_to(t)

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *, agent: str = MAIN_AGENT) -> ToolOutcome:
        """Execute one tool at the simulated now, then charge `tool_call_seconds`.

        The hand-driven API: after a wait, what arrived is handed over in `outcome.notifications`;
        an answer to the user (even a failed one: ARE logs the call before running it) ends the turn.
        """
        try:
            outcome = self.execute_tool(name, arguments, agent=agent)
            if name == WAIT_TOOL:
                outcome.notifications = self.env.drain_notifications()
            return outcome
        finally:
            self.charge_tool_calls(1)
            if name == SEND_TO_USER_TOOL and self._result is None:
                self.end_turn()

    def end_turn(self) -> None:
        """The policy finished a turn (ARE's agent: a run ended TERMINATED)."""
        self.turns_completed += 1

    def charge_tool_calls(self, n: int = 1) -> float:
        """Charge `n` tool calls to the clock (the agent loop's clock plugin does this per call)."""
        dt = self.config.clock.tool_seconds(n)
        if self.env.running:
            self.env.advance_by(dt)
        return dt

    def idle_until_user_message(self) -> bool:
        """Let time pass, uncharged, until the user writes again.

        Returns False if the scenario ended first (duration, judge rejection).
        """
        self._check_open()
        return self.env.advance_until_notification("user")

    def idle_until_notification(self) -> bool:
        """Let time pass, uncharged, until a user message or an environment notification is due —
        what ARE's outer agent loop waits for before (re)starting its agent, the task empty when
        only the environment spoke. False if the scenario ended first (duration, judge rejection)."""
        self._check_open()
        return self.env.advance_until_notification(None)

    def take_user_messages(self) -> tuple[list[Notification], bool]:
        """ARE's outer loop: pop the user messages due now (the next task) and leave environment
        notifications queued for the agent's pre-step. Also says whether the environment stopped."""
        self._check_open()
        return self.env.take_user_messages()

    def execute_tool(self, name: str, arguments: dict[str, Any] | None = None, *, agent: str = MAIN_AGENT) -> ToolOutcome:
        """Execute one tool at the simulated now without charging the clock.

        Like ARE's agent, the ARE tool is called with the arguments as given: a wrong argument
        fails inside ARE (no event is logged) and the outcome carries ARE's exception, with a
        precise message in `error`. Under noise the call may fail as ARE's noisy tools fail
        (before the method runs; `agent` is part of the draw's seed, see `orchestra.are.noise`).
        """
        self._check_open()
        arguments = {} if arguments is None else arguments
        if not self.env.running:
            return ToolOutcome(name, arguments if isinstance(arguments, dict) else {}, ok=False, error="The environment has stopped.", sim_time=self.now)
        if not isinstance(arguments, dict):
            return ToolOutcome(
                name,
                {},
                ok=False,
                sim_time=self.now,
                error=f"Arguments for {name} must be a JSON object, got {type(arguments).__name__}.",
            )
        if name not in self._tools:
            return ToolOutcome(
                name,
                arguments,
                ok=False,
                sim_time=self.now,
                error=f"Unknown tool {name!r}. Available tools: {', '.join(sorted(self._tools))}.",
            )
        if name == WAIT_TOOL:
            return self._wait_for_notification(arguments, agent)
        return self._run_tool(name, arguments, agent=agent)

    def _run_tool(self, name: str, arguments: dict[str, Any], call_arguments: dict[str, Any] | None = None, *, agent: str = MAIN_AGENT) -> ToolOutcome:
        spec, tool = self._tools[name][0], self._tool(name)
        t = self.now
        failure = self.tool_failures.check(agent, tool, t - self.env.start_time) if self.tool_failures is not None else None
        if failure is not None:  # ARE's noisy AppTool: raised before the method runs, nothing logged
            return ToolOutcome(name, arguments, ok=False, error=f"{type(failure).__name__}: {failure}", sim_time=t, exception=failure)
        try:
            with self.env.scope():
                output = tool(**(arguments if call_arguments is None else call_arguments))
        except Exception as exc:  # app errors are observations, never crashes
            problems = validate_arguments(spec, arguments)
            problem = f"Invalid arguments for {name}: {'; '.join(problems)}." if problems else f"{type(exc).__name__}: {exc}"
            return ToolOutcome(name, arguments, ok=False, error=problem, sim_time=t, exception=exc)
        return ToolOutcome(name, arguments, ok=True, output=output, sim_time=t)

    def _wait_for_notification(self, arguments: dict[str, Any], agent: str = MAIN_AGENT) -> ToolOutcome:
        """Idle to the next event or notification, or the timeout, through ARE's own SystemApp tool.

        The call always goes through ARE's tool, so the event log shows it — also when a
        notification is already pending, where ARE's wait would jump the clock backwards to its
        timestamp (ARE-NOTES §3.6): the simulated clock ignores backward jumps, so the wait
        returns at once. The agent's own timeout goes to ARE's tool (and so into the event log), as in
        ARE; a wait past the scenario's end stops the environment there, as ARE's loop does.
        Notifications stay queued.
        """
        end = self.env.end_time
        outcome = self._run_tool(WAIT_TOOL, arguments, arguments, agent=agent)
        if end is not None and self.now > end and self.env.running:
            self.env.advance_to(self.now)  # enforces the duration
        return outcome

    # ------------------------------------------------------------------ the end
    def partial_log(self) -> PartialLog:
        """The event log so far, unjudged (a rollout that failed keeps what already happened)."""
        records = canonical_events(self.env.event_log(), self.env.start_time, self.env.event_snapshot)
        return PartialLog(
            sim_seconds=round(self.elapsed, 6),
            turns_completed=self.turns_completed,
            event_log_sha256=event_log_sha256(records),
            event_log=records,
        )

    def finish(self, error: str | None = None) -> Judgement:
        """Judge the rollout (the configured judge) and return the result. Idempotent."""
        if self._result is not None:
            return self._result
        sc = self.scenario
        with self.env.scope():
            validation = sc.validate(self.env.env)
        success = bool(validation.success)
        rationale = None if success else _clean_rationale(validation)
        verdict = are_judges.verdict_details(self.prepared.judge, self._judge_usage_before, success)
        if validation.exception is not None and error is None:
            # the judge failed (an unreachable judge model, ...): no verdict, so an error, not a 0.0 to learn from
            error = f"judge error ({verdict.label}): {type(validation.exception).__name__}: {validation.exception}"
        if verdict.note:
            rationale = verdict.note if rationale is None else f"{rationale}\n{verdict.note}"
        turns = [TurnVerdict(**v) for v in self.prepared.turn_verdicts]
        if len(turns) < self.nb_turns and (self.turns_completed >= self.nb_turns or not success):
            turns.append(TurnVerdict(turn=len(turns), success=success, rationale=rationale, sim_seconds=self.elapsed))
        reward = 1.0 if success else 0.0
        if not success and self.config.reward_mode == "dense":
            reward = dense_credit(self.prepared, self.env.event_log())
        records = canonical_events(self.env.event_log(), self.env.start_time, self.env.event_snapshot)
        self.env.stop()
        self._result = Judgement(
            scenario_id=self.scenario_id,
            source=self.prepared.source,
            success=success,
            reward=reward,
            reward_mode=self.config.reward_mode,
            rationale=rationale,
            turns=turns,
            nb_turns=self.nb_turns,
            turns_completed=self.turns_completed,
            sim_seconds=round(self.elapsed, 6),
            stop_reason=self.stop_reason,
            event_log_sha256=event_log_sha256(records),
            event_log=records,
            error=error,
            judge=verdict.label,
            judge_usage=verdict.usage,
            judge_checks=verdict.checks,
            noise=self.noise_report(),
        )
        return self._result

    def partial_credit(self) -> float:
        """The dense partial credit of the rollout as it stands (`orchestra.are.reward`), in [0, 0.8]:
        what `dense` rewards a failure with. Read after `finish` (the judge's state holds the turns)."""
        return dense_credit(self.prepared, self.env.event_log())

    def noise_report(self) -> are_noise.NoiseReport | None:
        """Which noise runs in this rollout and what fired so far; None when it runs clean."""
        p = self.prepared
        if p.noise is None:
            return None
        return are_noise.report(p.noise, self.scenario, self.tool_failures, self.env.event_log(), augmentation=p.augmentation, scheduled=p.env_events_scheduled)


def _clean_rationale(validation: Any) -> str:
    if validation.exception is not None:
        return f"judge exception: {type(validation.exception).__name__}: {validation.exception}"
    return str(validation.rationale or "rejected")
