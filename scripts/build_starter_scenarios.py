#!/usr/bin/env python
"""Build the starter Gaia2-format scenarios under ``scenarios/``.

Every scenario is written with ARE's own scenario API (a ``Scenario`` subclass with
``init_and_populate_apps`` / ``build_events_flow``, events captured with
``EventRegisterer.capture_mode()``) and serialized with ARE's ``JsonScenarioExporter``.
The export is then patched with the three fix-ups ARE 1.2.0 needs (see
``/work/shared/notes/ARE-NOTES.md`` §1.7) and normalised so that reruns are byte-identical.

Layout (ARE's local dataset layout)::

    scenarios/<config>/validation/<scenario_id>.json     config in {execution, search,
                                                          adaptability, time, ambiguity}

so that ``are-benchmark run --oracle -d scenarios --config execution --split validation`` works.

Usage::

    python scripts/build_starter_scenarios.py              # (re)write scenarios/
    python scripts/build_starter_scenarios.py --check      # regenerate in a temp dir, diff, exit 1 on drift
    python scripts/build_starter_scenarios.py --describe   # per-scenario oracle summary (markdown)
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "devtools"))  # dev-only code (orchestra_dev)

from are.simulation.apps.agent_user_interface import AgentUserInterface  # noqa: E402
from are.simulation.apps.calendar import CalendarApp, CalendarEvent  # noqa: E402
from are.simulation.apps.contacts import Contact, ContactsApp, Gender, Status  # noqa: E402
from are.simulation.apps.email_client import (  # noqa: E402
    Email,
    EmailClientV2,
    EmailFolderName,
)
from are.simulation.apps.messaging_v2 import (  # noqa: E402
    ConversationV2,
    MessageV2,
    MessagingAppMode,
    MessagingAppV2,
)
from are.simulation.apps.system import SystemApp  # noqa: E402
from are.simulation.data_handler.exporter import JsonScenarioExporter  # noqa: E402
from are.simulation.environment import Environment, EnvironmentConfig  # noqa: E402
from are.simulation.scenarios.scenario import Scenario  # noqa: E402
from are.simulation.types import (  # noqa: E402
    CapabilityTag,
    EventRegisterer,
    EventType,
)

from orchestra_dev.corpus import text as corpus_text  # noqa: E402
from orchestra_dev.corpus.export import apply_exporter_fixups  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "scenarios"
SPLIT = "validation"

# 2024-10-15 07:00:00 UTC, a Tuesday (same start time as the public Gaia2 universes).
START_TIME = 1728975600.0
SEED = 20241015


def ts(text: str) -> float:
    """'YYYY-MM-DD HH:MM:SS' (UTC) -> epoch seconds."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp()


def hid(label: str) -> str:
    """Stable 32-hex id (the shape of ARE's uuid_hex ids) derived from a label."""
    return hashlib.sha256(f"orchestra-starter/{label}".encode()).hexdigest()[:32]


# ---------------------------------------------------------------------------------------------
# The shared mini universe
# ---------------------------------------------------------------------------------------------

USER_NAME = "Alex Morgan"
USER_EMAIL = "alex.morgan@example.com"
USER_PHONE = "+14155550100"

# key -> (first, last, email, phone, gender, age, job, city)
PEOPLE = {
    "priya": ("Priya", "Shah", "priya.shah@example.com", "+14155550111", Gender.FEMALE, 38, "Product Manager", "San Francisco"),
    "marcus": ("Marcus", "Lee", "marcus.lee@example.com", "+14155550122", Gender.MALE, 31, "Software Engineer", "Oakland"),
    "elena": ("Elena", "Rossi", "elena.rossi@example.com", "+14155550133", Gender.FEMALE, 29, "Product Designer", "San Francisco"),
    "tom": ("Tom", "Becker", "tom.becker@example.com", "+14155550144", Gender.MALE, 52, "Accountant (Becker & Partners)", "San Jose"),
    "sofia": ("Sofia", "Alvarez", "sofia.alvarez@example.com", "+14155550155", Gender.FEMALE, 34, "Architect", "Berkeley"),
}


def full_name(key: str) -> str:
    first, last, *_ = PEOPLE[key]
    return f"{first} {last}"


def email_of(key: str) -> str:
    return PEOPLE[key][2]


def phone_of(key: str) -> str:
    return PEOPLE[key][3]


