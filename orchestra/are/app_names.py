"""App names as ARE knows them (for teams).

A team file names the apps its app-agents serve. Those names are checked against what ARE
itself knows — the app classes it registers (`are.simulation.apps.ALL_APPS`) and the instance
names its judge treats as aliases of them (`validation.constants.APP_ALIAS`: Gaia2 scenarios
name their apps `Calendar`, `Emails`, `Chats`, ...) — never against a hand-written list that
would go stale with ARE.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType

from orchestra.are.imports import import_are


@functools.cache
def known_app_names() -> frozenset[str]:
    """Every app name ARE knows: its app classes' names and their scenario instance aliases."""
    import_are()
    from are.simulation.apps import ALL_APPS
    from are.simulation.validation.constants import APP_ALIAS

    names = {cls.__name__ for cls in ALL_APPS} - {"App"}  # `App` is the abstract base class
    for canonical, aliases in APP_ALIAS.items():
        names.add(canonical)
        names.update([aliases] if isinstance(aliases, str) else aliases)
    return frozenset(names)


@functools.cache
def app_aliases() -> Mapping[str, tuple[str, ...]]:
    """ARE's class name → the instance names scenarios give that app (`CalendarApp` → `Calendar`;
    `MessagingAppV2` → `Messages`, `Chats`), from ARE's `APP_ALIAS`. Read-only: the cached mapping
    is shared by every caller in the process."""
    import_are()
    from are.simulation.validation.constants import APP_ALIAS

    return MappingProxyType({k: (v,) if isinstance(v, str) else tuple(v) for k, v in APP_ALIAS.items() if v})
