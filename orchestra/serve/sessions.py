"""The served episodes: one `Rollout` each, on its own scenario, clock and judge; the table that holds them.

Two modes, one world:

* **step** — a trainer's client sends each completion (`POST /sessions/{id}/step`, OpenEnv's
  `/step`): the `orchestra.rl` step API (`Episode`) over HTTP. The policy is the client's; the
  session's model (when it has one) answers the pending request through the proxy, so a client can
  also let orchestra's model play (`orchestra/oracle`, a scripted model, an endpoint).
* **agent** — an agent outside orchestra plays (`OutsideAgent`): its tools over MCP, its model
  through the proxy, both on the simulated clock.

The table caps open sessions (a refusal past the cap), closes sessions idle past their timeout
(unjudged: nothing half-done is judged), and writes every finished episode's record (and training
trace) to `--out` as it finishes, in the run-folder format, before the answer goes back.
"""

from __future__ import annotations

import hashlib
import itertools
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field

from orchestra.config import DEFAULT_MAX_STEPS, NoiseConfig, RewardMode, SessionConfig
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.judging.settings import JudgeConfig
from orchestra.models import ModelConfig
from orchestra.record import RolloutRecord
from orchestra.rl.env import POLICY_MODEL, Episode, Observation, record_info
from orchestra.rl.selection import one_scenario
from orchestra.rollout import Rollout
from orchestra.scenario_files import ScenarioFile
from orchestra.serve.errors import TooManySessions, UnknownSession
from orchestra.serve.outside_agent import OutsideAgent
from orchestra.session import Session
from orchestra.spec import AgentConfig, RolloutSpec

Mode = Literal["step", "agent"]

#: Loaded scenarios kept for warm starts (a 2.6 MB universe's template is a few MB).
TEMPLATES_KEPT = 32


class SessionRequest(BaseModel):
    """The body of `POST /sessions` (and of a group's): what to play and how."""

    model_config = ConfigDict(extra="forbid")

    scenario: str = Field(..., min_length=1, description="bundled/ID, bundled:CONFIG/ID, SOURCE/ID or a scenario file path")
    mode: Mode = Field("step", description="step: the client sends completions; agent: an outside agent uses MCP and the model proxy")
    model: str | None = Field(
        None, description="the session's model (the proxy's upstream): orchestra/oracle, orchestra/scripted:FILE, a litellm model, openai/NAME + endpoint"
    )
    endpoint: str | None = Field(None, description="the model's OpenAI-compatible base URL")
    api_key: str | None = Field(None, repr=False, description="the model's API key (never recorded)")
    scaffold: str = Field("tool_calling", description="step mode: the policy's scaffold (tool_calling, react, code)")
    seed: int | None = None
    sample_index: int = Field(0, ge=0)
    max_turns: int = Field(20, gt=0, description="step mode: cap on the policy's completions")
    max_steps: int = Field(DEFAULT_MAX_STEPS, gt=0)
    noise: bool | NoiseConfig | None = None
    judge: JudgeConfig | None = None
    reward_mode: RewardMode = "binary"
    duration: float | None = Field(None, gt=0)

    def spec(self, file: ScenarioFile, *, sample_index: int | None = None, noise_index: int | None = None) -> RolloutSpec:
        model = self.model or (POLICY_MODEL if self.mode == "step" else None)
        if model is None:
            raise OrchestraError("POST /sessions: an agent-mode session needs `model` (the upstream its model proxy calls, e.g. orchestra/oracle)")
        scaffold = self.scaffold if self.mode == "step" else "tool_calling"
        agent = AgentConfig(scaffold=scaffold, model=ModelConfig(model=model, endpoint=self.endpoint, api_key=self.api_key), max_steps=self.max_steps)
        session = SessionConfig(reward_mode=self.reward_mode, duration=self.duration, judge=self.judge or JudgeConfig(), noise=self.noise)
        index = self.sample_index if sample_index is None else sample_index
        return RolloutSpec(scenario=str(file.path), agent=agent, session=session, seed=self.seed, sample_index=index, noise_index=noise_index)


