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
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator

from orchestra.clock import ClockConfig
from orchestra.config import DEFAULT_MAX_STEPS, NoiseConfig, RewardMode, SessionConfig
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.judging.settings import JudgeConfig
from orchestra.models import ModelConfig
from orchestra.plugins import tracing as traced
from orchestra.record import RolloutRecord
from orchestra.rl.env import POLICY_MODEL, Episode, Observation, policy_team, record_info
from orchestra.rl.selection import one_scenario
from orchestra.rollout import Rollout
from orchestra.scenario_files import ScenarioFile
from orchestra.serve.errors import TooManySessions, UnknownSession
from orchestra.serve.outside_agent import OutsideAgent
from orchestra.session import Session
from orchestra.spec import AgentConfig, RolloutSpec
from orchestra.teams.config import TeamConfig

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
    noise: StrictBool | NoiseConfig | None = Field(None, description="true: Gaia2's defaults; false/null: off; or a NoiseConfig object")
    judge: JudgeConfig | None = Field(None, description="a judge mode (scripted, strict, llm) or a JudgeConfig object")
    reward_mode: RewardMode = "binary"
    duration: float | None = Field(None, gt=0)
    clock: ClockConfig = Field(default_factory=ClockConfig, description="the token-metered clock: decode/prefill rates, tool_call_seconds, time_scale")
    notification_verbosity: Literal["low", "medium", "high"] = "medium"
    scaffold_options: dict[str, Any] = Field(default_factory=dict, description="step mode: the scaffold's options (as a team file's)")
    team: str | None = Field(
        None,
        description="a shipped team's name or a team file on the server: the session's policy (or outside agent) is its main agent; its app-agents run with the team's own models",
    )

    @field_validator("judge", mode="before")
    @classmethod
    def _judge_mode(cls, value: Any) -> Any:
        """`"judge": "strict"` is `{"mode": "strict"}`, as `orchestra run --judge strict`."""
        return {"mode": value} if isinstance(value, str) else value

    def spec(self, file: ScenarioFile, *, sample_index: int | None = None, noise_index: int | None = None) -> RolloutSpec:
        model = self.model or (POLICY_MODEL if self.mode == "step" else None)
        if model is None:
            raise OrchestraError("POST /sessions: an agent-mode session needs `model` (the upstream its model proxy calls, e.g. orchestra/oracle)")
        scaffold = self.scaffold if self.mode == "step" else "tool_calling"
        options = self.scaffold_options if self.mode == "step" else {}
        agent = AgentConfig(
            scaffold=scaffold, model=ModelConfig(model=model, endpoint=self.endpoint, api_key=self.api_key), max_steps=self.max_steps, scaffold_options=options
        )
        session = SessionConfig(
            clock=self.clock,
            notification_verbosity=self.notification_verbosity,
            reward_mode=self.reward_mode,
            duration=self.duration,
            judge=self.judge or JudgeConfig(),
            noise=self.noise,
        )
        index = self.sample_index if sample_index is None else sample_index
        common: dict[str, Any] = dict(scenario=str(file.path), session=session, seed=self.seed, sample_index=index, noise_index=noise_index)
        if self.team is not None:
            team = team_config(self.team)
            if team.main.a2a is not None:  # the session's main agent is the client's or the outside agent's, never the file's
                raise OrchestraError(
                    f"POST /sessions: team {self.team!r} has a remote A2A main agent (main: {{a2a: {team.main.a2a.url}}}), which a served "
                    "session does not take (its main agent is the client's policy or the outside agent): use a team whose main is "
                    "orchestra's, or `orchestra run --team` to run the A2A agent"
                )
            return RolloutSpec(team=policy_team(team, agent), **common)
        return RolloutSpec(agent=agent, **common)


