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
import json
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from orchestra.are.judge_pool import JudgePool
from orchestra.clock import ClockConfig
from orchestra.config import DEFAULT_MAX_STEPS, NoiseConfig, RewardMode, SessionConfig
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.judging.settings import JudgeConfig
from orchestra.models import ModelConfig, count_usage_locally, import_litellm, parse_tool_call
from orchestra.record import RolloutRecord
from orchestra.rollout import Rollout
from orchestra.runs.preflight import DEFAULT_TIMEOUT
from orchestra.runs.preflight import preflight as check_batch
from orchestra.runs.runner import execute_all
from orchestra.scenario_files import ScenarioFile, resolve
from orchestra.spec import AgentConfig, RolloutSpec
from orchestra.teams.config import TeamConfig
from orchestra.types import ModelRequest, ModelResponse, ToolCall, Usage

__all__ = [
    "CAPABILITIES",
    "MAX_TURNS_STOP",
    "POLICY_MODEL",
    "EnvConfig",
    "Episode",
    "GaiaEnv",
    "Observation",
    "ScenarioFailure",
    "completion_message",
    "episode_info",
    "noise_config",
    "response_from_completion",
    "rollouts",
    "select_scenarios",
]

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

    def spec(self, scenario: str | Path, *, seed: int | None = None, sample_index: int = 0, model: str = POLICY_MODEL) -> RolloutSpec:
        """The rollout spec of one episode: the policy (labelled `model` in the ledgers) as the main agent."""
        policy = AgentConfig(scaffold=self.scaffold, model=ModelConfig(model=model), max_steps=self.max_steps, scaffold_options=self.scaffold_options)
        common: dict[str, Any] = dict(scenario=str(scenario), session=self.session(), seed=seed, sample_index=sample_index)
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


# ------------------------------------------------------------------ what goes in and out


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


def response_from_completion(completion: Mapping[str, Any] | Any, request: ModelRequest, usage: Mapping[str, Any] | Usage | None = None) -> ModelResponse:
    """An OpenAI-style completion as orchestra's `ModelResponse` for `request`.

    `completion` is an assistant message (a dict, or any object with `content` / `tool_calls`
    attributes, e.g. openai's `ChatCompletionMessage`) or a whole chat completion (`choices`,
    `usage`). `usage` (or the completion's own) sets the tokens the clock is charged; without
    prompt and completion counts they are counted locally. A `react` request reads the text only.
    Anything else (None, a string, a number, a dict with neither) is a `TypeError`: a trainer's bug
    must not silently spend one of the episode's turns."""
    if completion is None or isinstance(completion, str | bytes | int | float):
        raise TypeError(f"a completion is an assistant message or a chat completion (content / tool_calls / choices), got {type(completion).__name__}")
    data = _as_dict(completion)
    finish_reason = None
    if "choices" in data:
        usage = usage if usage is not None else data.get("usage")
        choice = _as_dict(data["choices"][0])
        finish_reason = choice.get("finish_reason")
        data = _as_dict(choice.get("message") or {})
    if not {"content", "tool_calls"} & set(data):
        raise TypeError(f"a completion is an assistant message or a chat completion (content / tool_calls / choices), got one with keys {sorted(data)}")
    if usage is None:
        usage = data.get("usage")  # an assistant message carrying its completion's usage (`completion_message`)
    text = data.get("content")
    if isinstance(text, list):  # content parts: the text ones
        text = "".join(str(_as_dict(p).get("text") or "") for p in text)
    text = text if isinstance(text, str) else None
    calls: list[ToolCall] = []
    if request.action_format == "tool_calls":  # react and code read the text only
        for i, raw in enumerate(data.get("tool_calls") or []):
            tc = _as_dict(raw)
            fn = _as_dict(tc.get("function") or tc)  # OpenAI's nesting, or verifiers' flat {id, name, arguments}
            calls.append(parse_tool_call(str(fn.get("name") or ""), fn.get("arguments"), str(tc.get("id") or f"call_{i}")))
    return ModelResponse(
        text=text, tool_calls=calls, usage=_usage(usage, request, text, calls), model=str(data.get("model") or ""), finish_reason=finish_reason
    )


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    if hasattr(value, "model_dump"):
        return dict(value.model_dump())
    return {
        k: getattr(value, k) for k in ("role", "content", "tool_calls", "function", "id", "name", "arguments", "message", "finish_reason") if hasattr(value, k)
    }


