"""The parity cases: scenario + policy + budget, shared by the tests and by manual runs (not a test module)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.parity_scenarios import BIG_EMAIL_ID, starter, write_scenario

SEND = "AgentUserInterface__send_message_to_user"


def act(tool: str, args: dict[str, Any], thought: str = "Next step.") -> str:
    """A well-formed ReAct reply, as ARE's prompt asks for it."""
    return f"Thought: {thought}\nAction:\n{json.dumps({'action': tool, 'action_input': args})}<end_action>"


#: The id ARE's Emails app gives Elena's reply in starter_adaptability_reply (apps seeded with sha256 on both sides).
ELENA_REPLY_ID = "698d66c81533c6da51560df46f7f68c1"
ANSWER_SEARCH = "Tom Becker's latest invoice is INV-2041 (October bookkeeping): $1,280.00, due by October 31, 2024. His phone number is +14155550144."


def last_id(messages: list[dict[str, Any]]) -> str:
    """The last 32-hex app id in the last observation (how a real agent reads an id it got back)."""
    found = re.findall(r"\b[0-9a-f]{32}\b", str(messages[-1]["content"]))
    assert found, f"no id in the last message: {messages[-1]['content'][:200]!r}"
    return found[-1]


def id_after(messages: list[dict[str, Any]], tool: str) -> str:
    """The id in the observation that followed the last call of `tool`."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i]["role"] == "assistant" and f'"{tool}"' in str(messages[i]["content"]):
            return last_id(messages[: i + 2])
    raise AssertionError(f"no {tool} call in the conversation")


class Steps:
    """A list policy whose entries may also be functions of the messages (to read ids from observations)."""

    def __init__(self, steps: list[str | Callable[[list[dict[str, Any]]], str]]) -> None:
        self.steps = steps

    def __call__(self) -> Callable[[list[dict[str, Any]]], str]:
        it = iter(self.steps)

        def policy(messages: list[dict[str, Any]]) -> str:
            step = next(it)
            return step if isinstance(step, str) else step(messages)

        return policy


@dataclass
class Case:
    name: str
    scenario: str  # a bundled starter id, or a parity_scenarios id
    policy: list[str] | str | Steps
    max_iterations: int | None = None

    def path(self, tmp: Path) -> Path:
        return write_scenario(self.scenario, tmp) if self.scenario.startswith("parity_") else starter(self.scenario)


CASES: dict[str, Case] = {
    c.name: c
    for c in [
        Case(
            "env_started_turn",
            "parity_env_turn2",
            [
                act(
                    "Emails__send_email",
                    {
                        "recipients": ["elena.rossi@example.com"],
                        "subject": "Design review Friday",
                        "content": "Hi Elena, could you do a design review this Friday, October 18, at 11:00? Thanks, Alex",
                    },
                ),
                act(SEND, {"content": "I emailed Elena to ask about Friday 11:00."}),
                act(
                    "Calendar__add_calendar_event",
                    {"title": "Design review", "start_datetime": "2024-10-18 15:00:00", "end_datetime": "2024-10-18 16:00:00", "attendees": ["Elena Rossi"]},
                ),
                act(SEND, {"content": "Elena proposed 15:00; the design review is on your calendar."}),
            ],
        ),
        Case(
            "env_started_turns_3_two_apps",
            "parity_env_turns3",
            Steps(
                [
                    act("Messages__send_message", {"user_id": "+14155550155", "content": "Hi Sofia! Free for lunch this Saturday at 12:30?"}),
                    act(SEND, {"content": "I texted Sofia about Saturday lunch."}),
                    act(
                        "Calendar__add_calendar_event",
                        {
                            "title": "Lunch with Sofia",
                            "start_datetime": "2024-10-19 13:00:00",
                            "end_datetime": "2024-10-19 14:00:00",
                            "attendees": ["Sofia Alvarez"],
                        },
                    ),
                    act(SEND, {"content": "Sofia can do 13:00; lunch is on your calendar."}),
                    act("Emails__list_emails", {"folder_name": "INBOX", "limit": 1}),
                    lambda messages: act("Calendar__delete_calendar_event", {"event_id": id_after(messages, "Calendar__add_calendar_event")}),
                    act(SEND, {"content": "Sofia cancelled; I removed the lunch."}),
                ]
            ),
        ),
        Case("notification_during_wait", "starter_adaptability_reply", "oracle"),
        Case(
            "notifications_between_turns",
            "parity_between_turns",
            [
                act("Contacts__search_contacts", {"query": "Tom Becker"}),
                act(SEND, {"content": "Tom Becker's phone number is +14155550144."}),
                act("SystemApp__wait_for_notification", {"timeout": 30}),
                act("Contacts__search_contacts", {"query": "Priya"}),
                act(SEND, {"content": "Priya Shah's email is priya.shah@example.com."}),
            ],
        ),
        Case(
            "failed_send_message_to_user",
            "starter_search_lookup",
            [
                act(SEND, {"message": ANSWER_SEARCH}, "Answer (with a wrong argument name)."),
                act(SEND, {"content": ANSWER_SEARCH}, "Answer again."),
            ],
        ),
        Case("small_max_iterations", "starter_search_lookup", [act("Emails__list_emails", {"folder_name": "INBOX"})] * 6, max_iterations=2),
        Case(
            "true_and_escaped_quotes",
            "starter_search_lookup",
            [
                'Thought: Answer, quoting the invoice number.\nAction:\n{"action": "AgentUserInterface__send_message_to_user", '
                '"action_input": {"content": "Invoice \\"INV-2041\\": $1,280.00, due October 31, 2024; Tom\'s phone is '
                '+14155550144. Paid: False. Reminder set: True"}}<end_action>',
            ],
        ),
        Case(
            "unparseable_outputs",
            "starter_search_lookup",
            [
                "I am not sure what to do here.",
                '{"action": "Emails__list_emails", "action_input": {}}',
                'Thought: list the inbox\nAction:\n{"action": "Emails__list_emails", "action_input": {"folder_name": "INBOX"',
                act("Emails__list_emails", {"folder_name": "INBOX"}),
                act(SEND, {"content": ANSWER_SEARCH}),
            ],
        ),
        Case(
            "action_input_not_an_object",
            "starter_search_lookup",
            [
                'Thought: a list\nAction:\n{"action": "Contacts__search_contacts", "action_input": ["Tom Becker"]}<end_action>',
                'Thought: a number\nAction:\n{"action": "Contacts__search_contacts", "action_input": 5}<end_action>',
                act(SEND, {"content": ANSWER_SEARCH}),
            ],
        ),
        Case(
            "large_tool_output",
            "parity_big_output",
            [
                act("Emails__get_email_by_id", {"email_id": BIG_EMAIL_ID}),
                act(SEND, {"content": "It states a total revenue of $9.4M."}),
            ],
        ),
        Case(
            "two_user_messages_together",
            "parity_two_user_messages",
            [
                act("Contacts__search_contacts", {"query": "Tom Becker"}),
                act("Contacts__search_contacts", {"query": "Marcus Lee"}),
                act(SEND, {"content": "Tom Becker: +14155550144. Marcus Lee is a Software Engineer."}),
            ],
        ),
        Case(
            "user_message_mid_run",
            "parity_midrun_user_message",
            [
                act("Contacts__search_contacts", {"query": "Tom Becker"}),
                act("Contacts__search_contacts", {"query": "Becker"}),
                act(SEND, {"content": "Tom Becker: +14155550144, tom.becker@example.com."}),
            ],
        ),
        Case(
            "failed_wait_for_notification",
            "starter_adaptability_reply",
            [
                act(
                    "Emails__send_email",
                    {
                        "recipients": ["elena.rossi@example.com"],
                        "subject": "Design review Friday",
                        "content": "Hi Elena, could you do a design review this Friday, October 18, at 11:00? Thanks, Alex",
                    },
                ),
                act("SystemApp__wait_for_notification", {"timeout": "until Elena answers"}, "Wait (with a bad timeout)."),
                act("Emails__reply_to_email", {"email_id": ELENA_REPLY_ID, "content": "Hi Elena, Friday at 15:00 works for me. See you then! Alex"}),
                act(
                    "Calendar__add_calendar_event",
                    {"title": "Design review", "start_datetime": "2024-10-18 15:00:00", "end_datetime": "2024-10-18 16:00:00", "attendees": ["Elena Rossi"]},
                ),
                act(SEND, {"content": "Elena proposed 15:00: I confirmed and added the design review to your calendar."}),
            ],
        ),
        Case(
            "turn_rejected_by_judge",
            "starter_multiturn_followup",
            [
                act(SEND, {"content": "Added the lunch."}, "Answer without doing the work."),
                act(SEND, {"content": "Moved it."}),
            ],
        ),
        Case(
            "wait_with_notification_pending",
            "parity_pending_notification",
            [
                act("Contacts__search_contacts", {"query": "Tom Becker"}),
                act("SystemApp__wait_for_notification", {"timeout": 10}),
                act(SEND, {"content": "Tom Becker: +14155550144. Priya has emailed you."}),
            ],
        ),
        Case(
            "wait_past_the_duration",
            "starter_search_lookup",
            [
                act("SystemApp__wait_for_notification", {"timeout": 5000}, "Wait longer than the scenario lasts."),
                act(SEND, {"content": ANSWER_SEARCH}),
            ],
        ),
        Case("capability_execution", "starter_execution_calendar", "oracle"),
        Case("capability_search", "starter_search_lookup", "oracle"),
        Case("capability_adaptability", "starter_adaptability_reply", "oracle"),
        Case("capability_time", "starter_time_deadline", "oracle"),
        Case("capability_ambiguity", "starter_ambiguity_clarify", "oracle"),
    ]
}
