"""Text material for the corpus: tool renames / paraphrases (noise augmentation) and message templates.

Names, addresses, companies, jobs and free text come from Faker (seeded per universe); what lives here
is *structure*: how an invoice email or a chat message is phrased around Faker's values, and the
alternative tool names and descriptions ARE's tool augmentation swaps in
(``augmentation.tool_names_mapping`` / ``augmentation.tool_descriptions_mapping``, keyed by
``AppTool.name`` = ``<app name>__<method>``).
"""

from __future__ import annotations

# method -> (alternative names, paraphrased description). One alternative name is picked per universe.
TOOL_TEXT: dict[str, tuple[tuple[str, ...], str]] = {
    # Contacts
    "get_contacts": (
        ("retrieve_contacts_list", "list_address_book"),
        "Returns a page of contacts starting at the given offset; page through the address book by increasing the offset.",
    ),
    "get_contact": (("retrieve_contact_information", "fetch_contact_record"), "Returns the contact uniquely identified by contact_id."),
    "get_current_user_details": (
        ("get_current_user_info", "fetch_my_profile"),
        "Returns the current user's own contact card: name, phone number, email address, nationality and country.",
    ),
    "add_new_contact": (("create_new_contact_entry", "register_contact"), "Creates a new entry in the contacts application and returns its contact_id."),
    "edit_contact": (("update_contact_information", "modify_contact_fields"), "Changes the given fields of the contact identified by contact_id."),
    "delete_contact": (("remove_contact", "erase_contact_entry"), "Deletes the contact with the given contact_id."),
    "search_contacts": (
        ("find_persons_in_address_book", "lookup_contacts"),
        "Finds contacts whose first name, last name, phone number or email partially matches the query.",
    ),
    # Emails
    "send_email": (("transmit_message", "dispatch_email"), "Sends a new email to the given recipients (optionally cc and attachments) and returns its id."),
    "download_attachments": (
        ("fetch_attached_files", "save_email_attachments"),
        "Saves the attachments of an email to the given folder and returns their paths.",
    ),
    "reply_to_email": (("respond_to_email", "answer_email"), "Sends a reply to the email with the given id."),
    "list_emails": (("enumerate_emails", "browse_mailbox_folder"), "Lists the emails of a folder, starting at an offset, a page at a time."),
    "get_email_by_id": (("retrieve_email_from_id", "open_email"), "Returns the email with the given id from a folder and marks it as read."),
    "get_email_by_index": (("retrieve_email_at_position", "open_email_at_index"), "Returns the email at the given position of a folder and marks it as read."),
    "forward_email": (("forward_message_via_email", "relay_email"), "Forwards an existing email to the given recipients."),
    "move_email": (("transfer_email", "relocate_email"), "Moves an email from its folder to another folder."),
    "delete_email": (("remove_email_message", "trash_email"), "Deletes an email from a folder (it goes to TRASH)."),
    "search_emails": (
        ("find_emails_by_criteria", "query_mailbox"),
        "Searches every folder for emails whose sender, recipients, subject or content partially match the query.",
    ),
    # Calendar
    "add_calendar_event": (
        ("create_calendar_entry", "schedule_event"),
        "Creates a calendar event (title, start and end as YYYY-MM-DD HH:MM:SS, attendees by full name, ...) and returns its id.",
    ),
    "get_calendar_event": (("retrieve_calendar_entry", "fetch_event_details"), "Returns the calendar event with the given id."),
    "delete_calendar_event": (("remove_calendar_entry", "cancel_calendar_event"), "Deletes the calendar event with the given id."),
    "get_calendar_events_from_to": (("retrieve_events_between_dates", "list_events_in_range"), "Lists the calendar events between two datetimes."),
    "read_today_calendar_events": (("get_todays_calendar_events", "list_events_today"), "Lists today's calendar events."),
    "get_all_tags": (("retrieve_all_tags", "list_event_tags"), "Lists every tag used by calendar events."),
    "get_calendar_events_by_tag": (("retrieve_events_from_calendar_by_tag", "filter_events_by_tag"), "Lists the calendar events carrying the given tag."),
    "search_events": (("find_events", "query_calendar"), "Searches calendar events by title, description, location or attendees."),
    # Messages / Chats (the mode-specific sentence is appended per app)
    "get_user_id": (("retrieve_user_identifier", "resolve_user_id"), "Returns the user id of an exactly matching user name, or None."),
    "get_user_name_from_id": (("retrieve_username_by_identifier", "resolve_user_name"), "Returns the user name of an exactly matching user id, or None."),
    "lookup_user_id": (("get_user_id_by_username", "fuzzy_find_user"), "Fuzzy-matches a user name and returns the close matches as a name-to-id dictionary."),
    "send_message": (
        ("transmit_notification", "message_person"),
        "Sends a message to one person, reusing the existing one-to-one conversation or starting a new one.",
    ),
    "send_message_to_group_conversation": (
        ("transmit_message_to_collective_discussion", "post_to_group_chat"),
        "Posts a message in an existing group conversation.",
    ),
    "create_group_conversation": (
        ("establish_group_chat", "start_group_thread"),
        "Creates a group conversation with at least two other participants and returns its id.",
    ),
    "get_existing_conversation_ids": (
        ("get_current_conversation_ids", "find_conversation_ids"),
        "Returns the ids of conversations with exactly the given participants.",
    ),
    "list_recent_conversations": (
        ("get_latest_discussions", "recent_threads"),
        "Lists conversations by most recent activity, with an offset and a small limit.",
    ),
    "list_conversations_by_participant": (
        ("list_conversations_by_participant_id", "threads_with_person"),
        "Lists the conversations a given participant belongs to.",
    ),
    "download_attachment": (("retrieve_attached_file", "save_message_attachment"), "Saves the attachment of a message to the given path."),
    "read_conversation": (
        ("retrieve_conversation_history", "open_thread"),
        "Returns the messages of a conversation, newest first, between offset and offset + limit.",
    ),
    "add_participant_to_conversation": (("add_user_to_discussion", "invite_to_thread"), "Adds a participant to a conversation."),
    "remove_participant_from_conversation": (("delete_conversation_participant", "drop_from_thread"), "Removes a participant from a conversation."),
    "change_conversation_title": (("update_conversation_subject", "rename_thread"), "Changes the title of a conversation."),
    "search": (("find", "search_threads"), "Returns the ids of conversations whose participants, title or messages match the query."),
    "regex_search": (
        ("pattern_match", "search_threads_by_regex"),
        "Returns the ids of conversations whose participants, title or messages match a case-insensitive regular expression.",
    ),
    # Shopping
    "list_all_products": (("browse_catalogue", "enumerate_products"), "Lists the products of the catalogue (name to product id), a page at a time."),
    "get_product_details": (
        ("retrieve_product_information", "fetch_product"),
        "Returns a product and its item variants (item ids, options, prices, availability).",
    ),
    "search_product": (("find_product_by_name", "lookup_product"), "Finds products whose name contains the query."),
    "add_to_cart": (("insert_item_into_cart", "put_in_basket"), "Adds a quantity of an item (by item id) to the cart."),
    "remove_from_cart": (("take_item_out_of_cart", "drop_from_basket"), "Removes a quantity of an item from the cart."),
    "list_cart": (("show_cart", "view_basket"), "Shows the items currently in the cart."),
    "checkout": (
        ("place_order", "finalize_purchase"),
        "Turns the cart into an order, optionally with a discount code valid for every item, and returns the order id.",
    ),
    "get_discount_code_info": (
        ("describe_discount_code", "discount_code_items"),
        "Returns the items a discount code applies to, with their discount percentages.",
    ),
    "get_all_discount_codes": (("list_discount_codes", "available_promotions"), "Lists every discount code and the item ids it applies to."),
    "list_orders": (("enumerate_orders", "order_history"), "Lists every order (ongoing and past)."),
    "get_order_details": (("retrieve_order_information", "fetch_order"), "Returns the details of an order."),
    "cancel_order": (("revoke_purchase", "call_off_order"), "Cancels an order that has not been delivered yet."),
    # Cabs
    "get_quotation": (
        ("get_quote", "estimate_fare"),
        "Estimates price, delay and duration of a ride between two places for a service type (Default, Premium, Van).",
    ),
    "list_rides": (("enumerate_trips", "ride_options"), "Quotes every service type for a ride between two places."),
    "order_ride": (("request_transportation_service", "book_cab"), "Books a ride between two places with a service type, now or at the given time."),
    "user_cancel_ride": (("cancel_user_ride_request", "cancel_my_ride"), "Cancels the ride currently booked."),
    "get_current_ride_status": (("get_current_trip_state", "track_ride"), "Returns the status of the ride currently booked."),
    "get_ride": (("retrieve_ride", "ride_at_index"), "Returns one ride of the ride history by index."),
    "get_ride_history": (("retrieve_ride_records", "past_trips"), "Returns a page of the ride history."),
    "get_ride_history_length": (("get_length_of_ride_history", "count_past_trips"), "Returns how many rides the history holds."),
    # RentAFlat
    "list_all_apartments": (("display_all_listings", "enumerate_apartments"), "Lists every apartment of the catalogue."),
    "get_apartment_details": (("retrieve_listing_information", "fetch_apartment"), "Returns the details of an apartment by id."),
    "save_apartment": (("add_listing_to_favorites", "bookmark_apartment"), "Adds an apartment to the favourites (no-op if already saved)."),
    "remove_saved_apartment": (("delete_favorite_listing", "unbookmark_apartment"), "Removes an apartment from the favourites."),
    "list_saved_apartments": (("display_favorite_listings", "saved_listings"), "Lists the apartments saved to favourites."),
    "search_apartments": (
        ("find_listings", "filter_apartments"),
        "Finds apartments matching filters such as location, zip code, price range, bedrooms, furnishing, pet policy or amenities.",
    ),
    # Files
    "open": (("access_file", "open_path"), "Opens a file for reading or writing."),
    "cat": (("concatenate", "read_file_contents"), "Returns the contents of a file."),
    "mkdir": (("make_directory", "create_folder"), "Creates a directory (and, by default, its missing parents)."),
    "mv": (("relocate_path", "move_path"), "Moves a file or directory to a new path."),
    "ls": (("listfiles", "list_directory"), "Lists the files and folders in a directory."),
    "rm": (("delete_path", "remove_file"), "Deletes a file, or a directory when recursive."),
    "rmdir": (("remove_directory", "delete_folder"), "Deletes an empty directory."),
    "exists": (("isPresent", "path_exists"), "Tells whether a file or directory exists."),
    "info": (("details", "path_info"), "Returns information about a file or directory."),
    "tree": (("directory_tree", "show_hierarchy"), "Draws the directory tree below a path."),
}

