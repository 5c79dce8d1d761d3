"""Built-in plugin: the three built-in judges, registered like any plugin's (`register_judges`).

* `scripted` — ARE's scripted judge (tool counts, hard argument checks, causality, timing; it
  does not read free text);
* `strict` — the scripted judge plus an offline fact check of every free-text argument;
* `llm` — ARE's LLM judge as `are-benchmark run` builds it, on any litellm model.

What each does, and how they were measured: `orchestra.judging.settings`, `orchestra.are.judges`, docs/judges.md.
The builders import ARE only when a judge is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestra.hookspecs import hookimpl
from orchestra.judging.settings import JudgeConfig


@hookimpl
def register_judges(register: Callable[[str, Callable[[JudgeConfig], Any]], None]) -> None:
    from orchestra.are.judges import BUILTIN_JUDGES

    for mode, build in BUILTIN_JUDGES.items():
        register(mode, build)
