"""Gaia2's noise augmentation through ARE's own machinery, made reproducible (ARE-NOTES §8).

* **Environment events**: ARE's `EnvEventsConfig` is set on the scenario before `initialize()`, so
  ARE's own `EnvEventsExpander` adds the distractor events from the scenario's `augmentation.apps`
  (seeded by `env_events_seed`, ids `env_expansion_*`, which the judge ignores); they then run on
  the simulated clock like every other event.
* **Tool names and descriptions**: ARE's `ToolAugmentationConfig` is set too, so ARE's
  `apply_augmentation_configs` renames and re-describes the tools (every app but
  `AgentUserInterface` / `SystemApp`) from `augmentation.tool_names_mapping` /
  `tool_descriptions_mapping`: the agent sees the public names, the judge keeps the class names.
* **Tool failures**: ARE draws them from `Random(None)` inside `AppTool.__call__` (not
  reproducible), so ARE is given probability 0 and the session draws instead (`ToolFailures`):
  one generator per call, seeded by a SHA-256 digest of (scenario id, scenario seed, run index,
  agent, the agent's call index). A failure is ARE's: the same `Exception` text
  (`AppTool.failure_message_template`), raised before the method runs, so no event is logged.
  Like ARE, every app tool can fail, `AgentUserInterface` and `SystemApp` included
  (`send_message_to_user`, `wait_for_notification`); `system_tools_can_fail=False` spares those two.

Nothing here patches ARE: the configs are the scenario's own fields, read by ARE's own code.
"""

from __future__ import annotations

import hashlib
import random
import re
import warnings
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from orchestra.are.imports import import_are
from orchestra.config import NoiseConfig
from orchestra.errors import ScenarioError

#: ARE's prefix for the ids of the events its expander adds (`ENV_EVENT_EXPANSION_TAG`); the judge skips them.
ENV_EXPANSION_PREFIX = "env_expansion_"
#: The apps ARE never renames; the ones `system_tools_can_fail=False` spares.
SYSTEM_APPS = ("AgentUserInterface", "SystemApp")
#: ARE's `AppTool.failure_message_template` (read from the tool when there is one).
ARE_FAILURE_MESSAGE = "Calling {name} failed with error: Internal error - Retry again later"
#: What ARE's `EnvEventsExpander.add_env_events_to_scenario` reads from an `augmentation.apps` entry's
#: `app_state`, by the app names it matches (scenario_expander.py:180-183; it fails with a KeyError otherwise).
EXPANDER_STATE: dict[str, tuple[tuple[str, ...], ...]] = {
    **dict.fromkeys(("MessagingAppV2", "Chats", "Messages"), (("conversations",),)),
    **dict.fromkeys(("EmailClientV2", "EmailClientApp", "Mail"), (("folders", "INBOX", "emails"),)),
    **dict.fromkeys(("Shopping", "ShoppingApp"), (("products",), ("discount_codes",))),
    **dict.fromkeys(("RentAFlat", "ApartmentListingApp"), (("apartments",),)),
}
#: A name a model's function calling accepts (OpenAI's pattern, without its length cap).
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]+")


class NoiseWarning(UserWarning):
    """Noise is on but a scenario has nothing for part of it (no `augmentation` data)."""


class FailedCall(BaseModel):
    """One tool call the noise failed: who, their how-many-th call, which tool, when."""

    model_config = ConfigDict(frozen=True)

    agent: str
    call_index: int
    tool: str
    sim_seconds: float


class NoiseReport(BaseModel):
    """Which noise ran in a rollout and what fired (the record's `noise`)."""

    config: NoiseConfig
    #: Did the scenario carry `augmentation` data (tool renames, event material)?
    augmentation: bool
    #: Tools the agent sees under another name / another description.
    renamed_tools: int = 0
    redescribed_tools: int = 0
    #: Environment events ARE's expander added to the scenario, and how many of them ran in this rollout.
    env_events_scheduled: int = 0
    env_events: int = 0
    #: Tool calls that reached an ARE tool (each one drew), and those that failed.
    tool_calls_drawn: int = 0
    tool_failures: int = 0
    failed_calls: list[FailedCall] = Field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Before initialize(): ARE's configs on the scenario
# --------------------------------------------------------------------------------------------


def has_augmentation(scenario: Any) -> bool:
    data = getattr(scenario, "augmentation_data", None)
    return isinstance(data, dict) and bool(data)


