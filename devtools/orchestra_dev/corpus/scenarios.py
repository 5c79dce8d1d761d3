"""Scenario templates: each one is instantiated on a universe with ARE's event builders.

A template writes the task (USER events), the environment's reactions (ENV events, only ever hung on
USER/ENV events or on an oracle answer, never on an agent action) and the expected agent actions
(oracle events). Conventions that keep the scripted judge's checks meaningful and orchestra's
perturbations applicable:

* writes carry hard-checked arguments (recipients, datetimes, attendees, ids, item ids, quantities,
  service types, paths) and refer to earlier outputs through ``{{event_id}}`` placeholders;
* oracle ids sort in execution order (``oracle_a_*``, ``oracle_b_*``, ...), and the first write of a
  scenario is one that can be repeated without an error (an email, a message, a calendar event, an
  add-to-cart), so that a duplicated first write is caught by the judge's count check rather than
  swallowed as a failed call;
* time-checked actions (Adaptability, Time) are scheduled more than 1 s after their parent, so ARE's
  -10/+25 s window applies; "within N minutes" deadlines use ``LESS_THAN``;
* Time-tagged scenarios end well within ARE's 420 s cap, the others within 1800 s.

:data:`TEMPLATES` maps a slug to (capability, template); :data:`ASSIGNMENTS` says which template runs
on which universe.
"""

from __future__ import annotations

from collections.abc import Callable

from orchestra_dev.corpus.export import Flow
from orchestra_dev.corpus.universe import Universe, hid, money

# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _items(product) -> list:
    return list(product.variants.values())


def _msg_conv(u: Universe, role: str) -> str:
    return hid(u.spec.uid, "msg", "conv", role)


def _obj(p) -> str:
    return {"Female": "her", "Male": "him"}.get(p.gender, "them")


def _subj(p) -> str:
    return {"Female": "she", "Male": "he"}.get(p.gender, "they")


# ---------------------------------------------------------------------------------------------
# Execution
# ---------------------------------------------------------------------------------------------


def exec_team_meeting(f: Flow, u: Universe) -> None:
    c1, c2 = u.roles["coworker1"], u.roles["coworker2"]
    title = f"{u.project} roadmap review"
    room = f"Room {f.rng.randint(2, 6)}{f.rng.choice('ABCD')}"
    task = f.user(
        "user_task",
        f"Please put a '{title}' meeting on my calendar for Thursday, October 17 from 14:00 to 15:00 in {room}, "
        f"with {c1.full} and {c2.full}. Then email both of them (subject '{title}') to let them know it's booked.",
    )
    add = f.oracle(
        "oracle_a_add_event",
        f.app("Calendar").add_calendar_event(
            title=title, start_datetime="2024-10-17 14:00:00", end_datetime="2024-10-17 15:00:00", location=room, attendees=[c1.full, c2.full]
        ),
        task,
    )
    mail = f.oracle(
        "oracle_b_send_email",
        f.app("Emails").send_email(
            recipients=[c1.email, c2.email],
            subject=title,
            content=f"Hi {c1.first} and {c2.first},\n\nThe {title} is booked for Thursday, October 17, 14:00-15:00 in {room}.\n\nBest,\n{u.user.first}",
        ),
        task,
    )
    f.answer(
        "oracle_reply",
        f"Done: '{title}' is on your calendar for Thursday Oct 17, 14:00-15:00 in {room} with {c1.full} and {c2.full}, and I emailed both of them.",
        [add, mail],
    )


def exec_group_chat(f: Flow, u: Universe) -> None:
    friends = [u.roles[k] for k in ("best_friend", "friend2", "friend3")]
    names = ", ".join(p.full for p in friends[:-1]) + f" and {friends[-1].full}"
    meet = u.facts["places"]["station"]
    task = f.user(
        "user_task",
        f"Create a group conversation on Messages called 'Hiking trip' with {names}, and post in it: "
        f"'Hiking on Saturday October 26! Let's meet at 8:00 at {meet}.' Also block Saturday October 26 from 08:00 "
        f"to 16:00 in my calendar as 'Hiking trip' with the three of them.",
    )
    create = f.oracle("oracle_a_create_group", f.app("Messages").create_group_conversation(user_ids=[p.phone for p in friends], title="Hiking trip"), task)
    add = f.oracle(
        "oracle_b_add_event",
        f.app("Calendar").add_calendar_event(
            title="Hiking trip", start_datetime="2024-10-26 08:00:00", end_datetime="2024-10-26 16:00:00", attendees=[p.full for p in friends]
        ),
        task,
    )
    post = f.oracle(
        "oracle_c_group_message",
        f.app("Messages").send_message_to_group_conversation(
            conversation_id="{{oracle_a_create_group}}", content=f"Hiking on Saturday October 26! Let's meet at 8:00 at {meet}."
        ),
        create,
    )
    f.answer(
        "oracle_reply",
        f"Created the 'Hiking trip' group with {names}, posted the plan, and blocked Saturday Oct 26, 08:00-16:00 in your calendar.",
        [add, post],
    )


def exec_shopping_discount(f: Flow, u: Universe) -> None:
    shop = u.facts["shop"]
    coffee, mug = _items(shop["coffee"])[1], _items(shop["mug"])[1]
    total = round((coffee.price * 2 + mug.price) * 0.85, 2)
    task = f.user(
        "user_task",
        f"Please order 2 of the {shop['coffee'].name} in Sand and 1 {shop['mug'].name} (500ml) on Shopping, "
        f"and use the discount code {shop['autumn']} at checkout.",
    )
    a = f.oracle("oracle_a_add_coffee", f.app("Shopping").add_to_cart(item_id=coffee.item_id, quantity=2), task)
    b = f.oracle("oracle_b_add_mug", f.app("Shopping").add_to_cart(item_id=mug.item_id, quantity=1), task)
    c = f.oracle("oracle_c_checkout", f.app("Shopping").checkout(discount_code=shop["autumn"]), [a, b])
    f.answer(
        "oracle_reply",
        f"Ordered 2 x {shop['coffee'].name} (Sand) and 1 x {shop['mug'].name} (500ml) with code {shop['autumn']} (15% off): total {money(total, u.cur)}.",
        c,
    )


def exec_forward_invoice(f: Flow, u: Universe) -> None:
    acc, partner = u.roles["accountant"], u.roles["partner"]
    inv = u.facts["invoices"][-1]
    brand = u.facts["newsletter_brand"]
    task = f.user(
        "user_task",
        f"Forward the latest invoice {acc.full} sent me to {partner.full} so we can pay it from the joint account, "
        f"and delete the latest {brand} newsletter from my inbox.",
    )
    fwd = f.oracle("oracle_a_forward", f.app("Emails").forward_email(email_id=inv["email_id"], recipients=[partner.email]), task)
    dele = f.oracle("oracle_b_delete", f.app("Emails").delete_email(email_id=u.facts["newsletter_email_id"]), task)
    f.answer(
        "oracle_reply",
        f"Forwarded invoice {inv['number']} ({money(inv['amount'], u.cur)}, due {inv['due']}) to {partner.full} and deleted the latest {brand} newsletter.",
        [fwd, dele],
    )


def exec_cab_dinner(f: Flow, u: Universe) -> None:
    partner = u.roles["partner"]
    restaurant = u.facts["restaurants"][1]
    short = restaurant.split(",")[0]
    task = f.user(
        "user_task",
        f"Let's do dinner on Friday. Put 'Dinner with {partner.first}' on my calendar this Friday (October 18) from "
        f"19:45 to 21:30 at {short}, with {partner.full}; book a Premium cab from home to {restaurant} for 19:15 that "
        f"day; and text {partner.first} on Messages that the table and the cab are sorted.",
    )
    add = f.oracle(
        "oracle_a_add_event",
        f.app("Calendar").add_calendar_event(
            title=f"Dinner with {partner.first}",
            start_datetime="2024-10-18 19:45:00",
            end_datetime="2024-10-18 21:30:00",
            location=short,
            attendees=[partner.full],
        ),
        task,
    )
    ride = f.oracle(
        "oracle_b_order_ride",
        f.app("Cabs").order_ride(start_location=u.user.address, end_location=restaurant, service_type="Premium", ride_time="2024-10-18 19:15:00"),
        task,
    )
    text = f.oracle(
        "oracle_c_text",
        f.app("Messages").send_message(user_id=partner.phone, content=f"Dinner is on for Friday at 19:45 at {short}, and a cab picks us up at 19:15!"),
        task,
    )
    f.answer(
        "oracle_reply",
        f"Dinner with {partner.first} is in your calendar (Fri Oct 18, 19:45-21:30 at {short}), a Premium "
        f"cab is booked for 19:15 from home, and {partner.first} has been texted.",
        [add, ride, text],
    )


