"""Small Gaia2-format scenarios for agent-loop parity tests (not a test module).

Written with ARE's scenario API on the starter universe of `scripts/build_starter_scenarios.py`
(reused, not copied) and exported with ARE's `JsonScenarioExporter` plus the fix-ups ARE 1.2.0
needs, into a temporary folder. Each one isolates a loop behaviour: an environment-started turn,
a notification between turns, two user messages at once, a tool output over 20,000 characters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.env_turn_scenarios import starter_builder, write_exported

REPO = Path(__file__).resolve().parents[2]
BIG_EMAIL_ID = "b16e0a11b16e0a11b16e0a11b16e0a11"
BIG_EMAIL_CHARS = 22_000


def _classes() -> dict[str, Any]:
    st = starter_builder()
    from are.simulation.apps.email_client import Email
    from are.simulation.types import CapabilityTag, EventRegisterer

    S = st.StarterScenario

    class EnvTurn2(S):
        """Turn 2 starts with an email from Elena (ENV, 5 s after the agent's turn-1 answer), no user message."""

        scenario_id: str = "parity_env_turn2"
        config_name: str = "adaptability"
        tags: tuple = (CapabilityTag.Universe, CapabilityTag.Adaptability)

        def build_events_flow(self) -> None:
            with EventRegisterer.capture_mode():
                task = self.user_message(
                    "user_task",
                    "Email Elena Rossi (subject 'Design review Friday') to ask whether she can do a design review "
                    "this Friday, October 18, at 11:00, and tell me once it's sent. When she answers, put a one-hour "
                    "'Design review' event with her on my calendar at the time she can make, then let me know.",
                )
                ask = (
                    self.emails.send_email(
                        recipients=[st.email_of("elena")],
                        subject="Design review Friday",
                        content="Hi Elena, could you do a design review this Friday, October 18, at 11:00? Thanks, Alex",
                    )
                    .oracle()
                    .with_id("oracle_send_email")
                    .depends_on(task, delay_seconds=1)
                )
                told = self.reply_to_user("oracle_reply_1", "I emailed Elena to ask about Friday 11:00.", ask)
                answer = (
                    self.emails.create_and_add_email(
                        sender=st.email_of("elena"),
                        recipients=[st.USER_EMAIL],
                        subject="Re: Design review Friday",
                        content="Hi Alex, 11:00 doesn't work for me, could we do Friday at 15:00 instead? Elena",
                    )
                    .with_id("env_elena_answer")
                    .depends_on(told, delay_seconds=5)
                )
                add = (
                    self.calendar.add_calendar_event(
                        title="Design review",
                        start_datetime="2024-10-18 15:00:00",
                        end_datetime="2024-10-18 16:00:00",
                        attendees=[st.full_name("elena")],
                    )
                    .oracle()
                    .with_id("oracle_add_calendar_event")
                    .depends_on(answer, delay_seconds=5)
                )
                done = self.reply_to_user("oracle_reply_2", "Elena proposed 15:00; the design review is on your calendar.", add)
            self.events = [task, ask, told, answer, add, done]

    class EnvTurns3(S):
        """Three turns on two apps: turns 2 and 3 each start with an ENV event (a text, then an email)."""

        scenario_id: str = "parity_env_turns3"
        config_name: str = "adaptability"
        tags: tuple = (CapabilityTag.Universe, CapabilityTag.Adaptability)

        def build_events_flow(self) -> None:
            sofia = st.phone_of("sofia")
            with EventRegisterer.capture_mode():
                task = self.user_message(
                    "user_task",
                    "Text Sofia Alvarez on Messages to ask if she is free for lunch this Saturday at 12:30, and tell me "
                    "once it's sent. Then handle her answers: put the lunch on my calendar (one hour, 'Lunch with Sofia') "
                    "at the time she can make, and keep it up to date if she changes plans. Tell me each time.",
                )
                ask = (
                    self.messages.send_message(user_id=sofia, content="Hi Sofia! Free for lunch this Saturday at 12:30?")
                    .oracle()
                    .with_id("oracle_text_sofia")
                    .depends_on(task, delay_seconds=1)
                )
                told1 = self.reply_to_user("oracle_reply_1", "I texted Sofia about Saturday lunch.", ask)
                answer = (
                    self.messages.create_and_add_message(conversation_id=st.hid("conv/sofia"), sender_id=sofia, content="12:30 is too early for me, 13:00?")
                    .with_id("env_sofia_text")
                    .depends_on(told1, delay_seconds=4)
                )
                add = (
                    self.calendar.add_calendar_event(
                        title="Lunch with Sofia",
                        start_datetime="2024-10-19 13:00:00",
                        end_datetime="2024-10-19 14:00:00",
                        attendees=[st.full_name("sofia")],
                    )
                    .oracle()
                    .with_id("oracle_add_lunch")
                    .depends_on(answer, delay_seconds=2)
                )
                told2 = self.reply_to_user("oracle_reply_2", "Sofia can do 13:00; lunch is on your calendar.", add)
                cancel = (
                    self.emails.create_and_add_email(
                        sender=st.email_of("sofia"),
                        recipients=[st.USER_EMAIL],
                        subject="Saturday",
                        content="So sorry Alex, I have to cancel Saturday lunch. Sofia",
                    )
                    .with_id("env_sofia_cancel")
                    .depends_on(told2, delay_seconds=6)
                )
                delete = (
                    self.calendar.delete_calendar_event(event_id="{{oracle_add_lunch}}")
                    .oracle()
                    .with_id("oracle_delete_lunch")
                    .depends_on(cancel, delay_seconds=2)
                )
                told3 = self.reply_to_user("oracle_reply_3", "Sofia cancelled; I removed the lunch.", delete)
            self.events = [task, ask, told1, answer, add, told2, cancel, delete, told3]

    class BetweenTurns(S):
        """An email arrives 3 s after the turn-1 answer; the user writes again at +10 s."""

        scenario_id: str = "parity_between_turns"
        config_name: str = "execution"
        tags: tuple = (CapabilityTag.Universe, CapabilityTag.Execution)

        def build_events_flow(self) -> None:
            with EventRegisterer.capture_mode():
                task = self.user_message("user_task", "What is Tom Becker's phone number?")
                told = self.reply_to_user("oracle_reply_1", "Tom Becker's phone number is +14155550144.", task)
                mail = (
                    self.emails.create_and_add_email(
                        sender=st.email_of("priya"),
                        recipients=[st.USER_EMAIL],
                        subject="Lunch",
                        content="Lunch at noon tomorrow? Priya",
                    )
                    .with_id("env_priya_mail")
                    .depends_on(told, delay_seconds=3)
                )
                again = self.user_message("user_task_2", "Thanks. And Priya Shah's email address?", told, delay=10)
                done = self.reply_to_user("oracle_reply_2", "Priya Shah's email is priya.shah@example.com.", again)
            self.events = [task, told, mail, again, done]

    class TwoUserMessages(S):
        """Two user messages delivered in the same tick: ARE joins them into one task."""

        scenario_id: str = "parity_two_user_messages"
        config_name: str = "search"
        tags: tuple = (CapabilityTag.Universe, CapabilityTag.Search)

        def build_events_flow(self) -> None:
            with EventRegisterer.capture_mode():
                first = self.user_message("user_task", "What is Tom Becker's phone number?")
                second = self.user_message("user_task_b", "Also, what is Marcus Lee's job?", first, delay=0)
                done = self.reply_to_user("oracle_reply", "Tom Becker: +14155550144. Marcus Lee is a Software Engineer.", second)
            self.events = [first, second, done]

    class MidRunUserMessage(S):
        """A second user message 2 s after the first: it arrives while the agent is working."""

        scenario_id: str = "parity_midrun_user_message"
        config_name: str = "search"
        tags: tuple = (CapabilityTag.Universe, CapabilityTag.Search)

        def build_events_flow(self) -> None:
            with EventRegisterer.capture_mode():
                first = self.user_message("user_task", "What is Tom Becker's phone number?")
                second = self.user_message("user_task_b", "Oh, and his email address too, please.", first, delay=2)
                done = self.reply_to_user("oracle_reply", "Tom Becker: +14155550144, tom.becker@example.com.", second)
            self.events = [first, second, done]

    class PendingNotification(S):
        """An email lands 1.5 s after the task, i.e. during the agent's second model call."""

        scenario_id: str = "parity_pending_notification"
        config_name: str = "search"
        tags: tuple = (CapabilityTag.Universe, CapabilityTag.Search)

        def build_events_flow(self) -> None:
            with EventRegisterer.capture_mode():
                task = self.user_message("user_task", "What is Tom Becker's phone number? Tell me once Priya has emailed me.")
                mail = (
                    self.emails.create_and_add_email(
                        sender=st.email_of("priya"),
                        recipients=[st.USER_EMAIL],
                        subject="Hi",
                        content="Hello Alex! Priya",
                    )
                    .with_id("env_priya_hi")
                    .depends_on(task, delay_seconds=1.5)
                )
                done = self.reply_to_user("oracle_reply", "Tom Becker: +14155550144. Priya has emailed you.", mail, delay=2)
            self.events = [task, mail, done]

    class BigOutput(S):
        """An email of 22,000 characters: its observation is over orchestra's former 20,000 cut."""

        scenario_id: str = "parity_big_output"
        config_name: str = "search"
        tags: tuple = (CapabilityTag.Universe, CapabilityTag.Search)

        def init_and_populate_apps(self, *args: Any, **kwargs: Any) -> None:
            super().init_and_populate_apps(*args, **kwargs)
            body = "".join(f"Line {i:05d}: the annual report figures are attached below.\n" for i in range(400))
            body = (body * (BIG_EMAIL_CHARS // len(body) + 1))[: BIG_EMAIL_CHARS - 24] + "\nTOTAL REVENUE: $9.4M\n"
            self.emails.add_email(
                Email(
                    email_id=BIG_EMAIL_ID,
                    sender=st.email_of("tom"),
                    recipients=[st.USER_EMAIL],
                    subject="Annual report (long)",
                    content=body,
                    timestamp=st.ts("2024-10-14 18:00:00"),
                    is_read=False,
                )
            )

        def build_events_flow(self) -> None:
            with EventRegisterer.capture_mode():
                task = self.user_message("user_task", "What total revenue does Tom's long annual report email state?")
                done = self.reply_to_user("oracle_reply", "It states a total revenue of $9.4M.", task)
            self.events = [task, done]

    return {c.scenario_id: c for c in (EnvTurn2, EnvTurns3, BetweenTurns, TwoUserMessages, MidRunUserMessage, PendingNotification, BigOutput)}


def write_scenario(scenario_id: str, out_dir: Path) -> Path:
    """Export one of the scenarios above to `out_dir/<config>/validation/<id>.json`."""
    return write_exported(_classes()[scenario_id], out_dir)


def starter(name: str) -> Path:
    matches = sorted(REPO.glob(f"scenarios/*/validation/{name}.json"))
    assert matches, f"bundled scenario {name} not found"
    return matches[0]
