"""Preflight: everything a batch needs, checked once before its first rollout.

A setup mistake found per scenario, late, costs a scenario load (seconds) and a row of identical
errors each; found here it costs one line and exit status 2 before anything runs:

* every scenario file passes the checks that need no ARE import (a JSON object of ARE's version,
  a definition, apps, the user's contact: `orchestra.are.loading.precheck_scenario_json`; at
  least one oracle event, or there is nothing to judge against), and no two files share a scenario id (`shared_ids`: both paths named);
* every model of every agent (a team's app-agents and per-app overrides included) and the LLM
  judge's model resolves: its `${VAR}` references are set; a provider registered by a plugin
  (`orchestra/...`) checks the model itself (the scripted model's file exists and parses), through
  the handler's optional `preflight(model)` method; any other provider is known to litellm;
* an endpoint answers, checked *first* (before litellm's seconds of import): the server's model
  listing (`GET {endpoint}/models`, free) — a connection refused, a DNS failure or a timeout
  (`timeout` seconds) fails the batch at once, never retried; an authentication error (401/403)
  too. Then one real minimal request (`max_tokens` 1: a token or two) to the endpoint, as the run
  will send it: an HTTP error (500, 404 for a model the server lacks), a body that is not JSON or a
  reply without `choices` fails the batch here, in a second, not after minutes of retries per
  step. An OpenAI-wire provider (`openai/`, `hosted_vllm/`) is asked with httpx, before litellm is
  imported; any other provider through `orchestra.models.complete`, without retries.
* every remote A2A agent (`a2a:`, `--agent a2a:URL`) answers its agent card
  (`URL/.well-known/agent-card.json`, within its `connect_timeout_seconds`), and `a2a-sdk` is installed.
* A hosted provider (no endpoint) needs its API key (litellm's `validate_environment`); no request
  is sent to it (it would cost money).

`endpoint_health` is the same endpoint check as a function of a finished rollout: the batch loop
asks it after an `ERROR` (`orchestra.runs.batch.BatchRun.run`'s `health`), so a server that died
mid-run stops the batch at once instead of failing every remaining rollout.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestra.a2a.config import A2AConfig
from orchestra.errors import OrchestraError, ScenarioError
from orchestra.host import Host
from orchestra.judging import script as judge_script
from orchestra.models import ModelConfig, ModelError, ModelSetupError, expand_env, import_litellm
from orchestra.scenario_files import ScenarioFile
from orchestra.spec import RolloutSpec

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.record import RolloutRecord

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.judging.settings import JudgeConfig

__all__ = ["PassedChecks", "PreflightError", "check_judge", "endpoint_health", "models_of", "preflight", "shared_ids"]

log = logging.getLogger(__name__)

#: Seconds an endpoint has to answer its model listing.
DEFAULT_TIMEOUT = 2.0
#: Seconds the one-token test request may take at least (a model server's first answer can be slow:
#: prompt processing on a busy CPU); `--preflight-timeout` raises it, never lowers it below this.
PROBE_TIMEOUT = 30.0
#: Providers whose endpoint speaks OpenAI's chat wire (`POST {endpoint}/chat/completions`, the model
#: name without its provider): their test request needs no litellm.
OPENAI_WIRE = ("openai", "hosted_vllm")
#: The class of the scenario's events the judge compares the agent's against (ARE's `OracleEvent`).
ORACLE_EVENT = "OracleEvent"
#: The test request: the smallest the run's requests look like.
PROBE_MESSAGES = [{"role": "user", "content": "Reply with OK."}]


class PreflightError(OrchestraError):
    """A batch that cannot run as configured (the first problem found, in one line; bad scenario
    files: all of them, one line each)."""


@dataclass(frozen=True)
class ModelUse:
    """One model an agent (or the judge) of the batch calls."""

    model: str
    endpoint: str | None
    api_key: str | None
    extra: tuple[tuple[str, str], ...] = ()
    who: str = "agent"


def models_of(spec: RolloutSpec) -> list[ModelUse]:
    """Every model the spec's agents may call (main, app-agent defaults, per-app overrides) and the LLM judge's."""
    found: list[tuple[str, ModelConfig]] = []
    if spec.team is not None:

        def collect(settings: Any) -> Any:
            if settings.model is not None:
                found.append((f"team {spec.team.name!r}" if spec.team else "team", settings.model))
            return settings

        spec.team.map_agents(collect)
    elif spec.agent is not None:
        found.append(("agent", spec.agent.model))
    uses = [ModelUse(m.model, m.endpoint, m.api_key, tuple(sorted((k, str(v)) for k, v in m.extra.items())), who) for who, m in found]
    judge = spec.session.judge
    if judge.mode == "llm" and judge.model:
        uses.append(ModelUse(judge.model, judge.endpoint, judge.api_key, who="judge"))
    return uses


class PassedChecks:
    """The checks a process already passed (`preflight(..., passed=)`): a scenario file by its bytes, a
    model by (model, endpoint, key, extra). A trainer that runs a batch per training step
    (`orchestra.rl.batches.rollouts`) checks each file and endpoint once, not at every step — each
    check of an endpoint is a request to it, and a wait of one model call before the step starts.
    A server that dies later fails the rollouts' calls instead (their retries, then `ERROR`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._passed: set[tuple[Any, ...]] = set()

    def __contains__(self, key: tuple[Any, ...]) -> bool:
        with self._lock:
            return key in self._passed

    def add(self, key: tuple[Any, ...]) -> None:
        with self._lock:
            self._passed.add(key)

    def clear(self) -> None:
        with self._lock:
            self._passed.clear()