def build_contacts() -> ContactsApp:
    contacts = ContactsApp(name="Contacts")
    contacts.add_contact(
        Contact(
            first_name="Alex",
            last_name="Morgan",
            contact_id=hid("contact/alex"),
            is_user=True,
            gender=Gender.OTHER,
            age=35,
            nationality="American",
            city_living="San Francisco",
            country="USA",
            status=Status.EMPLOYED,
            job="Engineering Manager",
            description="The user.",
            phone=USER_PHONE,
            email=USER_EMAIL,
            address="1200 Market St, San Francisco, CA",
        )
    )
    for key, (first, last, mail, phone, gender, age, job, city) in PEOPLE.items():
        contacts.add_contact(
            Contact(
                first_name=first,
                last_name=last,
                contact_id=hid(f"contact/{key}"),
                gender=gender,
                age=age,
                nationality="American",
                city_living=city,
                country="USA",
                status=Status.EMPLOYED,
                job=job,
                phone=phone,
                email=mail,
            )
        )
    return contacts


def build_emails() -> EmailClientV2:
    emails = EmailClientV2(name="Emails", user_email=USER_EMAIL)
    inbox = [
        Email(
            email_id=hid("email/tom_invoice_sep"),
            sender=email_of("tom"),
            recipients=[USER_EMAIL],
            subject="Invoice INV-1987 (September bookkeeping)",
            content=(
                "Hi Alex,\n\nPlease find the summary of invoice INV-1987 for September bookkeeping: "
                "total $1,150.00, due September 30, 2024. This one is already marked as paid, thank you.\n\n"
                "Best,\nTom Becker\nBecker & Partners"
            ),
            timestamp=ts("2024-09-16 14:05:00"),
            is_read=True,
        ),
        Email(
            email_id=hid("email/priya_roadmap"),
            sender=email_of("priya"),
            recipients=[USER_EMAIL],
            cc=[email_of("marcus")],
            subject="Q4 roadmap review",
            content=(
                "Hi Alex,\n\nCould we find an hour this week to walk through the Q4 roadmap with Marcus? "
                "Thursday afternoon would suit me best.\n\nThanks,\nPriya"
            ),
            timestamp=ts("2024-10-14 09:12:00"),
            is_read=True,
        ),
        Email(
            email_id=hid("email/tom_invoice_oct"),
            sender=email_of("tom"),
            recipients=[USER_EMAIL],
            subject="Invoice INV-2041 (October bookkeeping)",
            content=(
                "Hi Alex,\n\nHere is invoice INV-2041 for the October bookkeeping and quarterly tax filing. "
                "Total amount: $1,280.00. Payment is due by October 31, 2024 (bank transfer, reference INV-2041).\n\n"
                "Best,\nTom Becker\nBecker & Partners"
            ),
            timestamp=ts("2024-10-14 16:20:00"),
            is_read=False,
        ),
        Email(
            email_id=hid("email/sofia_weekend"),
            sender=email_of("sofia"),
            recipients=[USER_EMAIL],
            subject="Weekend?",
            content=("Hey Alex! Are you around this weekend? Would love to catch up over lunch. Saturday works best for me.\n\nSofia"),
            timestamp=ts("2024-10-14 19:45:00"),
            is_read=False,
        ),
    ]
    sent = [
        Email(
            email_id=hid("email/alex_to_elena_mockups"),
            sender=USER_EMAIL,
            recipients=[email_of("elena")],
            subject="Onboarding mockups",
            content="Hi Elena,\n\nThe onboarding mockups look great. Let's review them together soon.\n\nAlex",
            timestamp=ts("2024-10-11 17:30:00"),
            is_read=True,
        ),
    ]
    for email in inbox:
        emails.folders[EmailFolderName.INBOX].add_email(email)
    for email in sent:
        emails.folders[EmailFolderName.SENT].add_email(email)
    return emails