MESSAGING_MODE_NOTE = {
    "PHONE_NUMBER": " User ids (user_id, sender_id, ...) are phone numbers.",
    "NAME": " User ids (user_id, sender_id, ...) are internal ids: map names to ids first.",
}

# ---------------------------------------------------------------------------------------------
# Email / message phrasing
# ---------------------------------------------------------------------------------------------

GREETINGS = ("Hi {first},", "Hello {first},", "Hey {first},", "Dear {first},", "Good morning {first},")
SIGNOFFS = ("Best,", "Thanks,", "Cheers,", "Kind regards,", "All the best,", "Talk soon,")

WORK_SUBJECTS = (
    "Update on {topic}",
    "Re: {topic}",
    "Quick question about {topic}",
    "Notes from today's {topic} sync",
    "{topic}: next steps",
    "Draft for {topic}",
    "Feedback needed: {topic}",
    "FYI: {topic}",
)
WORK_OPENERS = (
    "Following up on our conversation about {topic}.",
    "I wanted to share where we are with {topic}.",
    "Here are my notes on {topic} ahead of the review.",
    "Could you take a look at the latest draft for {topic}?",
    "A quick status update on {topic} before the end of the week.",
)
WORK_CLOSERS = (
    "Let me know if you have any questions.",
    "Happy to walk through it on a call if that's easier.",
    "I'll circulate the final version once I have everyone's input.",
    "Please send any comments by Friday.",
)

