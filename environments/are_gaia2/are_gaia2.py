"""`are-gaia2`: Gaia2 (Meta's ARE 1.2.0) as a verifiers environment, on orchestra.

    vf-eval are-gaia2 -m MODEL -b BASE_URL -n 5 -r 1 -a '{"source": "bundled", "capability": "execution"}'
    verifiers.load_environment("are-gaia2", source="bundled", capability="time", time_scale=2.0)

A v0 `MultiTurnEnv` (verifiers 0.3.1). verifiers calls the model; `env_response` steps the
orchestra rollout this rollout holds (`orchestra.rl.Episode`, kept per rollout id, created in
`setup_state`, released by a cleanup handler — also when the rollout is cancelled or times out).
Each turn's prompt is exactly the request orchestra's agent loop makes (`get_prompt_messages`:
ARE's system prompt, notifications and tool results as ARE's agent would see them), and the
completion is applied through the same `Rollout.apply` that `orchestra run` uses: its usage moves
the token-metered clock (counted locally when the server reports none), app-agents of a team run
inside it, the judge gives the reward. The episode ends on the scaffold's termination rule, the
scenario's end or `max_turns` (a completion cut off by verifiers' own `max_turns` is still applied).

Only scenario JSON is read at load time (no scenario is loaded into ARE, so no rollout waits on
another scenario's oracle pre-run; each rollout loads its own in a worker thread). A scenario that
cannot be read is reported (`env.load_failures`, logged), one that ARE cannot load fails its own
rollout with the reason (`state["error"]`, `state["orchestra"]["error"]`) — none is dropped silently.
`state["orchestra"]` carries the judge's rationale, simulated seconds, per-agent ledgers and the
event-log hash (logged by trainers; `vf-eval -C orchestra` saves it).
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

import verifiers as vf
from datasets import Dataset
from pydantic import ValidationError
from verifiers.types import Messages, State
from verifiers.utils.message_utils import normalize_messages

from orchestra.clock import ClockConfig
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.judging.settings import JudgeConfig
from orchestra.rl import MAX_TURNS_STOP, EnvConfig, Episode, noise_config, record_info
from orchestra.rl.selection import CAPABILITIES, ScenarioFailure, select_scenarios
from orchestra.rollout import describe
from orchestra.scenario_files import ScenarioFile
from orchestra.teams.config import TeamConfig
from orchestra.teams.loading import TeamError, load_team, team_path

__all__ = ["AreGaia2Env", "load_environment"]

logger = logging.getLogger("are_gaia2")

JUDGE_MODES = ("scripted", "strict", "llm")
REWARD_MODES = ("binary", "dense")
#: The LLM judge's model and endpoint (`judge_mode="llm"`), read from the environment: the argument
#: table has no judge-model argument.
JUDGE_MODEL_ENV, JUDGE_ENDPOINT_ENV = "ORCHESTRA_JUDGE_MODEL", "ORCHESTRA_JUDGE_ENDPOINT"


def load_environment(
    source: str = "gaia2",
    capability: str = "execution",
    split: str = "validation",
    judge_mode: str = "scripted",
    max_scenario_duration: float | None = None,
    num_examples: int = -1,
    decode_rate_tps: float = 50.0,
    prefill_rate_tps: float = 5000.0,
    tool_call_seconds: float = 2.0,
    time_scale: float = 1.0,
    max_turns: int = 20,
    reward_mode: str = "binary",
    scenario_split: str | None = None,
    scaffold: str = "tool_calling",
    team: str | None = None,
    noise: Any = None,
    **unknown: Any,
) -> AreGaia2Env:
    """The `are-gaia2` environment (arguments: README "RL: are-gaia2" / docs/rl.md).

    `source`: "gaia2" (the HF dataset from the local cache), "bundled", "are" (ARE's registered
    demo scenarios) or a local path; `capability`: execution, search, adaptability, ambiguity,
    time, agent2agent, mini; `split`: the HF split; `judge_mode`: scripted, strict or llm (model
    from $ORCHESTRA_JUDGE_MODEL); `max_scenario_duration`: the simulated time budget (s);
    `num_examples`: -1 = all; the clock: `decode_rate_tps`, `prefill_rate_tps`,
    `tool_call_seconds`, `time_scale` (> 1 = tighter deadlines); `max_turns`: completions per
    rollout; `reward_mode`: binary or dense (partial credit in [0, 0.8]); `scenario_split`: a
    frozen split, `bundled/train` or `bundled/heldout`; `scaffold`: tool_calling, react or code
    (ARE's code-agent text, its ```py block run in orchestra's sandbox); `team`: a team file (or
    shipped team name) whose app-agents the environment serves with their own models while the
    policy plays the main agent; `noise`: Gaia2's noise — False/None off, True Gaia2's defaults,
    a dict of `orchestra.config.NoiseConfig` fields.

    Every bad argument is a `ValueError` naming the argument, its value and what is accepted
    (`**unknown` only catches a misspelt argument, to name it with the closest real one)."""
    if unknown:
        raise ValueError(_unknown_arguments(sorted(unknown)))
    try:
        noise_settings = noise_config(noise, where="are-gaia2: noise")
    except OrchestraError as exc:
        raise ValueError(str(exc)) from None
    for name, value in (("source", source), ("capability", capability), ("split", split), ("scaffold", scaffold)):
        if not isinstance(value, str) or not value:
            raise ValueError(f"are-gaia2: {name}={value!r}: expected a non-empty string")
    if judge_mode not in JUDGE_MODES:
        raise ValueError(f"judge_mode={judge_mode!r}: choose from {', '.join(JUDGE_MODES)}")
    if reward_mode not in REWARD_MODES:
        raise ValueError(f"reward_mode={reward_mode!r}: choose from {', '.join(REWARD_MODES)}")
    if capability.lower() not in CAPABILITIES:
        raise ValueError(f"capability={capability!r}: choose from {', '.join(CAPABILITIES)}")
    host = Host.create()
    if scaffold not in host.scaffolds:
        raise ValueError(f"scaffold={scaffold!r} is not registered; registered: {', '.join(sorted(host.scaffolds))}")
    team_config = _team(team) if team is not None else None
    if capability.lower() == "agent2agent" and team_config is None:
        raise ValueError("capability='agent2agent' is played by a team: give team= (a team file with app_agents; offline: 'oracle')")
    judge = JudgeConfig(
        mode=judge_mode,
        model=os.environ.get(JUDGE_MODEL_ENV) if judge_mode == "llm" else None,
        endpoint=os.environ.get(JUDGE_ENDPOINT_ENV) if judge_mode == "llm" else None,
    )
    try:
        clock = ClockConfig(decode_rate_tps=decode_rate_tps, prefill_rate_tps=prefill_rate_tps, tool_call_seconds=tool_call_seconds, time_scale=time_scale)
        config = EnvConfig(
            scaffold=scaffold,
            team=team_config,
            judge=judge,
            reward_mode=reward_mode,  # type: ignore[arg-type]
            clock=clock,
            duration=max_scenario_duration,
            max_turns=max_turns,
            noise=noise_settings,
        )
    except ValidationError as exc:
        raise ValueError(_argument_errors(exc)) from None
    try:
        files, failures = select_scenarios(source, capability, split=split, scenario_split=scenario_split, num_examples=num_examples)
    except OrchestraError as exc:
        raise ValueError(str(exc)) from None
    for failure in failures:
        logger.warning("are-gaia2: scenario %s failed to load: %s", failure.source, failure.reason)
    if not files:
        reasons = "; ".join(f"{f.source}: {f.reason}" for f in failures) or "no scenario matches"
        raise ValueError(f"are-gaia2: no scenarios for source={source!r} capability={capability!r} ({reasons})")
    return AreGaia2Env(files=files, config=config, host=host, failures=failures)


#: EnvConfig's fields under the names `load_environment` takes.
_ARGUMENT_NAMES = {"duration": "max_scenario_duration"}


def _unknown_arguments(names: list[str]) -> str:
    import difflib
    import inspect

    known = [p for p in inspect.signature(load_environment).parameters if p != "unknown"]
    hints = []
    for name in names:
        close = difflib.get_close_matches(name, known, n=1)
        hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return f"are-gaia2: unknown argument(s) {', '.join(hints)}; the arguments are {', '.join(known)}"


def _argument_errors(exc: ValidationError) -> str:
    """A pydantic error about the clock or EnvConfig, one line, in `load_environment`'s argument names."""
    problems = []
    for error in exc.errors():
        field = str(error["loc"][-1]) if error["loc"] else "?"
        problems.append(f"{_ARGUMENT_NAMES.get(field, field)}={error.get('input')!r}: {error['msg']}")
    return "are-gaia2: " + "; ".join(problems)