def build_calendar() -> CalendarApp:
    calendar = CalendarApp(name="Calendar")
    events = [
        CalendarEvent(
            event_id=hid("cal/standup_tue"),
            title="Team standup",
            start_datetime=ts("2024-10-15 09:00:00"),
            end_datetime=ts("2024-10-15 09:15:00"),
            tag="work",
            location="Zoom",
            attendees=[USER_NAME, full_name("priya"), full_name("marcus"), full_name("elena")],
        ),
        CalendarEvent(
            event_id=hid("cal/q4_planning_wed"),
            title="Q4 planning sync with Priya",
            start_datetime=ts("2024-10-16 15:00:00"),
            end_datetime=ts("2024-10-16 16:00:00"),
            tag="work",
            description="Prepare the Q4 headcount plan.",
            location="Room 2A",
            attendees=[USER_NAME, full_name("priya")],
        ),
        CalendarEvent(
            event_id=hid("cal/dentist_wed"),
            title="Dentist appointment",
            start_datetime=ts("2024-10-16 17:30:00"),
            end_datetime=ts("2024-10-16 18:30:00"),
            tag="personal",
            location="Bright Smile Dental, 45 Pine St",
            attendees=[USER_NAME],
        ),
        CalendarEvent(
            event_id=hid("cal/one_on_one_thu"),
            title="1:1 with Priya",
            start_datetime=ts("2024-10-17 10:00:00"),
            end_datetime=ts("2024-10-17 10:30:00"),
            tag="work",
            location="Room 3C",
            attendees=[USER_NAME, full_name("priya")],
        ),
        CalendarEvent(
            event_id=hid("cal/yoga_sat"),
            title="Yoga class",
            start_datetime=ts("2024-10-19 09:00:00"),
            end_datetime=ts("2024-10-19 10:00:00"),
            tag="personal",
            location="Mission Yoga",
            attendees=[USER_NAME],
        ),
    ]
    for event in events:
        calendar.events[event.event_id] = event
    return calendar


def _conversation(key: str, title: str, participants: list[str], messages: list[tuple[str, str, str]]):
    msgs = [
        MessageV2(sender_id=sender, message_id=hid(f"msg/{key}/{i}"), timestamp=ts(when), content=content) for i, (sender, when, content) in enumerate(messages)
    ]
    conv = ConversationV2(
        participant_ids=participants,
        messages=msgs,
        title=title,
        conversation_id=hid(f"conv/{key}"),
        last_updated=max(m.timestamp for m in msgs),
    )
    # ConversationV2.__post_init__ de-duplicates through set(): restore a hash-independent order.
    conv.participant_ids = sorted(set(participants))
    return conv


def build_messages() -> MessagingAppV2:
    name_to_id = {full_name(k): phone_of(k) for k in PEOPLE}
    messages = MessagingAppV2(
        name="Messages",
        mode=MessagingAppMode.PHONE_NUMBER,
        current_user_id=USER_PHONE,
        current_user_name=USER_NAME,
        name_to_id=dict(name_to_id),
        id_to_name={v: k for k, v in name_to_id.items()},
    )
    conversations = [
        _conversation(
            "sofia",
            f"{full_name('sofia')}",
            [USER_PHONE, phone_of("sofia")],
            [
                (phone_of("sofia"), "2024-10-13 18:02:00", "Did you see the new ramen place on Valencia?"),
                (USER_PHONE, "2024-10-13 18:10:00", "Not yet! We should try it."),
                (phone_of("sofia"), "2024-10-14 20:01:00", "Just emailed you about the weekend :)"),
            ],
        ),
        _conversation(
            "marcus",
            f"{full_name('marcus')}",
            [USER_PHONE, phone_of("marcus")],
            [
                (phone_of("marcus"), "2024-10-14 11:30:00", "The release branch is cut, QA starts tomorrow."),
                (USER_PHONE, "2024-10-14 11:32:00", "Great, thanks Marcus!"),
            ],
        ),
        _conversation(
            "design_team",
            "Design team",
            [USER_PHONE, phone_of("priya"), phone_of("elena")],
            [
                (phone_of("elena"), "2024-10-14 15:00:00", "Uploaded the new onboarding flows to the shared drive."),
                (phone_of("priya"), "2024-10-14 15:07:00", "Looks great, let's review them this week."),
            ],
        ),
    ]
    for conv in conversations:
        messages.conversations[conv.conversation_id] = conv
    return messages


class StarterScenario(Scenario):
    """Common universe for every starter scenario; subclasses only add the events flow."""

    start_time: float | None = START_TIME
    seed: int = SEED
    duration: float | None = None  # as in Gaia2 files; ARE's benchmark sets 1800 s (420 s for Time)
    config_name: str = ""  # Gaia2 config (sub-directory) the file is written to

    def init_and_populate_apps(self, *args, **kwargs) -> None:
        self.apps = [
            AgentUserInterface(),
            SystemApp(name="SystemApp"),
            build_contacts(),
            build_emails(),
            build_calendar(),
            build_messages(),
        ]

    # typed accessors
    @property
    def aui(self) -> AgentUserInterface:
        return self.get_typed_app(AgentUserInterface)

    @property
    def emails(self) -> EmailClientV2:
        return self.get_typed_app(EmailClientV2, "Emails")

    @property
    def calendar(self) -> CalendarApp:
        return self.get_typed_app(CalendarApp, "Calendar")

    @property
    def messages(self) -> MessagingAppV2:
        return self.get_typed_app(MessagingAppV2, "Messages")

    def user_message(self, event_id: str, content: str, parent=None, delay: float = 1):
        """USER-typed send_message_to_agent (fix-up a: capture mode always builds ENV events)."""
        return self.aui.send_message_to_agent(content=content).with_type(EventType.USER).with_id(event_id).depends_on(parent, delay_seconds=delay)

    def reply_to_user(self, event_id: str, content: str, parents, delay: float = 1):
        return self.aui.send_message_to_user(content=content).oracle().with_id(event_id).depends_on(parents, delay_seconds=delay)