SOCIAL_SUBJECTS = (
    "Catching up",
    "Dinner next week?",
    "Photos from {place}",
    "Weekend plans",
    "Long time no see!",
    "Recipe you asked for",
    "Book recommendation",
    "Thanks for last night",
)
SOCIAL_LINES = (
    "It was so good to see you at {place} last weekend.",
    "We should really get together again soon, maybe at {place}?",
    "I finally tried that place on {street} you recommended and loved it.",
    "Are you free one evening next week? I was thinking of {place}.",
    "I'm attaching a few thoughts below, no rush to reply.",
)

CHAT_LINES = (
    "Are you around later?",
    "Sounds good!",
    "On my way",
    "Running 5 minutes late, sorry!",
    "Did you see the news about {place}?",
    "Haha yes",
    "Can you send me the address?",
    "Thanks so much!",
    "Let's do {day} then",
    "I'll bring {food}",
    "How was {place}?",
    "Call you tonight?",
    "Just landed",
    "Happy birthday!! 🎉",
    "Miss you guys",
    "Is {time} okay for you?",
    "Totally forgot, sorry",
    "Good luck today!",
    "See you at {place}",
    "What time works for you on {day}?",
    "I'm at {place} now",
    "Perfect, thanks",
    "Can't wait!",
    "Let me check and get back to you",
    "Did you get my email?",
    "Love it",
    "No worries at all",
)
WORK_CHAT_LINES = (
    "Can you review my PR when you get a chance?",
    "The deploy went out fine",
    "Standup notes are in the doc",
    "I'll be a few minutes late to {topic}",
    "Pushed the fix for {topic}",
    "Who owns {topic} this sprint?",
    "Dashboard looks good now",
    "Let's sync after lunch about {topic}",
    "Customer call moved to {time}",
    "Slides for {topic} are updated",
    "+1",
    "Thanks, that helps",
    "I'm blocked on {topic}, any ideas?",
)
FOODS = ("snacks", "a salad", "dessert", "drinks", "chips and dip", "a cheese board", "cookies", "fruit")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December")

