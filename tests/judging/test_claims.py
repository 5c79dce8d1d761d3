"""The strict judge on how a text states its facts (issue #28 finding 18): hedges, denials, texts
unsure of themselves, values the oracle does not have, and terse confirmations of a done action.
Pure Python: `check_text` as the strict judge calls it (`request` only for answers to the user)."""

from __future__ import annotations

import pytest

from orchestra.judging.claims import read_claims
from orchestra.judging.fact_check import asks_for_information, check_text
from orchestra.judging.facts import read_text
from orchestra.judging.scenario_names import universe_names

GAZ = universe_names(
    [
        {
            "contacts": {
                "1": {"first_name": "Elena", "last_name": "Rossi"},
                "2": {"first_name": "Marcus", "last_name": "Lee"},
                "3": {"first_name": "Pauric", "last_name": "Fresh"},
                "4": {"first_name": "Brittany", "last_name": "Tate"},
                "5": {"first_name": "Caitlin", "last_name": "Garcia", "is_user": True},
            },
            "products": {
                "p": {"name": "Stewart Merino Wool Scarf", "variants": {"a": {"options": {"Color": "Navy"}}, "b": {"options": {"Color": "Burgundy"}}}}
            },
        }
    ]
)


@pytest.mark.parametrize(
    "agent",
    [
        "Elena can do Friday at 15:00 or 16:00.",
        "Elena can do Friday at 15:00 (or maybe 16:00).",
        "Elena can do Friday, it's either 16:00 or 15:00.",
        "Elena proposed 11:00-12:00, or maybe 15:00-16:00, on Friday.",
    ],
)
def test_the_right_value_offered_only_as_one_of_alternatives_is_a_hedge(agent):
    check = check_text("Elena proposed 15:00 on Friday.", agent, GAZ)
    assert not check.ok and "hedge" in check.note, check.note


@pytest.mark.parametrize(
    "oracle, agent",
    [
        ("Placed on October 12, 2024.", "Placed on October 12 or 21, 2024."),
        ("You completed 54 cab rides.", "You completed 54 (maybe 45) cab rides."),
        ("The rent is $1,480.00 a month.", "The rent is $1,480 or $1,840 a month."),
        ("Ordered the Stewart Merino Wool Scarf in Navy.", "Ordered the Stewart Merino Wool Scarf in Navy or Burgundy."),
        ("Lunch at 12:30 at Cafe Lumiere.", "Lunch at 12:30 at Cafe Lumiere or at the Harbour Bistro."),
    ],
)
def test_hedges_of_every_kind_of_value(oracle, agent):
    assert not check_text(oracle, agent, GAZ).ok


def test_alternatives_that_are_reported_or_asked_are_no_hedge():
    # the right value asserted elsewhere: the alternatives are what was offered
    assert check_text("Replied to Elena that 11:00 works.", "Elena offered 11:00 or 14:00; I replied to her that 11:00 works.", GAZ).ok
    # a question offers alternatives to choose from
    assert check_text("Friday, October 18, or Saturday, October 19?", "Do you want Friday, October 18 or Saturday, October 19?", GAZ).ok


@pytest.mark.parametrize(
    "oracle, agent",
    [
        ("The new listing costs $2,750.00 a month.", "The new listing isn't $2,750 - it's $2,570 a month."),
        ("Elena proposed 15:00 on Friday.", "Elena can't do 15:00 on Friday; she proposed 11:00."),
        ("Elena proposed Thursday.", "Elena said Thursday doesn't work, Friday does."),
        ("The party starts at 20:30.", "The party doesn't start at 20:30."),
        ("Texted Pauric Fresh.", "I didn't text Pauric Fresh."),
        ("The Stewart Merino Wool Scarf comes in Navy and Burgundy.", "The Stewart Merino Wool Scarf comes in Navy; it doesn't come in Burgundy."),
    ],
)
def test_the_right_value_negated_is_a_denial(oracle, agent):
    check = check_text(oracle, agent, GAZ)
    assert not check.ok and "negated" in check.note, check.note


def test_a_negation_the_oracle_makes_too_or_of_another_value_is_no_denial():
    oracle = "Elena couldn't make Friday 11:00 and proposed 15:00."
    assert check_text(oracle, "Friday at 11:00 didn't work for Elena, so she proposed 3 pm.", GAZ).ok
    moved = "Move dinner from Friday to Saturday."
    assert check_text("Dinner is on Saturday at 19:00.", "Dinner's not on Friday any more - it's Saturday at 7 pm.", GAZ, context=moved).ok
    assert check_text("Lunch is at 13:30.", "Instead of 12:30, lunch is now at 1:30 pm.", GAZ, context="lunch at 12:30").ok


@pytest.mark.parametrize("agent", ["The rent is $1,480 a month, I'm not sure.", "The rent is maybe $1,480 a month.", "The rent is about $1,480 a month."])
def test_a_text_unsure_of_itself_is_a_hedge(agent):
    check = check_text("The rent is $1,480.00 a month.", agent, GAZ)
    assert not check.ok and "unsure" in check.note, check.note