# ---------------------------------------------------------------------------------------------
# The scenarios
# ---------------------------------------------------------------------------------------------


class StarterExecutionCalendar(StarterScenario):
    scenario_id: str = "starter_execution_calendar"
    config_name: str = "execution"
    tags: tuple[CapabilityTag, ...] = (CapabilityTag.Universe, CapabilityTag.Execution)

    def build_events_flow(self) -> None:
        with EventRegisterer.capture_mode():
            task = self.user_message(
                "user_task",
                "Please add a calendar event titled 'Q4 roadmap review' on Thursday, October 17, 2024 "
                "from 14:00 to 15:00 in Room 4B, with Priya Shah and Marcus Lee as attendees. "
                "Then send an email to Priya and Marcus (subject 'Q4 roadmap review scheduled') letting "
                "them know it is booked for Thursday 14:00-15:00 in Room 4B.",
            )
            add_event = (
                self.calendar.add_calendar_event(
                    title="Q4 roadmap review",
                    start_datetime="2024-10-17 14:00:00",
                    end_datetime="2024-10-17 15:00:00",
                    location="Room 4B",
                    attendees=[full_name("priya"), full_name("marcus")],
                )
                .oracle()
                .with_id("oracle_add_calendar_event")
                .depends_on(task, delay_seconds=1)
            )
            send_email = (
                self.emails.send_email(
                    recipients=[email_of("priya"), email_of("marcus")],
                    subject="Q4 roadmap review scheduled",
                    content=("Hi Priya and Marcus,\n\nThe Q4 roadmap review is booked for Thursday, October 17, 14:00-15:00 in Room 4B.\n\nBest,\nAlex"),
                )
                .oracle()
                .with_id("oracle_send_email")
                .depends_on(task, delay_seconds=1)
            )
            done = self.reply_to_user(
                "oracle_reply",
                "Done: 'Q4 roadmap review' is on your calendar for Thursday Oct 17, 14:00-15:00 in Room 4B "
                "with Priya Shah and Marcus Lee, and I emailed both of them.",
                [add_event, send_email],
            )
        self.events = [task, add_event, send_email, done]


class StarterSearchLookup(StarterScenario):
    scenario_id: str = "starter_search_lookup"
    config_name: str = "search"
    tags: tuple[CapabilityTag, ...] = (CapabilityTag.Universe, CapabilityTag.Search)

    def build_events_flow(self) -> None:
        with EventRegisterer.capture_mode():
            task = self.user_message(
                "user_task",
                "How much is the latest invoice Tom Becker sent me, and when is it due? Also remind me of Tom's phone number.",
            )
            answer = self.reply_to_user(
                "oracle_reply",
                "Tom Becker's latest invoice is INV-2041 (October bookkeeping): $1,280.00, due by October 31, 2024. His phone number is +14155550144.",
                task,
            )
        self.events = [task, answer]


