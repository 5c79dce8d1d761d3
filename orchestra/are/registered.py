"""ARE's own registered scenarios (its demo scenarios), exported to Gaia2 JSON for orchestra's sources.

ARE's demo scenarios predate Gaia2's judge: none holds the user's contact that the judge needs (an
app named `Contacts` / `ContactsApp` with exactly one `is_user` contact — ARE's own
`extract_user_details` raises on them, and orchestra's scenario check rejects them). The export
gives each one that lacks it: a user contact in its `ContactsApp`, or, when it has none, a
`Contacts` app holding only the user (so the agent also gets the Contacts tools). Nothing else of
the scenario changes — except one exporter fix-up (ARE-NOTES, "exporter fix-ups" a): ARE's
capture mode exports the user's task (`AgentUserInterface.send_message_to_agent` with no parent)
as an ENV event, which ARE's own JSON importer then rejects ("Env events must have only one
predecessor event"); it is written as the USER event it is.

Some demo scenarios still cannot be played: they use app classes ARE's JSON importer does not know
(`EmailClientApp`, the tutorial's `SimpleTaskApp`) or need the network (`scenario_hf_demo_mcp`,
`scenario_mcp_demo`). Those fail with that reason — at export, or when their rollout loads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchestra.scenario_files import ScenarioFile

#: The user contact given to a demo scenario that has none (fixed id: the export is byte-stable).
DEMO_USER = {"first_name": "Alex", "last_name": "Demo", "contact_id": "demo-user", "email": "alex.demo@example.com", "phone": "+1 555 0100"}
#: The app names ARE's judge looks the user up in (`are/simulation/validation/utils/scenario_utils.py`).
USER_CONTACTS_APPS = ("Contacts", "ContactsApp")


def registered_scenarios() -> tuple[list[ScenarioFile], list[tuple[str, str]]]:
    """ARE's own registered scenarios (its demo scenarios), each exported to Gaia2 JSON; any that
    cannot be built or exported is reported with the reason (ARE's loader would drop it)."""
    from orchestra.are.imports import import_are

    import_are()
    from are.simulation.data_handler.exporter import JsonScenarioExporter
    from are.simulation.environment import Environment, EnvironmentConfig
    from are.simulation.scenarios.utils.registry import registry

    files: list[ScenarioFile] = []
    failures: list[tuple[str, str]] = []
    exporter = JsonScenarioExporter()
    for scenario_id in sorted(registry.get_all_scenarios()):
        where = f"are:{scenario_id}"
        try:
            scenario = _with_user_contact_class(registry.get_scenario(scenario_id))()
            scenario.initialize()
            env = Environment(EnvironmentConfig(oracle_mode=True, queue_based_loop=True, start_time=scenario.start_time))
            text = exporter.export_to_json(env=env, scenario=scenario, scenario_id=scenario_id)
        except Exception as exc:
            failures.append((where, f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"))
            continue
        files.append(ScenarioFile(Path("are") / f"{scenario_id}.json", text=root_task_as_user_event(text)))
    return files, failures


def _with_user_contact_class(cls: Any) -> Any:
    """`cls` whose apps get the user contact right after ARE populates them — before `initialize`
    records the apps' initial state, which is what the exporter writes."""

    class WithUserContact(cls):
        def init_and_populate_apps(self, *args: Any, **kwargs: Any) -> None:
            super().init_and_populate_apps(*args, **kwargs)
            with_user_contact(self)

    WithUserContact.__name__ = WithUserContact.__qualname__ = cls.__name__
    return WithUserContact


def with_user_contact(scenario: Any) -> None:
    """Give `scenario` the one `is_user` contact ARE's judge needs, when it has none (see the module doc)."""
    from are.simulation.apps.contacts import Contact, ContactsApp

    apps = list(scenario.apps or [])
    contacts = next((a for a in apps if isinstance(a, ContactsApp) and a.name in USER_CONTACTS_APPS), None)
    if contacts is None:
        contacts = ContactsApp(name="Contacts")
        scenario.apps = [*apps, contacts]
    if not any(c.is_user for c in contacts.contacts.values()):
        user = Contact(is_user=True, **DEMO_USER)
        contacts.contacts[user.contact_id] = user


def root_task_as_user_event(text: str) -> str:
    """The exported JSON with each parentless `AgentUserInterface.send_message_to_agent` ENV event
    typed USER (what it is; ARE's capture mode writes ENV and its importer then rejects it)."""
    data = json.loads(text)
    changed = False
    for event in data.get("events") or []:
        action = event.get("action") or {}
        if (
            event.get("event_type") == "ENV"
            and not event.get("dependencies")
            and (action.get("app"), action.get("function"))
            == (
                "AgentUserInterface",
                "send_message_to_agent",
            )
        ):
            event["event_type"] = "USER"
            changed = True
    return json.dumps(data, indent=2) if changed else text
