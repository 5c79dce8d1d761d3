"""Built-in plugin: ARE notifications become messages before each model call.

Mirrors ARE's agent pre-step (`pull_messages_from_notification_system`,
are/simulation/agents/default_agent/steps/are_simulation.py): everything the notification
system delivered up to the simulated now is popped (from the main agent's mailbox: ARE's notifications are the main agent's; a sub-agent's
mailbox holds what was posted to it, shown as a `Messages updates` block); user messages that arrived during a run
become one `User messages updates` block (joined by newlines), environment notifications one
`Environment notifications updates` block with their timestamps — in ARE's templates. (User
messages that *start* a run are its task, handed over by the agent loop.)
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from orchestra.hookspecs import hookimpl
from orchestra.views import AgentView

USER_UPDATES = "User messages updates:\n***\n{content}\n***\n"
ENV_UPDATES = "Environment notifications updates:\n***\n{content}\n***\n"


MESSAGE_UPDATES = "Messages updates:\n***\n{content}\n***\n"


@hookimpl
def pre_step(agent: AgentView) -> list[dict[str, Any]] | None:
    # The main agent's mailbox is ARE's notification system; a sub-agent's holds only what was posted to it.
    notes = agent.session.notifications() if agent.is_main else agent.session.notifications(agent.name)
    if not notes:
        return None
    messages = []
    posted = [n.text for n in notes if n.kind == "message"]
    if posted:
        messages.append({"role": "user", "content": MESSAGE_UPDATES.format(content="\n".join(posted))})
    users = [n.text for n in notes if n.kind == "user"]
    if users:
        messages.append({"role": "user", "content": USER_UPDATES.format(content="\n".join(users))})
    env_lines = [f"[{datetime.fromtimestamp(n.timestamp, tz=UTC).strftime('%Y-%m-%d %H:%M:%S')}] {n.text}" for n in notes if n.kind == "environment"]
    if env_lines:
        messages.append({"role": "user", "content": ENV_UPDATES.format(content="\n".join(env_lines))})
    return messages or None
