"""Test-only Gaia2-format scenarios whose later turns start with an ENV event (not a test module).

The usual Gaia2 Adaptability shape: the user gives one task; after the agent reported, the world
moves (an email, a chat message) and the agent must react — no user message starts the turn.
Written with ARE's scenario API on the starter universe and exported with ARE's exporter (the
starter builder's fix-ups), into a folder the caller owns (tmp_path), never into scenarios/.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


@cache
def starter_builder() -> Any:
    """`scripts/build_starter_scenarios.py` as a module (its universe, helpers and exporter), loaded once."""
    path = REPO / "scripts" / "build_starter_scenarios.py"
    spec = importlib.util.spec_from_file_location("orchestra_test_starter_builder", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@cache
def _classes() -> list[type]:
    b = starter_builder()
    from are.simulation.types import CapabilityTag, EventRegisterer

    class EnvTurnEmail(b.StarterScenario):
        """2 turns: ask Elena by email; turn 2 = her reply arrives 5 s after the agent reported."""

        scenario_id: str = "test_env_turn_email"
        config_name: str = "adaptability"
        tags: tuple = (CapabilityTag.Universe, CapabilityTag.Adaptability)

        def build_events_flow(self) -> None:
            with EventRegisterer.capture_mode():
                task = self.user_message(
                    "user_task",
                    "Email Elena Rossi (subject 'Design review Friday') asking whether she can do a design review "
                    "on Friday, October 18, at 11:00, and tell me when it's sent. When she answers, confirm the time "
                    "she proposes by replying to her email, put a one-hour 'Design review' with her on my calendar, "
                    "and let me know.",
                )
                ask = (
                    self.emails.send_email(
                        recipients=[b.email_of("elena")],
                        subject="Design review Friday",
                        content="Hi Elena, could you do a design review on Friday, October 18, at 11:00? Alex",
                    )
                    .oracle()
                    .with_id("oracle_send_email")
                    .depends_on(task, delay_seconds=1)
                )
                done1 = self.reply_to_user("oracle_reply_turn1", "I emailed Elena; I'll tell you when she answers.", ask)
                elena = (
                    self.emails.create_and_add_email(
                        sender=b.email_of("elena"),
                        recipients=[b.USER_EMAIL],
                        subject="Re: Design review Friday",
                        content="Hi Alex, 11:00 doesn't work, could we do Friday at 15:00? Elena",
                    )
                    .with_id("env_elena_reply")
                    .depends_on(done1, delay_seconds=5)
                )
                reply = (
                    self.emails.reply_to_email(email_id="{{env_elena_reply}}", content="Friday 15:00 works, see you then! Alex")
                    .oracle()
                    .with_id("oracle_reply_to_email")
                    .depends_on(elena, delay_seconds=3)
                )
                add = (
                    self.calendar.add_calendar_event(
                        title="Design review",
                        start_datetime="2024-10-18 15:00:00",
                        end_datetime="2024-10-18 16:00:00",
                        attendees=[b.full_name("elena")],
                    )
                    .oracle()
                    .with_id("oracle_add_calendar_event")
                    .depends_on(elena, delay_seconds=3)
                )
                done2 = self.reply_to_user("oracle_reply_turn2", "Elena proposed Friday 15:00; confirmed and on your calendar.", [reply, add])
            self.events = [task, ask, done1, elena, reply, add, done2]

    class EnvTurnChats(b.StarterScenario):
        """3 turns: turn 2 = an email from Priya, turn 3 = a chat message from Sofia (both ENV)."""

        scenario_id: str = "test_env_turn_chats"
        config_name: str = "adaptability"
        tags: tuple = (CapabilityTag.Universe, CapabilityTag.Adaptability)

        def build_events_flow(self) -> None:
            sofia_conv = b.hid("conv/sofia")
            with EventRegisterer.capture_mode():
                task = self.user_message(
                    "user_task",
                    "Text Sofia Alvarez on Messages that I'm running 10 minutes late, and tell me when done. "
                    "Then keep an eye on my inbox and chats and handle what comes in.",
                )
                text = (
                    self.messages.send_message(user_id=b.phone_of("sofia"), content="Running 10 minutes late, sorry!")
                    .oracle()
                    .with_id("oracle_text_sofia")
                    .depends_on(task, delay_seconds=1)
                )
                done1 = self.reply_to_user("oracle_reply_turn1", "Texted Sofia that you're 10 minutes late.", text)
                priya = (
                    self.emails.create_and_add_email(
                        sender=b.email_of("priya"),
                        recipients=[b.USER_EMAIL],
                        subject="Slides",
                        content="Hi Alex, can you send me the Q4 slides? Priya",
                    )
                    .with_id("env_priya_email")
                    .depends_on(done1, delay_seconds=4)
                )
                answer = (
                    self.emails.reply_to_email(email_id="{{env_priya_email}}", content="Sure Priya, sending them today. Alex")
                    .oracle()
                    .with_id("oracle_reply_priya")
                    .depends_on(priya, delay_seconds=2)
                )
                done2 = self.reply_to_user("oracle_reply_turn2", "Priya asked for the Q4 slides; I told her you'll send them today.", answer)
                sofia = (
                    self.messages.create_and_add_message(conversation_id=sofia_conv, sender_id=b.phone_of("sofia"), content="No worries, I'm also late!")
                    .with_id("env_sofia_message")
                    .depends_on(done2, delay_seconds=6)
                )
                ack = (
                    self.messages.send_message(user_id=b.phone_of("sofia"), content="Great, see you soon!")
                    .oracle()
                    .with_id("oracle_ack_sofia")
                    .depends_on(sofia, delay_seconds=2)
                )
                done3 = self.reply_to_user("oracle_reply_turn3", "Sofia is late too; I answered her.", ack)
            self.events = [task, text, done1, priya, answer, done2, sofia, ack, done3]

    class UserMessagesTogether(b.StarterScenario):
        """1 turn: two user messages at once (one task), a third one 3 s later (arrives mid-run)."""

        scenario_id: str = "test_user_messages_together"
        config_name: str = "search"
        tags: tuple = (CapabilityTag.Universe, CapabilityTag.Search)

        def build_events_flow(self) -> None:
            with EventRegisterer.capture_mode():
                first = self.user_message("user_task", "What is Tom Becker's phone number?")
                second = self.user_message("user_task_2", "Also, what is Marcus Lee's job?", parent=first, delay=0)
                third = self.user_message("user_task_3", "And his email address, please.", parent=second, delay=3)
                answer = self.reply_to_user("oracle_reply", "Tom: +14155550144. Marcus is an engineer, marcus.lee@example.com.", third)
            self.events = [first, second, third, answer]

    return [EnvTurnEmail, EnvTurnChats, UserMessagesTogether]


def write_exported(cls: type, folder: Path) -> Path:
    """Export one scenario class with ARE's exporter to `folder/<config>/validation/<id>.json`."""
    config, data = starter_builder().export_scenario(cls)
    path = folder / config / "validation" / f"{data['metadata']['definition']['scenario_id']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def write_env_turn_scenarios(folder: Path) -> list[Path]:
    """Export the ENV-started scenarios into `folder/<config>/validation/<id>.json`."""
    return [write_exported(cls, folder) for cls in _classes()]