# Product catalogue structure: (noun, category, option schema). Brand names come from Faker.
PRODUCT_TYPES: tuple[tuple[str, str, dict[str, tuple[str, ...]], tuple[float, float]], ...] = (
    ("Wireless Earbuds", "Electronics", {"Color": ("Black", "White", "Blue"), "Case": ("Standard", "Wireless charging")}, (29, 179)),
    ("Bluetooth Speaker", "Electronics", {"Color": ("Black", "Red", "Teal"), "Size": ("Mini", "Standard")}, (25, 149)),
    ("Smart Watch", "Electronics", {"Band": ("Silicone", "Leather", "Metal"), "Size": ("40mm", "44mm")}, (99, 399)),
    ("USB-C Charger", "Electronics", {"Power": ("20W", "45W", "65W")}, (15, 59)),
    ("Portable Power Bank", "Electronics", {"Capacity": ("10000mAh", "20000mAh")}, (19, 69)),
    ("Mechanical Keyboard", "Electronics", {"Switches": ("Red", "Brown", "Blue"), "Layout": ("Full", "Tenkeyless")}, (59, 189)),
    ("Cast Iron Skillet", "Kitchen", {"Size": ("10 inch", "12 inch")}, (19, 79)),
    ("Chef's Knife", "Kitchen", {"Blade": ("8 inch", "10 inch"), "Handle": ("Wood", "Composite")}, (29, 159)),
    ("French Press", "Kitchen", {"Capacity": ("350ml", "1L"), "Finish": ("Glass", "Steel")}, (19, 59)),
    ("Blender", "Kitchen", {"Power": ("600W", "1200W"), "Color": ("Black", "Silver")}, (39, 199)),
    ("Dinner Plate Set", "Home", {"Pieces": ("4", "8", "12"), "Color": ("White", "Sage", "Charcoal")}, (24, 119)),
    ("Linen Duvet Cover", "Home", {"Size": ("Single", "Double", "King"), "Color": ("Oat", "Slate", "White")}, (49, 189)),
    ("Desk Lamp", "Home", {"Finish": ("Black", "Brass", "White")}, (19, 99)),
    ("Scented Candle", "Home", {"Scent": ("Cedar", "Fig", "Lavender", "Sea Salt"), "Size": ("Small", "Large")}, (9, 45)),
    ("Throw Blanket", "Home", {"Color": ("Mustard", "Grey", "Navy"), "Material": ("Cotton", "Wool")}, (29, 129)),
    ("Running Shoes", "Sports", {"Size": ("8", "9", "10", "11"), "Color": ("Black", "Orange")}, (59, 179)),
    ("Hiking Backpack", "Sports", {"Capacity": ("22L", "35L", "50L"), "Color": ("Green", "Black")}, (39, 229)),
    ("Water Bottle", "Sports", {"Capacity": ("500ml", "750ml", "1L"), "Color": ("Blue", "Black", "Pink")}, (12, 45)),
    ("Camping Tent", "Sports", {"Capacity": ("2 person", "4 person")}, (79, 399)),
    ("Puzzle", "Toys", {"Pieces": ("500", "1000", "1500")}, (9, 39)),
    ("Board Game", "Toys", {"Edition": ("Standard", "Deluxe")}, (19, 89)),
    ("Building Blocks Set", "Toys", {"Pieces": ("250", "600"), "Age Range": ("4-7 years", "8-12 years")}, (19, 99)),
    ("Rain Jacket", "Clothing", {"Size": ("S", "M", "L", "XL"), "Color": ("Yellow", "Navy", "Olive")}, (39, 199)),
    ("Wool Socks", "Clothing", {"Size": ("S", "M", "L"), "Pack": ("3-pack", "6-pack")}, (12, 39)),
    ("Denim Jacket", "Clothing", {"Size": ("S", "M", "L", "XL"), "Wash": ("Light", "Dark")}, (49, 149)),
    ("Notebook", "Office", {"Ruling": ("Lined", "Dotted", "Blank"), "Size": ("A5", "A4")}, (6, 29)),
    ("Fountain Pen", "Office", {"Nib": ("Fine", "Medium"), "Color": ("Black", "Blue", "Red")}, (15, 89)),
    ("Monitor Stand", "Office", {"Material": ("Bamboo", "Aluminium")}, (25, 89)),
    ("Houseplant Pot", "Garden", {"Size": ("Small", "Medium", "Large"), "Color": ("Terracotta", "White")}, (9, 59)),
    ("Garden Hose", "Garden", {"Length": ("15m", "30m")}, (19, 69)),
)
PRODUCT_ADJECTIVES = ("Classic", "Pro", "Essential", "Ultra", "Compact", "Premium", "Everyday", "Eco", "Smart", "Signature")