class StarterAdaptabilityReply(StarterScenario):
    scenario_id: str = "starter_adaptability_reply"
    config_name: str = "adaptability"
    tags: tuple[CapabilityTag, ...] = (CapabilityTag.Universe, CapabilityTag.Adaptability)

    def build_events_flow(self) -> None:
        with EventRegisterer.capture_mode():
            task = self.user_message(
                "user_task",
                "Please email Elena Rossi (subject 'Design review Friday') and ask whether she can do a "
                "design review this Friday, October 18, at 11:00. When she answers, reply to her email to "
                "confirm the time she can make, and put a one-hour 'Design review' event with her on my "
                "calendar at that time. Then let me know.",
            )
            ask = (
                self.emails.send_email(
                    recipients=[email_of("elena")],
                    subject="Design review Friday",
                    content=("Hi Elena,\n\nCould you do a design review this Friday, October 18, at 11:00?\n\nThanks,\nAlex"),
                )
                .oracle()
                .with_id("oracle_send_email")
                .depends_on(task, delay_seconds=1)
            )
            elena_reply = (
                self.emails.create_and_add_email(
                    sender=email_of("elena"),
                    recipients=[USER_EMAIL],
                    subject="Re: Design review Friday",
                    content=(
                        "Hi Alex,\n\nFriday at 11:00 doesn't work for me, I'm at the client site all morning. Could we do Friday at 15:00 instead?\n\nElena"
                    ),
                )
                .with_id("env_elena_reply")
                .depends_on(task, delay_seconds=30)
            )
            reply = (
                self.emails.reply_to_email(
                    email_id="{{env_elena_reply}}",
                    content="Hi Elena, Friday at 15:00 works for me. I've put it in the calendar. See you then! Alex",
                )
                .oracle()
                .with_id("oracle_reply_to_email")
                .depends_on(elena_reply, delay_seconds=5)
            )
            add_event = (
                self.calendar.add_calendar_event(
                    title="Design review",
                    start_datetime="2024-10-18 15:00:00",
                    end_datetime="2024-10-18 16:00:00",
                    attendees=[full_name("elena")],
                )
                .oracle()
                .with_id("oracle_add_calendar_event")
                .depends_on(elena_reply, delay_seconds=5)
            )
            done = self.reply_to_user(
                "oracle_reply",
                "Elena couldn't make Friday 11:00 and proposed 15:00. I confirmed Friday Oct 18 at 15:00 by "
                "replying to her email and added a 'Design review' event with her from 15:00 to 16:00.",
                [ask, reply, add_event],
            )
        self.events = [task, ask, elena_reply, reply, add_event, done]


class StarterTimeDeadline(StarterScenario):
    scenario_id: str = "starter_time_deadline"
    config_name: str = "time"
    tags: tuple[CapabilityTag, ...] = (CapabilityTag.Universe, CapabilityTag.Time)

    def build_events_flow(self) -> None:
        with EventRegisterer.capture_mode():
            task = self.user_message(
                "user_task",
                "I'm jumping into a call. In exactly 3 minutes from now (not before), send Sofia Alvarez a "
                "text on Messages saying: 'Running 10 minutes late, order without me!'. Tell me once it's sent.",
            )
            late_text = (
                self.messages.send_message(
                    user_id=phone_of("sofia"),
                    content="Running 10 minutes late, order without me!",
                )
                .oracle()
                .with_id("oracle_send_message")
                .depends_on(task, delay_seconds=180)
            )
            done = self.reply_to_user(
                "oracle_reply",
                "Sent to Sofia Alvarez: 'Running 10 minutes late, order without me!'",
                late_text,
            )
        self.events = [task, late_text, done]


class StarterExecutionGroupChat(StarterScenario):
    scenario_id: str = "starter_execution_group_chat"
    config_name: str = "execution"
    tags: tuple[CapabilityTag, ...] = (CapabilityTag.Universe, CapabilityTag.Execution)

    def build_events_flow(self) -> None:
        with EventRegisterer.capture_mode():
            task = self.user_message(
                "user_task",
                "Create a new group conversation on Messages titled 'Offsite planning' with Marcus Lee and "
                "Elena Rossi, then post in it: 'Hi both, let's lock the offsite venue by Friday.' "
                "Let me know when it's done.",
            )
            create = (
                self.messages.create_group_conversation(
                    user_ids=[phone_of("marcus"), phone_of("elena")],
                    title="Offsite planning",
                )
                .oracle()
                .with_id("oracle_create_group")
                .depends_on(task, delay_seconds=1)
            )
            post = (
                self.messages.send_message_to_group_conversation(
                    conversation_id="{{oracle_create_group}}",
                    content="Hi both, let's lock the offsite venue by Friday.",
                )
                .oracle()
                .with_id("oracle_send_group_message")
                .depends_on(create, delay_seconds=1)
            )
            done = self.reply_to_user(
                "oracle_reply",
                "Created the 'Offsite planning' group with Marcus Lee and Elena Rossi and posted your message.",
                post,
            )
        self.events = [task, create, post, done]


