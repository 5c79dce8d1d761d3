"""ARE's real default agent on a Gaia2-format scenario, on a simulated clock, with any litellm model.

What runs is ARE's own code, end to end:

* loading and preprocessing: ARE's `JsonScenarioImporter` and `preprocess_scenario` (its threaded
  oracle run, the judge, online turn triggers) with the duration caps ARE's benchmark applies
  (`get_scenario_duration`: 420 s for Time scenarios, 1800 s otherwise). The judge is ARE's
  scripted one (`ScriptedGraphPerEventJudgeConfig`), as there is no LLM judge offline;
* the environment: ARE's `Environment`, built as `ScenarioRunner._run` builds it (CLI type,
  MEDIUM `VerboseNotificationSystem`, the scenario's start time and time increment);
* the agent: `ScenarioRunner._run_with_agent` — `AgentConfigBuilder().build("default")`,
  `AgentBuilder` (→ `are_simulation_react_json_agent` inside `ARESimulationAgent`),
  `run_scenario`, then `scenario.validate(env)` — with ARE's `LiteLLMEngine` calling the litellm
  model and provider the caller names (the parity harness, `orchestra.parity`, names its scripted
  policy's provider), and `simulated_generation_time_mode="fixed"` (ARE's own option: every model
  call moves the clock by `SimulatedGenerationTimeConfig.seconds`, 1.0).

What differs from `are-benchmark run`, and why — only the clock and who ticks it:

* ARE's `Environment.start()` spawns a thread that ticks once per *wall-clock* second and sleeps
  (are/simulation/environment.py:450-483), and the agent's outer loop sleeps one second when
  nothing is new (are/simulation/agents/default_agent/are_simulation_main.py:317). A run would take
  as long as the scenario's simulated duration, and every timestamp the model sees ("Received at"
  of user messages, notification stamps) would carry up to a second of wall-clock jitter. Here the
  environment gets orchestra's simulated clock (`make_sim_clock(..., obey_backwards=True)`: an ARE `TimeManager` whose time only moves when ARE adds an
  offset or the driver sets it) and no thread. The thread's work is done, deterministically, at
  the moments the agent would observe it, by the environment's notification queue (an object we
  own, `DrivenMessageQueue`):
  - when ARE's outer agent loop polls for new messages and nothing is due (the agent is idle
    between turns, or before the first task), the queue steps the environment to its next event,
    event by event — exactly what the thread does, second by second, while the agent sleeps;
  - when the scenario duration is exceeded or the environment was stopped (online judge
    rejection), the loop's ending (`final_validation_checks`, STOPPED, `ENVIRONMENT_STOP`) runs
    before the agent's next termination check, not up to a wall-clock second later.
  Events that the thread would process at its next whole-second tick are processed at their exact
  scheduled time. With this clock no timestamp depends on the wall clock: two runs give
  byte-identical prompts (tests/parity/test_default_agent_parity.py checks it).
* ARE seeds app RNGs with `hash()`, randomised per process; the apps are re-seeded with orchestra's
  sha256 seeds after preprocessing (`orchestra.are.ids.reseed_apps`, attributes of the apps we own), so
  app-generated ids match orchestra's and every process's.
* `max_iterations`: `AgentBuilder` always leaves ARE's default of 80
  (are/simulation/agents/agent_builder.py:84-98); a smaller budget is set on the built agent.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from orchestra.are import ids, imports, judge_pool, loading
from orchestra.are.environment import make_sim_clock
from orchestra.are.event_log import canonical_events
from orchestra.errors import ScenarioError

#: ARE's `SimulatedGenerationTimeConfig(mode="fixed")` default: simulated seconds per model call.
SECONDS_PER_MODEL_CALL = 1.0
#: The agent's outer loop sleeps a wall-clock second per empty poll; more than this many empty
#: polls in a row means the driver failed to move time (a harness bug), not a slow scenario.
MAX_EMPTY_POLLS = 5

logger = logging.getLogger(__name__)


@dataclass
class AreAgentRun:
    """What ARE's agent run did, as ARE reports it (the requests the model received are the
    caller's to record: they reach the model's litellm provider, not this module)."""

    scenario_id: str
    success: bool
    rationale: str | None
    error: str | None
    #: Simulated seconds from the scenario's start to the end of the run.
    sim_seconds: float
    #: The environment's event log (`orchestra.are.event_log.canonical_events`).
    event_log: list[dict[str, Any]]
    #: What the driver observed that a reader should know (ARE's clock moved backwards, ...).
    notes: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------
# The clock and the thread-free driver
# ------------------------------------------------------------------------------------------------


class _Driver:
    """Does the work of ARE's event-loop thread at the moments ARE's agent would observe it."""

    def __init__(self, env: Any, scenario: Any) -> None:
        self.env = env
        self.scenario = scenario
        self.agent: Any = None  # the ARESimulationAgent, once built
        self.loop_finished = False
        self.empty_polls = 0

    @property
    def end_time(self) -> float | None:
        if self.env.duration is None:
            return None
        return float(self.env.start_time) + float(self.env.duration)

    def _running(self) -> bool:
        from are.simulation.types import EnvironmentState

        return self.env.state == EnvironmentState.RUNNING

    def tick_at(self, t: float) -> None:
        clock = self.env.time_manager
        clock.set(max(t, clock.time()))
        incr = self.env.time_increment_in_seconds or 1
        self.env.tick_count = int((clock.time() - float(self.env.start_time)) // incr)
        self.env.tick()

    def finish_loop(self) -> None:
        """What `Environment._event_loop` does once its loop ends (are/simulation/environment.py:376-412)."""
        from are.simulation.notification_system import Message, MessageType
        from are.simulation.types import EnvironmentState, ValidationException

        if self.loop_finished:
            return
        self.loop_finished = True
        env = self.env
        try:
            env.final_validation_checks()
            if env.state != EnvironmentState.FAILED:
                env.state = EnvironmentState.STOPPED
        except ValidationException:
            env.state = EnvironmentState.FAILED
        env.notification_system.message_queue.put(
            Message(
                message_type=MessageType.ENVIRONMENT_STOP,
                message=f"Environment stopped with state {env.state}",
                timestamp=datetime.fromtimestamp(env.time_manager.time(), tz=UTC),
            )
        )
        env.pause_event.clear()
        env.stop_event.clear()

    def housekeeping(self) -> None:
        """The loop's exit conditions: duration exceeded, or the environment was stopped."""
        from are.simulation.types import EnvironmentState

        if self.loop_finished:
            return
        if self.env.state in (EnvironmentState.STOPPED, EnvironmentState.FAILED):
            self.finish_loop()
            return
        end = self.end_time
        if end is not None and self.env.time_manager.time() > end and self._running():
            self.finish_loop()

    def agent_is_idle(self) -> bool:
        """True while ARE's outer loop polls between runs of the ReAct agent (not inside one)."""
        from are.simulation.agents.default_agent.base_agent import RunningState

        if self.agent is None:
            return False
        return self.agent.react_agent.custom_state.get("running_state") != RunningState.RUNNING

    def idle_until_something_is_due(self, queue: Any) -> None:
        """Step the environment, event by event, until a message is due or the scenario ends."""
        while self._running():
            now = self.env.time_manager.time()
            if any(m.timestamp.timestamp() <= now for m in queue.list_view()):
                return
            nxt = self.env.get_next_event_time()
            end = self.end_time
            if nxt is None or (end is not None and nxt > end):
                if end is not None:
                    # ARE's loop ticks up to the duration, then ends.
                    if end > now:
                        self.tick_at(end)
                    self.finish_loop()
                    return
                raise RuntimeError("the scenario has no duration and nothing left to happen: ARE's agent would wait forever")
            self.tick_at(nxt)
        self.housekeeping()