APARTMENT_AMENITIES = (
    "Gym",
    "Pool",
    "Parking",
    "Laundry",
    "Balcony",
    "Elevator",
    "Dishwasher",
    "Air conditioning",
    "Rooftop terrace",
    "Bike storage",
    "Concierge",
    "Storage unit",
)
APARTMENT_PROPERTY_TYPES = ("Apartment", "Condo", "Townhouse", "Loft")
FURNISHED = ("Furnished", "Unfurnished", "Semi-furnished")
FLOORS = ("Ground floor", "Upper floors", "Penthouse", "Basement")
PET_POLICIES = ("Pets allowed", "No pets", "Cats allowed", "Dogs allowed")
LEASE_TERMS = ("Month-to-month", "6 months", "1 year", "Long term lease")
APARTMENT_NAME_PATTERNS = (
    "{last} Residences",
    "The {last} Lofts",
    "{street} Apartments",
    "{last} House",
    "{last} Court",
    "The {last}",
    "{street} Flats",
    "{last} Gardens",
    "{last} Place",
)

CALENDAR_TITLES = (
    ("Project review: {topic}", "work"),
    ("Planning session: {topic}", "work"),
    ("Interview: {name}", "work"),
    ("Coffee with {name}", "social"),
    ("Lunch with {name}", "social"),
    ("Call with {name}", "work"),
    ("Workshop: {topic}", "work"),
    ("Haircut", "personal"),
    ("Yoga class", "personal"),
    ("Grocery run", "personal"),
    ("Dinner with {name}", "social"),
    ("Book club", "social"),
    ("Car service", "personal"),
    ("Parent-teacher meeting", "family"),
    ("Vet appointment", "personal"),
    ("Team offsite prep: {topic}", "work"),
    ("Budget check-in", "work"),
)