def exec_apartment_shortlist(f: Flow, u: Universe) -> None:
    apts = u.facts["apartments"]
    a, b = apts["planted"]["short_a"], apts["planted"]["short_b"]
    partner = u.roles["partner"]
    task = f.user(
        "user_task",
        f"I'm looking for a 2-bedroom place in zip code {apts['zip_short']} where the pet policy is 'Pets allowed', "
        f"for at most {money(apts['budget'], u.cur)} a month. Save every matching listing on RentAFlat to my "
        f"favourites and email {partner.full} their names and prices (subject 'Apartment shortlist').",
    )
    s1 = f.oracle("oracle_a_save_first", f.app("RentAFlat").save_apartment(apartment_id=a.apartment_id), task)
    s2 = f.oracle("oracle_b_save_second", f.app("RentAFlat").save_apartment(apartment_id=b.apartment_id), task)
    mail = f.oracle(
        "oracle_c_email",
        f.app("Emails").send_email(
            recipients=[partner.email],
            subject="Apartment shortlist",
            content=f"Hi {partner.first},\n\nTwo places match: {a.name} ({a.location}, {money(a.price, u.cur)}/month) and "
            f"{b.name} ({b.location}, {money(b.price, u.cur)}/month).\n\n{u.user.first}",
        ),
        task,
    )
    f.answer(
        "oracle_reply",
        f"Two listings match and are saved: {a.name} ({money(a.price, u.cur)}) and {b.name} ({money(b.price, u.cur)}). I emailed {partner.full} the shortlist.",
        [s1, s2, mail],
    )


def exec_files_taxes(f: Flow, u: Universe) -> None:
    acc = u.roles["accountant"]
    files = u.facts["files"]["tax_files"]
    target = u.facts["files"]["tax_dir"]
    task = f.user(
        "user_task",
        f"Create a folder {target} in my files and move my three 2023 tax documents from /Downloads into it "
        f"({', '.join(files)}). Also email {acc.full} (subject '2023 tax documents') that I've gathered my 2023 "
        "documents and will send them over this week.",
    )
    mail = f.oracle(
        "oracle_a_email",
        f.app("Emails").send_email(
            recipients=[acc.email],
            subject="2023 tax documents",
            content=f"Hi {acc.first},\n\nI've gathered my 2023 tax documents and will send them over this week.\n\nBest,\n{u.user.full}",
        ),
        task,
    )
    mk = f.oracle("oracle_b_mkdir", f.app("Files").mkdir(path=target, create_recursive=True), task)
    moves = [f.oracle(f"oracle_c_move_{i}", f.app("Files").mv(path1=f"/Downloads/{name}", path2=f"{target}/{name}"), mk) for i, name in enumerate(files)]
    f.answer("oracle_reply", f"Created {target}, moved {', '.join(files)} into it, and emailed {acc.full}.", [mail, *moves])


def exec_contact_update(f: Flow, u: Universe) -> None:
    friend = u.roles["friend3"]
    new = u.facts["newcomer"]
    city, phone = u.facts["moved_to"], u.facts["new_phone"]
    task = f.user(
        "user_task",
        f"{friend.full} just moved to {city} and has a new number, {phone}. Update {friend.first}'s contact (phone and "
        f"city), add {new['first']} {new['last']} ({new['job']}, {new['email']}, {new['phone']}) as a new contact, "
        f"and text {friend.first} at the new number that I've saved it.",
    )
    edit = f.oracle("oracle_a_edit_contact", f.app("Contacts").edit_contact(contact_id=friend.contact_id, updates={"phone": phone, "city_living": city}), task)
    add = f.oracle(
        "oracle_b_add_contact",
        f.app("Contacts").add_new_contact(first_name=new["first"], last_name=new["last"], job=new["job"], email=new["email"], phone=new["phone"]),
        task,
    )
    text = f.oracle(
        "oracle_c_text",
        f.app("Messages").send_message(user_id=phone, content=f"Hi {friend.first}, saved your new number! Hope the move to {city} went well."),
        task,
    )
    f.answer(
        "oracle_reply",
        f"Updated {friend.full} (phone {phone}, city {city}), added {new['first']} {new['last']} as a contact, and texted {friend.first} at the new number.",
        [edit, add, text],
    )


def mt_exec_dinner_move(f: Flow, u: Universe) -> None:
    partner, sibling = u.roles["partner"], u.roles["sibling"]
    task = f.user("user_task", f"Put 'Family dinner' on my calendar for this Friday, October 18, 19:00-21:00, with {partner.full} and {sibling.full}.")
    add = f.oracle(
        "oracle_a_add_dinner",
        f.app("Calendar").add_calendar_event(
            title="Family dinner", start_datetime="2024-10-18 19:00:00", end_datetime="2024-10-18 21:00:00", attendees=[partner.full, sibling.full]
        ),
        task,
    )
    done1 = f.answer("oracle_reply_turn1", f"Added 'Family dinner' on Friday Oct 18, 19:00-21:00 with {partner.full} and {sibling.full}.", add)
    follow = f.user(
        "user_turn2",
        f"{sibling.first} can't make Friday after all. Please move the dinner to Saturday, October 19, "
        f"same time, and text {sibling.first} on Messages that it's now Saturday at 19:00.",
        done1,
        delay=5,
    )
    dele = f.oracle("oracle_b_delete_dinner", f.app("Calendar").delete_calendar_event(event_id="{{oracle_a_add_dinner}}"), follow)
    add2 = f.oracle(
        "oracle_c_add_moved_dinner",
        f.app("Calendar").add_calendar_event(
            title="Family dinner", start_datetime="2024-10-19 19:00:00", end_datetime="2024-10-19 21:00:00", attendees=[partner.full, sibling.full]
        ),
        follow,
    )
    text = f.oracle(
        "oracle_d_text",
        f.app("Messages").send_message(user_id=sibling.phone, content="Family dinner is moved to Saturday October 19 at 19:00, see you then!"),
        follow,
    )
    f.answer("oracle_reply_turn2", f"Moved 'Family dinner' to Saturday Oct 19, 19:00-21:00 and texted {sibling.first}.", [dele, add2, text])


def mt_exec_order_cancel(f: Flow, u: Universe) -> None:
    yoga = u.facts["shop"]["yoga"]
    purple, teal = _items(yoga)
    task = f.user("user_task", f"Buy one {yoga.name} in Purple for me on Shopping.")
    a = f.oracle("oracle_a_add_purple", f.app("Shopping").add_to_cart(item_id=purple.item_id, quantity=1), task)
    b = f.oracle("oracle_b_checkout", f.app("Shopping").checkout(), a)
    done1 = f.answer("oracle_reply_turn1", f"Ordered one {yoga.name} in Purple ({money(purple.price, u.cur)}).", b)
    follow = f.user("user_turn2", "Oh no, I meant Teal. Please cancel that order and order the Teal one instead.", done1, delay=5)
    c = f.oracle("oracle_c_cancel", f.app("Shopping").cancel_order(order_id="{{oracle_b_checkout}}"), follow)
    d = f.oracle("oracle_d_add_teal", f.app("Shopping").add_to_cart(item_id=teal.item_id, quantity=1), follow)
    e = f.oracle("oracle_e_checkout", f.app("Shopping").checkout(), d)
    f.answer("oracle_reply_turn2", f"Cancelled the Purple order and ordered the Teal {yoga.name} instead ({money(teal.price, u.cur)}).", [c, e])