def _usage(usage: Mapping[str, Any] | Usage | Any, request: ModelRequest, text: str | None, calls: list[ToolCall]) -> Usage:
    if isinstance(usage, Usage):
        if usage.prompt_tokens or usage.completion_tokens:
            return usage
    elif usage is not None:
        u = _as_dict(usage) if not isinstance(usage, Mapping) else dict(usage)
        if not u and hasattr(usage, "prompt_tokens"):
            u = {k: getattr(usage, k, 0) for k in ("prompt_tokens", "completion_tokens", "reasoning_tokens")}
        prompt, completion = int(u.get("prompt_tokens") or 0), int(u.get("completion_tokens") or 0)
        details = u.get("completion_tokens_details") or {}
        reasoning = int(u.get("reasoning_tokens") or _as_dict(details).get("reasoning_tokens") or 0)
        if prompt or completion:
            return Usage(prompt, completion, reasoning)
    return count_usage_locally(import_litellm(), request.messages, text, calls)


def completion_message(response: ModelResponse) -> dict[str, Any]:
    """orchestra's `ModelResponse` as an OpenAI-style assistant message, its usage under `usage`
    (what a server would have returned; `response_from_completion` reads it back)."""
    message: dict[str, Any] = {"role": "assistant", "content": response.text}
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": c.id or f"call_{i}", "type": "function", "function": {"name": c.name, "arguments": c.arguments_text()}}
            for i, c in enumerate(response.tool_calls)
        ]
    if not response.usage.counted_locally:
        message["usage"] = {
            "prompt_tokens": response.usage.prompt_tokens,
            "completion_tokens": response.usage.completion_tokens,
            "reasoning_tokens": response.usage.reasoning_tokens,
        }
    return message


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
    return float(record.result.reward) if record.result is not None and record.error is None else 0.0


# ------------------------------------------------------------------ one episode


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

    @classmethod
    async def open(
        cls, spec: RolloutSpec, *, host: Host | None = None, judge_pool: JudgePool | None = None, file: ScenarioFile | None = None, max_turns: int = 20
    ) -> Episode:
        """Load the scenario (its oracle pre-run and judge set-up) in a worker thread — other
        episodes on this event loop keep stepping meanwhile — and run it to the first request."""
        rollout = await anyio.to_thread.run_sync(lambda: Rollout.open(spec, host=host, judge_pool=judge_pool, file=file), abandon_on_cancel=False)
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
    def observation(self) -> Observation | None:
        return None if self.request is None else Observation.of(self.request)

    @property
    def reward(self) -> float:
        return _reward(self.record) if self.record is not None else 0.0

    def info(self) -> dict[str, Any]:
        return episode_info(self.rollout, self.record)

    async def step(
        self, completion: Mapping[str, Any] | Any, usage: Mapping[str, Any] | Usage | None = None
    ) -> tuple[Observation | None, float, bool, dict[str, Any]]:
        """Apply one completion: `(observation, reward, done, info)` (gymnasium's order, `done` for
        terminated-or-truncated). The reward is 0.0 until the episode ends."""
        if self.request is None:
            raise OrchestraError(f"{self.rollout.spec.scenario}: step() after the episode ended (reset for a new one)")
        response = response_from_completion(completion, self.request, usage)
        await self.apply(response)
        return self.observation, self.reward, self.done, self.info()

    async def apply(self, response: ModelResponse) -> None:
        """Apply one `ModelResponse` (the step API's unit) and run to the next request."""
        if self.request is None:
            raise OrchestraError(f"{self.rollout.spec.scenario}: apply() after the episode ended")
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
        if self.request is None:
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


# ------------------------------------------------------------------ gymnasium-like


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

    async def reset(self, scenario: str | Path | ScenarioFile, seed: int | None = None, *, sample_index: int = 0, noise: NoiseArg = None) -> Observation:
        """Start an episode. `noise`: None = the config's (`EnvConfig.noise`), False = off, True =
        Gaia2's defaults, a dict of `NoiseConfig` fields or a `NoiseConfig` — for this episode."""
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

    def close(self) -> None:
        if self.episode is not None:
            self.episode.close()
            self.episode = None