# Sentence frames for email bodies and chat messages; every slot is filled from Faker (or the universe).
WORK_SENTENCES = (
    "We still need to {bs} before the {month} release.",
    "{name} thinks we can {bs} if we move the deadline to {weekday}.",
    "The proposal for {catch} is ready for review.",
    "Conversion is up {pct}% since we started to {bs}.",
    "Could you check whether {company} signed off on the contract?",
    "The customer call with {company} is now on {weekday} at {time}.",
    "Budget for {catch} comes to {amount}, about {pct}% under plan.",
    "Let's make sure we {bs} before the offsite.",
    "{name} will present the results on {catch} at the all-hands.",
    "I moved the retro to {weekday} afternoon so everyone can join.",
    "The dashboard now shows {pct}% of tickets closed within two days.",
    "Legal asked us to double-check the terms with {company}.",
    "Hiring is on track: two offers out and one accepted.",
    "Please add your comments directly in the doc by {weekday}.",
    "I talked to {name} and we agreed to {bs} first.",
    "The vendor from {company} quoted {amount} for the first phase.",
    "Risks are mostly on the timeline; scope looks stable.",
    "I'll share the updated slides after the sync on {weekday}.",
)
SOCIAL_SENTENCES = (
    "We went hiking near {city} last weekend and the weather was perfect.",
    "{name} says hi, by the way!",
    "I've been reading a great book by {author}, you'd love it.",
    "The kids are doing well, {name} just started {activity} lessons.",
    "We're thinking of going to {city} for a few days in {month}.",
    "Did you ever try the {food} at {place}? I'm still thinking about it.",
    "My {relative} is visiting next week, so it's a bit hectic here.",
    "Work has been busy but I finally took {weekday} off.",
    "Let me know when you're free, I'd love to catch up properly.",
    "The garden is finally coming along, the {flower} are blooming.",
    "We adopted a {pet} last month and it has completely taken over the flat.",
    "I signed up for a {activity} class on {weekday} evenings, wish me luck.",
    "The concert at {place} was amazing, you should have come!",
)
NEWSLETTER_SENTENCES = (
    "This month we're introducing {catch}.",
    "Members save {pct}% on the whole {category} range until {weekday}.",
    "Our team has been working hard to {bs}.",
    "Join us at our {city} store on {weekday} for a live demo.",
    "Customers tell us the new {product} is their favourite yet.",
    "Free delivery on orders over {amount} this week only.",
    "Read how {company} chose to {bs} with us.",
)
CHAT_EXTRA = (
    "Did you end up going to {place}?",
    "{name} is coming too",
    "Can we move it to {weekday}?",
    "I'm near {place}, want to grab a coffee?",
    "Just finished the {activity} class, exhausted 😅",
    "Have you seen {name} lately?",
    "Traffic near {city} is terrible today",
    "Let's try the {food} at {place} next time",
    "Running late, be there at {time}",
    "Happy {weekday}!",
)
ACTIVITIES = ("piano", "swimming", "football", "ballet", "chess", "pottery", "climbing", "salsa", "yoga", "guitar")
FOOD_DISHES = ("ramen", "tacos", "dumplings", "pizza", "brunch", "curry", "fish and chips", "dim sum", "burgers", "pho")
RELATIVES = ("mum", "dad", "aunt", "uncle", "cousin", "grandmother", "brother", "sister")
FLOWERS = ("tulips", "roses", "dahlias", "sunflowers", "peonies", "lavender")
PETS = ("puppy", "kitten", "rescue dog", "cat")