# ---------------------------------------------------------------------------------------------
# Search
# ---------------------------------------------------------------------------------------------


def search_invoice(f: Flow, u: Universe) -> None:
    acc = u.roles["accountant"]
    inv = u.facts["invoices"][-1]
    task = f.user(
        "user_task", f"How much is the latest invoice from {acc.full}, what's its number and when is it due? Also remind me of {acc.first}'s phone number."
    )
    f.answer(
        "oracle_reply",
        f"The latest invoice from {acc.full} is {inv['number']} ({inv['month']} bookkeeping): "
        f"{money(inv['amount'], u.cur)}, due by {inv['due']}. {acc.first}'s phone number is {acc.phone}.",
        task,
    )


def search_order_status(f: Flow, u: Universe) -> None:
    shop = u.facts["shop"]
    order = shop["speaker_order"]
    task = f.user("user_task", f"What's the status of my order for the {shop['speaker'].name}, when did I place it and how much did I pay?")
    f.answer(
        "oracle_reply",
        f"Your order for the {shop['speaker'].name} (Orange) was placed on October 12, 2024 and is "
        f"currently shipped; you paid {money(order.order_total, u.cur)}.",
        task,
    )


def search_cab_spend(f: Flow, u: Universe) -> None:
    sept = u.facts["september_rides"]
    task = f.user("user_task", "How many cab rides did I complete in September 2024, and how much did they cost in total?")
    f.answer("oracle_reply", f"You completed {sept['count']} cab rides in September 2024, for a total of {money(sept['total'], u.cur)}.", task)


def search_apartment(f: Flow, u: Universe) -> None:
    apts = u.facts["apartments"]
    cheap = apts["planted"]["cheap"]
    task = f.user(
        "user_task",
        f"What is the cheapest furnished one-bedroom listing on RentAFlat in zip code {apts['zip_cheap']}? Give me its name, address and monthly price.",
    )
    f.answer(
        "oracle_reply",
        f"The cheapest furnished one-bedroom in {apts['zip_cheap']} is {cheap.name}, {cheap.location}, at {money(cheap.price, u.cur)} a month.",
        task,
    )


def search_dentist(f: Flow, u: Universe) -> None:
    task = f.user("user_task", "When is my next dentist appointment, and where is it?")
    f.answer(
        "oracle_reply",
        f"Your next dentist appointment is on Monday, October 21, 2024 from 08:30 to 09:15 at "
        f"{u.facts['dentist_office']} (check-up with Dr. {u.roles['dentist'].last}).",
        task,
    )


def search_party(f: Flow, u: Universe) -> None:
    bf = u.roles["best_friend"]
    party = u.facts["party"]
    task = f.user("user_task", f"What time does {bf.first}'s party on Saturday start, where is it, and what did I promise to bring?")
    f.answer(
        "oracle_reply",
        f"{bf.first}'s party is on Saturday, October 19 at {party['time']}, at {party['address']}. You promised to bring {party['bring']}.",
        task,
    )


def search_coworkers(f: Flow, u: Universe) -> None:
    people = sorted((p for k, p in u.people.items() if k != "user" and p.company == u.employer), key=lambda p: p.full)
    task = f.user("user_task", f"Which of my contacts work at {u.employer}? List their names and email addresses.")
    f.answer("oracle_reply", f"{len(people)} of your contacts work at {u.employer}: " + "; ".join(f"{p.full} ({p.email})" for p in people) + ".", task)


def mt_search_invoice_forward(f: Flow, u: Universe) -> None:
    acc, partner = u.roles["accountant"], u.roles["partner"]
    inv = u.facts["invoices"][-1]
    task = f.user("user_task", f"How much do I owe {acc.full} on the latest invoice, and by when?")
    done1 = f.answer("oracle_reply_turn1", f"The latest invoice from {acc.full} is {inv['number']}: {money(inv['amount'], u.cur)}, due by {inv['due']}.", task)
    follow = f.user("user_turn2", f"Thanks. Please forward that invoice email to {partner.full}.", done1, delay=5)
    fwd = f.oracle("oracle_a_forward", f.app("Emails").forward_email(email_id=inv["email_id"], recipients=[partner.email]), follow)
    f.answer("oracle_reply_turn2", f"Forwarded invoice {inv['number']} to {partner.full}.", fwd)


# ---------------------------------------------------------------------------------------------
# Adaptability
# ---------------------------------------------------------------------------------------------


def adapt_email_reschedule(f: Flow, u: Universe) -> None:
    c = u.roles["coworker2"]
    task = f.user(
        "user_task",
        f"Email {c.full} (subject 'Design review') to ask whether we can do a design review this Friday, October 18 at "
        f"11:00. When {c.first} replies, answer that email to confirm the time {c.first} proposes, and put a one-hour "
        f"'Design review' with {c.full} in my calendar at that time.",
    )
    ask = f.oracle(
        "oracle_a_send_email",
        f.app("Emails").send_email(
            recipients=[c.email],
            subject="Design review",
            content=f"Hi {c.first},\n\nCould we do a design review this Friday, October 18, at 11:00?\n\nThanks,\n{u.user.first}",
        ),
        task,
    )
    reply = f.env(
        "env_reply",
        f.app("Emails").create_and_add_email(
            sender=c.email,
            recipients=[u.user.email],
            subject="Re: Design review",
            content=f"Hi {u.user.first},\n\nFriday at 11:00 doesn't work for me, I'm with a customer all morning. Could we do Friday "
            f"at 15:00 instead?\n\n{c.first}",
        ),
        task,
        40,
    )
    ans = f.oracle(
        "oracle_b_reply_email",
        f.app("Emails").reply_to_email(email_id="{{env_reply}}", content=f"Hi {c.first}, Friday at 15:00 works. I've put it in the calendar. {u.user.first}"),
        reply,
        5,
    )
    add = f.oracle(
        "oracle_c_add_event",
        f.app("Calendar").add_calendar_event(
            title="Design review", start_datetime="2024-10-18 15:00:00", end_datetime="2024-10-18 16:00:00", attendees=[c.full]
        ),
        reply,
        5,
    )
    f.answer(
        "oracle_reply",
        f"{c.first} couldn't do 11:00 and proposed 15:00: I confirmed by replying to the email and added "
        f"'Design review' with {c.full} on Friday Oct 18, 15:00-16:00.",
        [ask, ans, add],
    )


def adapt_cab_cancel(f: Flow, u: Universe) -> None:
    bf = u.roles["best_friend"]
    task = f.user(
        "user_task",
        f"I'm heading to {bf.first}'s place now: book me a Default cab from home to {bf.address} and text {bf.first} "
        f"on Messages that I'm on my way. If the driver cancels, book a Premium cab for the same trip instead and text "
        f"{bf.first} that I'll be a bit late.",
    )
    text = f.oracle("oracle_a_text", f.app("Messages").send_message(user_id=bf.phone, content="On my way!"), task)
    ride = f.oracle("oracle_b_order_default", f.app("Cabs").order_ride(start_location=u.user.address, end_location=bf.address, service_type="Default"), task)
    cancel = f.env("env_cancel", f.app("Cabs").cancel_ride(who_cancel="driver", message="Sorry, your driver had to cancel."), task, 60)
    ride2 = f.oracle(
        "oracle_c_order_premium", f.app("Cabs").order_ride(start_location=u.user.address, end_location=bf.address, service_type="Premium"), cancel, 5
    )
    late = f.oracle(
        "oracle_d_text_late",
        f.app("Messages").send_message(user_id=bf.phone, content="My cab got cancelled, I've booked another one: I'll be a bit late!"),
        cancel,
        5,
    )
    f.answer(
        "oracle_reply",
        f"The Default cab was cancelled by the driver, so I booked a Premium cab to {bf.first}'s and let {bf.first} know you'll be a bit late.",
        [text, ride, ride2, late],
    )