def team_config(name: str) -> TeamConfig:
    """The team a session names: a shipped team (`oracle`, `heterogeneous`, ...) or a team file on the server."""
    from orchestra.teams.loading import load_team

    return load_team(name)


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
    #: Whether a session may name a scenario file on the server (a path); else only bundled/hf sources.
    allow_files: bool = True
    sessions: dict[str, ServedSession] = field(default_factory=dict)
    #: Finished sessions' records, kept (answered again by GET / finish) until their ids are reaped.
    finished: dict[str, ServedSession] = field(default_factory=dict)
    #: Sessions being opened right now (they count against the cap).
    _opening: int = 0
    _counter: itertools.count = field(default_factory=lambda: itertools.count(1))
    _prefix: str = field(default_factory=lambda: secrets.token_hex(3))
    _templates: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    _models_ok: set[str] = field(default_factory=set)
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
            asked = f"{n} more asked, " if n > 1 else ""
            raise TooManySessions(
                f"{asked}{open_now} of {self.max_sessions} sessions are open: finish or delete some (or start the server with a larger --max-sessions)"
            )
        self._opening += n

    def get(self, session_id: str) -> ServedSession:
        served = self.sessions.get(session_id) or self.finished.get(session_id)
        if served is None:
            raise UnknownSession(f"no session {session_id!r} (finished and deleted sessions, and ones idle past {self.idle_timeout:g} s, are gone)")
        served.last_used = time.monotonic()
        return served

    def _scenario(self, request: SessionRequest) -> ScenarioFile:
        """The one scenario a session names; a path on the server only where `allow_files` (loopback)."""
        text = request.scenario
        if not self.allow_files and not text.startswith(("bundled/", "bundled:", "hf:")):
            raise OrchestraError(
                f"scenario {text!r}: this server takes bundled/ID, bundled:CONFIG/ID or hf:... only (files on the server: start it with --allow-scenario-files)"
            )
        try:
            return one_scenario(text)
        except OrchestraError as exc:
            raise OrchestraError(str(exc).replace("reset() takes one", "a session takes one")) from None

    def check_model(self, request: SessionRequest) -> None:
        """The session's model, checked before anything loads (no network: an endpoint answers for
        itself at the first call): an offline model's file, a provider litellm knows. A typo is a
        400 now, not a 502 at the agent's first call."""
        model = request.model
        if model is None or model == POLICY_MODEL or model in self._models_ok:
            return
        from orchestra.models import ModelSetupError

        provider, _, name = model.partition("/")
        handler = self.host.models.get(provider) if name else None
        where = f"model {model!r}"
        if handler is not None:
            if callable(handler) and not hasattr(handler, "completion"):
                handler = handler()
            check = getattr(handler, "preflight", None)
            if check is not None:
                try:
                    check(name)
                except ModelSetupError as exc:
                    raise OrchestraError(f"{where}: {exc}") from None
        elif request.endpoint is None:
            from orchestra.litellm_setup import import_litellm

            try:
                import_litellm().get_llm_provider(model=model)
            except Exception as exc:
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise OrchestraError(f"{where}: unknown provider or model ({first[:200]}); see https://docs.litellm.ai/docs/providers") from None
        self._models_ok.add(model)

    async def open(self, request: SessionRequest) -> ServedSession:
        self.check_model(request)
        self._reserve(1)
        try:
            file = await anyio.to_thread.run_sync(lambda: self._scenario(request))
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
        self.check_model(request)
        self._reserve(n)
        opened: list[ServedSession] = []
        try:
            file = await anyio.to_thread.run_sync(lambda: self._scenario(request))
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
        # tracing: one root span per episode, from here to its end; every call of the session nests under it
        trace = traced.start_served(spec, session_id=session_id)
        try:
            with traced.serving(trace):
                if request.mode == "step":
                    episode = await Episode.open(spec, host=self.host, file=file, max_turns=request.max_turns, template=template)
                    served = ServedSession(session_id, "step", request, episode.rollout, episode=episode)
                    traced.bind_served(trace, episode.rollout)
                    if episode.done:
                        self._finished(served, episode.finish())
                else:
                    rollout = await anyio.to_thread.run_sync(lambda: Rollout.open(spec, host=self.host, file=file, template=template), abandon_on_cancel=False)
                    served = ServedSession(session_id, "agent", request, rollout, outside=OutsideAgent(rollout))
                    traced.bind_served(trace, rollout)
                    assert served.outside is not None
                    served.outside.start()
        except BaseException:
            traced.end_served(None, state=trace)
            raise
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
                print(f"orchestra serve: session {session_id} idle for {self.idle_timeout:g} s: closed unjudged", file=sys.stderr)
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
