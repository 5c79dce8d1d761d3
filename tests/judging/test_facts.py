"""The strict judge's fact check (pure Python): same facts in any format pass, wrong or missing fail."""

from __future__ import annotations

import pytest

from orchestra.judging.fact_check import check_text
from orchestra.judging.facts import Gazetteer, extract_facts
from orchestra.judging.mutation import wrong_version
from orchestra.judging.scenario_names import universe_names

GAZ = universe_names(
    [
        {
            "contacts": {
                "1": {"first_name": "Tom", "last_name": "Becker"},
                "2": {"first_name": "Priya", "last_name": "Shah"},
                "3": {"first_name": "Alex", "last_name": "Morgan", "is_user": True},
            },
            "products": {"p1": {"name": "Stewart Merino Wool Scarf"}},
        }
    ]
)


@pytest.mark.parametrize("agent", ["It costs 165.99.", "It costs $165.99.", "It costs 165.99 EUR.", "USD 165.99 it is", "$165.990"])
def test_the_same_amount_in_any_format(agent):
    assert check_text("The total is $165.99.", agent).ok


@pytest.mark.parametrize("agent", ["see you at 3 pm", "see you at 15:00", "see you at 3:00 PM", "see you at 15h00", "at 3pm"])
def test_the_same_time_in_any_format(agent):
    assert check_text("The call is at 15:00.", agent).ok


@pytest.mark.parametrize("agent", ["on 18 October", "on Oct. 18th", "on 2024-10-18", "on 10/18/2024", "on October 18, 2024"])
def test_the_same_date_in_any_format(agent):
    assert check_text("Booked for Friday, October 18.", agent + " (a Friday)").ok


@pytest.mark.parametrize("agent", ["INV 2041", "inv-2041", "INV2041"])
def test_ids_ignore_case_spaces_and_dashes(agent):
    assert check_text("Invoice INV-2041 is due.", f"Invoice {agent} is due.").ok


def test_phone_numbers_compare_by_digits():
    assert check_text("Call +14155550144.", "Call (415) 555-0144.").ok
    assert not check_text("Call +14155550144.", "Call (415) 555-0145.").ok


@pytest.mark.parametrize(
    "agent,missing",
    [
        ("The total is $175.99.", "amount"),
        ("I have no idea, sorry.", "amount"),
        ("The call is at 16:00 on Oct 18, $165.99.", "time"),
        ("Tom Becker owes $165.99 at 15:00 on Oct 19.", "date"),
    ],
)
def test_wrong_or_missing_facts_are_named(agent, missing):
    check = check_text("Tom Becker owes $165.99; the call is at 15:00 on October 18.", agent, GAZ)
    assert not check.ok
    assert any(f.kind == missing for f in check.missing), check.note


def test_names_of_the_universe_are_facts_and_plurals_are_the_same_name():
    facts = extract_facts("Ordered 2 x Stewart Merino Wool Scarf for Tom Becker.", GAZ)
    assert {("name", "Stewart Merino Wool Scarf"), ("name", "Tom Becker")} <= {(f.kind, f.text) for f in facts}
    assert check_text("Ordered 2 x Stewart Merino Wool Scarf for Tom Becker.", "I ordered two Stewart Merino Wool Scarves for Tom Becker.", GAZ).ok


def test_a_person_the_oracle_does_not_mention_is_a_contradiction():
    check = check_text("Texted Tom Becker: running 10 minutes late.", "Texted Tom Becker and Priya Shah: running 10 minutes late.", GAZ)
    assert not check.ok and "Priya Shah" in check.note
    # ...unless the user's task mentions them
    assert check_text(
        "Texted Tom Becker: running 10 minutes late.", "Texted Tom Becker and Priya Shah: running 10 minutes late.", GAZ, context="Text Tom and Priya Shah"
    ).ok


def test_a_count_is_the_same_fact_only_for_the_same_thing():
    assert check_text("Davies Court has 1 bedroom.", "Davies Court has one bedroom.").ok
    assert not check_text("Davies Court has 1 bedroom.", "Which one? Davies Court has 2 bedrooms.").ok


def test_an_oracle_text_without_facts_is_not_checked_and_says_so():
    check = check_text("On my way!", "Heading over now.")
    assert check.ok and "no checkable fact" in check.note and check.required == []


def test_the_users_own_name_is_never_a_plausible_wrong_name():
    assert GAZ.people == ["Priya Shah", "Tom Becker"]


def test_wrong_version_changes_every_fact_and_is_rejected():
    text = "Tom Becker's invoice INV-2041: $1,280.00, due October 31, 2024 at 15:00."
    wrong, changed = wrong_version(text, GAZ, GAZ.people)
    assert wrong != text and len(changed) >= 5
    assert not check_text(text, wrong, GAZ).ok


def test_empty_gazetteer_and_non_text_values():
    assert check_text("Budget: 120", 120, Gazetteer()).ok
    assert not check_text("Budget: 120", None).ok


@pytest.mark.parametrize("agent", ["Booked a Premium cab to the station.", "Booked a Van to the station."])
def test_a_cab_of_another_service_type_is_a_wrong_fact(agent):
    # univ_03_mt_adapt_cab_rebook: "Default", "Premium", "Van" are ordinary words, but said of a cab they are the booking
    check = check_text("Booked a Default cab to the station.", agent, GAZ)
    assert not check.ok and "default" in check.note.lower()
    assert check_text("Booked a Default cab to the station.", "Your Default ride to the station is booked.", GAZ).ok
    assert check_text("I booked a Premium cab and told Roger.", "Ordered a Premium one for you; Roger knows.", GAZ).ok


@pytest.mark.parametrize(
    "oracle, agent",
    [
        ("The call is at 15:15.", "The call is at quarter past three."),
        ("The call is at 15:15.", "The call is at 3.15 pm."),
        ("The call is at 15:00.", "The call is at three o'clock."),
        ("The party is at 20:30.", "The party is at half past eight in the evening."),
        ("The party is at 20:30.", "The party starts at half past 8 pm."),
        ("Pickup at 07:45.", "Pickup at a quarter to eight in the morning."),
        ("The total is €1,234.50.", "The total is 1.234,50 €."),
        ("The total is €1,234.50.", "The total is 1 234,50 EUR."),
        ("The total is €12.50.", "The total is EUR 12,50."),
        ("Booked for Tuesday, October 15.", "Booked for Tuesday 15.10.2024."),
    ],
)
def test_times_in_words_dotted_times_and_dates_and_decimal_commas_are_the_same_fact(oracle, agent):
    assert check_text(oracle, agent).ok, check_text(oracle, agent).note


@pytest.mark.parametrize(
    "oracle, agent",
    [
        ("The party is at 20:30.", "The party is at half past eight in the morning."),
        ("The call is at 15:15.", "The call is at quarter to three."),
        ("The call is at 15:15.", "The call is at 3.15 am."),
        ("The total is €1,234.50.", "The total is 1.234,05 €."),
        ("Booked for Tuesday, October 15.", "Booked for Tuesday 10.15.2024."),
        ("The call is at 17:00.", "You have five unread emails."),  # a bare number word is not a time
    ],
)
def test_the_new_formats_do_not_accept_other_values(oracle, agent):
    assert not check_text(oracle, agent).ok