def adapt_size_from_friend(f: Flow, u: Universe) -> None:
    friend = u.roles["friend2"]
    hoodie = u.facts["shop"]["hoodie"]
    medium = _items(hoodie)[1]
    task = f.user(
        "user_task",
        f"I want to get {friend.full} the {hoodie.name} for {_obj(friend).replace('him', 'his').replace('them', 'their')} "
        f"birthday. Text {friend.first} on Messages to ask which size {_subj(friend)} wears (S, M or L), without "
        f"mentioning the gift. Once {_subj(friend)} answers, add that size to my cart, check out, and thank {_obj(friend)}.",
    )
    ask = f.oracle(
        "oracle_a_ask_size", f.app("Messages").send_message(user_id=friend.phone, content="Random question: what size do you wear in hoodies, S, M or L?"), task
    )
    answer = f.env(
        "env_answer",
        f.app("Messages").create_and_add_message(conversation_id=_msg_conv(u, "friend2"), sender_id=friend.phone, content="Ha, random! M usually. Why? 😄"),
        task,
        45,
    )
    add = f.oracle("oracle_b_add_to_cart", f.app("Shopping").add_to_cart(item_id=medium.item_id, quantity=1), answer, 5)
    thanks = f.oracle("oracle_c_thanks", f.app("Messages").send_message(user_id=friend.phone, content="Thanks! No reason 😇"), answer, 5)
    buy = f.oracle("oracle_d_checkout", f.app("Shopping").checkout(), add)
    f.answer(
        "oracle_reply",
        f"{friend.first} wears M: I ordered the {hoodie.name} in size M ({money(medium.price, u.cur)}) and thanked {_obj(friend)}.",
        [ask, thanks, buy],
    )


def adapt_new_listing(f: Flow, u: Universe) -> None:
    realtor, partner = u.roles["realtor"], u.roles["partner"]
    apts = u.facts["apartments"]
    name = f"{u.roles['landlord'].last} Heights"
    location = f"{f.rng.randint(10, 300)} {u.streets[3]}, {u.city}"
    task = f.user(
        "user_task",
        f"{realtor.full} is about to list a new 2-bedroom in {apts['zip_new']} on RentAFlat. As soon as it shows up, "
        f"save it to my favourites and email {partner.full} (subject 'New listing') its name and price.",
    )
    listing = f.env(
        "env_listing",
        f.app("RentAFlat").add_new_apartment(
            name=name,
            location=location,
            zip_code=apts["zip_new"],
            price=2750.0,
            number_of_bedrooms=2,
            number_of_bathrooms=1,
            square_footage=880,
            property_type="Apartment",
            furnished_status="Unfurnished",
            floor_level="Upper floors",
            pet_policy="Cats allowed",
            lease_term="1 year",
            amenities=["Balcony", "Laundry"],
        ),
        task,
        70,
    )
    note = f.env(
        "env_realtor_email",
        f.app("Emails").create_and_add_email(
            sender=realtor.email,
            recipients=[u.user.email],
            subject=f"It's live: {name}",
            content=f"Hi {u.user.first},\n\nThe two-bedroom I mentioned is now on RentAFlat: {name}, {location}, "
            f"{money(2750.0, u.cur)} a month.\n\n{realtor.first}",
        ),
        task,
        70,
    )
    save = f.oracle("oracle_a_save", f.app("RentAFlat").save_apartment(apartment_id="{{env_listing}}"), [listing, note], 5)
    mail = f.oracle(
        "oracle_b_email",
        f.app("Emails").send_email(
            recipients=[partner.email],
            subject="New listing",
            content=f"Hi {partner.first},\n\nNew listing: {name} ({location}), {money(2750.0, u.cur)} a month. I saved it.\n\n{u.user.first}",
        ),
        [listing, note],
        5,
    )
    f.answer(
        "oracle_reply",
        f"The new listing is {name} ({location}, {money(2750.0, u.cur)}/month): saved to your favourites and emailed to {partner.full}.",
        [save, mail],
    )


def adapt_group_vote(f: Flow, u: Universe) -> None:
    bf, f2, f3 = (u.roles[k] for k in ("best_friend", "friend2", "friend3"))
    conv = u.facts["book_club_conversation"]
    task = f.user(
        "user_task",
        f"Ask the Book club group on Messages whether Saturday or Sunday afternoon works better for our next meetup. "
        f"Once {bf.first} and {f2.first} have both answered, put 'Book club' in my calendar for the day they pick, "
        f"15:00-17:00, with {bf.full}, {f2.full} and {f3.full}, and confirm the day in the group.",
    )
    ask = f.oracle(
        "oracle_a_ask_group",
        f.app("Messages").send_message_to_group_conversation(
            conversation_id=conv, content="Next book club: does Saturday or Sunday afternoon (Oct 19/20) work better?"
        ),
        task,
    )
    v1 = f.env("env_vote_1", f.app("Messages").create_and_add_message(conversation_id=conv, sender_id=bf.phone, content="Sunday works best for me!"), task, 40)
    v2 = f.env("env_vote_2", f.app("Messages").create_and_add_message(conversation_id=conv, sender_id=f2.phone, content="Sunday for me too 👍"), v1, 30)
    add = f.oracle(
        "oracle_b_add_event",
        f.app("Calendar").add_calendar_event(
            title="Book club", start_datetime="2024-10-20 15:00:00", end_datetime="2024-10-20 17:00:00", attendees=[bf.full, f2.full, f3.full]
        ),
        v2,
        5,
    )
    confirm = f.oracle(
        "oracle_c_confirm",
        f.app("Messages").send_message_to_group_conversation(conversation_id=conv, content="Sunday it is! Book club on Sunday October 20, 15:00-17:00."),
        v2,
        5,
    )
    f.answer(
        "oracle_reply",
        f"{bf.first} and {f2.first} both picked Sunday: 'Book club' is in your calendar on Sunday Oct 20, 15:00-17:00, and I confirmed it in the group.",
        [ask, add, confirm],
    )


def adapt_forward_lease(f: Flow, u: Universe) -> None:
    landlord, partner = u.roles["landlord"], u.roles["partner"]
    task = f.user(
        "user_task",
        f"{landlord.full} will email me the lease renewal today. When it arrives, forward it to {partner.full} and "
        f"reply to {landlord.first} that we'll review it and sign this week.",
    )
    lease = f.env(
        "env_lease",
        f.app("Emails").create_and_add_email(
            sender=landlord.email,
            recipients=[u.user.email],
            subject="Lease renewal",
            content=f"Hi {u.user.first},\n\nPlease find below the renewal terms for your lease at {u.user.address}: 12 months from "
            f"December 1, rent unchanged. Let me know if you have any questions.\n\nRegards,\n{landlord.full}",
        ),
        task,
        60,
    )
    fwd = f.oracle("oracle_a_forward", f.app("Emails").forward_email(email_id="{{env_lease}}", recipients=[partner.email]), lease, 5)
    rep = f.oracle(
        "oracle_b_reply",
        f.app("Emails").reply_to_email(email_id="{{env_lease}}", content=f"Thanks {landlord.first}, we'll review it and sign this week."),
        lease,
        5,
    )
    f.answer(
        "oracle_reply",
        f"{landlord.first}'s lease renewal arrived: I forwarded it to {partner.full} and replied that you'll review and sign it this week.",
        [fwd, rep],
    )


def adapt_meeting_cancelled(f: Flow, u: Universe) -> None:
    boss, c1 = u.roles["boss"], u.roles["coworker1"]
    task = f.user(
        "user_task",
        f"If {boss.first} cancels our 1:1 today, book a 'Focus time' block in my calendar in that same slot (11:00-11:30) "
        f"and tell {c1.full} on Chats that I'm free at 11:00 for the code review instead.",
    )
    cancel = f.env(
        "env_cancel_one_on_one", f.app("Calendar").delete_calendar_event_by_attendee(event_id=u.facts["one_on_one_today"], who_delete=boss.full), task, 50
    )
    focus = f.oracle(
        "oracle_a_focus_time",
        f.app("Calendar").add_calendar_event(title="Focus time", start_datetime="2024-10-15 11:00:00", end_datetime="2024-10-15 11:30:00"),
        cancel,
        5,
    )
    chat = f.oracle(
        "oracle_b_chat",
        f.app("Chats").send_message(user_id=u.chat_id(c1), content="My 1:1 got cancelled, so I'm free at 11:00 for the code review!"),
        cancel,
        5,
    )
    f.answer(
        "oracle_reply",
        f"{boss.first} cancelled today's 1:1: I booked 'Focus time' 11:00-11:30 and told {c1.first} on Chats you're free at 11:00 for the code review.",
        [focus, chat],
    )