def configure(scenario: Any, noise: NoiseConfig | None, source: str) -> None:
    """Set ARE's augmentation configs on `scenario` (before `initialize()`); None clears them.

    Without augmentation data ARE has nothing to rename and no event material: that is said once
    per file (a `NoiseWarning`), and the record's `noise.augmentation` is false; tool failures
    still apply."""
    scenario.tool_augmentation_config = None
    scenario.env_events_config = None
    if noise is None:
        return
    import_are()
    from are.simulation.scenarios.utils.scenario_expander import EnvEventsConfig
    from are.simulation.types import ToolAugmentationConfig

    check_augmentation(scenario.augmentation_data, source)
    if not has_augmentation(scenario):
        warnings.warn(NoiseWarning(f"noise: no augmentation data in {source}"), stacklevel=2)
    # Probability 0 for ARE's own (unseeded) draw: the session draws, reproducibly (`ToolFailures`).
    scenario.tool_augmentation_config = ToolAugmentationConfig(
        tool_failure_probability=0.0,
        apply_tool_name_augmentation=noise.apply_tool_name_augmentation,
        apply_tool_description_augmentation=noise.apply_tool_description_augmentation,
    )
    if noise.env_events_per_minute > 0:
        check_expander_apps(scenario.augmentation_data, source)
    if noise.env_events_per_minute > 0:  # ARE adds message events even at rate 0: 0 means none here
        scenario.env_events_config = EnvEventsConfig(
            num_env_events_per_minute=noise.env_events_per_minute, env_events_seed=noise.env_events_seed
        )  # ARE annotates int; a fractional rate works the same


def check_augmentation(data: Any, source: str) -> None:
    """The parts of `augmentation` ARE reads, in the shapes it reads them (`ScenarioError` naming
    the field otherwise; ARE would fail with an AttributeError or a KeyError, or rename a tool to
    something no model can call)."""
    if not isinstance(data, dict):
        return  # none (ARE's loader already rejects a non-object `augmentation`)
    for key in ("tool_names_mapping", "tool_descriptions_mapping"):
        mapping = data.get(key)
        if mapping is None:
            continue
        if not isinstance(mapping, dict):
            raise ScenarioError(source, f"augmentation.{key} must be an object (tool name: text), got {type(mapping).__name__}")
        for tool, text in mapping.items():
            if not isinstance(text, str) or not text.strip():
                raise ScenarioError(source, f"augmentation.{key}[{tool!r}] must be a non-empty string, got {text!r}")
            if key == "tool_names_mapping" and not TOOL_NAME.fullmatch(text):
                raise ScenarioError(source, f"augmentation.{key}[{tool!r}] = {text!r} is not a tool name (letters, digits, '_', '-')")
    apps = data.get("apps")
    if apps is None:
        return
    if not isinstance(apps, list):
        raise ScenarioError(source, f"augmentation.apps must be a list of apps, got {type(apps).__name__}")
    for i, app in enumerate(apps):
        if not isinstance(app, dict) or not isinstance(app.get("name"), str) or not isinstance(app.get("app_state"), dict):
            raise ScenarioError(source, f"augmentation.apps[{i}] must be an object with a string `name` and an object `app_state`")
        state, where = app["app_state"], f"augmentation.apps[{i}] ({app['name']})"
        for path in EXPANDER_STATE.get(app["name"], ()):
            value: Any = state
            for part in path:
                value = value.get(part) if isinstance(value, dict) else None
            wanted = list if path[-1] == "emails" else dict
            if not isinstance(value, wanted):
                raise ScenarioError(
                    source, f"{where}: ARE's event expander reads app_state.{'.'.join(path)}, which must be {'a list' if wanted is list else 'an object'}"
                )


def check_expander_apps(data: Any, source: str) -> None:
    """ARE's expander divides by the summed weight of `augmentation.apps`' app classes: with none it
    weighs (only Calendar, say) it fails with a ZeroDivisionError, on a name it does not know with a
    KeyError; say which apps instead."""
    import_are()
    from are.simulation.scenarios.utils.scenario_expander import EnvEventsConfig, EnvEventsExpander

    names = [app["name"] for app in (data or {}).get("apps") or []]
    if not names:
        return
    try:
        EnvEventsExpander(EnvEventsConfig()).get_num_env_events_per_app(1, names)
    except (ZeroDivisionError, KeyError) as exc:
        raise ScenarioError(
            source,
            f"augmentation.apps {names}: ARE's event expander fails on them ({type(exc).__name__}: {exc}); it weighs messaging, email, shopping and apartment apps",
        ) from None