def preflight(
    batch: Sequence[tuple[RolloutSpec, ScenarioFile | None]],
    host: Host,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    team_file: str | None = None,
    passed: PassedChecks | None = None,
) -> None:
    """Check the batch (see the module doc); raise `PreflightError` with the first problem, or
    with every bad scenario file at once (one line each, then their count). `team_file`: the file
    the batch's team came from (`--team`), named with the team's fields in the problems. `passed`:
    checks already passed are skipped, and the ones passed now are added (see `PassedChecks`)."""
    seen_files: set[str] = set()
    bad: list[str] = []
    checked: list[tuple[Any, ...]] = []
    for spec, file in batch:
        file = file or ScenarioFile(spec.scenario)
        key = str(file.path)
        if key in seen_files:
            continue
        seen_files.add(key)
        if passed is not None:
            known = ("file", key, hashlib.sha256(file.text.encode()).hexdigest())
            if known in passed:
                continue
            checked.append(known)
        problem = _scenario_problem(file)
        if problem is not None:
            bad.append(problem)
    if len(bad) == 1:
        raise PreflightError(f"preflight: {bad[0]}")
    if bad:
        raise PreflightError("\n".join([f"preflight: {line}" for line in bad] + [f"preflight: {len(bad)} bad scenario files"]))
    shared = shared_ids(batch)
    if shared:
        raise PreflightError("\n".join(f"preflight: {line}" for line in shared))
    agents: dict[str, tuple[str, A2AConfig]] = {}
    for spec, _ in batch:
        for who, a2a in _a2a_agents(spec, team_file):
            agents.setdefault(a2a.url, (who, a2a))
    if agents:
        from orchestra.a2a.client import check_card

        for who, a2a in agents.values():
            try:
                check_card(a2a, who)
            except OrchestraError as exc:
                raise PreflightError(f"preflight: {exc}") from None
    seen: set[tuple[str, str | None, str | None, tuple[tuple[str, str], ...]]] = set()
    for use in (u for spec, _ in batch for u in models_of(spec)):
        called = (use.model, use.endpoint, use.api_key, use.extra)  # one check (one test request) per model and endpoint, whoever calls it
        if called in seen or (passed is not None and ("model", *called) in passed):
            continue
        seen.add(called)
        check_model(use, host, timeout=timeout)
        if passed is not None:
            passed.add(("model", *called))
    if passed is not None:
        for known in checked:
            passed.add(known)