# ---------------------------------------------------------------------------------------------
# Adaptability, environment-started turns (Gaia2's usual multi-turn shape)
#
# The agent reports (``send_message_to_user``) and the *environment* starts the next turn: an ENV
# event hung on that answer, with no user message. ARE cuts the edge from the answer, re-hangs the
# event on ``condition_turn_k`` (same delay) and judges turn k-1 when the k-th answer is logged
# (``build_turn_trigger``), so each ENV event below is one ARE's runner notifies (MEDIUM verbosity:
# ``create_and_add_email``/``_message``, ``cancel_ride``, ``delete_calendar_event_by_attendee``):
# an agent that never hears of it could not start the turn.
# ---------------------------------------------------------------------------------------------


def mt_adapt_cab_rebook(f: Flow, u: Universe) -> None:
    """2 turns; turn 2 starts when the driver cancels the ride the agent booked and reported."""
    partner = u.roles["partner"]
    station = u.facts["places"]["station"]
    task = f.user(
        "user_task",
        f"I'm catching a train. Text {partner.first} on Messages that I'm on my way to the station, book me a Default "
        f"cab from home to {station}, and tell me once it's booked. If the driver cancels afterwards, book a Premium "
        f"cab for the same trip right away, text {partner.first} that I'll be a bit late, and let me know.",
    )
    text = f.oracle("oracle_a_text", f.app("Messages").send_message(user_id=partner.phone, content="On my way to the station!"), task)
    ride = f.oracle("oracle_b_order_default", f.app("Cabs").order_ride(start_location=u.user.address, end_location=station, service_type="Default"), task)
    done1 = f.answer("oracle_reply_turn1", f"Booked a Default cab from home to {station} and texted {partner.first} that you're on your way.", [text, ride])
    cancel = f.env(
        "env_driver_cancel",
        f.app("Cabs").cancel_ride(who_cancel="driver", message="Your driver had to cancel the ride. Sorry for the inconvenience."),
        done1,
        30,
    )
    ride2 = f.oracle("oracle_c_order_premium", f.app("Cabs").order_ride(start_location=u.user.address, end_location=station, service_type="Premium"), cancel, 5)
    late = f.oracle(
        "oracle_d_text_late",
        f.app("Messages").send_message(user_id=partner.phone, content="My cab got cancelled, I've booked another one: I'll be a bit late."),
        cancel,
        5,
    )
    f.answer(
        "oracle_reply_turn2",
        f"The driver cancelled your Default cab, so I booked a Premium cab from home to {station} and told {partner.first} you'll be a bit late.",
        [ride2, late],
    )


def mt_adapt_email_planning(f: Flow, u: Universe) -> None:
    """2 turns; turn 2 starts when the coworker's answer arrives after the agent reported."""
    c = u.roles["coworker3"]
    task = f.user(
        "user_task",
        f"Email {c.full} (subject 'Quarterly planning') to ask which slot next week suits {_obj(c)} for a one-hour "
        f"quarterly planning session, and tell me once it's sent. When {c.first} replies, put 'Quarterly planning' with "
        f"{c.full} in my calendar at the time {_subj(c)} proposes, reply to confirm it, and let me know.",
    )
    ask = f.oracle(
        "oracle_a_send_email",
        f.app("Emails").send_email(
            recipients=[c.email],
            subject="Quarterly planning",
            content=f"Hi {c.first},\n\nWhich slot next week would suit you for a one-hour quarterly planning session?\n\nThanks,\n{u.user.first}",
        ),
        task,
    )
    done1 = f.answer("oracle_reply_turn1", f"Emailed {c.full} to ask for a slot next week; I'll book it when {_subj(c)} replies.", ask)
    reply = f.env(
        "env_reply",
        f.app("Emails").create_and_add_email(
            sender=c.email,
            recipients=[u.user.email],
            subject="Re: Quarterly planning",
            content=f"Hi {u.user.first},\n\nTuesday, October 22 at 10:00 works for me, for an hour.\n\n{c.first}",
        ),
        done1,
        45,
    )
    add = f.oracle(
        "oracle_b_add_event",
        f.app("Calendar").add_calendar_event(
            title="Quarterly planning", start_datetime="2024-10-22 10:00:00", end_datetime="2024-10-22 11:00:00", attendees=[c.full]
        ),
        reply,
        5,
    )
    confirm = f.oracle(
        "oracle_c_reply_email",
        f.app("Emails").reply_to_email(
            email_id="{{env_reply}}", content=f"Hi {c.first}, Tuesday October 22 at 10:00 it is, it's in the calendar. {u.user.first}"
        ),
        reply,
        5,
    )
    f.answer(
        "oracle_reply_turn2",
        f"{c.first} proposed Tuesday Oct 22 at 10:00: 'Quarterly planning' with {c.full} is in your "
        "calendar (10:00-11:00) and I confirmed by replying to the email.",
        [add, confirm],
    )


def mt_adapt_sibling_lunch(f: Flow, u: Universe) -> None:
    """3 turns; turns 2 and 3 each start with a message from the sibling after the agent reported."""
    sib = u.roles["sibling"]
    conv = _msg_conv(u, "sibling")
    task = f.user(
        "user_task",
        f"Ask {sib.first} on Messages whether {_subj(sib)} can come for lunch at our place on Sunday, October 20 at 12:30, "
        f"and tell me once you've asked. When {sib.first} says yes, put 'Sunday lunch' in my calendar (12:30-14:30, with "
        f"{sib.full}) and let me know. If {sib.first} later asks for another time, move the lunch to that time (same "
        f"length), confirm it to {_obj(sib)} on Messages, and tell me.",
    )
    ask = f.oracle(
        "oracle_a_ask", f.app("Messages").send_message(user_id=sib.phone, content="Are you free for lunch at ours on Sunday, October 20 at 12:30?"), task
    )
    done1 = f.answer("oracle_reply_turn1", f"Asked {sib.first} about lunch on Sunday Oct 20 at 12:30.", ask)
    yes = f.env(
        "env_yes", f.app("Messages").create_and_add_message(conversation_id=conv, sender_id=sib.phone, content="Yes, I'd love to! See you Sunday 😊"), done1, 40
    )
    add = f.oracle(
        "oracle_b_add_lunch",
        f.app("Calendar").add_calendar_event(
            title="Sunday lunch", start_datetime="2024-10-20 12:30:00", end_datetime="2024-10-20 14:30:00", attendees=[sib.full]
        ),
        yes,
        5,
    )
    done2 = f.answer("oracle_reply_turn2", f"{sib.first} said yes: 'Sunday lunch' is in your calendar on Sunday Oct 20, 12:30-14:30.", add)
    move = f.env(
        "env_move",
        f.app("Messages").create_and_add_message(
            conversation_id=conv, sender_id=sib.phone, content="Actually, could we make it 13:30? My train gets in later than I thought."
        ),
        done2,
        60,
    )
    dele = f.oracle("oracle_c_delete_lunch", f.app("Calendar").delete_calendar_event(event_id="{{oracle_b_add_lunch}}"), move, 5)
    add2 = f.oracle(
        "oracle_d_add_moved_lunch",
        f.app("Calendar").add_calendar_event(
            title="Sunday lunch", start_datetime="2024-10-20 13:30:00", end_datetime="2024-10-20 15:30:00", attendees=[sib.full]
        ),
        move,
        5,
    )
    ok = f.oracle("oracle_e_confirm", f.app("Messages").send_message(user_id=sib.phone, content="No problem, lunch is now at 13:30 on Sunday!"), move, 5)
    f.answer("oracle_reply_turn3", f"{sib.first} asked for 13:30: I moved 'Sunday lunch' to 13:30-15:30 and confirmed it to {_obj(sib)}.", [dele, add2, ok])