def check_public_names(scenario: Any, source: str) -> None:
    """After ARE's renaming: every tool the agent sees has its own name (`ScenarioError` when the
    file's `tool_names_mapping` gives two tools one name: the agent could call only one of them)."""
    seen: dict[str, str] = {}
    for tool in scenario.get_tools():
        public = tool._public_name or tool.name
        if public in seen:
            raise ScenarioError(source, f"augmentation.tool_names_mapping: {seen[public]} and {tool.name} would both be called {public!r}")
        seen[public] = tool.name


def expansion_events(scenario: Any) -> list[Any]:
    """The events ARE's expander added to `scenario` (its `env_expansion_*` ids), in its order."""
    return [e for e in scenario.events or [] if str(e.event_id).startswith(ENV_EXPANSION_PREFIX)]


def tool_augmentation_counts(scenario: Any, noise: NoiseConfig) -> tuple[int, int]:
    """(renamed, re-described) agent tools: those ARE's augmentation gave a mapped name / description
    (apps but the user interface and the system app, as ARE's `apply_augmentation_configs`)."""
    data = scenario.augmentation_data if has_augmentation(scenario) else {}
    names, descriptions = data.get("tool_names_mapping") or {}, data.get("tool_descriptions_mapping") or {}
    renamed = redescribed = 0
    for tool in scenario.get_tools():
        if tool.app_name in SYSTEM_APPS:
            continue
        renamed += noise.apply_tool_name_augmentation and tool.name in names and tool._public_name != tool.name
        redescribed += noise.apply_tool_description_augmentation and tool.name in descriptions
    return renamed, redescribed


# --------------------------------------------------------------------------------------------
# During the rollout: reproducible tool failures
# --------------------------------------------------------------------------------------------


def failure_draw(scenario_id: str, scenario_seed: int, run_index: int, agent: str, call_index: int) -> float:
    """The uniform draw in [0, 1) for one call: the first `random()` of a generator seeded by a
    SHA-256 digest of the key (never `hash()`: the same in every process and on every machine)."""
    key = "\x1f".join(("orchestra-noise/tool-failure/v1", scenario_id, str(scenario_seed), str(run_index), agent, str(call_index)))
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    return random.Random(seed).random()


class ToolFailures:
    """Decides, per call, whether an ARE tool call fails, as ARE's `AppTool.__call__` would with
    `failure_probability` set — but reproducibly; counts and lists what failed."""

    def __init__(self, noise: NoiseConfig, *, scenario_id: str, scenario_seed: int, run_index: int) -> None:
        self.noise = noise
        self.scenario_id = scenario_id
        self.scenario_seed = int(scenario_seed or 0)
        self.run_index = run_index
        self.calls: dict[str, int] = {}
        self.failed: list[FailedCall] = []

    @property
    def drawn(self) -> int:
        return sum(self.calls.values())

    def check(self, agent: str, tool: Any, sim_seconds: float) -> Exception | None:
        """ARE's failure for this call of `tool` (an `AppTool`) by `agent`, or None: it runs."""
        if not self.noise.system_tools_can_fail and tool.class_name in SYSTEM_APPS:
            return None
        index = self.calls.get(agent, 0)
        self.calls[agent] = index + 1
        u = failure_draw(self.scenario_id, self.scenario_seed, self.run_index, agent, index)
        if u >= self.noise.tool_failure_probability:
            return None
        self.failed.append(FailedCall(agent=agent, call_index=index, tool=tool.name, sim_seconds=round(sim_seconds, 6)))
        template = getattr(tool, "failure_message_template", None) or ARE_FAILURE_MESSAGE
        return Exception(template.format(name=tool.name))


def report(noise: NoiseConfig, scenario: Any, failures: ToolFailures | None, event_log: list[Any], *, augmentation: bool, scheduled: int) -> NoiseReport:
    """What ran and what fired, from the scenario, the failures and the rollout's event log."""
    renamed, redescribed = tool_augmentation_counts(scenario, noise)
    fired = sum(1 for e in event_log if str(e.event_id).startswith(ENV_EXPANSION_PREFIX))
    return NoiseReport(
        config=noise,
        augmentation=augmentation,
        renamed_tools=renamed,
        redescribed_tools=redescribed,
        env_events_scheduled=scheduled,
        env_events=fired,
        tool_calls_drawn=failures.drawn if failures is not None else 0,
        tool_failures=len(failures.failed) if failures is not None else 0,
        failed_calls=list(failures.failed) if failures is not None else [],
    )
