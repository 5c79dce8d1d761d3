"""The one narrow door between orchestra and ARE (meta-agents-research-environments 1.2.0).

Every `are.*` import in orchestra's core goes through this module, so the surface we depend on is
visible in one place and an ARE upgrade is checked here first. What it provides:

* `import_are()`: imports ARE without its import-time side effects (litellm's network cost-map fetch,
  `load_dotenv()` reading a stray `.env`).
* `SimClock`: an ARE `TimeManager` whose time moves only when orchestra says so (never backwards).
* `parse_scenario_json()`: ARE's own importer, fronted by checks that turn ARE's silent drops
  (unknown apps, unknown tags) and deep tracebacks into one `ScenarioError` naming file and problem.
* `JudgePool`: ARE's scripted judge is expensive to build (3-6 s); build once per process, reuse.
* `prepare_for_rollout()`: ARE's `preprocess_scenario` step by step, but with a pooled judge and a
  thread-free, deterministic oracle run.
* `DrivenEnvironment`: ARE's `Environment` without its event-loop thread; time is advanced event by
  event so every scheduled event fires at its exact simulated timestamp.

Nothing here patches ARE globally: the only things we change are attributes of objects we own
(the environment's clock, each app's RNG seed).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import inspect
import json
import os
import random
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestra.errors import ScenarioError

if TYPE_CHECKING:  # pragma: no cover - import for type checkers only
    from are.simulation.environment import Environment
    from are.simulation.scenarios.scenario_imported_from_json.benchmark_scenario import (
        BenchmarkScenarioImportedFromJson,
    )
    from are.simulation.types import CompletedEvent
    from are.simulation.validation.judge import GraphPerEventJudge

SUPPORTED_VERSION = "are_simulation_v1"
#: ARE's benchmark runner caps scenarios at these durations (are/simulation/scenarios/config.py).
MAX_SCENARIO_DURATION = 1800
MAX_TIME_SCENARIO_DURATION = 420
#: Tools ARE's own agent hides: user messages reach the agent as notifications instead.
HIDDEN_AUI_TOOLS = frozenset(
    {
        "AgentUserInterface__get_last_message_from_user",
        "AgentUserInterface__get_last_message_from_agent",
        "AgentUserInterface__get_last_unread_messages",
        "AgentUserInterface__get_all_messages",
    }
)
USER_CONTACTS_APP_NAMES = ("Contacts", "ContactsApp")

_import_lock = threading.Lock()
_imported = False


@contextlib.contextmanager
def dotenv_disabled() -> Iterator[None]:
    """Make `dotenv.load_dotenv` a no-op while ARE's modules import.

    ARE calls `load_dotenv()` at import time; python-dotenv then walks up from ARE's install folder
    (inside a project's `.venv`, that reaches the project root) and silently loads any `.env` into
    `os.environ`. Scoped to the import and restored afterwards; opt back in with
    `ORCHESTRA_LOAD_DOTENV=1`.
    """
    if os.environ.get("ORCHESTRA_LOAD_DOTENV") == "1":
        yield
        return
    import dotenv

    original = dotenv.load_dotenv
    dotenv.load_dotenv = lambda *a, **k: False  # type: ignore[assignment]
    try:
        yield
    finally:
        dotenv.load_dotenv = original  # type: ignore[assignment]


def import_are() -> None:
    """Import the ARE modules orchestra uses, once, without network or dotenv side effects."""
    global _imported
    if _imported:
        return
    with _import_lock:
        if _imported:
            return
        # litellm (imported by ARE) downloads its model cost map at import unless told not to.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        with dotenv_disabled():
            import are.simulation.config  # noqa: F401  (its import runs load_dotenv)
            import are.simulation.data_handler.importer  # noqa: F401
            import are.simulation.environment  # noqa: F401
            import are.simulation.scenarios.scenario_imported_from_json.utils  # noqa: F401
            import are.simulation.validation  # noqa: F401
        _imported = True


# --------------------------------------------------------------------------------------------
# The clock
# --------------------------------------------------------------------------------------------


def _time_manager_base() -> type:
    import_are()
    from are.simulation.time_manager import TimeManager

    return TimeManager


class _SimClockMixin:
    """State and behaviour of the simulated clock (mixed into ARE's TimeManager at first use)."""

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
        # already pending (ARE-NOTES §3.6). Time never goes backwards here: ignore and count it.
        if offset < 0:
            self.backwards_requests += 1
            return
        # ARE's wait jumps by the agent's whole timeout even past the scenario's end (its thread
        # stops the run a tick later); the jump stops one tick past the end, where we stop it too.
        self._now = self._now + offset if self.horizon is None else min(self._now + offset, max(self.horizon, self._now))

    # --- orchestra's interface ---
    def set(self, t: float) -> None:
        """Move the clock to absolute time `t` (never backwards)."""
        if t < self._now:
            raise ValueError(f"simulated clock must not move backwards ({t} < {self._now})")
        self._now = float(t)


_sim_clock_cls: type | None = None


def make_sim_clock(start_time: float) -> Any:
    """A `TimeManager` (ARE's class, so ARE accepts it) whose time only orchestra moves."""
    global _sim_clock_cls
    if _sim_clock_cls is None:
        base = _time_manager_base()
        _sim_clock_cls = type("SimClock", (_SimClockMixin, base), {"__init__": lambda self, start=0.0: self._init_sim(start)})
    return _sim_clock_cls(start_time)


# --------------------------------------------------------------------------------------------
# Loading scenarios
# --------------------------------------------------------------------------------------------


def parse_scenario_json(text: str, source: str | Path) -> BenchmarkScenarioImportedFromJson:
    """Import a Gaia2-format scenario with ARE's importer, failing loudly where ARE fails silently."""
    import_are()
    import pydantic
    from are.simulation.apps import ALL_APPS
    from are.simulation.data_handler.importer import JsonScenarioImporter
    from are.simulation.types import CapabilityTag

    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(source, f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    if not isinstance(raw, dict):
        raise ScenarioError(source, f"expected a JSON object at top level, got {type(raw).__name__}")
    version = raw.get("version")
    if version != SUPPORTED_VERSION:
        raise ScenarioError(source, f"unsupported scenario version {version!r}; expected {SUPPORTED_VERSION!r}")
    definition = (raw.get("metadata") or {}).get("definition")
    if not isinstance(definition, dict):
        raise ScenarioError(source, "missing metadata.definition")
    tags = definition.get("tags") or []
    unknown_tags = [t for t in tags if t not in CapabilityTag.__members__]
    if unknown_tags:
        raise ScenarioError(
            source,
            f"unknown capability tag(s) {unknown_tags} in metadata.definition.tags "
            f"(known: {sorted(CapabilityTag.__members__)}); ARE would silently drop all tags",
        )
    apps = raw.get("apps") or []
    if not apps:
        raise ScenarioError(source, "no apps in the file (ARE would try to download them from the HF hub)")
    known_classes = {cls.__name__ for cls in ALL_APPS}
    for i, app in enumerate(apps):
        cls_name = app.get("class_name") or app.get("name")
        if cls_name not in known_classes:
            raise ScenarioError(source, f"apps[{i}] ({app.get('name')!r}): unknown app class {cls_name!r}")
    _check_user_contact(apps, source)

    try:
        scenario, _, _ = JsonScenarioImporter().import_from_json_to_benchmark(
            json_str=text, apps_to_skip=["SandboxLocalFileSystem"], load_completed_events=False
        )
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise ScenarioError(source, f"invalid scenario at {where}: {first.get('msg')} ({exc.error_count()} error(s))") from None
    except Exception as exc:  # ARE raises bare Exceptions / ValueErrors from deep inside
        raise ScenarioError(source, f"ARE could not import the scenario: {type(exc).__name__}: {exc}") from None

    if not scenario.scenario_id:
        raise ScenarioError(source, "metadata.definition.scenario_id is empty")
    if definition.get("start_time") is None:
        raise ScenarioError(source, "metadata.definition.start_time is null; a fixed start time is required for determinism")
    return scenario


def _check_user_contact(apps: list[dict[str, Any]], source: str | Path) -> None:
    """The scripted judge needs a `Contacts`/`ContactsApp` app holding exactly one `is_user` contact."""
    contacts_apps = [a for a in apps if a.get("name") in USER_CONTACTS_APP_NAMES]
    if not contacts_apps:
        raise ScenarioError(source, "no app named 'Contacts' or 'ContactsApp': the judge needs the user's contact")
    state = contacts_apps[0].get("app_state") or {}
    contacts = state.get("contacts") or {}
    values = contacts.values() if isinstance(contacts, dict) else contacts
    users = [c for c in values if isinstance(c, dict) and c.get("is_user")]
    if len(users) != 1:
        raise ScenarioError(
            source,
            f"app {contacts_apps[0].get('name')!r} must hold exactly one contact with is_user=true "
            f"(the user contact the judge needs); found {len(users)}",
        )


# --------------------------------------------------------------------------------------------
# Determinism
# --------------------------------------------------------------------------------------------


def stable_app_seed(seed: int, app_name: str) -> int:
    """ARE seeds each app with `hash(f"{seed}_{name}")`, which differs per process. Use sha256."""
    digest = hashlib.sha256(f"{seed}_{app_name}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def reseed_apps(scenario: Any) -> None:
    """Give every app of `scenario` a process-independent RNG (after every (soft) reset)."""
    for app in scenario.apps or []:
        app.seed = stable_app_seed(int(scenario.seed or 0), app.name)
        app.rng = random.Random(app.seed)


#: The RNG `uuid.uuid4` draws from while orchestra is inside ARE on behalf of a rollout.
_uuid_rng: contextvars.ContextVar[random.Random | None] = contextvars.ContextVar("orchestra_uuid_rng", default=None)
_stdlib_uuid4 = uuid.uuid4
_uuid_shim_lock = threading.Lock()


def _scoped_uuid4() -> uuid.UUID:
    rng = _uuid_rng.get()
    if rng is None:
        return _stdlib_uuid4()
    return uuid.UUID(int=rng.getrandbits(128), version=4)


def install_uuid_shim() -> None:
    """Make `uuid.uuid4` deterministic *inside* orchestra's calls into ARE, and only there.

    ARE mints some ids with `uuid.uuid4()` (Shopping order ids, AUI message ids, dataclass
    defaults, event-record ids), which would make the same actions give different ids — and
    different observations — in every process. Rather than patching ARE, the stdlib function is
    wrapped once: it draws from a per-rollout seeded RNG while a `uuid_scope` is active (a
    context variable, so concurrent rollouts in threads or tasks never share it) and is the
    stdlib's own `uuid4` everywhere else, unchanged.
    """
    with _uuid_shim_lock:
        if uuid.uuid4 is not _scoped_uuid4:
            uuid.uuid4 = _scoped_uuid4  # type: ignore[assignment]


@contextlib.contextmanager
def uuid_scope(rng: random.Random) -> Iterator[None]:
    install_uuid_shim()
    token = _uuid_rng.set(rng)
    try:
        yield
    finally:
        _uuid_rng.reset(token)


def stable_rng(*parts: object) -> random.Random:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


# --------------------------------------------------------------------------------------------
# The judge
# --------------------------------------------------------------------------------------------


def _no_llm_engine(messages: Any, **kwargs: Any) -> tuple[str, None]:
    """Judge engine stub: the scripted judge never calls it (it skips `llm_checker` args)."""
    return "", None


class JudgePool:
    """Scripted ARE judges, built once and reused across scenarios.

    A judge holds one rollout's state while that rollout runs (turn triggers call it online), so
    concurrent rollouts each need their own instance: `acquire()` hands out an idle judge or builds
    a new one. `initialize_state(scenario)` replaces a judge's state completely, which is what makes
    reuse safe (ARE-NOTES §7.7).
    """

    def __init__(self) -> None:
        self._idle: list[GraphPerEventJudge] = []
        self._lock = threading.Lock()
        self.builds = 0

    def _build(self) -> GraphPerEventJudge:
        import_are()
        from are.simulation.validation import JudgeFactory, ScriptedGraphPerEventJudgeConfig

        judge = JudgeFactory()(ScriptedGraphPerEventJudgeConfig(engine=_no_llm_engine))
        with self._lock:
            self.builds += 1
        return judge

    def warm(self) -> None:
        """Build one judge now (e.g. before timing anything)."""
        judge = self._build()
        with self._lock:
            self._idle.append(judge)

    @contextlib.contextmanager
    def acquire(self) -> Iterator[GraphPerEventJudge]:
        with self._lock:
            judge = self._idle.pop() if self._idle else None
        if judge is None:
            judge = self._build()
        try:
            yield judge
        finally:
            with self._lock:
                self._idle.append(judge)


_default_pool: JudgePool | None = None


def default_judge_pool() -> JudgePool:
    """The process-wide pool (thread-safe; judges are never shared by two live rollouts)."""
    global _default_pool
    with _import_lock:
        if _default_pool is None:
            _default_pool = JudgePool()
    return _default_pool


# --------------------------------------------------------------------------------------------
# The thread-free environment
# --------------------------------------------------------------------------------------------


@dataclass
class Notification:
    """One message from ARE's notification system, as the agent will see it."""

    kind: str  # "user" | "environment" | "stop"
    text: str
    timestamp: float


class DrivenEnvironment:
    """ARE's `Environment`, stepped by orchestra instead of by ARE's event-loop thread.

    Replicates `Environment.run()`/`start()` minus the thread (ARE-NOTES §3.5). Time moves only
    through `advance_to()`, which pops and runs every queued event in timestamp order, setting the
    clock to each event's exact time first, then enforces the scenario duration like ARE's loop.
    """

    def __init__(self, scenario: Any, *, oracle_mode: bool = False, verbosity: str = "medium") -> None:
        import_are()
        from are.simulation.environment import Environment, EnvironmentConfig
        from are.simulation.notification_system import VerboseNotificationSystem, VerbosityLevel

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
        self.env: Environment = Environment(config, notification_system=VerboseNotificationSystem(level))
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

        now = datetime.fromtimestamp(self.now, tz=timezone.utc)
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

        now = datetime.fromtimestamp(self.now, tz=timezone.utc)
        queue = self.env.notification_system.message_queue
        due = queue.get_by_timestamp(now)
        users = [m for m in due if m.message_type == MessageType.USER_MESSAGE]
        for m in due:
            if m.message_type == MessageType.ENVIRONMENT_NOTIFICATION:
                queue.put(m)
        stop = any(m.message_type == MessageType.ENVIRONMENT_STOP for m in due)
        return [Notification(kind="user", text=str(m.message), timestamp=m.timestamp.timestamp()) for m in users], stop


# --------------------------------------------------------------------------------------------
# Preparing a scenario for a rollout (ARE's preprocess_scenario, pooled judge, no thread)
# --------------------------------------------------------------------------------------------


class FilesContentWarning(UserWarning):
    """The Files app's contents cannot be read here; its files will read as empty."""


def files_content_path() -> str:
    import_are()
    from are.simulation import config

    return str(config.DEMO_FS_PATH)


def warn_if_file_contents_unavailable(scenario: Any) -> bool:
    """Gaia2's `Files` app reads contents from `DEMO_FS_PATH` (by default on the HF hub); offline
    ARE silently serves empty files. Say so — once per process (Python's default warning filter)."""
    if not any(type(app).__name__ == "SandboxLocalFileSystem" for app in scenario.apps or []):
        return False
    path = files_content_path()
    if not path.startswith("hf://") and Path(path).exists():
        return False
    import warnings

    warnings.warn(
        FilesContentWarning(
            f"the scenario's Files app reads file contents from DEMO_FS_PATH={path!r}, which is not available "
            "locally: files will read as empty. Download the gaia2_filesystem dataset and set DEMO_FS_PATH to its "
            "demo_filesystem folder."
        ),
        stacklevel=2,
    )
    return True


def scenario_duration_cap(scenario: Any) -> int:
    """ARE's benchmark caps: 420 s for Time-tagged scenarios, 1800 s otherwise."""
    from are.simulation.types import CapabilityTag

    return MAX_TIME_SCENARIO_DURATION if CapabilityTag.Time in (scenario.tags or ()) else MAX_SCENARIO_DURATION


@dataclass
class PreparedScenario:
    """A scenario ready for one rollout: initialized, oracle-run, judge attached, turns wired."""

    scenario: Any
    source: str
    oracle_log: list[Any] = field(default_factory=list)
    #: Verdicts of intermediate turns, recorded as ARE's online turn triggers judge them.
    turn_verdicts: list[dict[str, Any]] = field(default_factory=list)
    judge: Any = None

    @property
    def scenario_id(self) -> str:
        return str(self.scenario.scenario_id)

    @property
    def nb_turns(self) -> int:
        return int(self.scenario.nb_turns or 1)


def prepare_for_rollout(
    scenario: Any,
    judge: GraphPerEventJudge | None,
    *,
    source: str,
    duration: float | None = None,
) -> PreparedScenario:
    """Mirror `preprocess_scenario` (are/.../scenario_imported_from_json/utils.py:43-157).

    Differences, each deliberate: the judge comes from a pool instead of being built per scenario;
    the oracle run is thread-free on a simulated clock (so the oracle timeline the judge compares
    against is exact and identical in every process); app RNGs are seeded process-independently.
    """
    import_are()
    from are.simulation.apps.system import SystemApp
    from are.simulation.data_handler.models import ExportedApp
    from are.simulation.scenarios.scenario_imported_from_json.utils import is_send_message_to_user
    from are.simulation.types import OracleEvent

    if scenario.serialized_apps and "SystemApp" not in [a.name for a in scenario.serialized_apps]:
        scenario.serialized_apps.append(ExportedApp(name="SystemApp", class_name="SystemApp", app_state={}))
    if scenario.apps is not None and "SystemApp" not in [a.name for a in scenario.apps]:
        scenario.apps.append(SystemApp())
    scenario.duration = duration if duration is not None else scenario_duration_cap(scenario)
    scenario.tool_augmentation_config = None
    scenario.env_events_config = None
    try:
        scenario.initialize()
    except Exception as exc:
        raise ScenarioError(source, f"ARE could not initialize the scenario: {type(exc).__name__}: {exc}") from None
    loaded = {a.name for a in scenario.apps or []}
    dropped = [a.name for a in scenario.serialized_apps or [] if a.name not in loaded]
    if dropped:
        raise ScenarioError(source, f"ARE dropped app(s) {dropped} while loading their state (see ARE's log)")
    reseed_apps(scenario)
    warn_if_file_contents_unavailable(scenario)

    has_oracle = any(isinstance(e, OracleEvent) for e in scenario.events)
    if not has_oracle:
        raise ScenarioError(source, "the scenario has no oracle events: there is nothing to judge against")
    if judge is None:
        raise ValueError("a judge is required")

    oracle_env = DrivenEnvironment(scenario, oracle_mode=True)
    oracle_env.start()
    oracle_env.run_oracle()
    oracle_env.stop()
    oracle_log = oracle_env.event_log()
    failed = [e for e in oracle_log if e.failed()]
    if failed:
        details = "; ".join(f"{e.tool_name}: {e.metadata.exception}" for e in failed[:3])
        raise ScenarioError(source, f"the oracle run failed ({len(failed)} event(s)): {details}")
    ran = {e.event_id for e in oracle_log}
    missed = [e.event_id for e in scenario.events if isinstance(e, OracleEvent) and e.event_id not in ran]
    if missed:
        raise ScenarioError(
            source,
            f"oracle action(s) {missed} did not happen within the scenario duration ({scenario.duration} s); "
            "the judge would expect nothing of them — raise the duration",
        )
    scenario.soft_reset()
    reseed_apps(scenario)
    scenario.oracle_run_event_log = oracle_log
    scenario.judge = judge
    prepared = PreparedScenario(scenario=scenario, source=source, oracle_log=oracle_log, judge=judge)

    def recording_trigger(env: Any, turn_idx: int) -> tuple[bool, dict[str, str]]:
        success, matches = judge.trigger_condition(env, turn_idx)
        prepared.turn_verdicts.append(
            {
                "turn": len(prepared.turn_verdicts),
                "success": bool(success),
                "rationale": None if success else str(judge.state.last_turn_rationale),
                "sim_seconds": float(env.time_manager.time()) - float(scenario.start_time),
            }
        )
        return success, matches

    scenario.initialize_turns(
        trigger_condition=recording_trigger,
        validation_fn=judge.validate,
        offline_validation=False,
        is_end_of_turn_event=is_send_message_to_user,
    )
    try:
        judge.initialize_state(scenario)
    except Exception as exc:
        raise ScenarioError(source, f"the scripted judge cannot judge this scenario: {type(exc).__name__}: {exc}") from None
    return prepared


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolArg:
    name: str
    type_hint: Any
    type_text: str
    description: str
    required: bool
    default: Any = None


@dataclass(frozen=True)
class ToolSpec:
    """What a scaffold needs to know about one agent tool (`<App instance name>__<method>`)."""

    name: str
    app_name: str
    app_class: str
    method: str
    description: str
    args: tuple[ToolArg, ...]
    return_type: str
    writes: bool


def agent_tools(scenario: Any) -> dict[str, tuple[ToolSpec, Any]]:
    """The tools ARE's own agent would get, keyed by agent-visible name, with their `AppTool`."""
    out: dict[str, tuple[ToolSpec, Any]] = {}
    for tool in scenario.get_tools():
        if tool.name in HIDDEN_AUI_TOOLS:
            continue
        spec = spec_from_app_tool(tool)
        out[spec.name] = (spec, tool)
    return out


def _variadic_params(tool: Any) -> set[str]:
    """Names of `*args`/`**kwargs` parameters of the tool's method.

    ARE's `build_tool` lists them as ordinary arguments with no default, so a `**kwargs` looks
    like a *required* argument named "kwargs" (the Files / SandboxLocalFileSystem /
    VirtualFileSystem tools). Passing `kwargs={...}` would hand a stray keyword named "kwargs" to
    the underlying file system; the model should never be asked for it.
    """
    func = getattr(tool, "function", None)
    if func is None:
        return set()
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return set()
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return {name for name, p in params.items() if p.kind in variadic}


def spec_from_app_tool(tool: Any) -> ToolSpec:
    """A `ToolSpec` for one ARE `AppTool`; `*args`/`**kwargs` parameters are left out (see `_variadic_params`)."""
    variadic = _variadic_params(tool)
    args = tuple(
        ToolArg(
            name=a.name,
            type_hint=a.type_obj,
            type_text=str(a.arg_type),
            description=a.description or "",
            required=not a.has_default,
            default=a.default if a.has_default else None,
        )
        for a in tool.args
        if a.name not in variadic
    )
    return ToolSpec(
        name=tool._public_name or tool.name,
        app_name=tool.app_name,
        app_class=tool.class_name,
        method=tool.name.split("__", 1)[1] if "__" in tool.name else tool.name,
        description=tool._public_description or tool.function_description or "",
        args=args,
        return_type=str(tool.return_type),
        writes=bool(tool.write_operation),
    )



# --------------------------------------------------------------------------------------------
# ARE's agent prompt, for scaffolds that want to match ARE's default agent
# --------------------------------------------------------------------------------------------


def are_system_prompt(env: DrivenEnvironment, scenario: Any, *, agent_instructions: str | None = None, tool_descriptions: str) -> str:
    """ARE's default agent system prompt, filled as ARE fills it (ARE-NOTES §5.4).

    `agent_instructions=None` keeps ARE's JSON ReAct instructions (the Gaia2 paper's scaffold);
    other scaffolds pass their own and keep ARE's general and environment instructions.
    """
    import_are()
    from are.simulation.agents.default_agent.prompts.notification_system import get_notification_system_prompt
    from are.simulation.agents.default_agent.prompts.system_prompt import (
        ARE_SIMULATION_ENVIRONMENT_INSTRUCTIONS,
        GENERAL_SYSTEM_PROMPT_TEMPLATE,
        REACT_LOOP_JSON_SYSTEM_PROMPT,
        SYSTEM_PROMPT_TEMPLATE,
    )

    prompt = SYSTEM_PROMPT_TEMPLATE.format(
        general_instructions=GENERAL_SYSTEM_PROMPT_TEMPLATE,
        agent_instructions=agent_instructions if agent_instructions is not None else REACT_LOOP_JSON_SYSTEM_PROMPT.format(json_agent_hints=""),
        environment_instructions=ARE_SIMULATION_ENVIRONMENT_INSTRUCTIONS.format(environment_hints=""),
    )
    if getattr(scenario, "additional_system_prompt", None):
        prompt += "\n\n" + scenario.additional_system_prompt
    date_str = datetime.fromtimestamp(float(scenario.start_time or 0), tz=timezone.utc).strftime("%Y-%m-%d %H")
    return (
        prompt.replace("<<tool_descriptions>>", tool_descriptions)
        .replace("<<notification_system_description>>", get_notification_system_prompt(env.env.notification_system, scenario.apps))
        .replace("<<curent_time_description>>", f"Today's date in 'YYYY-MM-DD HH' format is {date_str}")
        .replace("<<agent_reminder_description>>", "")
    )


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
    from are.simulation.utils.serialization import make_serializable

    is_condition = isinstance(event.action, ConditionCheckAction)
    metadata = event.metadata
    return {
        "args": {} if is_condition else make_serializable({k: v for k, v in event.get_args().items() if k != "self"}),
        "return": make_serializable(metadata.return_value) if metadata else None,
        "exception": str(metadata.exception) if metadata and metadata.exception else None,
    }


_snapshot_log_cls: type | None = None


def make_snapshot_event_log() -> Any:
    """An ARE `EventLog` (ARE's class, so ARE reads it as usual) that also keeps `snapshot_event`
    of every event as it is logged, keyed by the logged copy (`snapshots[id(copy)]`)."""
    global _snapshot_log_cls
    if _snapshot_log_cls is None:
        import_are()
        from are.simulation.types import EventLog

        def __init__(self: Any) -> None:
            EventLog.__init__(self)
            self.snapshots = {}

        def put(self: Any, event: Any) -> None:
            for ev in event if isinstance(event, list) else [event]:
                logged = ev.copy()  # what ARE's EventLog.put stores
                self.snapshots[id(logged)] = snapshot_event(logged)
                self.past_events.put(logged)

        _snapshot_log_cls = type("SnapshotEventLog", (EventLog,), {"__init__": __init__, "put": put})
    return _snapshot_log_cls()


# --------------------------------------------------------------------------------------------
# ARE's default agent (JSON ReAct): its tools, parsing and messages, reused verbatim
# --------------------------------------------------------------------------------------------

#: ARE's `BaseAgent` retries an output holding neither `Thought:` nor `Action:` this many times
#: (env `BASE_AGENT_INVALID_FORMAT_RETRIES`, default 10) inside one iteration.
ARE_INVALID_FORMAT_RETRIES = 10
ARE_STOP_SEQUENCES = ("<end_action>", "Observation:")


def are_message_templates() -> dict[str, str]:
    """How ARE's agent renders each log for the model (`base_agent.DEFAULT_STEP_2_MESSAGE`)."""
    import_are()
    from are.simulation.agents.default_agent.base_agent import DEFAULT_STEP_2_MESSAGE

    return dict(DEFAULT_STEP_2_MESSAGE)


def are_force_retry_output() -> str:
    """ARE's canned output when the last message reports a server error (`FORCE_RETRY_PROMPT`)."""
    import_are()
    from are.simulation.agents.default_agent.base_agent import FORCE_RETRY_PROMPT

    return str(FORCE_RETRY_PROMPT)


class _PlainTool:
    """A tool that is not an ARE app tool (a plugin's), shaped like ARE's `Tool` for its template."""

    def __init__(self, spec: ToolSpec) -> None:
        self.name = spec.name
        self.description = spec.description
        self.inputs = {a.name: {"description": a.description, "type": a.type_text} for a in spec.args}
        self.output_type = spec.return_type


def are_agent_tools(app_tools: dict[str, Any], extra: dict[str, ToolSpec] | None = None) -> dict[str, Any]:
    """The tools as ARE's default agent holds them: `AppToolAdapter(app_tool)` per ARE app tool
    (in ARE's order), then any plugin tools; keyed by the name the model sees."""
    import_are()
    from are.simulation.tool_utils import AppToolAdapter

    out: dict[str, Any] = {}
    for tool in app_tools.values():
        adapter = AppToolAdapter(tool)
        out[adapter.name] = adapter
    for name, spec in (extra or {}).items():
        out.setdefault(name, _PlainTool(spec))
    return out


def are_tool_descriptions(tools: dict[str, Any]) -> str:
    """`<<tool_descriptions>>` exactly as ARE renders it (`Toolbox.show_tool_descriptions`)."""
    import_are()
    from are.simulation.tool_box import DEFAULT_TOOL_DESCRIPTION_TEMPLATE, get_tool_description_with_args

    return "\n".join(get_tool_description_with_args(t, DEFAULT_TOOL_DESCRIPTION_TEMPLATE) for t in tools.values())


def are_tool_description(tool: Any) -> str:
    import_are()
    from are.simulation.tool_box import get_tool_description_with_args

    return str(get_tool_description_with_args(tool))


def are_react_system_prompt(env: DrivenEnvironment, scenario: Any, tools: dict[str, Any]) -> str:
    """ARE's default agent system prompt, filled in ARE's order (`ARESimulationAgent.init_system_prompt`,
    then `update_system_prompt_with_tools` at the agent's first run)."""
    import_are()
    from are.simulation.agents.default_agent.base_agent import update_system_prompt_with_tools
    from are.simulation.agents.default_agent.prompts import (
        DEFAULT_ARE_SIMULATION_REACT_JSON_SYSTEM_PROMPT,
        get_notification_system_prompt,
    )

    prompt = str(DEFAULT_ARE_SIMULATION_REACT_JSON_SYSTEM_PROMPT)
    if scenario.additional_system_prompt is not None:
        prompt += "\n\n" + scenario.additional_system_prompt
    prompt = prompt.replace("<<notification_system_description>>", get_notification_system_prompt(env.env.notification_system, scenario.apps))
    date_str = datetime.fromtimestamp(scenario.start_time or 0, tz=timezone.utc).strftime("%Y-%m-%d %H")
    prompt = prompt.replace("<<curent_time_description>>", f"Today's date in 'YYYY-MM-DD HH' format is {date_str}")
    prompt = prompt.replace("<<agent_reminder_description>>", "")
    prompts = update_system_prompt_with_tools({"system_prompt": prompt}, list(tools.values()))
    return "\n\n".join(str(p) for p in prompts.values())


class _Silent:
    """A logger that drops everything: ARE's executor logs every format error with a traceback."""

    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: None


def are_parse_action(llm_output: str) -> tuple[str, Any]:
    """ARE's `JsonActionExecutor`: `extract_action` then `parse_action` on an output, raising
    ARE's own exceptions (`InvalidActionAgentError`, `FormatError`, `JsonParsingAgentError`)
    with ARE's texts. Returns (tool name, action_input as ARE passes it on)."""
    import_are()
    from are.simulation.agents.default_agent.tools.json_action_executor import JsonActionExecutor

    executor = JsonActionExecutor(use_custom_logger=False)
    executor.logger = _Silent()  # an attribute of our own executor instance
    action = executor.extract_action(llm_output=llm_output, split_token=executor.action_token)
    parsed = executor.parse_action(action)
    return str(parsed.tool_name), parsed.arguments


def are_error_text(exc: BaseException) -> str:
    """An exception as ARE's agent logs it for the model (`BaseAgent.log_error` → `ErrorLog`)."""
    import_are()
    from are.simulation.exceptions import LoggedError

    if isinstance(exc, LoggedError):
        category = exc.category
    elif type(exc).__name__ in ("PromptTooLongException", "EmptyResponseException"):
        category = type(exc).__name__
    else:
        category = "UnhandledError"
    return f"Error: {type(exc).__name__}\nException: {exc}\nCategory: {category}"


def are_invalid_format_error(llm_output: str) -> BaseException:
    import_are()
    from are.simulation.exceptions import InvalidActionAgentError

    return InvalidActionAgentError(f"The LLM output was not formatted correctly: {llm_output}")


def are_retries_exhausted_error(count: int, llm_output: str) -> BaseException:
    import_are()
    from are.simulation.exceptions import InvalidActionAgentError

    return InvalidActionAgentError(f"LLM did not return a valid output after {count} iterations: {llm_output}")


def are_unknown_tool_error(name: str, known: list[str]) -> BaseException:
    import_are()
    from are.simulation.exceptions import UnavailableToolAgentError

    return UnavailableToolAgentError(f"Error: unknown tool {name}, should be instead one of {known}.")


def are_tool_execution_error(exc: BaseException | str, tool: Any) -> BaseException:
    """A failed tool call as ARE's executor reports it: ARE's own agent errors pass through;
    anything else gets the tool's description appended (`JsonExecutionAgentError`)."""
    import_are()
    from are.simulation.exceptions import JsonExecutionAgentError, LoggedError

    if isinstance(exc, LoggedError):
        return exc
    return JsonExecutionAgentError(
        f"Error in tool call execution: {exc}\nYou should only use this tool with a correct input.\n"
        f"As a reminder, this tool's description is the following:\n{are_tool_description(tool)}"
    )
