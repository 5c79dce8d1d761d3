"""Gaia2 as an RL environment: a gymnasium-like step API over `Rollout`, and batched rollouts.

The trainer owns the model call; orchestra owns everything else — the same session, agent loop,
notifications, token-metered clock, teams and judges `orchestra run` uses (one path: the policy's
completions are applied through `Rollout.apply`, app-agents of a team run inside it)::

    env = GaiaEnv(EnvConfig(max_turns=20))
    obs = await env.reset("bundled:execution/starter_execution_calendar", seed=0)  # or a path
    while True:
        completion = my_policy(obs.messages, tools=obs.tools)   # an OpenAI-style assistant message
        obs, reward, done, info = await env.step(completion)
        if done:
            break                                # info: rationale, sim_seconds, ledgers, event-log hash
    env.close()

* **In**: an OpenAI-style assistant message (`{"role": "assistant", "content": ..., "tool_calls":
  [...]}`), or a whole chat-completion object (`{"choices": [...], "usage": {...}}`); with the
  `react` scaffold only the text counts (ARE's `Thought:` / `Action:` format). The completion's
  usage moves the clock; when it has none the tokens are counted locally (`Usage.counted_locally`).
* **Out**: an `Observation` (the messages and tool schemas of the next request, OpenAI-style) — or
  None once `done` — the reward (0.0 until the end, then the judge's), and an info dict
  (`episode_info`: rationale, simulated seconds, per-agent ledgers, event-log hash, ...).
* The episode ends on the scaffold's termination rule, the scenario's end, or `max_turns`
  completions (then the rollout is judged as it stands, stop reason `max_turns`).

`rollouts(specs, endpoint)` runs a batch against any OpenAI-compatible server through the
runner's executor seam (`orchestra.runs.runner.execute_all`): orchestra calls the model itself there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from orchestra.are.judge_pool import JudgePool
from orchestra.are.loading import ScenarioTemplate, initial_state_sha256
from orchestra.clock import ClockConfig
from orchestra.config import DEFAULT_MAX_STEPS, NoiseConfig, RewardMode, SessionConfig
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.judging.settings import JudgeConfig
from orchestra.models import ModelConfig
from orchestra.record import RolloutRecord
from orchestra.rl.selection import one_scenario
from orchestra.rollout import Rollout
from orchestra.scenario_files import ScenarioFile
from orchestra.session import Session
from orchestra.spec import AgentConfig, RolloutSpec
from orchestra.teams.config import TeamConfig
from orchestra.training import TrainingTrace
from orchestra.types import ModelRequest, ModelResponse, Usage
from orchestra.wire import check_usage, response_from_completion

#: The main agent's model label when the trainer calls the model (never called by orchestra).
POLICY_MODEL = "policy"


#: The stop reason of an episode cut at `max_turns` completions.
MAX_TURNS_STOP = "max_turns"


class EnvConfig(BaseModel):
    """How every episode of an environment runs: the policy's scaffold (or team), judge, clock, caps."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scaffold: str = Field(
        "tool_calling",
        description="the policy's scaffold: tool_calling (native tool calls), react (ARE's text format) or code (ARE's code-agent text, run in a sandbox)",
    )
    scaffold_options: dict[str, Any] = Field(default_factory=dict)
    team: TeamConfig | None = Field(
        None, description="a team: the policy plays its main agent; its app-agents run with the team's own models, on the same clock"
    )
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    reward_mode: RewardMode = "binary"
    clock: ClockConfig = Field(default_factory=ClockConfig)
    duration: float | None = Field(None, gt=0, description="the scenario's simulated time budget (s); default: ARE's cap")
    max_turns: int = Field(20, gt=0, description="hard cap on the policy's completions per episode")
    max_steps: int = Field(DEFAULT_MAX_STEPS, gt=0, description="the main agent's step budget (ARE: 80 iterations)")
    noise: NoiseConfig | None = Field(None, description="Gaia2's noise (tool failures, environment events); None runs clean")

    def session(self) -> SessionConfig:
        return SessionConfig(clock=self.clock, reward_mode=self.reward_mode, duration=self.duration, judge=self.judge, noise=self.noise)

    def spec(
        self, scenario: str | Path, *, seed: int | None = None, sample_index: int = 0, model: str = POLICY_MODEL, noise_index: int | None = None
    ) -> RolloutSpec:
        """The rollout spec of one episode: the policy (labelled `model` in the ledgers) as the main agent."""
        policy = AgentConfig(scaffold=self.scaffold, model=ModelConfig(model=model), max_steps=self.max_steps, scaffold_options=self.scaffold_options)
        common: dict[str, Any] = dict(scenario=str(scenario), session=self.session(), seed=seed, sample_index=sample_index, noise_index=noise_index)
        if self.team is None:
            return RolloutSpec(agent=policy, **common)
        return RolloutSpec(team=policy_team(self.team, policy), **common)


