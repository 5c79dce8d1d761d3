"""Built-in plugin: Agent2Agent — apps served by app-agents, as ARE 1.2.0 does it (ARE-NOTES §6).

Active only when the rollout runs a team with app-agents (`rollout.team.app_agents`). For each
scenario, the replaced apps are `rollout.app_agents` — `team.app_agent_apps(<scenario apps, in
order>, scenario.seed)`, ARE's own draw for a proportion; a named app the scenario lacks is simply
not replaced.

* **The main agent's tools** (`agent_tools`): every tool of a replaced app is removed and one
  `<App>__expert_agent(task: str)` tool per replaced app is added, taken from ARE's `AppAgent` at
  run time (name, docstring, signature, READ). The order is the one ARE's main agent sees after
  `scenario.reset_apps(new_apps)`: the kept apps' tools in scenario order, then the experts in the
  order ARE appends app-agents (its `random.Random(seed).sample` order — for `apps: all` too,
  which is ARE's `a2a_app_prop=1.0`; named apps in scenario order), then plugin tools.
* **An expert call** (`delegate`) starts a fresh app-agent with `orchestra.agent.spawn` — stateless,
  as ARE's `AppAgent.run()` resets its agent on every call: named after the app (unique per call:
  `CalendarApp`, `CalendarApp#2`, ...), `role="sub"`, `app=<the app>` (on its context and ledger),
  exactly that app's tools plus `final_answer`, and the model, scaffold, options and budget of
  `team.app_agent(app)` (ARE: 50 iterations). Its task is what ARE's app-agent reads:
  `str(AUIMessage(sender=USER, content=task, timestamp=now, time_read=now))`. Its own app calls
  go through the session like the main agent's, so they log as AGENT READ/WRITE events under the
  real app class and the judge sees them exactly as if the main agent had made them. The expert
  call itself is logged as ARE logs it: an AGENT READ event `AppAgent__expert_agent` stamped with
  the call's start, which ARE's judge ignores (it keeps WRITE events only).

Where orchestra departs from ARE, on purpose:

* **Simulated clock.** ARE's app-agents run on the wall clock (they never get the environment's
  pause/resume, ARE-NOTES §6). Ours run on the rollout's simulated clock: their tokens and tool
  calls advance it while the main agent waits, so a slow team is slow in simulated time too.
* **No answer is a failure.** An ARE app-agent that spends its 50 iterations without
  `final_answer` returns `''` as a successful output. Ours returns a failed outcome saying so
  (as does a model that failed for good); the main agent sees the error and the rollout goes on.
* **Bad arguments.** A call without a string `task` (or with other arguments) fails with a clear
  message and starts no agent; ARE fails a missing `task` the same way (no event) but would pass
  a non-string one on.
"""

from __future__ import annotations

from collections.abc import Awaitable

from orchestra.agent import spawn
from orchestra.are import agent2agent as a2a
from orchestra.hookspecs import hookimpl
from orchestra.teams.config import expert_tool_name
from orchestra.types import ToolCall, ToolOutcome, ToolSpec
from orchestra.views import AgentView


@hookimpl
def agent_tools(agent: AgentView, tools: dict[str, ToolSpec]) -> None:
    if not agent.is_main:
        return
    apps = agent.rollout.app_agents
    if not apps:
        return
    replaced = set(apps)
    session_tools = agent.session.tools
    kept = {n: s for n, s in tools.items() if n in session_tools and s.app_name not in replaced}
    experts = {expert_tool_name(app): a2a.expert_tool_spec(app) for app in apps}
    others = {n: s for n, s in tools.items() if n not in session_tools and s.app_name not in replaced and n not in experts}
    tools.clear()
    tools.update(kept)
    tools.update(experts)
    tools.update(others)


@hookimpl
def delegate(agent: AgentView, call: ToolCall) -> Awaitable[ToolOutcome] | None:
    spec = agent.tools.get(call.name)
    if spec is None or not a2a.is_expert_spec(spec):
        return None
    if spec.app_name not in agent.rollout.app_agents:
        return None
    return _expert_call(agent, call, spec.app_name)


async def _expert_call(agent: AgentView, call: ToolCall, app: str) -> ToolOutcome:
    session = agent.session
    team = agent.rollout.team
    assert team is not None  # `delegate` only routes here for an app the rollout's team replaces
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    task = arguments.get("task")
    unexpected = sorted(set(arguments) - {"task"})
    if not isinstance(task, str) or unexpected:
        why = (
            f"unexpected argument(s) {unexpected}"
            if unexpected and isinstance(task, str)
            else "missing required argument 'task'"
            if task is None
            else f"'task' must be a string, got {type(task).__name__}"
        )
        return ToolOutcome(
            call.name,
            arguments,
            ok=False,
            sim_time=session.now,
            error=f"Invalid arguments for {call.name}: {why}. Expected (task: str).",
        )
    config = team.app_agent(app)
    tools = {name: s for name, s in session.tools.items() if s.app_name == app}
    started = session.now
    outcome = await spawn(
        agent,
        a2a.expert_task_text(task, started),
        name=app,
        call=call,
        model=config.model,
        scaffold=config.scaffold,
        scaffold_options=config.scaffold_options,
        tools=tools,
        max_steps=config.max_steps,
        app=app,
        sent=task,
        a2a=config.a2a,
    )
    a2a.log_expert_call(
        session.env,
        app,
        task,
        started,
        answer=str(outcome.output) if outcome.ok else None,
        error=None if outcome.ok else outcome.error,
    )
    return outcome
