"""Lists ARE builds from a `set` (hash-seed order) are sorted where a rollout sees and logs them;
lists whose order means something are left alone."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from orchestra.are.event_log import canonical_events, event_log_sha256
from orchestra.are.ids import sort_sets
from orchestra.are.imports import import_are

IDS = ["f" * 32, "0" * 32, "9" * 32, "a" * 32]


def _conversation(ids: list[str]) -> Any:
    import_are()
    from are.simulation.apps.messaging_v2 import ConversationV2

    conversation = ConversationV2(participant_ids=ids, title="t", conversation_id="c" * 32, last_updated=0.0)
    conversation.participant_ids = list(ids)  # the order ARE's set would give, whichever it is
    return conversation


def test_a_returned_conversation_lists_its_participants_sorted():
    conversations = [_conversation(IDS), _conversation(list(reversed(IDS)))]
    sort_sets("MessagingAppV2__list_recent_conversations", conversations)
    assert [c.participant_ids for c in conversations] == [sorted(IDS), sorted(IDS)]
    single = _conversation(IDS)
    sort_sets("MessagingAppV2__read_conversation", {"conversation": single})
    assert single.participant_ids == sorted(IDS)


def test_only_tools_that_return_a_set_have_their_list_sorted():
    tags, emails = ["work", "family", "social"], ["b", "a"]
    sort_sets("CalendarApp__get_all_tags", tags)
    sort_sets("EmailClientV2__list_emails", emails)
    assert tags == ["family", "social", "work"] and emails == ["b", "a"]


def _event(tool: str, returned: Any, args: dict[str, Any] | None = None) -> Any:
    app, function = tool.split("__")
    return SimpleNamespace(
        action=SimpleNamespace(),
        get_args=lambda: dict(args or {}),
        metadata=SimpleNamespace(return_value=returned, exception=None),
        event_time=1.0,
        event_type=SimpleNamespace(value="AGENT"),
        event_id=f"AGENT-{app}.{function}-1",
        tool_name=tool,
    )


def _hash(*events: Any) -> str:
    return event_log_sha256(canonical_events(list(events), 0.0))


def test_the_canonical_log_sorts_sets_of_a_log_recorded_without_orchestras_event_log():
    """ARE's own environment (the parity harness's default agent) logs the lists as ARE made them."""
    listed = lambda ids: _event("MessagingAppV2__list_recent_conversations", [{"participant_ids": ids, "title": "t"}])  # noqa: E731
    assert _hash(listed(IDS)) == _hash(listed(list(reversed(IDS))))
    tags = lambda t: _event("CalendarApp__get_all_tags", t)  # noqa: E731
    assert _hash(tags(["work", "family"])) == _hash(tags(["family", "work"]))
    emails = lambda e: _event("EmailClientV2__list_emails", e)  # noqa: E731
    assert _hash(emails(["b", "a"])) != _hash(emails(["a", "b"]))  # an order that means something is kept
    created = lambda ids: _event("MessagingAppV2__create_group_conversation", "c" * 32, {"user_ids": ids})  # noqa: E731
    assert _hash(created(["x", "y"])) != _hash(created(["y", "x"]))  # the agent's own arguments are kept as written
