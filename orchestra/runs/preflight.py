"""Preflight: everything a batch needs, checked once before its first rollout.

A setup mistake found per scenario, late, costs a scenario load (seconds) and a row of identical
errors each; found here it costs one line and exit status 2 before anything runs:

* every scenario file passes the checks that need no ARE import (a JSON object of ARE's version,
  a definition, apps, the user's contact: `orchestra.are.loading.precheck_scenario_json`);
* every model of every agent (a team's app-agents and per-app overrides included) and the LLM
  judge's model resolves: its `${VAR}` references are set; a provider registered by a plugin
  (`orchestra/...`) checks the model itself (the scripted model's file exists and parses), through
  the handler's optional `preflight(model)` method; any other provider is known to litellm;
* an endpoint answers: the server's model listing (`GET {endpoint}/models`, free) — a connection
  refused, a DNS failure or a timeout (`timeout` seconds) fails the batch at once, never retried;
  an authentication error (401/403) too. A hosted provider (no endpoint) needs its API key
  (litellm's `validate_environment`); no request is sent to it (it would cost money).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestra.errors import OrchestraError, ScenarioError
from orchestra.host import Host
from orchestra.judging import script as judge_script
from orchestra.models import ModelConfig, ModelError, ModelSetupError, expand_env, import_litellm
from orchestra.scenario_files import ScenarioFile
from orchestra.spec import RolloutSpec

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.judging.settings import JudgeConfig

__all__ = ["PreflightError", "check_judge", "models_of", "preflight"]

log = logging.getLogger(__name__)

#: Seconds an endpoint has to answer its model listing.
DEFAULT_TIMEOUT = 2.0


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


def preflight(batch: Sequence[tuple[RolloutSpec, ScenarioFile | None]], host: Host, *, timeout: float = DEFAULT_TIMEOUT) -> None:
    """Check the batch (see the module doc); raise `PreflightError` with the first problem, or
    with every bad scenario file at once (one line each, then their count)."""
    seen_files: set[str] = set()
    bad: list[str] = []
    for spec, file in batch:
        file = file or ScenarioFile(spec.scenario)
        key = str(file.path)
        if key in seen_files:
            continue
        seen_files.add(key)
        problem = _scenario_problem(file)
        if problem is not None:
            bad.append(problem)
    if len(bad) == 1:
        raise PreflightError(f"preflight: {bad[0]}")
    if bad:
        raise PreflightError("\n".join([f"preflight: {line}" for line in bad] + [f"preflight: {len(bad)} bad scenario files"]))
    seen: set[ModelUse] = set()
    for use in (u for spec, _ in batch for u in models_of(spec)):
        if use in seen:
            continue
        seen.add(use)
        check_model(use, host, timeout=timeout)


def check_judge(judge: JudgeConfig, host: Host, *, timeout: float = DEFAULT_TIMEOUT) -> None:
    """The LLM judge's model alone (`replay`, `judge-check`: the oracle calls no model): resolvable,
    its endpoint answering — a dead judge endpoint fails the command at once, naming it."""
    if judge.mode == "llm" and judge.model:
        check_model(ModelUse(judge.model, judge.endpoint, judge.api_key, who="judge"), host, timeout=timeout)


def _scenario_problem(file: ScenarioFile) -> str | None:
    """What is wrong with the scenario file, in one line (None: nothing the precheck finds)."""
    from orchestra.are.loading import precheck_scenario_json

    try:
        precheck_scenario_json(file.text, file.path)
    except ScenarioError as exc:
        return str(exc)
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
    litellm = import_litellm()
    try:
        _, resolved, _, _ = litellm.get_llm_provider(model=use.model, api_base=endpoint)
    except Exception as exc:  # litellm's BadRequestError: "LLM Provider NOT provided ..."
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PreflightError(f"{where}: unknown provider or model ({first[:200]}); see https://docs.litellm.ai/docs/providers") from None
    if endpoint:
        _check_endpoint(endpoint, api_key, where, timeout)
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