@dataclass
class ServedSession:
    """One episode the server holds."""

    id: str
    mode: Mode
    request: SessionRequest
    rollout: Rollout
    episode: Episode | None = None
    outside: OutsideAgent | None = None
    record: RolloutRecord | None = None
    #: One request at a time per session (a client's calls are ordered; two at once would race the loop).
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    last_used: float = field(default_factory=time.monotonic)
    closed: bool = False
    #: Model-proxy calls answered (the completion ids count them).
    proxy_calls: int = 0

    @property
    def done(self) -> bool:
        if self.record is not None:
            return True
        if self.episode is not None:
            return self.episode.done
        return self.outside is not None and self.outside.done

    @property
    def observation(self) -> Observation | None:
        return self.episode.observation if self.episode is not None else None

    def info(self) -> dict[str, Any]:
        if self.record is not None:
            return record_info(self.record)
        if self.episode is not None:
            return self.episode.info()
        session = self.rollout.session
        return {"scenario_id": session.scenario_id, "sim_seconds": round(session.elapsed, 6), "turns_completed": session.turns_completed}

    def reward(self) -> float:
        record = self.record
        if record is None or record.error is not None or record.result is None or record.result.reward is None:
            return 0.0
        return float(record.result.reward)

    def finish(self) -> RolloutRecord:
        """Judge the episode as it stands (idempotent) and release its world."""
        if self.record is None:
            if self.episode is not None:
                self.record = self.episode.finish()
            else:
                assert self.outside is not None
                self.outside.close()
                self.record = self.rollout.finish()
            self.rollout.close()
        return self.record

    def close(self) -> None:
        """Release the world without judging (idempotent)."""
        self.closed = True
        self.rollout.close()