NoiseArg = bool | Mapping[str, Any] | NoiseConfig | None


def noise_config(noise: NoiseArg, *, where: str = "noise") -> NoiseConfig | None:
    """The `noise` argument as a `NoiseConfig`: False / None = off, True = Gaia2's defaults, a dict
    of `NoiseConfig` fields (the rest default) or a `NoiseConfig`. Anything else is a one-line
    `OrchestraError` naming `where`, the bad key or value and the fields there are."""
    if noise is None or noise is False:
        return None
    if noise is True:
        return NoiseConfig()
    if isinstance(noise, NoiseConfig):
        return noise
    fields = ", ".join(NoiseConfig.model_fields)
    if not isinstance(noise, Mapping):
        raise OrchestraError(f"{where}={noise!r}: give True (Gaia2's defaults), False/None (off) or a dict of {fields}")
    unknown = sorted(str(k) for k in noise if k not in NoiseConfig.model_fields)
    if unknown:
        raise OrchestraError(f"{where}: unknown key(s) {', '.join(unknown)}; the keys are {fields}")
    try:
        return NoiseConfig(**{str(k): v for k, v in noise.items()})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']} (got {e.get('input')!r})" for e in exc.errors())
        raise OrchestraError(f"{where}: {problems}") from None


def policy_team(team: TeamConfig, policy: AgentConfig) -> TeamConfig:
    """`team` with the policy as its main agent. App-agents that inherited the main agent's model
    or scaffold keep the team file's (the policy's model is the trainer's, never called here)."""
    apps = team.app_agents
    if apps is not None:
        defaults = apps.defaults.model_copy(
            update={
                "model": apps.defaults.model or team.main.model,
                "scaffold": apps.defaults.scaffold or team.main.scaffold,
            }
        )
        apps = apps.model_copy(update={"defaults": defaults})
    return team.model_copy(update={"main": policy, "app_agents": apps})


@dataclass
class Observation:
    """The policy's next request, OpenAI-style: send `messages` (and `tools`) to the model."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    stop: list[str] | None = None
    response_format: dict[str, Any] | None = None
    #: How the scaffold reads the answer: `tool_calls` (native) or `react` (text).
    action_format: str = "tool_calls"

    @classmethod
    def of(cls, request: ModelRequest) -> Observation:
        return cls(
            messages=[dict(m) for m in request.messages],
            tools=request.tools,
            tool_choice=request.tool_choice,
            parallel_tool_calls=request.parallel_tool_calls,
            stop=request.stop,
            response_format=request.response_format,
            action_format=request.action_format,
        )

    def chat_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for `openai.AsyncOpenAI().chat.completions.create(model=..., **kwargs)`."""
        kw: dict[str, Any] = {"messages": self.messages}
        for key in ("tools", "tool_choice", "parallel_tool_calls", "stop", "response_format"):
            value = getattr(self, key)
            if value is not None and (key not in ("tool_choice", "parallel_tool_calls") or self.tools):
                kw[key] = value
        return kw