def _driven_queue(driver: _Driver) -> Any:
    from are.simulation.notification_system import MessageQueue

    class DrivenMessageQueue(MessageQueue):
        """ARE's message queue; reading it first lets the driver do the event-loop thread's work."""

        def get_by_timestamp(self, timestamp: datetime) -> list[Any]:
            driver.housekeeping()
            if driver.agent_is_idle():
                driver.idle_until_something_is_due(self)
                got = super().get_by_timestamp(datetime.fromtimestamp(driver.env.time_manager.time(), tz=UTC))
                driver.empty_polls = 0 if got else driver.empty_polls + 1
                if driver.empty_polls > MAX_EMPTY_POLLS:
                    raise RuntimeError("ARE's agent keeps polling an empty queue: the parity driver failed to move time")
                return got
            return super().get_by_timestamp(timestamp)

        def has_environment_stop_message(self) -> bool:
            driver.housekeeping()
            return super().has_environment_stop_message()

    return DrivenMessageQueue()


# ------------------------------------------------------------------------------------------------
# The run
# ------------------------------------------------------------------------------------------------


def _prepare(text: str, source: str) -> Any:
    """ARE's importer and `preprocess_scenario`, as `are-benchmark run` loads a JSON scenario."""
    from are.simulation.scenarios.scenario_imported_from_json.utils import (
        get_scenario_duration,
        preprocess_scenario,
    )
    from are.simulation.validation import ScriptedGraphPerEventJudgeConfig

    scenario = loading.parse_scenario_json(text, source)  # ARE's importer, with clear errors first
    try:
        preprocess_scenario(
            scenario=scenario,
            judge_config=ScriptedGraphPerEventJudgeConfig(engine=judge_pool._no_llm_engine),
            offline_validation=False,
            max_scenario_duration=get_scenario_duration(scenario, loading.MAX_TIME_SCENARIO_DURATION, loading.MAX_SCENARIO_DURATION),
            tool_augmentation_config=None,
            env_events_config=None,
        )
    except Exception as exc:
        raise ScenarioError(source, f"ARE's preprocess_scenario failed: {type(exc).__name__}: {exc}") from None
    ids.reseed_apps(scenario)  # after preprocessing's soft_reset: process-independent app ids
    return scenario