class StarterMultiturnFollowup(StarterScenario):
    scenario_id: str = "starter_multiturn_followup"
    config_name: str = "execution"
    tags: tuple[CapabilityTag, ...] = (CapabilityTag.Universe, CapabilityTag.Execution)

    def build_events_flow(self) -> None:
        with EventRegisterer.capture_mode():
            task = self.user_message(
                "user_task",
                "Please add 'Lunch with Sofia' to my calendar on Saturday, October 19, 2024 from 12:30 to "
                "13:30 at Cafe Lumiere, with Sofia Alvarez as attendee.",
            )
            add_lunch = (
                self.calendar.add_calendar_event(
                    title="Lunch with Sofia",
                    start_datetime="2024-10-19 12:30:00",
                    end_datetime="2024-10-19 13:30:00",
                    location="Cafe Lumiere",
                    attendees=[full_name("sofia")],
                )
                .oracle()
                .with_id("oracle_add_lunch")
                .depends_on(task, delay_seconds=1)
            )
            done1 = self.reply_to_user(
                "oracle_reply_turn1",
                "Added 'Lunch with Sofia' on Saturday Oct 19, 12:30-13:30 at Cafe Lumiere.",
                add_lunch,
            )
            followup = self.user_message(
                "user_followup",
                "Thanks! Sofia just told me she can only make it at 13:00. Please move the lunch to "
                "13:00-14:00 on the same day (same place), and text her on Messages that it's moved to 13:00.",
                parent=done1,
                delay=5,
            )
            delete_old = (
                self.calendar.delete_calendar_event(event_id="{{oracle_add_lunch}}")
                .oracle()
                .with_id("oracle_delete_lunch")
                .depends_on(followup, delay_seconds=1)
            )
            add_new = (
                self.calendar.add_calendar_event(
                    title="Lunch with Sofia",
                    start_datetime="2024-10-19 13:00:00",
                    end_datetime="2024-10-19 14:00:00",
                    location="Cafe Lumiere",
                    attendees=[full_name("sofia")],
                )
                .oracle()
                .with_id("oracle_add_moved_lunch")
                .depends_on(followup, delay_seconds=1)
            )
            text_sofia = (
                self.messages.send_message(
                    user_id=phone_of("sofia"),
                    content="Hi Sofia, lunch on Saturday is moved to 13:00 at Cafe Lumiere. See you there!",
                )
                .oracle()
                .with_id("oracle_text_sofia")
                .depends_on(followup, delay_seconds=1)
            )
            done2 = self.reply_to_user(
                "oracle_reply_turn2",
                "Moved 'Lunch with Sofia' to Saturday Oct 19, 13:00-14:00 at Cafe Lumiere and texted Sofia.",
                [delete_old, add_new, text_sofia],
            )
        self.events = [task, add_lunch, done1, followup, delete_old, add_new, text_sofia, done2]


class StarterAmbiguityClarify(StarterScenario):
    scenario_id: str = "starter_ambiguity_clarify"
    config_name: str = "ambiguity"
    tags: tuple[CapabilityTag, ...] = (CapabilityTag.Universe, CapabilityTag.Ambiguity)

    def build_events_flow(self) -> None:
        with EventRegisterer.capture_mode():
            task = self.user_message(
                "user_task",
                "Cancel my meeting with Priya this week, something came up.",
            )
            ask = self.reply_to_user(
                "oracle_reply",
                "Besides the team standup, you have two meetings with Priya Shah this week: 'Q4 planning sync "
                "with Priya' on Wednesday Oct 16, 15:00-16:00, and '1:1 with Priya' on Thursday Oct 17, "
                "10:00-10:30. Which one should I cancel (or both)?",
                task,
            )
        self.events = [task, ask]


SCENARIOS: list[type[StarterScenario]] = [
    StarterExecutionCalendar,
    StarterSearchLookup,
    StarterAdaptabilityReply,
    StarterTimeDeadline,
    StarterExecutionGroupChat,
    StarterMultiturnFollowup,
    StarterAmbiguityClarify,
]


# ---------------------------------------------------------------------------------------------
# Augmentation (Gaia2's noise phase): tool renames / paraphrases and distractor event material
# ---------------------------------------------------------------------------------------------

#: New messages for each existing Messages conversation (sender key, content): what ARE's
#: EnvEventsExpander turns into distractor ENV events (`create_and_add_message`).
AUGMENTATION_MESSAGES = {
    "sofia": [
        ("sofia", "Also, the ramen place has a new tasting menu."),
        ("sofia", "No rush on the weekend plans, just let me know."),
        ("sofia", "My sister might join us too, hope that's ok."),
        ("sofia", "Saw a great pottery class flyer, thought of you!"),
    ],
    "marcus": [
        ("marcus", "QA found two minor bugs, nothing blocking."),
        ("marcus", "Do you have the link to the release notes draft?"),
        ("marcus", "Nevermind, found it in the wiki."),
        ("marcus", "Coffee later this week?"),
    ],
    "design_team": [
        ("elena", "I pushed a small update to the icon set."),
        ("priya", "Thanks Elena, the new icons look crisp."),
        ("elena", "Feedback welcome before Friday."),
        ("priya", "I'll add it to the review agenda."),
    ],
}