def episode_info(rollout: Rollout, record: RolloutRecord | None = None) -> dict[str, Any]:
    """What a trainer logs about an episode: so far, or (with its record) at the end."""
    if record is None:
        session = rollout.session
        return {
            "scenario_id": session.scenario_id,
            "noise": _noise_info(rollout.spec),
            "sim_seconds": round(session.elapsed, 6),
            "turns_completed": session.turns_completed,
            "ledgers": [dataclasses.asdict(a) for a in rollout.agents.values()],
        }
    return record_info(record)


def record_info(record: RolloutRecord) -> dict[str, Any]:
    """A finished rollout's info: reward, verdict, rationale, simulated seconds, ledgers, event-log hash."""
    result = record.result
    info: dict[str, Any] = {"scenario_id": record.scenario_id, "error": record.error, "policy": record.policy, "noise": _noise_info(record.spec)}
    if result is not None:
        info.update(
            reward=result.reward,
            success=result.success,
            rationale=result.rationale,
            sim_seconds=result.sim_seconds,
            stop_reason=result.stop_reason,
            turns_completed=result.turns_completed,
            nb_turns=result.nb_turns,
            event_log_sha256=result.event_log_sha256,
            judge=result.judge,
            ledgers=[dataclasses.asdict(a) for a in result.agents],
            delegations=[dataclasses.asdict(d) for d in result.delegations],
        )
    else:
        partial = record.partial
        info.update(
            reward=0.0,
            success=False,
            rationale=None,
            sim_seconds=partial.sim_seconds if partial else 0.0,
            stop_reason="error",
            event_log_sha256=partial.event_log_sha256 if partial else None,
            ledgers=[dataclasses.asdict(a) for a in record.agents],
        )
    return info


def _noise_info(spec: RolloutSpec | None) -> dict[str, Any] | None:
    """The noise the rollout ran with (its spec's session), None for a clean run."""
    noise = spec.session.noise if spec is not None else None
    return None if noise is None else noise.model_dump(mode="json")


def _reward(record: RolloutRecord) -> float:
    return float(record.result.reward) if record.result is not None and record.result.reward is not None and record.error is None else 0.0