def _team(team: Any) -> TeamConfig:
    """The team file `team` names (a path or a shipped team's name), or a ValueError naming its problems."""
    if not isinstance(team, str | os.PathLike) or not str(team):
        raise ValueError(f"are-gaia2: team={team!r}: give a team file's path or a shipped team's name")
    try:
        return load_team(team_path(str(team)))
    except TeamError as exc:
        raise ValueError(f"are-gaia2: team={str(team)!r}: {'; '.join(exc.problems)}") from None


def _rows(files: list[ScenarioFile]) -> list[dict[str, Any]]:
    from orchestra.scenario_info import describe

    rows = []
    for i, file in enumerate(files):
        info = describe(file)
        rows.append(
            {
                "example_id": i,
                # A placeholder: each rollout's real prompt is the first request of its orchestra agent
                # (ARE's system prompt and the user's task), set in setup_state.
                "prompt": [{"role": "user", "content": f"Gaia2 scenario {info.scenario_id}"}],
                "answer": "",
                "info": {
                    "scenario": str(file.path),
                    "scenario_id": info.scenario_id,
                    "capabilities": info.capabilities,
                    "turns": info.turns,
                    "split": info.split or "",
                },
            }
        )
    return rows


class AreGaia2Env(vf.MultiTurnEnv):
    """Gaia2 scenarios; each rollout steps one orchestra `Episode`."""

    def __init__(
        self, *, files: list[ScenarioFile], config: EnvConfig, host: Host | None = None, failures: list[ScenarioFailure] | None = None, **kwargs: Any
    ) -> None:
        self.files = {str(f.path): f for f in files}
        self.config = config
        self.host = host or Host.create()
        #: Scenarios whose JSON could not be read at load time, with the reason.
        self.load_failures = list(failures or [])
        #: The episode of each running rollout, by its trajectory id (state holds plain data only).
        self._episodes: dict[str, Episode] = {}
        dataset = Dataset.from_list(_rows(files))
        rubric = vf.Rubric(funcs=[self.gaia2_reward], weights=[1.0])
        for metric in (self.success, self.sim_seconds, self.delegations):
            rubric.add_metric(metric)
        super().__init__(dataset=dataset, eval_dataset=dataset, rubric=rubric, max_turns=config.max_turns, **kwargs)

    # ------------------------------------------------------------------ per rollout
    def episode(self, state: State) -> Episode | None:
        return self._episodes.get(state["trajectory_id"])

    async def setup_state(self, state: State) -> State:
        key = state["info"]["scenario"]
        file = self.files.get(key)
        if file is None:
            raise vf.InfraError(f"are-gaia2: unknown scenario {key!r} (not in this environment's dataset)")
        spec = self.config.spec(file.path, model=str(state["model"]))
        try:
            episode = await Episode.open(spec, host=self.host, file=file, max_turns=self.config.max_turns)
        except Exception as exc:  # ARE cannot load it: this rollout fails with the reason (the others go on)
            reason = describe(exc, file)
            state["orchestra"] = {"scenario_id": state["info"].get("scenario_id"), "error": reason, "reward": 0.0, "success": False}
            raise vf.InfraError(f"are-gaia2: {reason}") from None
        self._episodes[state["trajectory_id"]] = episode
        if episode.request is None:  # nothing to ask (the scenario ended at once)
            state["final_env_response"] = []
        else:
            self._show(state, episode)
            state["prompt"] = normalize_messages(episode.request.messages, field_name="prompt")
        state["orchestra"] = episode.info()
        return state

    def _show(self, state: State, episode: Episode) -> None:
        """The pending request's tools and options on the next model call."""
        request = episode.request
        assert request is not None
        tools = [t["function"] for t in request.tools or []]
        state["tool_defs"] = (
            self._normalize_tool_defs([{"name": t["name"], "description": t.get("description") or "", "parameters": t.get("parameters") or {}} for t in tools])
            or []
        )
        extra = {k: v for k, v in (("stop", request.stop), ("response_format", request.response_format)) if v is not None}
        if tools:
            extra.update({k: v for k, v in (("tool_choice", request.tool_choice), ("parallel_tool_calls", request.parallel_tool_calls)) if v is not None})
        if extra:
            state["sampling_args"] = {**(state.get("sampling_args") or {}), **extra}

    async def get_prompt_messages(self, state: State) -> Messages:
        """The prompt of each turn is orchestra's request (its agent loop's view, as `orchestra run`'s)."""
        if not state["trajectory"]:
            return state["prompt"]
        last = state["trajectory"][-1]
        messages = [*last["prompt"], *last["completion"]]
        new = await self.env_response(messages, state)
        episode = self.episode(state)
        if state.get("final_env_response") is not None or episode is None or episode.request is None:
            return [*messages, *new]
        return normalize_messages(episode.request.messages, field_name="prompt")

    async def env_response(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        """Apply the policy's last completion to the orchestra rollout; the new messages of its next
        request (tool results, notifications), or `final_env_response` once the episode is done."""
        episode = self.episode(state)
        if episode is None or episode.done:
            state["final_env_response"] = []
            return []
        await self._apply_last(state, episode)
        if episode.done:
            state["final_env_response"] = []
            return []
        assert episode.request is not None
        self._show(state, episode)
        prompt_len = len(state["trajectory"][-1]["prompt"])
        return normalize_messages(episode.request.messages[prompt_len + 1 :], field_name="env_response")

    async def _apply_last(self, state: State, episode: Episode) -> None:
        last = state["trajectory"][-1]
        completion = last["completion"][-1] if last["completion"] else {"role": "assistant", "content": ""}
        response = last.get("response")
        usage = getattr(response, "usage", None)
        message = completion.model_dump() if hasattr(completion, "model_dump") else dict(completion)
        await episode.step(message, usage=usage.model_dump() if usage is not None else None)
        state["orchestra"] = episode.info()

    @vf.cleanup(priority=200)  # before verifiers renders the completion
    async def finish_episode(self, state: State) -> None:
        """Judge the episode and release it (ARE environment, judge) — on every path: the end,
        verifiers' `max_turns` (the last completion is still applied), errors, timeouts, cancellation."""
        episode = self._episodes.pop(state["trajectory_id"], None)
        if episode is None:
            return
        try:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                state["orchestra"] = {**episode.info(), "error": "cancelled"}
                return
            if not episode.done and state.get("error") is None and len(state["trajectory"]) > episode.turns:
                await self._apply_last(state, episode)
            if not episode.done:
                reason = MAX_TURNS_STOP if state.get("stop_condition") == "max_turns_reached" else str(state.get("stop_condition") or "stopped")
                episode.finish(stop_reason=reason)
            assert episode.record is not None
            state["orchestra"] = record_info(episode.record)
        finally:
            episode.close()

    @vf.teardown
    async def release_all(self) -> None:
        for episode in self._episodes.values():
            episode.close()
        self._episodes.clear()

    # ------------------------------------------------------------------ reward and metrics
    async def gaia2_reward(self, state: State) -> float:
        """The configured judge's reward (binary, or dense partial credit); 0.0 for a failed rollout."""
        return float((state.get("orchestra") or {}).get("reward") or 0.0)

    async def success(self, state: State) -> float:
        return 1.0 if (state.get("orchestra") or {}).get("success") else 0.0

    async def sim_seconds(self, state: State) -> float:
        return float((state.get("orchestra") or {}).get("sim_seconds") or 0.0)

    async def delegations(self, state: State) -> float:
        return float(len((state.get("orchestra") or {}).get("delegations") or []))