def mt_adapt_one_on_one_slot(f: Flow, u: Universe) -> None:
    """3 turns; turn 2 starts when the boss cancels a meeting, turn 3 with a team-chat message."""
    boss, c = u.roles["boss"], u.roles["coworker2"]
    team = u.facts["team_chat"]
    task = f.user(
        "user_task",
        f"{boss.first} might cancel our 1:1 today (11:00-11:30). Post in the {u.project} team chat on Chats that I'm "
        f"around all day if anyone needs me, and tell me once it's posted. If {boss.first} cancels, book 'Focus time' in "
        "that slot and tell me. If someone then asks in the team chat for that slot, give it to them: replace 'Focus "
        "time' with 'Pairing with <their first name>' (same slot, with them), answer them in the chat, and tell me.",
    )
    post = f.oracle(
        "oracle_a_post", f.app("Chats").send_message_to_group_conversation(conversation_id=team, content="I'm around all day today if anyone needs me."), task
    )
    done1 = f.answer("oracle_reply_turn1", f"Posted in the {u.project} team chat that you're around all day.", post)
    cancel = f.env(
        "env_cancel_one_on_one", f.app("Calendar").delete_calendar_event_by_attendee(event_id=u.facts["one_on_one_today"], who_delete=boss.full), done1, 40
    )
    focus = f.oracle(
        "oracle_b_focus_time",
        f.app("Calendar").add_calendar_event(title="Focus time", start_datetime="2024-10-15 11:00:00", end_datetime="2024-10-15 11:30:00"),
        cancel,
        5,
    )
    done2 = f.answer("oracle_reply_turn2", f"{boss.first} cancelled today's 1:1, so 'Focus time' is booked 11:00-11:30.", focus)
    ask = f.env(
        "env_pairing_request",
        f.app("Chats").create_and_add_message(
            conversation_id=team, sender_id=u.chat_id(c), content=f"Saw your note! Could we pair on the {u.project} migration at 11:00?"
        ),
        done2,
        50,
    )
    dele = f.oracle("oracle_c_delete_focus", f.app("Calendar").delete_calendar_event(event_id="{{oracle_b_focus_time}}"), ask, 5)
    pair = f.oracle(
        "oracle_d_add_pairing",
        f.app("Calendar").add_calendar_event(
            title=f"Pairing with {c.first}", start_datetime="2024-10-15 11:00:00", end_datetime="2024-10-15 11:30:00", attendees=[c.full]
        ),
        ask,
        5,
    )
    answer = f.oracle(
        "oracle_e_chat_reply",
        f.app("Chats").send_message_to_group_conversation(conversation_id=team, content=f"Sure {c.first}, 11:00 works, see you then!"),
        ask,
        5,
    )
    f.answer(
        "oracle_reply_turn3",
        f"{c.first} asked for the slot: 'Focus time' is replaced by 'Pairing with {c.first}' (11:00-11:30) and I answered in the team chat.",
        [dele, pair, answer],
    )


def mt_adapt_viewing_between_turns(f: Flow, u: Universe) -> None:
    """2 turns; an email arrives between the turns, before the user's second message that refers to it."""
    realtor = u.roles["realtor"]
    cheap = u.facts["apartments"]["planted"]["cheap"]
    task = f.user("user_task", f"Save the listing {cheap.name} ({cheap.location}) to my favourites on RentAFlat and tell me its monthly rent.")
    save = f.oracle("oracle_a_save", f.app("RentAFlat").save_apartment(apartment_id=cheap.apartment_id), task)
    done1 = f.answer("oracle_reply_turn1", f"Saved {cheap.name} ({cheap.location}); the rent is {money(cheap.price, u.cur)} a month.", save)
    email = f.env(
        "env_viewing_email",
        f.app("Emails").create_and_add_email(
            sender=realtor.email,
            recipients=[u.user.email],
            subject=f"Viewing: {cheap.name}",
            content=f"Hi {u.user.first},\n\nI can show you {cheap.name} on Saturday, October 19 at 11:00 or at 14:00. Let me know "
            f"which suits you.\n\n{realtor.full}",
        ),
        done1,
        10,
    )
    follow = f.user(
        "user_turn2",
        f"{realtor.first} just emailed me about a viewing. Reply to that email to say Saturday at 11:00 "
        f"works, and put 'Viewing: {cheap.name}' in my calendar on Saturday, October 19, 11:00-11:45, "
        f"at {cheap.location}, with {realtor.full}.",
        done1,
        delay=60,
    )
    rep = f.oracle(
        "oracle_c_reply",
        f.app("Emails").reply_to_email(
            email_id="{{env_viewing_email}}", content=f"Hi {realtor.first}, Saturday at 11:00 works for me, see you there. {u.user.first}"
        ),
        [follow, email],
        5,
    )
    add = f.oracle(
        "oracle_b_add_viewing",
        f.app("Calendar").add_calendar_event(
            title=f"Viewing: {cheap.name}",
            start_datetime="2024-10-19 11:00:00",
            end_datetime="2024-10-19 11:45:00",
            location=cheap.location,
            attendees=[realtor.full],
        ),
        follow,
    )
    f.answer(
        "oracle_reply_turn2",
        f"Replied to {realtor.first} that Saturday at 11:00 works and added 'Viewing: {cheap.name}' to your calendar (Sat Oct 19, 11:00-11:45).",
        [rep, add],
    )


# ---------------------------------------------------------------------------------------------
# Time
# ---------------------------------------------------------------------------------------------


def time_text_in_3min(f: Flow, u: Universe) -> None:
    partner = u.roles["partner"]
    text = "Call is running long, start dinner without me!"
    task = f.user(
        "user_task", f"I'm jumping into a call. In exactly 3 minutes from now (not before), text {partner.first} on Messages: '{text}'. Tell me once it's sent."
    )
    sent = f.oracle("oracle_a_text", f.app("Messages").send_message(user_id=partner.phone, content=text), task, 180)
    f.answer("oracle_reply", f"Sent to {partner.full}: '{text}'", sent)


def time_email_in_5min(f: Flow, u: Universe) -> None:
    boss = u.roles["boss"]
    task = f.user(
        "user_task",
        f"Right away, add 'Budget review' to my calendar for tomorrow (October 16) 10:00-11:00 with {boss.full}. Then, "
        f"exactly 5 minutes from now, email {boss.first} (subject 'Budget review agenda') the agenda: Q4 spend, hiring "
        "plan, tooling.",
    )
    add = f.oracle(
        "oracle_a_add_event",
        f.app("Calendar").add_calendar_event(
            title="Budget review", start_datetime="2024-10-16 10:00:00", end_datetime="2024-10-16 11:00:00", attendees=[boss.full]
        ),
        task,
    )
    mail = f.oracle(
        "oracle_b_email",
        f.app("Emails").send_email(
            recipients=[boss.email],
            subject="Budget review agenda",
            content=f"Hi {boss.first},\n\nAgenda for tomorrow's budget review: Q4 spend, hiring plan, tooling.\n\n{u.user.first}",
        ),
        task,
        300,
    )
    f.answer(
        "oracle_reply",
        f"'Budget review' is in your calendar for Oct 16, 10:00-11:00 with {boss.full}, and the agenda email went to {boss.first} 5 minutes later.",
        [add, mail],
    )


def time_cab_in_4min(f: Flow, u: Universe) -> None:
    partner = u.roles["partner"]
    airport = u.facts["places"]["airport"]
    task = f.user(
        "user_task",
        f"I'm leaving for the airport in 4 minutes. Text {partner.first} on Messages now that I'm leaving soon, then "
        f"order a Van cab from home to {airport} exactly 4 minutes from now (not earlier: I'm still packing).",
    )
    text = f.oracle("oracle_a_text", f.app("Messages").send_message(user_id=partner.phone, content="Leaving for the airport in a few minutes!"), task)
    ride = f.oracle("oracle_b_order_ride", f.app("Cabs").order_ride(start_location=u.user.address, end_location=airport, service_type="Van"), task, 240)
    f.answer("oracle_reply", f"Texted {partner.first}, and 4 minutes later ordered a Van cab from home to {airport}.", [text, ride])


