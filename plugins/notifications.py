"""Built-in plugin: ARE notifications become messages before each model call.

Mirrors ARE's agent pre-step (`pull_messages_from_notification_system`,
are/simulation/agents/default_agent/steps/are_simulation.py): everything the notification
system delivered up to the simulated now is popped; user messages that arrived during a run
become one `User messages updates` block (joined by newlines), environment notifications one
`Environment notifications updates` block with their timestamps — in ARE's templates. (User
messages that *start* a run are its task, handed over by the agent loop.)
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from orchestra.hookspecs import hookimpl

USER_UPDATES = "User messages updates:\n***\n{content}\n***\n"
ENV_UPDATES = "Environment notifications updates:\n***\n{content}\n***\n"


@hookimpl
def pre_step(agent: Any) -> list[dict[str, Any]] | None:
    notes = agent.session.notifications()
    if not notes:
        return None
    messages = []
    users = [n.text for n in notes if n.kind == "user"]
    if users:
        messages.append({"role": "user", "content": USER_UPDATES.format(content="\n".join(users))})
    env_lines = [
        f"[{datetime.fromtimestamp(n.timestamp, tz=timezone.utc).strftime('%Y-%m-%d %H:%M:%S')}] {n.text}"
        for n in notes
        if n.kind == "environment"
    ]
    if env_lines:
        messages.append({"role": "user", "content": ENV_UPDATES.format(content="\n".join(env_lines))})
    return messages or None
