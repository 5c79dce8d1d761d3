"""A hand-written Agent2Agent shape for tests of the core (not the built-in `agent2agent` plugin):
the main agent's Contacts tools become one `Contacts__expert_agent` tool, and a call to it runs a
sub-agent (`orchestra.agent.spawn`) holding the Contacts tools — a plugin as a team author would write it."""

from __future__ import annotations

from typing import Any

from orchestra.agent import DEFAULT_SUB_AGENT_MAX_STEPS, spawn
from orchestra.hookspecs import hookimpl
from orchestra.models import ModelConfig
from orchestra.types import ToolArg, ToolSpec

EXPERT = "Contacts__expert_agent"
EXPERT_SPEC = ToolSpec(
    name=EXPERT,
    app_name="Contacts",
    app_class="ContactsApp",
    method="expert_agent",
    description="Ask the contacts expert to find something in the contacts; returns its answer.",
    args=(ToolArg(name="task", type_hint=str, type_text="str", description="what to find", required=True),),
    return_type="str",
    writes=False,
)
USAGE = {"prompt_tokens": 1000, "completion_tokens": 100}  # 100/50 + 1000/5000 = 2.2 simulated seconds per call


class ContactsExpert:
    """The plugin: `sub_model` serves the expert, a `tool_calling` sub-agent named `name`."""

    def __init__(self, sub_model: str, *, name: str = "contacts_expert", max_steps: int = DEFAULT_SUB_AGENT_MAX_STEPS) -> None:
        self.sub_model = sub_model
        self.name = name
        self.max_steps = max_steps

    @hookimpl
    def agent_tools(self, agent: Any, tools: dict[str, ToolSpec]) -> None:
        if agent.is_main:
            for name in [n for n in tools if n.startswith("Contacts__")]:
                del tools[name]
            tools[EXPERT] = EXPERT_SPEC

    @hookimpl
    def delegate(self, agent: Any, call: Any) -> Any:
        if call.name != EXPERT:
            return None
        contacts = {n: s for n, s in agent.session.tools.items() if n.startswith("Contacts__")}
        model = ModelConfig(model=self.sub_model, backoff_seconds=0.0, max_retries=0)
        return spawn(agent, call.arguments["task"], name=self.name, call=call, model=model, scaffold="tool_calling", tools=contacts, max_steps=self.max_steps)