def one_scenario(source: str | Path) -> ScenarioFile:
    """The one scenario a source names: a file, or `bundled[:CONFIG]/ID` / any source plus `/ID`."""
    path = Path(source)
    if path.is_file():
        return ScenarioFile(path)
    text = str(source)
    base, _, scenario_id = text.rpartition("/")
    if text.startswith(("bundled", "hf:")) and base:
        files = list(resolve([base], scenario_ids=[scenario_id]))
    else:
        files = list(resolve([text]))
    if len(files) != 1:
        raise OrchestraError(f"{source}: names {len(files)} scenarios; reset() takes one (a file, or SOURCE/SCENARIO_ID)")
    return files[0]


# ------------------------------------------------------------------ which scenarios

#: Gaia2's capabilities (`capability=`); `agent2agent` is Gaia2's mini set played by a team of app-agents.
CAPABILITIES = ("execution", "search", "adaptability", "ambiguity", "time", "agent2agent", "mini")
SOURCES = ("gaia2", "bundled", "are")


@dataclass(frozen=True)
class ScenarioFailure:
    """A scenario that could not be loaded, and why (never dropped silently)."""

    source: str
    reason: str


def select_scenarios(
    source: str,
    capability: str,
    *,
    split: str = "validation",
    scenario_split: str | None = None,
    num_examples: int = -1,
) -> tuple[list[ScenarioFile], list[ScenarioFailure]]:
    """The scenarios of one capability of a source (sorted, deterministic) and those that failed to load.

    * `gaia2`: the Hugging Face dataset from the local cache, config `capability` (`agent2agent`:
      `mini`), split `split`;
    * `bundled`: this repository's scenarios of that capability (`mini`: the seven starter
      scenarios; `agent2agent`: all of them, to be played by a team);
    * `are`: ARE's own registered demo scenarios, exported to JSON (all capabilities);
    * else a local file or folder (filtered by the capability tag unless `mini`/`agent2agent`).

    `scenario_split` (`<manifest>/<part>`, e.g. `bundled/train`) keeps the scenarios of one part of
    a frozen split (`scenarios/manifest.json`; `<manifest>` may also be a manifest file or its folder).
    Only each file's JSON is read here — no scenario is loaded into ARE (no oracle pre-run)."""
    from orchestra.errors import ScenarioError
    from orchestra.scenario_info import describe

    capability = capability.lower()
    if capability not in CAPABILITIES:
        raise OrchestraError(f"unknown capability {capability!r}; choose from {', '.join(CAPABILITIES)}")
    if isinstance(num_examples, bool) or not isinstance(num_examples, int) or num_examples == 0 or num_examples < -1:
        raise OrchestraError(f"num_examples={num_examples!r}: give -1 (all scenarios) or a positive count")
    failures: list[ScenarioFailure] = []
    tag_filter: str | None = None
    if source == "gaia2":
        sources = [f"hf:{'mini' if capability == 'agent2agent' else capability}/{split}"]
    elif source == "bundled":
        sources = ["bundled"] if capability in ("mini", "agent2agent") else [f"bundled:{capability}"]
    elif source == "are":
        files, failures = are_registered_scenarios()  # ARE's demo scenarios carry no capability tag: kept for every capability
        sources, tag_filter = [], None
    else:
        sources, tag_filter = [source], None if capability in ("mini", "agent2agent") else capability
    files = files if source == "are" else []
    for src in sources:
        try:
            files.extend(resolve([src]))
        except ScenarioError as exc:
            raise OrchestraError(str(exc)) from None
    keep = _split_members(scenario_split) if scenario_split else None
    chosen: list[ScenarioFile] = []
    for file in files:
        try:
            info = describe(file)
        except Exception as exc:  # unreadable JSON: reported, never dropped silently
            failures.append(ScenarioFailure(str(file.path), f"{type(exc).__name__}: {exc}"))
            continue
        if source == "bundled" and capability == "mini" and not info.scenario_id.startswith("starter_"):
            continue
        if tag_filter is not None and tag_filter not in {c.lower() for c in info.capabilities}:
            continue
        if keep is not None and info.scenario_id not in keep:
            continue
        chosen.append(file)
    if num_examples > 0:
        chosen = chosen[:num_examples]
    return chosen, failures