#: New inbox emails (sender key, subject, content). ARE 1.2.0's expander adds email events only for
#: apps named EmailClientV2 / EmailClientApp / Mail, so for Gaia2's `Emails` name these are data only.
AUGMENTATION_EMAILS = [
    ("marcus", "Team offsite ideas", "Hi Alex,\n\nA few of us are collecting ideas for the team offsite. Any suggestions?\n\nMarcus"),
    ("elena", "Design critique notes", "Hi Alex,\n\nSharing my notes from the design critique; nothing urgent.\n\nElena"),
    ("priya", "Reading list", "Hi Alex,\n\nHere are two articles on onboarding metrics I enjoyed.\n\nPriya"),
]


def augmentation_block(apps: list) -> dict:
    """The file's `augmentation` block: for every app tool an alternative name and a paraphrased
    description (keyed by `AppTool.name`, from the corpus's text material), and `apps` states
    for ARE's EnvEventsExpander (new messages in the existing conversations, new emails)."""
    import random

    rng = random.Random(SEED + 7)
    names: dict[str, str] = {}
    descriptions: dict[str, str] = {}
    by_name = {app.name: app for app in apps if app.name not in ("AgentUserInterface", "SystemApp")}
    for app_name in sorted(by_name):
        app = by_name[app_name]
        note = corpus_text.MESSAGING_MODE_NOTE[app.mode.value] if isinstance(app, MessagingAppV2) else ""
        for method in sorted(t.name.split("__", 1)[1] for t in app.get_tools()):
            alternatives, description = corpus_text.TOOL_TEXT[method]
            names[f"{app_name}__{method}"] = f"{app_name}__{rng.choice(alternatives)}"
            descriptions[f"{app_name}__{method}"] = description + note
    conversations = {}
    for conv in sorted(by_name["Messages"].conversations.values(), key=lambda c: c.conversation_id):
        key = next(k for k in AUGMENTATION_MESSAGES if hid(f"conv/{k}") == conv.conversation_id)
        conversations[conv.conversation_id] = {
            "conversation_id": conv.conversation_id,
            "participant_ids": list(conv.participant_ids),
            "title": conv.title,
            "last_updated": START_TIME,
            "messages": [
                {"sender_id": phone_of(sender), "message_id": hid(f"aug-msg/{key}/{i}"), "timestamp": START_TIME, "content": content}
                for i, (sender, content) in enumerate(AUGMENTATION_MESSAGES[key])
            ],
        }
    messages_state = {**{k: v for k, v in by_name["Messages"].get_state().items() if k != "conversations"}, "conversations": conversations}
    emails = [
        {
            "email_id": hid(f"aug-email/{i}"),
            "sender": email_of(sender),
            "recipients": [USER_EMAIL],
            "subject": subject,
            "content": content,
            "cc": [],
            "attachments": {},
            "timestamp": START_TIME,
            "is_read": False,
            "parent_id": None,
        }
        for i, (sender, subject, content) in enumerate(AUGMENTATION_EMAILS)
    ]
    mail = {"user_email": USER_EMAIL, "view_limit": 5, "folders": {"INBOX": {"folder_name": "INBOX", "emails": emails}}}
    return {
        "apps": [
            {"name": "Emails", "class_name": "EmailClientV2", "app_state": mail},
            {"name": "Messages", "class_name": "MessagingAppV2", "app_state": messages_state},
        ],
        "tool_names_mapping": names,
        "tool_descriptions_mapping": descriptions,
    }


# ---------------------------------------------------------------------------------------------
# Export + fix-ups
# ---------------------------------------------------------------------------------------------


def export_scenario(cls: type[StarterScenario]) -> tuple[str, dict]:
    scenario = cls()
    scenario.initialize()
    env = Environment(EnvironmentConfig(oracle_mode=True, queue_based_loop=True, start_time=scenario.start_time))
    data = json.loads(JsonScenarioExporter().export_to_json(env=env, scenario=scenario, scenario_id=scenario.scenario_id))

    # The export carries wall-clock / uuid4 values: pin them, and apply ARE 1.2.0's fix-ups.
    apply_exporter_fixups(data, ensure_ascii=True)
    data["augmentation"] = augmentation_block(scenario.apps)
    return cls.config_name, data