def time_reply_within_deadline(f: Flow, u: Universe) -> None:
    boss = u.roles["boss"]
    task = f.user(
        "user_task",
        f"{boss.first} is about to email me about moving the {u.project} demo. Reply to that email within 2 minutes of it "
        f"arriving to say Thursday works for me. Also add a 'Demo prep' block to my calendar tomorrow (October 16) "
        "from 09:30 to 10:30.",
    )
    prep = f.oracle(
        "oracle_a_add_prep",
        f.app("Calendar").add_calendar_event(title="Demo prep", start_datetime="2024-10-16 09:30:00", end_datetime="2024-10-16 10:30:00"),
        task,
    )
    mail = f.env(
        "env_boss_email",
        f.app("Emails").create_and_add_email(
            sender=boss.email,
            recipients=[u.user.email],
            subject=f"{u.project} demo",
            content=f"Hi {u.user.first},\n\nCan we move the {u.project} demo to Thursday? I need to confirm with the customer in the "
            f"next couple of minutes.\n\n{boss.first}",
        ),
        task,
        60,
    )
    reply = f.oracle(
        "oracle_b_reply", f.app("Emails").reply_to_email(email_id="{{env_boss_email}}", content="Thursday works for me."), mail, 95, less_than=True
    )
    f.answer("oracle_reply", f"Replied to {boss.first} within 2 minutes that Thursday works, and added 'Demo prep' on Oct 16, 09:30-10:30.", [prep, reply])


def time_checkout_at_sale(f: Flow, u: Universe) -> None:
    shop = u.facts["shop"]
    black = _items(shop["headphones"])[0]
    task = f.user(
        "user_task",
        f"The {shop['flash']} flash sale on the {shop['headphones'].name} starts 2 minutes from now. Add the Black ones "
        f"to my cart now, then check out with the code {shop['flash']} exactly when the sale starts, not before.",
    )
    add = f.oracle("oracle_a_add_to_cart", f.app("Shopping").add_to_cart(item_id=black.item_id, quantity=1), task)
    buy = f.oracle("oracle_b_checkout", f.app("Shopping").checkout(discount_code=shop["flash"]), add, 119)
    f.answer(
        "oracle_reply",
        f"Checked out the Black {shop['headphones'].name} with {shop['flash']} as the sale started: {money(round(black.price * 0.8, 2), u.cur)}.",
        buy,
    )


def time_chat_posts(f: Flow, u: Universe) -> None:
    boss = u.roles["boss"]
    note = "Release notes are live, please review before standup"
    task = f.user(
        "user_task",
        f"In 2 minutes, post in the {u.project} team chat on Chats: '{note}'. One minute after that, send {boss.full} "
        "a direct message on Chats saying the release notes are posted.",
    )
    post = f.oracle("oracle_a_post", f.app("Chats").send_message_to_group_conversation(conversation_id=u.facts["team_chat"], content=note), task, 120)
    dm = f.oracle("oracle_b_dm", f.app("Chats").send_message(user_id=u.chat_id(boss), content="The release notes are posted in the team chat."), post, 60)
    f.answer("oracle_reply", f"Posted the release-notes message in the {u.project} team chat and, a minute later, messaged {boss.first}.", dm)


def mt_time_followup(f: Flow, u: Universe) -> None:
    c = u.roles["coworker4"]
    task = f.user("user_task", f"Add 'Call with {c.first}' to my calendar today from 16:00 to 16:30, with {c.full}.")
    add = f.oracle(
        "oracle_a_add_call",
        f.app("Calendar").add_calendar_event(
            title=f"Call with {c.first}", start_datetime="2024-10-15 16:00:00", end_datetime="2024-10-15 16:30:00", attendees=[c.full]
        ),
        task,
    )
    done1 = f.answer("oracle_reply_turn1", f"Added 'Call with {c.first}' today 16:00-16:30 with {c.full}.", add)
    text = "Confirmed for 16:00 today, I'll send the link then."
    follow = f.user("user_turn2", f"Thanks. Also, exactly 3 minutes from now, text {c.first} on Messages: '{text}'", done1, delay=5)
    sent = f.oracle("oracle_b_text", f.app("Messages").send_message(user_id=c.phone, content=text), follow, 180)
    f.answer("oracle_reply_turn2", f"Texted {c.first}: '{text}'", sent)


# ---------------------------------------------------------------------------------------------
# Ambiguity
# ---------------------------------------------------------------------------------------------


def amb_cancel_namesake(f: Flow, u: Universe) -> None:
    w, fr = u.roles["namesake_work"], u.roles["namesake_friend"]
    cal = u.facts["calendar"]
    task = f.user("user_task", f"Cancel my meeting with {w.first} this week, something came up.")
    f.answer(
        "oracle_reply",
        f"You have two meetings with someone called {w.first} this week: '{cal['namesake_work'].title}' with {w.full} on "
        f"Wednesday Oct 16, 14:00-14:45, and '{cal['namesake_friend'].title}' with {fr.full} on Thursday Oct 17, "
        "12:30-13:30. Which one should I cancel?",
        task,
    )


def amb_date_contradiction(f: Flow, u: Universe) -> None:
    partner = u.roles["partner"]
    task = f.user("user_task", f"Put 'Dinner with {partner.first}' in my calendar for Friday, October 19 at 19:00.")
    f.answer("oracle_reply", "October 19, 2024 is a Saturday, not a Friday. Did you mean Friday, October 18, or Saturday, October 19?", task)


def amb_partial_email(f: Flow, u: Universe) -> None:
    boss = u.roles["boss"]
    w, fr = u.roles["namesake_work"], u.roles["namesake_friend"]
    task = f.user(
        "user_task",
        f"Email {boss.full} (subject 'Review agenda') that the agenda for tomorrow's review is: metrics, roadmap, hiring. "
        f"And text {w.first} that I'm running 10 minutes late.",
    )
    mail = f.oracle(
        "oracle_a_email",
        f.app("Emails").send_email(
            recipients=[boss.email],
            subject="Review agenda",
            content=f"Hi {boss.first},\n\nThe agenda for tomorrow's review: metrics, roadmap, hiring.\n\n{u.user.first}",
        ),
        task,
    )
    f.answer(
        "oracle_reply",
        f"I emailed {boss.full} the agenda. You have two contacts called {w.first}: {w.full} (coworker) and {fr.full} (friend). Which one should I text?",
        mail,
    )


def mt_amb_email_namesake(f: Flow, u: Universe) -> None:
    w, fr = u.roles["namesake_work"], u.roles["namesake_friend"]
    link = f"https://docs.{u.employer_domain}/{u.project.lower()}-design"
    task = f.user("user_task", f"Email {w.first} the link to the {u.project} design doc, {link} (subject '{u.project} design doc').")
    ask = f.answer(
        "oracle_reply_turn1", f"You have two contacts called {w.first}: {w.full} ({w.email}) and {fr.full} ({fr.email}). Which one should I email?", task
    )
    follow = f.user("user_turn2", f"{w.full}, my coworker.", ask, delay=5)
    mail = f.oracle(
        "oracle_a_email",
        f.app("Emails").send_email(
            recipients=[w.email],
            subject=f"{u.project} design doc",
            content=f"Hi {w.first},\n\nHere is the link to the {u.project} design doc: {link}\n\n{u.user.first}",
        ),
        follow,
    )
    f.answer("oracle_reply_turn2", f"Emailed {w.full} the {u.project} design doc link.", mail)