@dataclass
class Episode:
    """One rollout stepped by the trainer's completions (what `GaiaEnv` and `are-gaia2` hold per rollout)."""

    rollout: Rollout
    max_turns: int = 20
    #: The request the next completion answers (None once done).
    request: ModelRequest | None = None
    #: Completions applied so far.
    turns: int = 0
    record: RolloutRecord | None = None
    _history: list[ModelResponse] = field(default_factory=list)
    _initial_state: str | None = None

    @classmethod
    async def open(
        cls,
        spec: RolloutSpec,
        *,
        host: Host | None = None,
        judge_pool: JudgePool | None = None,
        file: ScenarioFile | None = None,
        max_turns: int = 20,
        template: ScenarioTemplate | None = None,
    ) -> Episode:
        """Load the scenario (its oracle pre-run and judge set-up) in a worker thread — other
        episodes on this event loop keep stepping meanwhile — and run it to the first request.
        `template`: start from a copy of a world loaded before (a group's)."""

        rollout = await anyio.to_thread.run_sync(
            lambda: Rollout.open(spec, host=host, judge_pool=judge_pool, file=file, template=template), abandon_on_cancel=False
        )
        episode = cls(rollout=rollout, max_turns=max_turns)
        try:
            episode.request = await rollout.next_request()
            if episode.request is None:
                episode._finish()
        except BaseException:
            rollout.close()
            raise
        return episode

    @property
    def done(self) -> bool:
        return self.record is not None

    @property
    def initial_state_sha256(self) -> str:
        """The hash of the world the episode starts from — every app's state when the policy gets its
        first request (`orchestra.are.loading.initial_state_sha256`): equal across the members of a
        group (`GaiaEnv.reset_group`), checked on each. Computed when first read, and at the latest
        before the first completion is applied (so it is never of a later state)."""
        if self._initial_state is None:
            self._initial_state = initial_state_sha256(self.rollout.session.scenario)
        return self._initial_state

    @property
    def observation(self) -> Observation | None:
        return None if self.request is None else Observation.of(self.request)

    @property
    def reward(self) -> float:
        return _reward(self.record) if self.record is not None else 0.0

    def info(self) -> dict[str, Any]:
        info = episode_info(self.rollout, self.record)
        info["initial_state_sha256"] = self.initial_state_sha256
        if self.record is not None and self.record.training is not None:
            info["training"] = self.record.training
        return info

    @property
    def training(self) -> TrainingTrace | None:
        """The episode's training trace once it ended (`orchestra.training`): None before, or when no
        completion carried token ids."""
        return self.record.training if self.record is not None else None

    async def step(
        self, completion: Mapping[str, Any] | Any, usage: Mapping[str, Any] | Usage | None = None
    ) -> tuple[Observation | None, float, bool, dict[str, Any]]:
        """Apply one completion: `(observation, reward, done, info)` (gymnasium's order, `done` for
        terminated-or-truncated). The reward is 0.0 until the episode ends.

        A completion that is no completion — a wrong type or shape, a tool-call list that is not a
        list, token ids that are not integers, a negative or non-integer usage count — is a
        `TypeError` / `ValueError` naming the field, raised before anything is applied: the turn is
        not spent and the episode goes on with the next `step`."""
        if self.request is None:
            raise OrchestraError(f"{self.rollout.spec.scenario}: step() after the episode ended (reset for a new one)")
        response = response_from_completion(completion, self.request, usage)
        await self.apply(response)
        return self.observation, self.reward, self.done, self.info()

    async def apply(self, response: ModelResponse) -> None:
        """Apply one `ModelResponse` (the step API's unit) and run to the next request."""
        if self.request is None:
            raise OrchestraError(f"{self.rollout.spec.scenario}: apply() after the episode ended")
        check_usage(response.usage, "the completion's usage")  # before the turn counts: the clock cannot charge it
        _ = self.initial_state_sha256  # the start's hash, before the policy changes anything
        self.request = None
        self.turns += 1
        self._history.append(response)
        try:
            await self.rollout.apply(response)
            if self.turns >= self.max_turns and not self.rollout.done:
                self._finish(stop_reason=MAX_TURNS_STOP)
                return
            self.request = await self.rollout.next_request()
        except BaseException:
            self._finish()
            raise
        if self.request is None or self.rollout.session.done:  # the clock ran out (or the scenario ended) during this turn: no more asks
            self._finish()

    def finish(self, stop_reason: str | None = None) -> RolloutRecord:
        """End the episode now (a trainer's own cut): judged as it stands; idempotent."""
        return self._finish(stop_reason=stop_reason)

    def _finish(self, stop_reason: str | None = None) -> RolloutRecord:
        if self.record is None:
            self.request = None
            main = self.rollout.main
            if stop_reason is not None and main is not None and not self.rollout.done:
                main.stop_reason = stop_reason
            self.record = self.rollout.finish()
            self.rollout.close()
        return self.record

    def close(self) -> None:
        """Release the rollout (environment, judge); idempotent, also for an unfinished episode."""
        self.rollout.close()