@pytest.mark.parametrize(
    "oracle, agent, what",
    [
        ("The invoice is £626.63.", "The invoice is £626.63, plus a £25.00 late fee.", "amount"),
        ("Renewal forwarded to Elena Rossi.", "Renewal forwarded to Elena Rossi; the rent goes up by 10%.", "percentage"),
        ("14 of your contacts work there.", "15 of your contacts work there.", "count"),
        ("Booked Room 4B at 14:00.", "Booked Room 4B at 14:00 and Room 2A at 15:00.", "id"),
        ("Booked at 14:00.", "Booked at 14:00; Elena can only stay until 14:30.", "time"),
        ("Posted the note and messaged Elena.", "Posted the note and messaged Elena and Pauric.", "person"),
        (
            "Sent to Brittany Tate: 'Call is running long, start dinner without me!'",
            "Sent to Brittany Tate: 'Call is running long, I will be home soon!'",
            "quote",
        ),
    ],
)
def test_a_value_of_a_kind_that_matters_that_the_oracle_does_not_have_is_a_contradiction(oracle, agent, what):
    check = check_text(oracle, agent, GAZ)
    assert not check.ok and what in check.note, check.note


def test_values_from_the_users_task_and_unit_prices_are_no_contradiction():
    assert check_text("Texted Pauric at 14:00.", "Texted Pauric at 14:00, as you asked, up to $3,000.00.", GAZ, context="budget $3,000.00").ok
    assert check_text("Ordered 2 x Stewart Merino Wool Scarf ($78.00).", "Ordered two Stewart Merino Wool Scarves at $39 each ($78 in all).", GAZ).ok


ACTION = "In 3 minutes, text Brittany on Messages: 'Call is running long, start dinner without me!'. Tell me once it's sent."
SENT = "Sent to Brittany Tate: 'Call is running long, start dinner without me!'"


@pytest.mark.parametrize("agent", ["Sent!", "Done - Brittany has your message."])
def test_a_terse_confirmation_of_an_action_the_user_asked_for_needs_no_details(agent):
    check = check_text(SENT, agent, GAZ, context=ACTION, request=ACTION)
    assert check.ok and "confirmation" in check.note, check.note


def test_what_a_confirmation_is_not():
    # an e-mail or a message to someone else (no request) must carry the facts
    assert not check_text(SENT, "Sent!", GAZ, context=ACTION).ok
    # a question whose answer is information
    question = "How much is the rent of Wilson Place?"
    assert asks_for_information(question) and not asks_for_information(ACTION)
    assert not check_text("The rent is $1,480.00 a month.", "Done!", GAZ, context=question, request=question).ok
    # what the user did not give must be said: the time Elena proposed
    task = "Ask Elena for Friday 11:00, book the time she proposes, and tell me."
    assert not check_text("Elena proposed 15:00: booked for Friday.", "Done, booked as she asked.", GAZ, context=task, request=task).ok
    # an oracle that asks the user something is not answered by "Done"
    assert not check_text("Elena Rossi or Marcus Lee?", "Done!", GAZ, context="Email Elena or Marcus", request="Email Elena or Marcus").ok
    # a text that reports something as not done, or restates some details and not others
    assert not check_text(SENT, "I couldn't send it.", GAZ, context=ACTION, request=ACTION).ok
    task = "Book 'Design review' with Elena on Friday 15:00-16:00 and tell me once it's booked."
    oracle = "Booked 'Design review' with Elena Rossi on Friday, 15:00-16:00."
    assert check_text(oracle, "Done, it's in your calendar.", GAZ, context=task, request=task).ok
    assert not check_text(oracle, "Done, booked for 15:00.", GAZ, context=task, request=task).ok


def test_a_day_without_its_month_and_the_users_first_name():
    assert check_text("Booked for Friday, October 18.", "Booked for Friday the 18th.", GAZ).ok
    assert not check_text("Booked for Friday, October 18.", "Booked for Saturday the 19th.", GAZ).ok
    # "Wed 16 Oct 3-4 pm" is October 16, not also October 3
    assert (10, 3, None) not in read_text("Wed 16 Oct 3-4 pm").dates
    # a signature by the user's first name
    assert check_text("Hi Elena, see you at 15:00. Caitlin Garcia", "Hi Elena, see you at 3 pm! Caitlin", GAZ).ok


def test_claims_say_how_each_value_is_stated():
    claims = read_claims("Not $2,750 - it's $2,570. Friday or Saturday? Booked 15:00 or 16:00.", GAZ)
    by_text = {m.text: m for m in claims.mentions}
    assert by_text["$2,750"].negated and not by_text["$2,570"].negated
    assert by_text["Friday"].question and not by_text["Friday"].alternative
    assert by_text["15:00"].alternative and by_text["16:00"].group == by_text["15:00"].group