def mt_amb_product_color(f: Flow, u: Universe) -> None:
    scarf = u.facts["shop"]["scarf"]
    navy = _items(scarf)[0]
    task = f.user("user_task", f"Order the {scarf.name} for my mother's birthday.")
    ask = f.answer(
        "oracle_reply_turn1",
        f"The {scarf.name} comes in Navy ({money(_items(scarf)[0].price, u.cur)}), Burgundy "
        f"({money(_items(scarf)[1].price, u.cur)}) and Charcoal ({money(_items(scarf)[2].price, u.cur)}). "
        "Which color, and how many?",
        task,
    )
    follow = f.user("user_turn2", "Navy please, and make it two.", ask, delay=5)
    add = f.oracle("oracle_a_add_to_cart", f.app("Shopping").add_to_cart(item_id=navy.item_id, quantity=2), follow)
    buy = f.oracle("oracle_b_checkout", f.app("Shopping").checkout(), add)
    f.answer("oracle_reply_turn2", f"Ordered 2 x {scarf.name} in Navy ({money(navy.price * 2, u.cur)}).", buy)


def mt_amb_apartment_street(f: Flow, u: Universe) -> None:
    apts = u.facts["apartments"]
    a, b = apts["planted"]["street_a"], apts["planted"]["street_b"]
    task = f.user("user_task", f"Save the apartment on {apts['street']} to my favourites on RentAFlat.")
    ask = f.answer(
        "oracle_reply_turn1",
        f"There are two listings on {apts['street']}: {a.name} ({a.location}, 1 bedroom, "
        f"{money(a.price, u.cur)}) and {b.name} ({b.location}, 2 bedrooms, {money(b.price, u.cur)}). "
        "Which one should I save?",
        task,
    )
    follow = f.user("user_turn2", "The two-bedroom one.", ask, delay=5)
    save = f.oracle("oracle_a_save", f.app("RentAFlat").save_apartment(apartment_id=b.apartment_id), follow)
    f.answer("oracle_reply_turn2", f"Saved {b.name} ({b.location}) to your favourites.", save)


def amb_unpaid_invoice(f: Flow, u: Universe) -> None:
    acc = u.roles["accountant"]
    sep, octo = u.facts["invoices"][1], u.facts["invoices"][2]
    task = f.user("user_task", f"Reply to {acc.first}'s invoice email to tell {acc.first} that I've paid it.")
    f.answer(
        "oracle_reply",
        f"{acc.full} has two open invoices: {sep['number']} ({sep['month']}, {money(sep['amount'], u.cur)}, "
        f"due {sep['due']}) and {octo['number']} ({octo['month']}, {money(octo['amount'], u.cur)}, due "
        f"{octo['due']}). Which one did you pay?",
        task,
    )


# ---------------------------------------------------------------------------------------------
# registry
# ---------------------------------------------------------------------------------------------

Template = Callable[[Flow, Universe], None]

TEMPLATES: dict[str, tuple[str, Template]] = {
    "exec_team_meeting": ("Execution", exec_team_meeting),
    "exec_group_chat": ("Execution", exec_group_chat),
    "exec_shopping_discount": ("Execution", exec_shopping_discount),
    "exec_forward_invoice": ("Execution", exec_forward_invoice),
    "exec_cab_dinner": ("Execution", exec_cab_dinner),
    "exec_apartment_shortlist": ("Execution", exec_apartment_shortlist),
    "exec_files_taxes": ("Execution", exec_files_taxes),
    "exec_contact_update": ("Execution", exec_contact_update),
    "mt_exec_dinner_move": ("Execution", mt_exec_dinner_move),
    "mt_exec_order_cancel": ("Execution", mt_exec_order_cancel),
    "search_invoice": ("Search", search_invoice),
    "search_order_status": ("Search", search_order_status),
    "search_cab_spend": ("Search", search_cab_spend),
    "search_apartment": ("Search", search_apartment),
    "search_dentist": ("Search", search_dentist),
    "search_party": ("Search", search_party),
    "search_coworkers": ("Search", search_coworkers),
    "mt_search_invoice_forward": ("Search", mt_search_invoice_forward),
    "adapt_email_reschedule": ("Adaptability", adapt_email_reschedule),
    "adapt_cab_cancel": ("Adaptability", adapt_cab_cancel),
    "adapt_size_from_friend": ("Adaptability", adapt_size_from_friend),
    "adapt_new_listing": ("Adaptability", adapt_new_listing),
    "adapt_group_vote": ("Adaptability", adapt_group_vote),
    "adapt_forward_lease": ("Adaptability", adapt_forward_lease),
    "adapt_meeting_cancelled": ("Adaptability", adapt_meeting_cancelled),
    "mt_adapt_cab_rebook": ("Adaptability", mt_adapt_cab_rebook),
    "mt_adapt_email_planning": ("Adaptability", mt_adapt_email_planning),
    "mt_adapt_sibling_lunch": ("Adaptability", mt_adapt_sibling_lunch),
    "mt_adapt_one_on_one_slot": ("Adaptability", mt_adapt_one_on_one_slot),
    "mt_adapt_viewing_between_turns": ("Adaptability", mt_adapt_viewing_between_turns),
    "time_text_in_3min": ("Time", time_text_in_3min),
    "time_email_in_5min": ("Time", time_email_in_5min),
    "time_cab_in_4min": ("Time", time_cab_in_4min),
    "time_reply_within_deadline": ("Time", time_reply_within_deadline),
    "time_checkout_at_sale": ("Time", time_checkout_at_sale),
    "time_chat_posts": ("Time", time_chat_posts),
    "mt_time_followup": ("Time", mt_time_followup),
    "amb_cancel_namesake": ("Ambiguity", amb_cancel_namesake),
    "amb_date_contradiction": ("Ambiguity", amb_date_contradiction),
    "amb_partial_email": ("Ambiguity", amb_partial_email),
    "mt_amb_email_namesake": ("Ambiguity", mt_amb_email_namesake),
    "mt_amb_product_color": ("Ambiguity", mt_amb_product_color),
    "mt_amb_apartment_street": ("Ambiguity", mt_amb_apartment_street),
    "amb_unpaid_invoice": ("Ambiguity", amb_unpaid_invoice),
}

# Which template runs on which universe. The two ~2.5 MB universes carry fewer scenarios (every file
# embeds its universe); both splits cover every capability.
ASSIGNMENTS: dict[str, tuple[str, ...]] = {
    "univ_00": ("exec_team_meeting", "search_cab_spend", "adapt_group_vote", "time_text_in_3min"),
    "univ_01": ("exec_shopping_discount", "search_invoice", "adapt_email_reschedule", "mt_amb_email_namesake"),
    "univ_02": (
        "exec_group_chat",
        "exec_forward_invoice",
        "mt_exec_dinner_move",
        "search_order_status",
        "search_party",
        "adapt_cab_cancel",
        "mt_adapt_one_on_one_slot",
        "mt_adapt_viewing_between_turns",
        "time_cab_in_4min",
        "amb_cancel_namesake",
    ),
    "univ_03": (
        "exec_cab_dinner",
        "exec_files_taxes",
        "search_apartment",
        "mt_search_invoice_forward",
        "adapt_size_from_friend",
        "mt_adapt_cab_rebook",
        "time_checkout_at_sale",
        "amb_partial_email",
        "mt_amb_product_color",
    ),
    "univ_04": (
        "exec_contact_update",
        "search_coworkers",
        "adapt_forward_lease",
        "adapt_meeting_cancelled",
        "mt_adapt_email_planning",
        "time_chat_posts",
        "mt_time_followup",
        "amb_unpaid_invoice",
    ),
    "univ_05": (
        "exec_apartment_shortlist",
        "mt_exec_order_cancel",
        "search_dentist",
        "adapt_new_listing",
        "mt_adapt_sibling_lunch",
        "time_email_in_5min",
        "time_reply_within_deadline",
        "amb_date_contradiction",
        "mt_amb_apartment_street",
    ),
}

CONFIG_OF = {"Execution": "execution", "Search": "search", "Adaptability": "adaptability", "Time": "time", "Ambiguity": "ambiguity"}


def scenario_id(uid: str, slug: str) -> str:
    return f"{uid}_{slug}"