class GaiaEnv:
    """`reset(scenario, seed) -> observation` / `step(completion) -> observation, reward, done, info`.

    One episode at a time (make one `GaiaEnv` per concurrent episode; they may share a host and
    judge pool). `scenario` is a scenario file path, a `ScenarioFile`, or a source naming exactly
    one scenario (`bundled:CONFIG/ID` picks one bundled scenario by id)."""

    def __init__(self, config: EnvConfig | None = None, *, host: Host | None = None, judge_pool: JudgePool | None = None, model: str = POLICY_MODEL) -> None:
        self.config = config or EnvConfig()
        self.host = host or Host.create()
        self.judge_pool = judge_pool
        self.model = model
        self.episode: Episode | None = None
        #: The members of the last `reset_group`.
        self.group: list[Episode] = []

    async def reset(self, scenario: str | Path | ScenarioFile, seed: int | None = None, *, sample_index: int = 0, noise: NoiseArg = None) -> Observation:
        """Start an episode. `noise`: None = the config's (`EnvConfig.noise`), False = off, True =
        Gaia2's defaults, a dict of `NoiseConfig` fields or a `NoiseConfig` — for this episode."""
        _check_scenario_arg("reset", scenario)
        _check_seed_arg("reset", seed)
        self.close()
        config = self.config if noise is None else self.config.model_copy(update={"noise": noise_config(noise)})
        file = scenario if isinstance(scenario, ScenarioFile) else one_scenario(scenario)
        spec = config.spec(file.path, seed=seed, sample_index=sample_index, model=self.model)
        self.episode = await Episode.open(spec, host=self.host, judge_pool=self.judge_pool, file=file, max_turns=self.config.max_turns)
        observation = self.episode.observation
        if observation is None:
            raise OrchestraError(f"{file.path}: the scenario ended before the policy's first request ({self.episode.info().get('stop_reason')})")
        return observation

    async def step(
        self, completion: Mapping[str, Any] | Any, usage: Mapping[str, Any] | Usage | None = None
    ) -> tuple[Observation | None, float, bool, dict[str, Any]]:
        if self.episode is None:
            raise OrchestraError("step() before reset()")
        return await self.episode.step(completion, usage)

    async def reset_group(
        self, scenario: str | Path | ScenarioFile, n: int, seed: int | None = None, *, noise: NoiseArg = None, vary_noise: bool = False
    ) -> list[Episode]:
        """A GRPO group: `n` episodes of one scenario from one state. The scenario is loaded once and
        each member starts from its own copy of the loaded world (its own apps and Files folder: a
        member's writes reach no other); each member's `initial_state_sha256` (also in its info) is
        the hash of the world it started in, so identity is checked. Member `i` samples with `seed + i`
        (when `seed` is given); all meet the same noise (the same tool failures and environment
        events) unless `vary_noise`. Step each member with its own `step`; close them with `close()`."""
        _check_scenario_arg("reset_group", scenario)
        _check_seed_arg("reset_group", seed)
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"reset_group: n (the group's size) is an int, got {type(n).__name__} {n!r:.40}")
        if n < 1:
            raise OrchestraError(f"reset_group: n must be 1 or more, got {n}")
        self.close()
        config = self.config if noise is None else self.config.model_copy(update={"noise": noise_config(noise)})
        file = scenario if isinstance(scenario, ScenarioFile) else one_scenario(scenario)
        specs = [config.spec(file.path, seed=seed, sample_index=i, model=self.model, noise_index=i if vary_noise else 0) for i in range(n)]
        template = await anyio.to_thread.run_sync(lambda: Session.load_template(file, specs[0].session))
        members: list[Episode | None] = [None] * n

        async def open_member(i: int) -> None:
            members[i] = await Episode.open(specs[i], host=self.host, judge_pool=self.judge_pool, file=file, max_turns=self.config.max_turns, template=template)

        try:
            async with anyio.create_task_group() as tg:
                for i in range(n):
                    tg.start_soon(open_member, i)
        except BaseException:
            for member in members:
                if member is not None:
                    member.close()
            raise
        self.group = [m for m in members if m is not None]
        return self.group

    def close(self) -> None:
        if self.episode is not None:
            self.episode.close()
            self.episode = None
        for member in self.group:
            member.close()
        self.group = []


def _check_scenario_arg(where: str, scenario: Any) -> None:
    """A `TypeError` naming the argument when `scenario` is no scenario file path, source or `ScenarioFile`."""
    if not isinstance(scenario, str | Path | ScenarioFile):
        raise TypeError(
            f"{where}: scenario is a scenario file path, a source naming one scenario (e.g. 'bundled/ID') or a ScenarioFile, got {type(scenario).__name__} {scenario!r:.60}"
        )


def _check_seed_arg(where: str, seed: Any) -> None:
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TypeError(f"{where}: seed is an int or None, got {type(seed).__name__} {seed!r:.40}")
