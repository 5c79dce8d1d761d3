"""ARE's `Environment` driven by orchestra: the simulated clock (`SimClock`) and the thread-free, event-by-event `DrivenEnvironment`."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - import for type checkers only
    from are.simulation.environment import Environment
    from are.simulation.types import CompletedEvent
from orchestra.are.event_log import serializable
from orchestra.are.ids import sort_sets, stable_rng, uuid_scope
from orchestra.are.imports import import_are
from orchestra.types import Notification

# --------------------------------------------------------------------------------------------
# The clock
# --------------------------------------------------------------------------------------------


def _time_manager_base() -> type:
    import_are()
    from are.simulation.time_manager import TimeManager

    return TimeManager


class _SimClockMixin:
    """State and behaviour of the simulated clock (mixed into ARE's TimeManager at first use).

    One clock for every driver of ARE's environment: orchestra's (`DrivenEnvironment`) and ARE's own
    default agent on a simulated clock (`orchestra.are.default_agent`, `obey_backwards=True`).
    """

    #: Obey a negative jump as ARE's own clock does (ARE's default agent, for parity); orchestra's
    #: own driver ignores them (time never goes backwards) and only counts them.
    obey_backwards: bool = False

    _now: float
    start_time: float | None
    is_paused: bool
    backwards_requests: int
    #: The latest time an ARE-requested jump may reach (set by the driven environment).
    horizon: float | None = None

    def _init_sim(self, start_time: float) -> None:
        self.start_time = float(start_time)
        self.real_start_time = float(start_time)
        self._now = float(start_time)
        self.offset = 0.0
        self.is_paused = False
        self.pause_real_start_time = None
        self.pause_passed_time = None
        self.pause_offset = 0.0
        self.backwards_requests = 0

    # --- TimeManager interface, read by ARE's apps, env and notification system ---
    def time(self) -> float:
        return self._now

    def time_passed(self) -> float:
        return self._now - float(self.start_time or 0.0)

    def real_time_passed(self) -> float:
        return self.time_passed()

    def reset(self, start_time: float | None = None) -> None:
        self._init_sim(start_time if start_time is not None else float(self.start_time or 0.0))

    def pause(self) -> None:
        self.is_paused = True

    def resume(self) -> None:
        self.is_paused = False

    def set_offset(self, offset: float) -> None:
        self.set(float(self.start_time or 0.0) + offset)

    def add_offset(self, offset: float) -> None:
        # ARE's wait_for_next_notification can ask for a negative jump when a notification is
        # already pending (ARE-NOTES §3.6). Time never goes backwards here: ignore and count it
        # (unless the clock obeys, as ARE's own does).
        if offset < 0:
            self.backwards_requests += 1
            if self.obey_backwards:
                self._now += offset
            return
        # ARE's wait jumps by the agent's whole timeout even past the scenario's end (its thread
        # stops the run a tick later); the jump stops one tick past the end, where we stop it too.
        self._now = self._now + offset if self.horizon is None else min(self._now + offset, max(self.horizon, self._now))

    # --- orchestra's interface ---
    def set(self, t: float) -> None:
        """Move the clock to absolute time `t` (never backwards, unless it obeys backward moves)."""
        if t < self._now and not self.obey_backwards:
            raise ValueError(f"simulated clock must not move backwards ({t} < {self._now})")
        self._now = float(t)


_sim_clock_cls: type | None = None


def make_sim_clock(start_time: float, *, obey_backwards: bool = False) -> Any:
    """A `TimeManager` (ARE's class, so ARE accepts it) whose time only its driver moves."""
    global _sim_clock_cls
    if _sim_clock_cls is None:
        base = _time_manager_base()
        _sim_clock_cls = type("SimClock", (_SimClockMixin, base), {"__init__": lambda self, start=0.0: self._init_sim(start)})
    clock = _sim_clock_cls(start_time)
    clock.obey_backwards = obey_backwards
    return clock


# --------------------------------------------------------------------------------------------
# The thread-free environment
# --------------------------------------------------------------------------------------------


_environment_cls: type | None = None


def _environment_class() -> type:
    """ARE's `Environment` whose log lines are formatted only when ARE's logger would print them.

    ARE's `_log` colours and timestamps every message (`termcolor.colored`, which reads the
    process environment, and a `strftime`) before the logger decides to drop it: at every tick,
    event and tool call, a few percent of a rollout's CPU spent on lines nobody sees. This subclass
    asks the logger first; a line that is printed is ARE's own, byte for byte."""
    global _environment_cls
    if _environment_cls is None:
        import logging

        import_are()
        from are.simulation import environment as are_environment

        are_logger = are_environment.logger
        levels = {"info": logging.INFO, "debug": logging.DEBUG, "warning": logging.WARNING, "error": logging.ERROR}

        def _log(self: Any, message: str, level: str, color: str, attrs: list[str] | None = None) -> None:
            if are_logger.isEnabledFor(levels.get(level, logging.INFO)):
                are_environment.Environment._log(self, message, level, color, attrs)

        _environment_cls = type("Environment", (are_environment.Environment,), {"_log": _log, "__module__": __name__})
    return _environment_cls


class DrivenEnvironment:
    """ARE's `Environment`, stepped by orchestra instead of by ARE's event-loop thread.

    Replicates `Environment.run()`/`start()` minus the thread (ARE-NOTES §3.5). Time moves only
    through `advance_to()`, which pops and runs every queued event in timestamp order, setting the
    clock to each event's exact time first, then enforces the scenario duration like ARE's loop.
    """

    def __init__(self, scenario: Any, *, oracle_mode: bool = False, verbosity: str = "medium") -> None:
        import_are()
        from are.simulation.environment import EnvironmentConfig
        from are.simulation.notification_system import (
            VerboseNotificationSystem,
            VerbosityLevel,
        )

        level = {"low": VerbosityLevel.LOW, "medium": VerbosityLevel.MEDIUM, "high": VerbosityLevel.HIGH}[verbosity]
        self.scenario = scenario
        self.start_time = float(scenario.start_time)
        self.duration: float | None = float(scenario.duration) if scenario.duration is not None else None
        config = EnvironmentConfig(
            oracle_mode=oracle_mode,
            queue_based_loop=oracle_mode,
            start_time=self.start_time,
            duration=scenario.duration,
            time_increment_in_seconds=scenario.time_increment_in_seconds,
            verbose=False,
        )
        self.env: Environment = _environment_class()(config, notification_system=VerboseNotificationSystem(level))
        # Swap the clock BEFORE register_apps hands it to every app, then re-bind the notifier.
        self.clock = make_sim_clock(self.start_time)
        self.env.time_manager = self.clock
        self.env.notification_system.initialize(self.clock)
        self.duration_reached = False
        self.uuid_rng = stable_rng("uuid", scenario.scenario_id, scenario.seed, "oracle" if oracle_mode else "rollout")

    def scope(self) -> contextlib.AbstractContextManager[None]:
        """Enter this before calling into ARE for this environment (deterministic uuid4)."""
        return uuid_scope(self.uuid_rng)

    # ---- lifecycle ----
    def start(self) -> None:
        with self.scope():
            self._start()

    def _start(self) -> None:
        from are.simulation.apps.agent_user_interface import AgentUserInterface
        from are.simulation.types import EnvironmentState

        env, sc = self.env, self.scenario
        if not sc._initialized:
            raise RuntimeError("scenario not initialized")
        env.duration = sc.duration
        env.time_increment_in_seconds = sc.time_increment_in_seconds
        end = self.end_time
        self.clock.horizon = None if end is None else end + (sc.time_increment_in_seconds or 1)
        env.delete_all_completed_events()
        # ARE's `run()` starts from an empty log; ours also keeps what each event looked like when
        # it was logged (an object the environment owns, replaced before anything is logged).
        env.event_log = make_snapshot_event_log()
        env.register_apps(sc.apps or [])
        env.schedule(sc.events)
        aui = env.apps.get(AgentUserInterface.__name__)
        if aui is not None:
            aui.wait_for_user_response = False
        env.state = EnvironmentState.RUNNING
        env.prepare_events_for_start()
        self._tick()

    @property
    def now(self) -> float:
        return float(self.clock.time())

    @property
    def end_time(self) -> float | None:
        return None if self.duration is None else self.start_time + self.duration

    @property
    def running(self) -> bool:
        from are.simulation.types import EnvironmentState

        return self.env.state == EnvironmentState.RUNNING

    @property
    def stopped(self) -> bool:
        from are.simulation.types import EnvironmentState

        return self.env.state in (EnvironmentState.STOPPED, EnvironmentState.FAILED)

    def stop(self) -> None:
        if not self.stopped:
            self.env.stop()

    # ---- time ----
    def _tick(self) -> None:
        incr = self.env.time_increment_in_seconds or 1
        self.env.tick_count = int((self.now - self.start_time) // incr)
        with self.scope():
            self.env.tick()

    def next_event_time(self) -> float | None:
        return self.env.get_next_event_time()

    def advance_to(self, target: float) -> None:
        """Run every event due up to `target`, each at its own timestamp; then sit at `target`.

        Stops early (and stops the environment, as ARE's loop does) if the scenario duration is
        exceeded or the environment stops itself (online judge rejection).
        """
        end = self.end_time
        while self.running:
            nxt = self.env.get_next_event_time()
            if nxt is None or nxt > target:
                break
            if end is not None and nxt > end:
                break
            self.clock.set(max(nxt, self.now))
            self._tick()
        if not self.running:
            return
        if end is not None and target > end:
            if end > self.now:
                self.clock.set(end)
                self._tick()
            self.duration_reached = True
            self.env.stop()
            return
        if target > self.now:
            self.clock.set(target)
            self._tick()

    def advance_by(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"cannot advance by a negative duration ({seconds})")
        self.advance_to(self.now + seconds)

    def resume_with_offset(self, seconds: float) -> None:
        """Time spent with the environment paused, then one tick — ARE's `resume_with_offset`,
        which its agent calls after each model call when generation time is simulated: what fell
        due during the call runs at its end (events keep their scheduled times in the log; the
        clock, notification stamps and app timestamps read the end of the call). Past the scenario
        duration it is `advance_by`, which stops the environment there."""
        if seconds < 0:
            raise ValueError(f"cannot advance by a negative duration ({seconds})")
        target = self.now + seconds
        end = self.end_time
        if not self.running or (end is not None and target > end):
            self.advance_to(target)
            return
        self.clock.set(target)
        self._tick()

    def run_oracle(self) -> None:
        """Oracle mode: jump from event to event until the queue is empty or the duration ends."""
        while self.running:
            nxt = self.env.get_next_event_time()
            if nxt is None:
                break
            if self.end_time is not None and nxt > self.end_time:
                break
            self.clock.set(max(nxt, self.now))
            self._tick()

    # ---- notifications ----
    def drain_notifications(self) -> list[Notification]:
        """Pop every notification stamped at or before now (what ARE's agent pre-step does)."""
        from are.simulation.notification_system import MessageType

        now = datetime.fromtimestamp(self.now, tz=UTC)
        out = []
        for msg in self.env.notification_system.message_queue.get_by_timestamp(now):
            kind = {
                MessageType.USER_MESSAGE: "user",
                MessageType.ENVIRONMENT_NOTIFICATION: "environment",
                MessageType.ENVIRONMENT_STOP: "stop",
            }.get(msg.message_type, "environment")
            out.append(Notification(kind=kind, text=str(msg.message), timestamp=msg.timestamp.timestamp()))
        return out

    def pending_notification(self, kind: str | None = None) -> bool:
        """Is a notification (of `kind`: "user" / "environment") due at or before now?"""
        from are.simulation.notification_system import MessageType

        wanted = {None: None, "user": MessageType.USER_MESSAGE, "environment": MessageType.ENVIRONMENT_NOTIFICATION}[kind]
        now = self.now
        for msg in self.env.notification_system.message_queue.list_view():
            if msg.timestamp.timestamp() <= now and (wanted is None or msg.message_type == wanted):
                return True
        return False

    def advance_until_notification(self, kind: str | None = None) -> bool:
        """Idle: run events until a notification (of `kind`) is due. False if the env stopped first."""
        while self.running:
            if self.pending_notification(kind):
                return True
            nxt = self.env.get_next_event_time()
            end = self.end_time
            if nxt is None or (end is not None and nxt > end):
                # Nothing will ever notify: the scenario runs out its time, as ARE's loop would.
                if end is not None:
                    self.advance_to(end)
                    self.duration_reached = True
                self.env.stop()
                return False
            self.advance_to(max(nxt, self.now))
        return False

    def event_log(self) -> list[CompletedEvent]:
        return list(self.env.event_log.list_view())

    def event_snapshot(self, event: Any) -> dict[str, Any] | None:
        """What `event` (an entry of `event_log()`) looked like when it was logged, serialised."""
        snapshots = getattr(self.env.event_log, "snapshots", None)
        return None if snapshots is None else snapshots.get(id(event))

    def take_user_messages(self) -> tuple[list[Notification], bool]:
        """ARE's outer agent loop (`ARESimulationAgent.get_notifications`): pop what is due now,
        keep the user messages (the next task), put environment notifications back for the agent's
        pre-step, and say whether the environment asked to stop."""
        from are.simulation.notification_system import MessageType

        now = datetime.fromtimestamp(self.now, tz=UTC)
        queue = self.env.notification_system.message_queue
        due = queue.get_by_timestamp(now)
        users = [m for m in due if m.message_type == MessageType.USER_MESSAGE]
        for m in due:
            if m.message_type == MessageType.ENVIRONMENT_NOTIFICATION:
                queue.put(m)
        stop = any(m.message_type == MessageType.ENVIRONMENT_STOP for m in due)
        return [Notification(kind="user", text=str(m.message), timestamp=m.timestamp.timestamp()) for m in users], stop


# --------------------------------------------------------------------------------------------
# The event log, as it was when each event happened
# --------------------------------------------------------------------------------------------


def snapshot_event(event: Any) -> dict[str, Any]:
    """Arguments, return value and exception of one `CompletedEvent`, serialised now.

    ARE logs a shallow copy of each event: its return value is the app's live object, so a later
    change (a ride booked at +5 s, cancelled at +60 s) would rewrite what the log says the agent
    got. Serialising at log time keeps the log a record of what happened.
    """
    from are.simulation.types import ConditionCheckAction

    is_condition = isinstance(event.action, ConditionCheckAction)
    metadata = event.metadata
    return {
        "args": {} if is_condition else serializable({k: v for k, v in event.get_args().items() if k != "self"}),
        "return": serializable(metadata.return_value) if metadata else None,
        "exception": str(metadata.exception) if metadata and metadata.exception else None,
    }


_snapshot_log_cls: type | None = None


def make_snapshot_event_log() -> Any:
    """An ARE `EventLog` (ARE's class, so ARE reads it as usual) that also keeps `snapshot_event`
    of every event as it is logged, keyed by the logged copy (`snapshots[id(copy)]`).

    ARE logs an event inside the tool call, before returning its value, so this is also where the
    lists ARE orders by the hash seed are sorted (`ids.sort_sets`): the agent, the snapshot and
    every later reader then see one order, in every process."""
    global _snapshot_log_cls
    if _snapshot_log_cls is None:
        import_are()
        from are.simulation.types import ConditionCheckAction, EventLog

        def __init__(self: Any) -> None:
            EventLog.__init__(self)
            self.snapshots = {}

        def put(self: Any, event: Any) -> None:
            for ev in event if isinstance(event, list) else [event]:
                logged = ev.copy()  # what ARE's EventLog.put stores
                if logged.metadata is not None and not isinstance(logged.action, ConditionCheckAction):
                    sort_sets(str(logged.tool_name), logged.metadata.return_value)  # before the caller gets it
                self.snapshots[id(logged)] = snapshot_event(logged)
                self.past_events.put(logged)

        _snapshot_log_cls = type("SnapshotEventLog", (EventLog,), {"__init__": __init__, "put": put})
    return _snapshot_log_cls()
