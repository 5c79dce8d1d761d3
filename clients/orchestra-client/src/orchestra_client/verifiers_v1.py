"""A verifiers **v1** environment (verifiers 0.4: `vf-eval`, prime-rl) over `orchestra serve`.

Gaia2 scenarios are played in orchestra's own venv behind `orchestra serve`; this module lives in the
trainer's venv (verifiers 0.4 pins mcp 2 and openai 2, which ARE's pins exclude) and never imports ARE.
vf-eval loads it by its taskset id through the tiny loader package `orchestra-gaia2`
(`clients/orchestra-gaia2`, module `orchestra_gaia2`), because v1's loader imports `<id>` as a top-level
module (`verifiers/v1/utils/loaders.py`, `_import_plugin`):

    vf-eval orchestra-gaia2 -m orchestra/oracle --client.base-url http://127.0.0.1:8765/v1 \\
        --env.taskset.server http://127.0.0.1:8765 \\
        --env.taskset.scenarios '["bundled:execution/starter_execution_calendar"]' --no-push --no-rich

One task = one scenario; one rollout = one orchestra session in **step mode**:

* `OrchestraTask.setup` opens the session (`POST /sessions`); its first observation is orchestra's
  scaffold's model request (system prompt, the user's task, the scenario's ARE tools).
* `OrchestraStepHarness` is the policy loop, in process: it sends each observation's request to the
  rollout's model through verifiers' interception endpoint (so the trace records every turn and the
  trainer's client answers it), with the header `X-Orchestra-Session`, and hands the whole
  `chat.completion` back to `POST /sessions/{id}/step`; orchestra runs the tool calls, charges its
  token-metered clock from the completion's usage, fires the scenario's events and answers with the next
  request, until `done`.
* `OrchestraTask.finalize` judges (`POST /sessions/{id}/finish`, ARE's judge, idempotent) and closes the
  session; the reward `gaia2` is orchestra's reward (1.0 / 0.0 with ARE's scripted judge).

Where the model comes from: vf-eval's model client answers each turn. Point it at the server's proxy
(`--client.base-url http://HOST:PORT/v1`) and the session's own model answers: `-m orchestra/oracle` (the
scenario's oracle actions), `-m orchestra/scripted:/abs/file.json`, or `--env.taskset.proxy-model NAME`
(any orchestra model name). Point it at a trainer's inference server instead and the policy under training
answers; orchestra then only steps the scenario.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from typing import Any, cast

import httpx
import verifiers.v1 as vf
from pydantic import Field

from orchestra_client.client import AsyncOrchestraClient, OrchestraClient, ServeError

SESSION_HEADER = "X-Orchestra-Session"
DEFAULT_SERVER = "http://127.0.0.1:8765"
# The fields of orchestra's observation that are part of an OpenAI chat request (the rest, e.g.
# `action_format`, describe the scaffold to a client and are not sent to the model).
REQUEST_FIELDS = ("messages", "tools", "tool_choice", "parallel_tool_calls", "stop", "response_format")

__all__ = [
    "OrchestraEnv",
    "OrchestraEnvConfig",
    "OrchestraHarnessConfig",
    "OrchestraState",
    "OrchestraStepHarness",
    "OrchestraTask",
    "OrchestraTaskData",
    "OrchestraTaskset",
    "OrchestraTasksetConfig",
]


class OrchestraTasksetConfig(vf.TasksetConfig):
    """`--env.taskset.*`: which server, which scenarios, and the session options."""

    server: str = Field(default_factory=lambda: os.environ.get("ORCHESTRA_SERVE_URL", DEFAULT_SERVER))
    """The `orchestra serve` base URL (default: $ORCHESTRA_SERVE_URL, else http://127.0.0.1:8765)."""
    api_key_var: str = "ORCHESTRA_API_KEY"
    """Environment variable holding the server's `--api-key` (unset: no key is sent)."""
    source: str = "bundled"
    """`GET /tasks?source=` when `scenarios` is empty: `bundled`, `bundled:CONFIG`, a folder, ..."""
    scenarios: list[str] = Field(default_factory=list)
    """Scenario references (`bundled:CONFIG/ID`, `bundled/ID`, a path); empty: every task of `source`."""
    proxy_model: str | None = None
    """The session's own model (`POST /sessions` `model`), answering when vf-eval's client points at the
    server's proxy. Unset: vf-eval's `-m` when it names an orchestra model (`orchestra/...`), else none."""
    scaffold: str = "tool_calling"
    max_turns: int = 20
    seed: int | None = None
    noise: str | None = None
    judge: str | None = None


class OrchestraTaskData(vf.TaskData):
    """One scenario; `session` is the rest of the `POST /sessions` body (recorded on the trace)."""

    scenario: str
    capability: str | None = None
    server: str = DEFAULT_SERVER
    api_key_var: str = "ORCHESTRA_API_KEY"
    proxy_model: str | None = None
    session: dict[str, Any] = Field(default_factory=dict)


class OrchestraState(vf.State):
    """The rollout's session, shared by the task (open, judge, close) and the harness (the loop)."""

    session_id: str | None = None
    observation: dict[str, Any] | None = None
    done: bool = False
    turns: int = 0
    reward: float | None = None
    success: bool | None = None
    info: dict[str, Any] = Field(default_factory=dict)


def _api_key(data: OrchestraTaskData) -> str | None:
    return os.environ.get(data.api_key_var) or None


def _session_model(data: OrchestraTaskData, model: str | None) -> str | None:
    if data.proxy_model:
        return data.proxy_model
    if model and model.startswith("orchestra/"):
        return model
    return None


class OrchestraTask(vf.Task[OrchestraTaskData, OrchestraState, vf.TaskConfig]):
    @property
    def key(self) -> str:
        # The scenario and the session options identify a task; the server's address does not.
        blob = json.dumps({"scenario": self.data.scenario, "session": self.data.session}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    async def setup(self, trace: vf.Trace) -> None:
        data = self.data
        agent_model = trace.agent.config.model if trace.agent is not None else None
        fields: dict[str, Any] = {"mode": "step", **data.session}
        model = _session_model(data, agent_model)
        if model is not None:
            fields["model"] = model
        async with AsyncOrchestraClient(data.server, api_key=_api_key(data)) as client:
            session = await client.create_session(data.scenario, **fields)
        state: OrchestraState = trace.state
        state.session_id = session["session_id"]
        state.observation = session.get("observation")
        state.done = bool(session.get("done"))
        trace.info["orchestra_session"] = state.session_id
        trace.info["orchestra_scenario_id"] = session.get("scenario_id")

    async def finalize(self, trace: vf.Trace) -> None:
        state: OrchestraState = trace.state
        if state.session_id is None:
            return
        data = self.data
        async with AsyncOrchestraClient(data.server, api_key=_api_key(data)) as client:
            try:
                result = await client.finish(state.session_id)
            finally:
                try:
                    await client.delete(state.session_id)
                except ServeError as exc:
                    if exc.status != 404:
                        raise
        state.reward = float(result["reward"]) if result.get("reward") is not None else None
        state.success = result.get("success")
        state.info = dict(result.get("info") or {})
        trace.info["orchestra"] = {"reward": state.reward, "success": state.success, **state.info}

    @vf.reward
    async def gaia2(self, trace: vf.Trace) -> float:
        """orchestra's reward for the session (ARE's judge); a session never judged is an error, not 0."""
        state: OrchestraState = trace.state
        if state.reward is None:
            raise RuntimeError(f"session {state.session_id} of {self.data.scenario} has no reward (not judged)")
        return state.reward

    @vf.metric
    async def success(self, trace: vf.Trace) -> float:
        state: OrchestraState = trace.state
        return float(bool(state.success))

    @vf.metric
    async def orchestra_turns(self, trace: vf.Trace) -> float:
        return float(trace.state.turns)

    @vf.metric
    async def sim_seconds(self, trace: vf.Trace) -> float:
        value = trace.state.info.get("sim_seconds")
        return float(value) if isinstance(value, (int, float)) else 0.0


class OrchestraTaskset(vf.Taskset[OrchestraTask, OrchestraTasksetConfig]):
    def load(self) -> Iterator[OrchestraTask]:
        config = self.config
        key = os.environ.get(config.api_key_var) or None
        if config.scenarios:
            tasks = [{"id": ref} for ref in config.scenarios]
        else:
            with OrchestraClient(config.server, api_key=key) as client:
                tasks = client.tasks(config.source)
        session = {
            name: value
            for name, value in {
                "scaffold": config.scaffold,
                "max_turns": config.max_turns,
                "seed": config.seed,
                "noise": config.noise,
                "judge": config.judge,
            }.items()
            if value is not None
        }
        for task in tasks:
            ref = task["id"]
            yield OrchestraTask(
                OrchestraTaskData(
                    id=ref,
                    name=task.get("scenario_id") or ref,
                    # v1 needs a prompt to open a rollout; the model's real first request is the session's
                    # observation (orchestra's scaffold prompt and the scenario's task).
                    prompt=f"Gaia2 scenario {ref}, played through orchestra serve",
                    scenario=ref,
                    capability=task.get("capability") or ",".join(task.get("capabilities") or []) or None,
                    server=config.server,
                    api_key_var=config.api_key_var,
                    proxy_model=config.proxy_model,
                    session=session,
                ),
                config.task,
            )


class OrchestraHarnessConfig(vf.HarnessConfig):
    request_timeout: float = 600.0
    """Seconds for one model turn (through the interception server) or one `/step`."""


class OrchestraStepHarness(vf.Harness[OrchestraHarnessConfig]):
    """orchestra's scaffold, remote: each model request is orchestra's; each answer goes to `/step`.

    Runs in process (v1 allows it when every model call goes through `endpoint` + `secret`,
    `verifiers/v1/harness.py` `launch` docstring); needs no container and executes no code itself
    (tools run inside orchestra's session)."""

    NEEDS_CONTAINER = False
    EXECUTES_CODE = False
    SUPPORTS_MCP = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        **_: Any,
    ) -> vf.ProgramResult:
        state: OrchestraState = trace.state
        task = cast(OrchestraTaskData, trace.task.data)
        if state.session_id is None:
            return vf.ProgramResult(exit_code=1, stdout="", stderr="no orchestra session (task setup did not run)")
        sid = state.session_id
        url = endpoint.rstrip("/") + "/chat/completions"
        headers = {"Authorization": f"Bearer {secret}", SESSION_HEADER: sid}
        timeout = httpx.Timeout(self.config.request_timeout, connect=30.0)
        async with (
            httpx.AsyncClient(timeout=timeout) as http,
            AsyncOrchestraClient(task.server, api_key=_api_key(task), timeout=timeout) as orchestra,
        ):
            while not state.done and state.observation is not None:
                body = {k: state.observation[k] for k in REQUEST_FIELDS if state.observation.get(k) is not None}
                response = await http.post(url, json=body, headers=headers)
                if response.status_code >= 400:
                    # A vf `@stop`/turn cap refuses with 400 and sets trace.stop_condition (an expected end);
                    # anything else is the harness failing with the upstream's message.
                    return vf.ProgramResult(
                        exit_code=0 if trace.stop_condition is not None else 1,
                        stdout="",
                        stderr=f"model turn {state.turns + 1} of session {sid}: HTTP {response.status_code}: {response.text[:2000]}",
                    )
                completion = response.json()
                try:
                    step = await orchestra.step(sid, completion)
                except ServeError as exc:
                    return vf.ProgramResult(exit_code=1, stdout="", stderr=str(exc))
                state.turns += 1
                state.observation = step.get("observation")
                state.done = bool(step.get("done"))
                if step.get("reward") is not None:
                    state.reward = float(step["reward"])
        return vf.ProgramResult(exit_code=0, stdout=f"session {sid}: {state.turns} turn(s), done={state.done}", stderr="")


class OrchestraEnvConfig(vf.EnvConfig):
    """The single seat, on the local subprocess runtime by default (the harness runs in process and
    needs no box; v1's default runtime is Prime's cloud)."""

    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class OrchestraEnv(vf.Env[OrchestraEnvConfig]):
    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        await agents.agent.run(task)