def render(data: dict) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def build_all(out_dir: Path) -> list[Path]:
    written = []
    for cls in SCENARIOS:
        config, data = export_scenario(cls)
        path = out_dir / config / SPLIT / f"{data['metadata']['definition']['scenario_id']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(data), encoding="utf-8")
        written.append(path)
    return written


def check(out_dir: Path) -> int:
    with tempfile.TemporaryDirectory(prefix="starter_scenarios_") as tmp:
        tmp_dir = Path(tmp)
        fresh = {p.relative_to(tmp_dir) for p in build_all(tmp_dir)}
        committed = {p.relative_to(out_dir) for p in out_dir.glob(f"*/{SPLIT}/starter_*.json")}
        status = 0
        for rel in sorted(committed - fresh):
            print(f"stale file (no longer generated): {out_dir / rel}")
            status = 1
        for rel in sorted(fresh):
            new = (tmp_dir / rel).read_text(encoding="utf-8")
            target = out_dir / rel
            if not target.exists():
                print(f"missing: {target}")
                status = 1
                continue
            old = target.read_text(encoding="utf-8")
            if old != new:
                status = 1
                print(f"differs: {target}")
                sys.stdout.writelines(list(difflib.unified_diff(old.splitlines(True), new.splitlines(True), str(target), "regenerated", n=2))[:80])
        if status == 0:
            print(f"OK: {len(fresh)} starter scenarios up to date in {out_dir}")
        return status


# ---------------------------------------------------------------------------------------------
# --describe: what each scenario checks (for writing perturbation tests)
# ---------------------------------------------------------------------------------------------


def describe(data: dict, config: str) -> str:
    from are.simulation.validation.constants import TOOL_ARG_CHECKER_TYPE_REGISTRY

    app_class = {app["name"]: app["class_name"] for app in data["apps"]}
    events = {e["event_id"]: e for e in data["events"]}
    smtu = {eid for eid, e in events.items() if e["class_name"] == "OracleEvent" and e["action"]["function"] == "send_message_to_user"}

    turn: dict[str, int] = {}

    def turn_of(eid: str) -> int:
        if eid not in turn:
            deps = events[eid]["dependencies"]
            turn[eid] = max((turn_of(d) + (1 if d in smtu else 0) for d in deps), default=0)
        return turn[eid]

    times: dict[str, float] = {}

    def time_of(eid: str) -> float:
        if eid not in times:
            e = events[eid]
            base = max((time_of(d) for d in e["dependencies"]), default=0.0)
            times[eid] = base + (e["event_relative_time"] or 0.0)
        return times[eid]

    d = data["metadata"]["definition"]
    lines = [
        f"### {d['scenario_id']}  (config `{config}`, tags {d['tags']}, "
        f"{max(turn_of(e) for e in events) + 1} turn(s), "
        f"{sum(e['class_name'] == 'OracleEvent' for e in events.values())} oracle events)",
        "",
        "| event | type | t (s) | tool | depends on (delay s) | hard-checked args | time-checked |",
        "|---|---|---|---|---|---|---|",
    ]
    for eid, e in sorted(events.items(), key=lambda kv: (time_of(kv[0]), kv[0])):
        a = e["action"]
        tool = f"{app_class.get(a['app'], a['app'])}__{a['function']}"
        hard = "-"
        timed = "-"
        if e["class_name"] == "OracleEvent":
            checkers = TOOL_ARG_CHECKER_TYPE_REGISTRY.get(tool, {})
            args = {x["name"]: x["value"] for x in a["args"]}
            hard = ", ".join(f"{n}={args.get(n)!r} ({c.value})" for n, c in checkers.items() if c.is_hard()) or "none"
            delay = e["event_relative_time"] or 0.0
            timed = f"yes: {delay:g} s after parents, window [{delay - 10:g}, {delay + 25:g}]" if delay > 1 or e.get("event_time_comparator") else "no"
        deps = ", ".join(e["dependencies"]) or "start"
        lines.append(f"| `{eid}` | {e['event_type']} | {time_of(eid):g} | {tool} | {deps} ({e['event_relative_time']:g}) | {hard} | {timed} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output root (default: scenarios/)")
    parser.add_argument("--check", action="store_true", help="regenerate into a temp dir and diff against --out")
    parser.add_argument("--describe", action="store_true", help="print the oracle summary of each scenario")
    args = parser.parse_args(argv)
    if args.check:
        return check(args.out)
    if args.describe:
        for cls in SCENARIOS:
            config, data = export_scenario(cls)
            print(describe(data, config))
        return 0
    for path in build_all(args.out):
        print(path.relative_to(args.out.parent) if args.out.parent in path.parents else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