@dataclass
class SessionTable:
    """The open sessions, their cap and idle timeout, and the run folder finished ones go to."""

    host: Host
    max_sessions: int = 64
    idle_timeout: float = 600.0
    out: Path | None = None
    sessions: dict[str, ServedSession] = field(default_factory=dict)
    #: Finished sessions' records, kept (answered again by GET / finish) until their ids are reaped.
    finished: dict[str, ServedSession] = field(default_factory=dict)
    #: Sessions being opened right now (they count against the cap).
    _opening: int = 0
    _counter: itertools.count = field(default_factory=lambda: itertools.count(1))
    _prefix: str = field(default_factory=lambda: secrets.token_hex(3))
    _templates: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    _loading: dict[tuple[Any, ...], anyio.Lock] = field(default_factory=dict)
    #: Sessions started, finished and expired since the server started (`/health`).
    counts: dict[str, int] = field(default_factory=lambda: {"started": 0, "finished": 0, "expired": 0})

    def __post_init__(self) -> None:
        if self.out is not None:
            from orchestra.runs.run_dir import RunDir

            try:
                self.out.mkdir(parents=True, exist_ok=True)
                (self.out / "rollouts").mkdir(exist_ok=True)
            except OSError as exc:
                raise RunDir(self.out).unwritable(exc) from None

    def _new_id(self) -> str:
        return f"s{self._prefix}-{next(self._counter):05d}"

    def _reserve(self, n: int) -> None:
        open_now = len(self.sessions) + self._opening
        if open_now + n > self.max_sessions:
            raise TooManySessions(
                f"{open_now} of {self.max_sessions} sessions are open: finish or delete one (or start the server with a larger --max-sessions)"
            )
        self._opening += n

    def get(self, session_id: str) -> ServedSession:
        served = self.sessions.get(session_id) or self.finished.get(session_id)
        if served is None:
            raise UnknownSession(f"no session {session_id!r} (finished and deleted sessions, and ones idle past {self.idle_timeout:g} s, are gone)")
        served.last_used = time.monotonic()
        return served

    async def open(self, request: SessionRequest) -> ServedSession:
        self._reserve(1)
        try:
            file = await anyio.to_thread.run_sync(lambda: one_scenario(request.scenario))
            spec = request.spec(file)
            template = await self._template(file, spec)
            served = await self._open_one(request, file, spec, template=template)
        finally:
            self._opening -= 1
        return served

    async def _template(self, file: ScenarioFile, spec: RolloutSpec) -> Any:
        """The loaded world of `file` for this session config, loaded once per server and kept (the
        last `TEMPLATES_KEPT`): each session starts from its own copy, as a group's members do, and
        its record is byte-identical to a cold start's (tests/are/test_warm_start.py)."""
        key = (str(file.path), hashlib.sha256(file.text.encode()).hexdigest(), spec.session.duration, repr(spec.session.noise))
        template = self._templates.pop(key, None)
        if template is None:
            lock = self._loading.setdefault(key, anyio.Lock())
            async with lock:  # sessions of one scenario arriving together load it once
                template = self._templates.pop(key, None)
                if template is None:
                    template = await anyio.to_thread.run_sync(lambda: Session.load_template(file, spec.session))
            self._loading.pop(key, None)
        self._templates[key] = template  # most recently used last
        while len(self._templates) > TEMPLATES_KEPT:
            self._templates.pop(next(iter(self._templates)))
        return template

    async def open_group(self, request: SessionRequest, n: int) -> list[ServedSession]:
        """`n` sessions of one scenario from one loaded state (`GaiaEnv.reset_group`'s rule: member i samples with seed + i)."""
        self._reserve(n)
        opened: list[ServedSession] = []
        try:
            file = await anyio.to_thread.run_sync(lambda: one_scenario(request.scenario))
            specs = [request.spec(file, sample_index=i, noise_index=0) for i in range(n)]
            template = await self._template(file, specs[0])
            for spec in specs:
                opened.append(await self._open_one(request, file, spec, template=template))
        except BaseException:
            for served in opened:
                self.delete(served.id)
            raise
        finally:
            self._opening -= n
        return opened

    async def _open_one(self, request: SessionRequest, file: ScenarioFile, spec: RolloutSpec, *, template: Any = None) -> ServedSession:
        session_id = self._new_id()
        if request.mode == "step":
            episode = await Episode.open(spec, host=self.host, file=file, max_turns=request.max_turns, template=template)
            served = ServedSession(session_id, "step", request, episode.rollout, episode=episode)
            if episode.done:
                self._finished(served, episode.finish())
        else:
            rollout = await anyio.to_thread.run_sync(lambda: Rollout.open(spec, host=self.host, file=file, template=template), abandon_on_cancel=False)
            served = ServedSession(session_id, "agent", request, rollout, outside=OutsideAgent(rollout))
            assert served.outside is not None
            served.outside.start()
        self.sessions[session_id] = served
        self.counts["started"] += 1
        if served.record is not None:
            self._finished(served, served.record)
        return served

    def finish(self, served: ServedSession) -> RolloutRecord:
        """Judge and keep: the record is on disk (with `--out`) before this returns."""
        if served.record is not None and served.id in self.finished:
            return served.record
        record = served.finish()
        self._finished(served, record)
        return record

    def _finished(self, served: ServedSession, record: RolloutRecord) -> None:
        served.record = record
        served.rollout.close()
        if self.out is not None and served.id not in self.finished:
            self._write(served, record)
        self.sessions.pop(served.id, None)
        if served.id not in self.finished:
            self.counts["finished"] += 1
        self.finished[served.id] = served

    def _write(self, served: ServedSession, record: RolloutRecord) -> None:
        from orchestra.runs.run_dir import RunDir

        assert self.out is not None
        RunDir(self.out).keep(record, name=f"{record.scenario_id or 'scenario'}.{served.id}")

    def delete(self, session_id: str) -> None:
        served = self.sessions.pop(session_id, None) or self.finished.pop(session_id, None)
        if served is None:
            raise UnknownSession(f"no session {session_id!r}")
        served.close()

    def expire_idle(self, now: float | None = None) -> list[str]:
        """Close (unjudged) the open sessions idle past the timeout, forget finished ones past it."""
        now = time.monotonic() if now is None else now
        gone = []
        for session_id, served in list(self.sessions.items()):
            if now - served.last_used > self.idle_timeout and not served.lock.locked():
                self.sessions.pop(session_id)
                served.close()
                self.counts["expired"] += 1
                gone.append(session_id)
        for session_id, served in list(self.finished.items()):
            if now - served.last_used > self.idle_timeout:
                self.finished.pop(session_id)
        return gone

    def close_all(self) -> int:
        """Shutdown: close every open session unjudged (finished ones are on disk already); how many were open."""
        n = len(self.sessions)
        for served in list(self.sessions.values()):
            served.close()
        self.sessions.clear()
        return n
