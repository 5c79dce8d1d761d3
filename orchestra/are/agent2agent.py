"""ARE's Agent2Agent pieces, taken from ARE at run time (ARE-NOTES §6).

ARE 1.2.0 replaces an app by an `AppAgent` (are/simulation/agents/default_agent/app_agent.py):
an app with one tool, `expert_agent(task: str) -> str`, READ, whose docstring is what the main
agent reads. A call wraps the task as `str(AUIMessage(sender=USER, ...))`, runs the app's agent
and is logged — by ARE's `event_registered` decorator — as one AGENT READ `CompletedEvent` of
class `AppAgent` (tool `AppAgent__expert_agent`) stamped with the call's start time, after the
app-agent's own app calls (which log under the real app class). ARE's judge keeps only WRITE
agent events, so the expert call itself is never judged.

orchestra runs the app-agent on its own loop (an awaited sub-agent, `orchestra.agent.spawn`), so
the call cannot go through ARE's synchronous method; this module builds the same tool, task text
and event with ARE's own classes instead.
"""

from __future__ import annotations

import functools
import uuid
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from orchestra.are.imports import import_are
from orchestra.are.tools import spec_from_app_tool
from orchestra.types import ToolSpec

if TYPE_CHECKING:  # pragma: no cover
    from orchestra.are.environment import DrivenEnvironment

#: The class ARE's replacement app has (the expert event's `app_class_name`).
APP_AGENT_CLASS = "AppAgent"
EXPERT_METHOD = "expert_agent"


def scenario_app_names(scenario: Any) -> list[str]:
    """The scenario's app instance names, in the scenario's order (ARE's `scenario.apps`)."""
    return [str(app.name) for app in (scenario.apps or [])]


def scenario_seed(scenario: Any) -> int:
    """The seed ARE's `_apply_a2a_config` draws app-agents with (`scenario.seed`)."""
    return int(scenario.seed)


def app_agent_app(app: str) -> Any:
    """ARE's `AppAgent` standing for `app` (its agent is a placeholder: orchestra runs the agent).

    Used for what ARE derives from the instance: the expert tool (name, docstring, signature) and
    the `Action.app` of the logged expert event (class `AppAgent`, name = the app's name)."""
    import_are()
    from are.simulation.agents.default_agent.app_agent import AppAgent

    return AppAgent(app_agent=SimpleNamespace(), tools={}, name=app)


def expert_app_tool(app: str) -> Any:
    """ARE's `AppTool` for `<app>__expert_agent` (what ARE's main agent wraps in an `AppToolAdapter`)."""
    tools = [t for t in app_agent_app(app).get_tools() if t.name.endswith(f"__{EXPERT_METHOD}")]
    if len(tools) != 1:  # pragma: no cover - guards an ARE upgrade
        raise RuntimeError(f"ARE's AppAgent has {len(tools)} expert_agent tools; expected exactly one")
    return tools[0]


@functools.lru_cache(maxsize=256)
def expert_tool_spec(app: str) -> ToolSpec:
    """The `ToolSpec` of `<app>__expert_agent`: ARE's name, docstring, `task: str` argument, READ."""
    return spec_from_app_tool(expert_app_tool(app))


def is_expert_spec(spec: ToolSpec) -> bool:
    """Whether a tool is an app's expert tool (ARE's `AppAgent.expert_agent`)."""
    return spec.app_class == APP_AGENT_CLASS and spec.method == EXPERT_METHOD


def expert_task_text(task: str, timestamp: float) -> str:
    """The task as ARE's app-agent receives it: `str(AUIMessage(sender=USER, content=task,
    timestamp=now, time_read=now))` (`AppAgent.expert_agent`)."""
    import_are()
    from are.simulation.apps.agent_user_interface import AUIMessage, Sender

    return str(AUIMessage(sender=Sender.USER, content=task, timestamp=timestamp, time_read=timestamp))


def log_expert_call(env: DrivenEnvironment, app: str, task: str, started: float, *, answer: str | None, error: str | None) -> None:
    """Log one `<app>__expert_agent` call as ARE's decorator would: an AGENT READ `CompletedEvent`
    (tool `AppAgent__expert_agent`, app name `app`, args `{self, task}`) stamped `started`, with
    the answer as return value — or, for a failed call, the error as the event's exception.

    Goes through the environment's `add_to_log`, like every app event (its online validators and
    notification system see it as they would see ARE's)."""
    import_are()
    from are.simulation.agents.default_agent.app_agent import AppAgent
    from are.simulation.types import Action, CompletedEvent, EventMetadata, EventType, OperationType

    if not env.running:
        return
    with env.scope():  # ARE's uuid4 ids (action and event), deterministic per rollout
        instance = app_agent_app(app)
        instance.register_time_manager(env.clock)
        event_id = f"{EventType.AGENT.value}-{instance.name}.{EXPERT_METHOD}-{uuid.uuid4()}"  # ARE draws it first
        function = AppAgent.expert_agent
        action = Action(app=instance, function=function, args={"self": instance, "task": task}, operation_type=OperationType.READ)
        metadata = EventMetadata()
        metadata.return_value = answer
        if error is not None:
            metadata.exception = error
        event = CompletedEvent(
            event_id=event_id,
            event_type=EventType.AGENT,
            action=action,
            metadata=metadata,
            event_time=started,
        )
        env.env.add_to_log(event)