def _split_members(scenario_split: str) -> set[str]:
    name, _, part = scenario_split.rpartition("/")
    if not name or not part:
        raise OrchestraError(f"scenario_split {scenario_split!r}: expected <manifest>/<part>, e.g. bundled/train")
    from orchestra.scenario_files import MANIFEST_NAME, bundled_root

    path = bundled_root() / MANIFEST_NAME if name == "bundled" else Path(name)
    if path.is_dir():
        path = path / MANIFEST_NAME
    if not path.is_file():
        raise OrchestraError(f"scenario_split {scenario_split!r}: no manifest {path} (give bundled/<part>, or a manifest file or folder)")
    manifest = json.loads(path.read_text())
    parts = sorted({str(e.get("split")) for e in (manifest.get("scenarios") or {}).values()})
    if part not in parts:
        raise OrchestraError(f"scenario_split {scenario_split!r}: {path} has the parts {', '.join(parts)}")
    return {sid for sid, e in manifest["scenarios"].items() if e.get("split") == part}


def are_registered_scenarios() -> tuple[list[ScenarioFile], list[ScenarioFailure]]:
    """ARE's own registered (demo) scenarios as Gaia2 JSON, and those that could not be exported."""
    from orchestra.are.registered import registered_scenarios

    files, failed = registered_scenarios()
    return files, [ScenarioFailure(source, reason) for source, reason in failed]


# ------------------------------------------------------------------ batches


async def rollouts(
    specs: Iterable[RolloutSpec | tuple[RolloutSpec, ScenarioFile | None]],
    endpoint: str | ModelConfig,
    *,
    model: str | None = None,
    api_key: str | None = None,
    concurrency: int = 8,
    executor: str = "local",
    host: Host | None = None,
    judge_pool: JudgePool | None = None,
    workers: int | None = None,
    ray_address: str | None = None,
    preflight: bool = True,
    preflight_timeout: float = DEFAULT_TIMEOUT,
) -> AsyncIterator[RolloutRecord]:
    """Run a batch of specs against an OpenAI-compatible server, one record per spec as each finishes.

    Every agent of each spec whose model is the trainer's (`policy`, or any model when `model` is
    given) is pointed at `endpoint` (`http://host:port/v1`, or a whole `ModelConfig`); app-agents
    with models of their own keep them. Runs through the runner's executor seam: `executor`
    `local` (this event loop, `concurrency` rollouts at once), `process` or `ray` (`workers`
    processes or Ray actors, `concurrency` rollouts each; `ray_address` joins a Ray cluster, whose
    nodes must reach `endpoint`).

    `preflight` (the default) checks the batch first, as `orchestra run` does: an endpoint that
    refuses the connection or does not list its models within `preflight_timeout` seconds, a
    scenario file that cannot run, a model that does not resolve — `PreflightError`, one line,
    before any scenario loads (otherwise every model call of every rollout retries first)."""
    if isinstance(endpoint, ModelConfig):
        target = endpoint
    else:
        target = ModelConfig(model=f"openai/{model}" if model else "openai/policy", endpoint=endpoint, api_key=api_key or "none")
    batch = []
    for item in specs:
        spec, file = item if isinstance(item, tuple) else (item, None)
        batch.append((_pointed(spec, target, replace_any=model is not None or isinstance(endpoint, ModelConfig)), file))
    if preflight:
        host = host or Host.create()
        checked_host = host
        await anyio.to_thread.run_sync(lambda: check_batch(batch, checked_host, timeout=preflight_timeout))
    async for record in execute_all(
        batch, host=host, judge_pool=judge_pool, concurrency=concurrency, executor_name=executor, workers=workers, ray_address=ray_address
    ):
        yield record


def _pointed(spec: RolloutSpec, target: ModelConfig, *, replace_any: bool) -> RolloutSpec:
    """`spec` with the policy's model pointed at `target`: the main agent's (when `replace_any`, or
    when it is the `policy` label), and any app-agent's that is the `policy` label."""

    def point(settings: Any, *, main: bool) -> Any:
        current: ModelConfig | None = settings.model
        if current is None or not (current.model == POLICY_MODEL or (main and replace_any)):
            return settings
        return settings.model_copy(update={"model": target})

    if spec.team is not None:
        team = spec.team.map_agents(lambda s: point(s, main=False))
        return spec.model_copy(update={"team": team.model_copy(update={"main": point(spec.team.main, main=True)})})
    if spec.agent is not None:
        return spec.model_copy(update={"agent": point(spec.agent, main=True)})
    raise OrchestraError(f"{spec.scenario}: an oracle spec has no model to point at an endpoint")