def _a2a_agents(spec: RolloutSpec, team_file: str | None = None) -> list[tuple[str, A2AConfig]]:
    """The remote A2A agents a spec may call: (who, config); a team's named by their field (`main`,
    `app_agents.overrides.Calendar`), in `team_file` when given."""
    if spec.team is not None:
        where = f" in {team_file}" if team_file is not None else f" of team {spec.team.name!r}"
        return [
            (f"the main agent, main{where}" if label == "main" else f"{label}{where}", s.a2a) for label, s in spec.team.agent_settings() if s.a2a is not None
        ]
    if spec.agent is not None and spec.agent.a2a is not None:
        return [("the agent under test", spec.agent.a2a)]
    return []


def _scenario_id(file: ScenarioFile) -> str:
    from orchestra.scenario_info import describe

    try:
        return describe(file).scenario_id
    except OrchestraError:
        return file.stem


def shared_ids(batch: Sequence[tuple[RolloutSpec, ScenarioFile | None]]) -> list[str]:
    """One line per scenario id that two or more files of the batch share (Gaia2's `mini` reuses the
    ids of the other configs): their rollouts would be one name (`rollouts/NAME.json`, `orchestra show`,
    the report's links) and one scenario of pass@1, counted twice. Empty when every id is one file's."""
    paths: dict[str, list[str]] = {}
    for spec, file in batch:
        file = file or ScenarioFile(spec.scenario)
        found = paths.setdefault(_scenario_id(file), [])
        if spec.scenario not in found:
            found.append(spec.scenario)
    return [
        f"scenario id {sid!r} is in {len(files)} files of the batch: {' and '.join(files)}; their rollouts would overwrite each other "
        f"(rollouts/{sid}.json) and count twice in pass@1: run one of them (give one file, or a narrower source)"
        for sid, files in paths.items()
        if len(files) > 1
    ]


def check_judge(judge: JudgeConfig, host: Host, *, timeout: float = DEFAULT_TIMEOUT) -> None:
    """The LLM judge's model alone (`replay`, `judge-check`: the oracle calls no model): resolvable,
    its endpoint answering — a dead judge endpoint fails the command at once, naming it."""
    if judge.mode == "llm" and judge.model:
        check_model(ModelUse(judge.model, judge.endpoint, judge.api_key, who="judge"), host, timeout=timeout)


def _scenario_problem(file: ScenarioFile) -> str | None:
    """What is wrong with the scenario file, in one line (None: nothing the precheck finds)."""
    from orchestra.are.loading import precheck_scenario_json

    try:
        raw = precheck_scenario_json(file.text, file.path)
    except ScenarioError as exc:
        return str(exc)
    events = raw.get("events")
    if not isinstance(events, list) or not any(isinstance(e, dict) and e.get("class_name") == ORACLE_EVENT for e in events):
        # ARE's loader finds this only after loading and initializing the scenario (18-21 s a rollout)
        return str(ScenarioError(file.path, "the scenario has no oracle events: there is nothing to judge against"))
    return None


