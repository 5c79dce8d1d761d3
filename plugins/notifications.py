"""Built-in plugin: ARE notifications become messages before each model call.

Mirrors ARE's agent pre-step (`pull_messages_from_notification_system`): everything the
notification system delivered up to the simulated now is popped; user messages become the task
(`[TASK]: ...`, as ARE renders a new task), environment notifications one
`Environment notifications updates` block with their timestamps.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from orchestra.hookspecs import hookimpl


@hookimpl
def pre_step(agent: Any) -> list[dict[str, Any]] | None:
    notes = agent.session.notifications()
    if not notes:
        return None
    messages = []
    for n in notes:
        if n.kind == "user":
            messages.append({"role": "user", "content": f"[TASK]: \n{n.text}\n"})
    env_lines = [
        f"[{datetime.fromtimestamp(n.timestamp, tz=timezone.utc).strftime('%Y-%m-%d %H:%M:%S')}] {n.text}"
        for n in notes
        if n.kind == "environment"
    ]
    if env_lines:
        messages.append({"role": "user", "content": "Environment notifications updates:\n***\n" + "\n".join(env_lines) + "\n***\n"})
    return messages or None