def _environment(scenario: Any, verbosity: str) -> tuple[Any, _Driver]:
    """The environment `ScenarioRunner._run` builds, with a `StepClock` and no thread."""
    from are.simulation.apps.agent_user_interface import AgentUserInterface
    from are.simulation.environment import (
        Environment,
        EnvironmentConfig,
        EnvironmentType,
    )
    from are.simulation.notification_system import (
        VerboseNotificationSystem,
        VerbosityLevel,
    )
    from are.simulation.types import EnvironmentState

    config = EnvironmentConfig(
        oracle_mode=False,
        queue_based_loop=False,
        wait_for_user_input_timeout=None,
        dump_dir=None,
        time_increment_in_seconds=scenario.time_increment_in_seconds,
        exit_when_no_events=False,
    )
    if scenario.start_time and scenario.start_time > 0:
        config.start_time = scenario.start_time
    level = {"low": VerbosityLevel.LOW, "medium": VerbosityLevel.MEDIUM, "high": VerbosityLevel.HIGH}[verbosity]
    env = Environment(environment_type=EnvironmentType.CLI, config=config, notification_system=VerboseNotificationSystem(level))
    # Swap the clock before register_apps hands it to every app; re-bind the notifier to it.
    env.time_manager = make_sim_clock(env.start_time, obey_backwards=True)
    env.notification_system.initialize(env.time_manager)
    driver = _Driver(env, scenario)
    env.notification_system.message_queue = _driven_queue(driver)

    # Environment.run(scenario, wait_for_end=False) minus the thread (are/simulation/environment.py:946-991).
    env.time_manager.reset(start_time=env.start_time)
    env.duration = scenario.duration
    env.time_increment_in_seconds = scenario.time_increment_in_seconds
    env.delete_all_completed_events()
    env.register_apps(scenario.apps or [])
    env.schedule(scenario.events)
    if AgentUserInterface.__name__ in env.apps:
        env.get_app(AgentUserInterface.__name__).set_cli(is_cli=True)
    env.state = EnvironmentState.RUNNING
    env.prepare_events_for_start()
    driver.tick_at(env.start_time)  # the loop's first tick
    return env, driver


def _agent_builder(driver: _Driver, max_iterations: int | None) -> Any:
    from are.simulation.agents.agent_builder import AgentBuilder

    class RecordingAgentBuilder(AgentBuilder):
        """ARE's `AgentBuilder`; the built agent is handed to the driver (and its budget set)."""

        def build(self, agent_config: Any, env: Any = None, mock_responses: list[str] | None = None) -> Any:
            agent = super().build(agent_config, env=env, mock_responses=mock_responses)
            if max_iterations is not None:
                agent.max_iterations = max_iterations
                agent.react_agent.max_iterations = max_iterations
            driver.agent = agent
            return agent

    return RecordingAgentBuilder()


def run_are_default_agent(
    text: str,
    source: str,
    *,
    model: str,
    provider: str,
    max_iterations: int | None = None,
    notification_verbosity: str = "medium",
) -> AreAgentRun:
    """Run ARE's default agent on the scenario `text` (from `source`) with litellm's `provider`/`model`
    as its model (ARE's `LiteLLMEngine`, as `are-benchmark run --model MODEL --provider PROVIDER`)."""
    imports.import_are()
    from are.simulation.scenario_runner import ScenarioRunner

    scenario = _prepare(text, source)
    env, driver = _environment(scenario, notification_verbosity)
    runner = ScenarioRunner(agent_builder=_agent_builder(driver, max_iterations))
    error = None
    try:
        # ARE's termination step print()s to stdout; keep stdout for the caller's output (--json).
        with contextlib.redirect_stdout(sys.stderr):
            result = runner._run_with_agent(
                scenario.scenario_id,
                scenario,
                env,
                "default",
                model,
                provider,
                None,
                None,
                "fixed",
                False,  # use_custom_logger=False: ARE's agent logs through `logging`, not to stdout
            )
        success = bool(result.success)
        rationale = None if success else _rationale(result)
    except Exception as exc:  # ScenarioRunner._run turns these into a failed verdict
        error = f"{type(exc).__name__}: {exc}"
        success, rationale = False, f"exception: {error}"
    finally:
        driver.housekeeping()
        if not driver.loop_finished:
            env.stop()
    notes: list[str] = []
    if env.time_manager.backwards_requests:
        notes.append(
            f"ARE's clock was moved backwards {env.time_manager.backwards_requests} time(s) by wait_for_next_notification "
            "(a notification was already pending when the agent waited)"
        )
    return AreAgentRun(
        scenario_id=str(scenario.scenario_id),
        success=success,
        rationale=rationale,
        error=error,
        sim_seconds=round(float(env.time_manager.time()) - float(env.start_time), 6),
        event_log=canonical_events(env.event_log.list_view(), float(env.start_time)),
        notes=notes,
    )


def _rationale(result: Any) -> str:
    if result.exception is not None:
        return f"exception: {type(result.exception).__name__}: {result.exception}"
    return str(result.rationale or "rejected")