def check_model(use: ModelUse, host: Host, *, timeout: float = DEFAULT_TIMEOUT) -> None:
    """One model: resolvable, and its endpoint (if any) answering (see the module doc)."""
    where = f"preflight: {use.who} model {use.model}"
    try:
        endpoint = expand_env(use.endpoint, where=f"{use.model}: endpoint") if use.endpoint else None
        api_key = expand_env(use.api_key, where=f"{use.model}: api_key") if use.api_key else None
        expand_env(dict(use.extra), where=f"{use.model}: extra")
    except ModelError as exc:
        raise PreflightError(f"preflight: {exc}") from None
    provider, _, name = use.model.partition("/")
    if provider == judge_script.PROVIDER:  # the offline judge model (scripted judge replies): its file must exist
        if not Path(name).is_file():
            raise PreflightError(f"{where}: judge script {name} not found")
        return
    handler = host.models.get(provider) if name else None
    if handler is not None:
        if callable(handler) and not hasattr(handler, "completion"):  # a factory (`register_models` allows one)
            handler = handler()
        check = getattr(handler, "preflight", None)
        if check is not None:
            try:
                check(name)
            except ModelSetupError as exc:
                raise PreflightError(f"{where}: {exc}") from None
        return
    if endpoint:  # the endpoint answers for itself: a dead or broken one fails before litellm's import
        _check_endpoint(endpoint, api_key, where, timeout)
        if provider in OPENAI_WIRE and name:
            _probe_openai_wire(endpoint, name, api_key, where, max(timeout, PROBE_TIMEOUT))
    litellm = import_litellm()
    try:
        _, resolved, _, _ = litellm.get_llm_provider(model=use.model, api_base=endpoint)
    except Exception as exc:  # litellm's BadRequestError: "LLM Provider NOT provided ..."
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PreflightError(f"{where}: unknown provider or model ({first[:200]}); see https://docs.litellm.ai/docs/providers") from None
    if endpoint:
        if not (provider in OPENAI_WIRE and name):
            _probe_through_litellm(use, host, where, max(timeout, PROBE_TIMEOUT))
        return
    if api_key is None:
        try:
            missing = litellm.validate_environment(model=use.model).get("missing_keys") or []
        except Exception:  # pragma: no cover - litellm cannot tell: the first call will
            missing = []
        if missing:
            raise PreflightError(f"{where}: no API key ({', '.join(missing)} not set; or give --api-key / api_key: ${{VAR}})")
    log.info("%s: provider %s, no endpoint to reach (not called at preflight)", where, resolved)


def _check_endpoint(endpoint: str, api_key: str | None, where: str, timeout: float) -> None:
    import httpx

    url = endpoint.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        response = httpx.get(url, headers=headers, timeout=timeout)
    except httpx.ConnectError as exc:
        cause = "nothing is listening (connection refused)" if "refused" in str(exc).lower() else f"cannot connect ({exc})"
        raise PreflightError(f"{where}: endpoint {endpoint}: {cause}") from None
    except httpx.TimeoutException:
        raise PreflightError(f"{where}: endpoint {endpoint}: no answer within {timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise PreflightError(f"{where}: endpoint {endpoint}: {type(exc).__name__}: {exc}") from None
    if response.status_code in (401, 403):
        raise PreflightError(f"{where}: endpoint {endpoint}: authentication failed (HTTP {response.status_code}; check the API key)")
    log.info("%s: endpoint %s answered %s (HTTP %d)", where, endpoint, url, response.status_code)


def _probe_openai_wire(endpoint: str, name: str, api_key: str | None, where: str, timeout: float) -> None:
    """One minimal chat request, as litellm sends an OpenAI-wire provider's (`POST
    {endpoint}/chat/completions`, the model's name without its provider); its reply must be one
    the run can read: HTTP 2xx, JSON, a non-empty `choices` list whose first holds a `message`."""
    import httpx

    url = endpoint.rstrip("/") + "/chat/completions"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    body = {"model": name, "messages": PROBE_MESSAGES, "max_tokens": 1}
    said = f"{where}: endpoint {endpoint}: a one-token test request"
    try:
        response = httpx.post(url, json=body, headers=headers, timeout=timeout)
    except httpx.TimeoutException:
        raise PreflightError(f"{said} got no answer within {timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise PreflightError(f"{said} failed: {type(exc).__name__}: {exc}") from None
    status = response.status_code
    if status in (401, 403):
        raise PreflightError(f"{where}: endpoint {endpoint}: authentication failed (HTTP {status}; check the API key)")
    if status == 429:  # alive, only busy: the run retries rate limits
        log.warning("%s: endpoint %s is rate-limiting (HTTP 429) at preflight; the run retries", where, endpoint)
        return
    if status >= 400:
        raise PreflightError(f"{said} failed: HTTP {status}: {_server_message(response)}")
    problem = reply_problem(response.text)
    if problem is not None:
        raise PreflightError(f"{said} got a malformed reply (HTTP {status}): {problem}")
    log.info("%s: endpoint %s answered a one-token test request", where, endpoint)


def reply_problem(text: str) -> str | None:
    """What makes a chat completion's body unreadable (None: nothing): not JSON, not an object, no
    `choices` list, an empty one, a first choice without a `message`."""
    import json

    try:
        data = json.loads(text)
    except ValueError:
        return f"not JSON ({_shown(text)})"
    if not isinstance(data, dict):
        return f"not a JSON object ({_shown(text)})"
    choices = data.get("choices")
    if not isinstance(choices, list):
        return f"no `choices` list (keys: {', '.join(sorted(map(str, data))) or 'none'})"
    if not choices:
        return "an empty `choices` list"
    if not isinstance(choices[0], dict) or not isinstance(choices[0].get("message"), dict):
        return "its first choice has no `message`"
    return None


def _shown(text: str, width: int = 60) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= width else one[: width - 3] + "...") if one else "an empty body"


def _server_message(response: Any) -> str:
    """The error message an OpenAI-style server put in its body (`{"error": {"message": ...}}`), else the body's start."""
    try:
        data = response.json()
    except ValueError:
        return _shown(response.text)
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
    if message is None and isinstance(data, dict):
        message = data.get("message") or data.get("detail")
    return str(message) if message else _shown(response.text)


def _probe_through_litellm(use: ModelUse, host: Host, where: str, timeout: float) -> None:
    """The test request for a provider litellm speaks for (not OpenAI's wire): one call through
    `orchestra.models.complete`, no retries; any failure fails the batch."""
    import anyio

    from orchestra.models import complete
    from orchestra.types import ModelRequest

    config = ModelConfig(model=use.model, endpoint=use.endpoint, api_key=use.api_key, extra=dict(use.extra), max_retries=0, timeout_seconds=timeout)
    request = ModelRequest(messages=list(PROBE_MESSAGES), action_format="tool_calls", max_tokens=1)
    try:
        anyio.run(lambda: complete(config, request, providers=host.models))
    except ModelError as exc:
        raise PreflightError(f"{where}: endpoint {use.endpoint}: a one-token test request failed: {_first(str(exc))}") from None


def _first(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else text


def endpoint_health(
    batch: Sequence[tuple[RolloutSpec, ScenarioFile | None]], host: Host, *, timeout: float = DEFAULT_TIMEOUT
) -> Callable[[RolloutRecord], str | None]:
    """What the batch loop asks after an `ERROR` rollout: do the endpoints its models call still
    answer (the model listing and the one-token test request, as at preflight)? The reason to stop
    the batch when one does not, else None. Models without an endpoint are not asked."""
    # the batch's own uses (a record's spec may come back from a worker with its secrets masked)
    uses: dict[tuple[str, str | None], ModelUse] = {(use.model, use.endpoint): use for spec, _ in batch for use in models_of(spec) if use.endpoint}

    def check(record: RolloutRecord) -> str | None:
        if record.spec is None or record.status != "ERROR":
            return None
        called = sorted({(u.model, u.endpoint) for u in models_of(record.spec)} & set(uses), key=str)
        for use in (uses[key] for key in called):
            try:
                check_model(use, host, timeout=timeout)
            except PreflightError as exc:
                return f"the model endpoint stopped answering ({str(exc).removeprefix('preflight: ')})"
        return None

    return check
