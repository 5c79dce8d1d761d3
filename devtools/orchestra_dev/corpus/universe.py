"""One seeded universe: a persona and coherent cross-app data, serialized as ARE app states.

A universe is built once from its :class:`UniverseSpec` (locale, seed, scale) with Faker (seeded) for
names, addresses, companies, jobs and free text, and one ``random.Random`` for every other choice.
It has two layers:

* **planted** entities the scenario templates rely on, reachable through :attr:`Universe.roles` and
  :attr:`Universe.facts` (the partner, the boss, two contacts sharing a first name, the accountant's
  invoices, a discount code valid on two items, two listings on the same street, ...);
* **bulk** data that makes the universe Gaia2-sized (hundreds of emails with bodies, long chat
  histories, a product catalogue, ride history, listings, a file tree).

Bulk data is generated so that it never collides with a planted entity: no bulk contact shares a
first name with a planted person, no bulk calendar event lands in the scenario week, no bulk listing
matches a planted search.

The apps are built with ARE's own classes (``ContactsApp``, ``EmailClientV2``, ``CalendarApp``,
``MessagingAppV2``, ``ShoppingApp``, ``CabApp``, ``ApartmentListingApp``, ``VirtualFileSystem``) and
serialized with their ``get_state()``; :meth:`Universe.app_states` is what every scenario file of the
universe embeds.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from faker import Faker

from orchestra_dev.corpus import text as T

# 2024-10-15 07:00:00 UTC, a Tuesday: the start time of the public Gaia2 universes.
START_TIME = 1728975600.0
START = datetime.fromtimestamp(START_TIME, tz=UTC)
DT_FMT = "%Y-%m-%d %H:%M:%S"


def ts(text: str) -> float:
    """'YYYY-MM-DD HH:MM:SS' (UTC) -> epoch seconds."""
    return datetime.strptime(text, DT_FMT).replace(tzinfo=UTC).timestamp()


def fmt(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).strftime(DT_FMT)


def hid(*parts: object) -> str:
    """Stable 32-hex id (the shape of ARE's ``uuid_hex`` ids) derived from a label."""
    return hashlib.sha256("/".join(["orchestra-corpus", *map(str, parts)]).encode()).hexdigest()[:32]


def slug(value: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "", ascii_text.lower())


def money(value: float, currency: str) -> str:
    return f"{currency}{value:,.2f}"


@dataclass(frozen=True)
class UniverseSpec:
    uid: str
    locale: str
    large: bool
    phone_prefix: str  # country calling code
    mobile_lead: str  # first digit(s) of a mobile number after the country code
    mobile_digits: int  # digits after the lead
    currency: str
    country: str
    nationality: str
    tld: str


SPECS: tuple[UniverseSpec, ...] = (
    UniverseSpec("univ_00", "en_US", True, "+1", "415", 7, "$", "USA", "American", "com"),
    UniverseSpec("univ_01", "en_GB", True, "+44", "7", 9, "£", "United Kingdom", "British", "co.uk"),
    UniverseSpec("univ_02", "en_CA", False, "+1", "604", 7, "$", "Canada", "Canadian", "ca"),
    UniverseSpec("univ_03", "en_AU", False, "+61", "4", 8, "$", "Australia", "Australian", "com.au"),
    UniverseSpec("univ_04", "en_IE", False, "+353", "8", 8, "€", "Ireland", "Irish", "ie"),
    UniverseSpec("univ_05", "en_NZ", False, "+64", "21", 7, "$", "New Zealand", "New Zealander", "co.nz"),
)

# Universes are split once and for all: nobody trains on a held-out universe.
SPLITS: dict[str, tuple[str, ...]] = {
    "train": ("univ_00", "univ_02", "univ_03", "univ_04"),
    "heldout": ("univ_01", "univ_05"),
}


@dataclass
class Scale:
    bulk_contacts: int
    inbox: int
    sent: int
    paragraphs: tuple[int, int]
    bulk_conversations: int
    messages_per_conversation: tuple[int, int]
    bulk_chats: int
    calendar_events: int
    products: int
    orders: int
    rides: int
    apartments: int
    photos: int
    work_docs: int
    songs: int


LARGE = Scale(
    bulk_contacts=140,
    inbox=640,
    sent=140,
    paragraphs=(3, 6),
    bulk_conversations=46,
    messages_per_conversation=(24, 70),
    bulk_chats=12,
    calendar_events=360,
    products=300,
    orders=70,
    rides=200,
    apartments=280,
    photos=700,
    work_docs=260,
    songs=220,
)
SMALL = Scale(
    bulk_contacts=30,
    inbox=70,
    sent=16,
    paragraphs=(2, 3),
    bulk_conversations=8,
    messages_per_conversation=(6, 16),
    bulk_chats=3,
    calendar_events=70,
    products=50,
    orders=12,
    rides=36,
    apartments=50,
    photos=60,
    work_docs=30,
    songs=20,
)


@dataclass
class Person:
    key: str
    first: str
    last: str
    gender: str  # ARE Gender value
    age: int
    job: str
    company: str
    city: str
    country: str
    nationality: str
    status: str  # ARE Status value
    phone: str
    email: str
    address: str
    relation: str  # how the user knows them ("partner", "coworker", "friend", ...)
    description: str = ""

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def contact_id(self) -> str:
        return hid("contact", self.key)


# Planted people: role -> (relation, gender or None for random)
ROLES: tuple[tuple[str, str], ...] = (
    ("partner", "partner"),
    ("sibling", "sibling"),
    ("mother", "mother"),
    ("best_friend", "close friend"),
    ("friend2", "friend"),
    ("friend3", "friend"),
    ("boss", "manager"),
    ("coworker1", "coworker"),
    ("coworker2", "coworker"),
    ("coworker3", "coworker"),
    ("coworker4", "coworker"),
    ("namesake_work", "coworker"),
    ("namesake_friend", "friend"),
    ("accountant", "accountant"),
    ("landlord", "landlord"),
    ("dentist", "dentist"),
    ("realtor", "real estate agent"),
)
WORK_ROLES = ("boss", "coworker1", "coworker2", "coworker3", "coworker4", "namesake_work")


class Universe:
    """A persona plus coherent cross-app data; see the module docstring."""

    def __init__(self, spec: UniverseSpec, base_seed: int):
        self.spec = spec
        self.scale = LARGE if spec.large else SMALL
        index = int(spec.uid.split("_")[1])
        seed = base_seed * 1000 + index * 17
        self.seed = seed
        self.fake = Faker(spec.locale)
        self.fake.seed_instance(seed)
        self.words = Faker("en_US")  # English free text in every locale
        self.words.seed_instance(seed + 1)
        self.rng = random.Random(seed + 2)
        self.cur = spec.currency

        self.people: dict[str, Person] = {}
        self.roles: dict[str, Person] = {}
        self.facts: dict[str, Any] = {}
        self._first_names: set[str] = set()
        self._phones: set[str] = set()
        self._emails: set[str] = set()

        self._geography()
        self._persona_and_people()
        self._contacts_app()
        self._shopping()
        self._cabs()
        self._apartments()
        self._files()
        self._calendar()
        self._emails_app()
        self._messages()
        self._chats()
        self._states = self._serialize()
        self.augmentation_apps = self._augmentation_apps()

    # -----------------------------------------------------------------------------------------
    # helpers
    # -----------------------------------------------------------------------------------------

    def _phone(self) -> str:
        while True:
            digits = "".join(str(self.rng.randint(0, 9)) for _ in range(self.spec.mobile_digits))
            if digits[0] == "0":
                continue
            phone = f"{self.spec.phone_prefix}{self.spec.mobile_lead}{digits}"
            if phone not in self._phones:
                self._phones.add(phone)
                return phone

    def _email(self, first: str, last: str, domain: str | None = None) -> str:
        domain = domain or self.fake.free_email_domain()
        base = f"{slug(first)}.{slug(last)}" or "contact"
        candidate = f"{base}@{domain}"
        n = 1
        while candidate in self._emails:
            n += 1
            candidate = f"{base}{n}@{domain}"
        self._emails.add(candidate)
        return candidate

    def _name(self, gender: str, *, unique_first: bool = True, first: str | None = None, last: str | None = None) -> tuple[str, str]:
        for _ in range(500):
            f = first or (self.fake.first_name_female() if gender == "Female" else self.fake.first_name_male())
            ln = last or self.fake.last_name()
            if not slug(f) or not slug(ln) or " " in f:
                continue
            full = f"{f} {ln}"
            if any(p.full == full for p in self.people.values()):
                continue
            if unique_first and f in self._first_names:
                continue
            self._first_names.add(f)
            return f, ln
        raise RuntimeError(f"{self.spec.uid}: could not draw a unique name")

    def _street_address(self) -> str:
        return self.fake.street_address().replace("\n", ", ")

    def _home_address(self, city: str | None = None) -> str:
        return f"{self._street_address()}, {city or self.city}"

    def _when(self, start: datetime, end: datetime, *, work_hours: bool = False) -> float:
        span = int((end - start).total_seconds())
        while True:
            t = start + timedelta(seconds=self.rng.randint(0, span))
            if not work_hours or (8 <= t.hour < 19 and t.weekday() < 5):
                return float(int(t.timestamp()) // 60 * 60)

    def _month(self) -> str:
        """A month name for free text ("before the March release"), one of the six after the universe's start.

        Derived from the seeded Faker stream and :data:`START`, never from today: Faker's month-name
        provider (like all its date providers) draws a date between 1970 and *now*, so the corpus
        changed with the calendar. One ``random()`` draw, as that provider made, keeps every later
        draw of the stream where it was. No Faker date provider may be used here.
        """
        offset = 1 + int(self.words.random.random() * 6)
        index = (START.month - 1 + offset) % 12
        return T.MONTHS[index]

    def _fill(self, frame: str) -> str:
        rng = self.rng
        others = [p for k, p in self.people.items() if k != "user"] or [None]
        other = rng.choice(others)
        slots = {
            "bs": self.words.bs(),
            "catch": self.words.catch_phrase().lower(),
            "company": self.fake.company(),
            "name": other.first if other else self.words.first_name(),
            "weekday": rng.choice(T.DAYS[:5]),
            "month": self._month(),
            "pct": rng.randint(3, 42),
            "time": f"{rng.randint(9, 17)}:{rng.choice(('00', '15', '30', '45'))}",
            "amount": money(rng.randrange(500, 90000, 50), self.spec.currency),
            "city": rng.choice(self.other_cities),
            "author": self.words.name(),
            "activity": rng.choice(T.ACTIVITIES),
            "food": rng.choice(T.FOOD_DISHES),
            "place": f"{self.fake.last_name()}'s",
            "relative": rng.choice(T.RELATIVES),
            "flower": rng.choice(T.FLOWERS),
            "pet": rng.choice(T.PETS),
            "category": rng.choice(T.PRODUCT_TYPES)[1].lower(),
            "product": rng.choice(T.PRODUCT_TYPES)[0].lower(),
        }
        return frame.format(**slots)

    def _paragraph(self, lo: int = 3, hi: int = 6, kind: str = "work") -> str:
        frames = {"work": T.WORK_SENTENCES, "social": T.SOCIAL_SENTENCES, "news": T.NEWSLETTER_SENTENCES}[kind]
        return " ".join(self._fill(self.rng.choice(frames)) for _ in range(self.rng.randint(lo, hi)))

    # -----------------------------------------------------------------------------------------
    # people
    # -----------------------------------------------------------------------------------------

    def _geography(self) -> None:
        self.city = self.fake.city()
        self.other_cities = []
        while len(self.other_cities) < 5:
            c = self.fake.city()
            if c != self.city and c not in self.other_cities:
                self.other_cities.append(c)
        zips: list[str] = []
        while len(zips) < 8:
            z = self.fake.postcode()
            if z not in zips:
                zips.append(z)
        self.zips = zips
        streets: list[str] = []
        while len(streets) < 16:
            s = self.fake.street_name()
            if s not in streets and slug(s):
                streets.append(s)
        self.streets = streets
        self.employer = self.fake.company()
        self.employer_domain = f"{slug(self.employer.split()[0].rstrip(','))}.{self.spec.tld}"
        self.project = self.fake.last_name().capitalize()  # project codename
        self.topics = [self.words.bs() for _ in range(40)]

    def _person(
        self,
        key: str,
        relation: str,
        *,
        gender: str | None = None,
        first: str | None = None,
        last: str | None = None,
        unique_first: bool = True,
        work: bool = False,
        age: tuple[int, int] = (24, 58),
        job: str | None = None,
        company: str | None = None,
        domain: str | None = None,
        city: str | None = None,
        status: str = "Employed",
    ) -> Person:
        gender = gender or self.rng.choice(("Female", "Male"))
        f, ln = self._name(gender, unique_first=unique_first, first=first, last=last)
        company = company or (self.employer if work else self.fake.company())
        email_domain = domain or (self.employer_domain if work else None)
        p = Person(
            key=key,
            first=f,
            last=ln,
            gender=gender,
            age=self.rng.randint(*age),
            job=job or self.fake.job(),
            company=company,
            city=city or (self.city if self.rng.random() < 0.75 else self.rng.choice(self.other_cities)),
            country=self.spec.country,
            nationality=self.spec.nationality,
            status=status,
            phone=self._phone(),
            email=self._email(f, ln, email_domain),
            address="",
            relation=relation,
        )
        p.address = self._home_address(p.city)
        p.description = (
            f"{p.first} is the user's {relation}. Works as {p.job[0].lower() + p.job[1:]} at {p.company} and lives in {p.city}."
            if status == "Employed"
            else f"{p.first} is the user's {relation}. Lives in {p.city}."
        )
        self.people[key] = p
        return p

    def _persona_and_people(self) -> None:
        gender = self.rng.choice(("Female", "Male"))
        user = self._person("user", "self", gender=gender, age=(31, 44), company=self.employer, domain=self.fake.free_email_domain(), city=self.city)
        user.address = self._home_address(self.city)
        user.description = f"{user.full}, {user.job} at {self.employer}. Lives in {self.city}."
        self.user = user
        partner_gender = "Male" if gender == "Female" else "Female"
        R = self.roles
        R["partner"] = self._person("partner", "partner", gender=partner_gender, age=(30, 46), city=self.city)
        R["partner"].address = user.address
        R["sibling"] = self._person("sibling", "sibling", last=user.last, age=(26, 48))
        R["mother"] = self._person("mother", "mother", gender="Female", last=user.last, age=(62, 78), job="Retired teacher", status="Retired")
        R["best_friend"] = self._person("best_friend", "close friend", city=self.city)
        R["friend2"] = self._person("friend2", "friend", city=self.city)
        R["friend3"] = self._person("friend3", "friend", city=self.city)
        R["boss"] = self._person("boss", "manager", work=True, age=(38, 58), job=f"Head of {self.fake.job().split(',')[0]}")
        for i in range(1, 5):
            R[f"coworker{i}"] = self._person(f"coworker{i}", "coworker", work=True)
        R["namesake_work"] = self._person("namesake_work", "coworker", work=True)
        R["namesake_friend"] = self._person(
            "namesake_friend", "friend", gender=R["namesake_work"].gender, first=R["namesake_work"].first, unique_first=False, city=self.city
        )
        firm = self.fake.company()
        firm_domain = f"{slug(firm.split()[0].rstrip(','))}-accounting.{self.spec.tld}"
        R["accountant"] = self._person("accountant", "accountant", job="Accountant", company=firm, domain=firm_domain, age=(40, 64))
        R["landlord"] = self._person("landlord", "landlord", job="Property manager", age=(45, 70))
        R["dentist"] = self._person("dentist", "dentist", job="Dentist", company=f"{self.fake.last_name()} Dental Care", age=(35, 62))
        R["realtor"] = self._person("realtor", "real estate agent", job="Real estate agent", age=(28, 55))
        self.facts["dentist_office"] = f"{R['dentist'].company}, {self._street_address()}, {self.city}"

        # someone the user meets in a scenario: not a contact yet
        g = self.rng.choice(("Female", "Male"))
        nf, nl = self._name(g)
        self.facts["newcomer"] = {
            "first": nf,
            "last": nl,
            "job": self.rng.choice(("Plumber", "Electrician", "Piano teacher", "Personal trainer")),
            "email": self._email(nf, nl),
            "phone": self._phone(),
        }
        self.facts["moved_to"] = self.rng.choice(self.other_cities)
        self.facts["new_phone"] = self._phone()

        relations = ("friend", "acquaintance", "neighbour", "former classmate", "coworker", "client", "gym buddy")
        for i in range(self.scale.bulk_contacts):
            rel = self.rng.choice(relations)
            self._person(f"bulk{i:03d}", rel, work=rel == "coworker")

    # -----------------------------------------------------------------------------------------
    # contacts
    # -----------------------------------------------------------------------------------------

    def _contacts_app(self):
        from are.simulation.apps.contacts import Contact, ContactsApp

        app = ContactsApp(name="Contacts")
        for key, p in self.people.items():
            app.add_contacts(
                [
                    Contact(
                        first_name=p.first,
                        last_name=p.last,
                        contact_id=p.contact_id,
                        is_user=key == "user",
                        gender=p.gender,
                        age=p.age,
                        nationality=p.nationality,
                        city_living=p.city,
                        country=p.country,
                        status=p.status,
                        job=p.job,
                        description=p.description,
                        phone=p.phone,
                        email=p.email,
                        address=p.address,
                    )
                ]
            )
        self.contacts_app = app

    # -----------------------------------------------------------------------------------------
    # shopping
    # -----------------------------------------------------------------------------------------

    def _brand(self) -> str:
        return self.fake.last_name().capitalize()

    def _product(
        self, label: str, name: str, options: dict[str, tuple[str, ...]], price: tuple[float, float], *, max_variants: int = 4, unavailable: bool = True
    ):
        from are.simulation.apps.shopping import Item, Product

        product = Product(name=name, product_id=hid(self.spec.uid, "product", label))
        combos = [{}]
        for key, values in options.items():
            combos = [{**c, key: v} for c in combos for v in values]
        self.rng.shuffle(combos)
        base = self.rng.uniform(*price)
        for i, combo in enumerate(combos[:max_variants]):
            item = Item(
                price=round(base * self.rng.uniform(0.9, 1.25), 2),
                available=not (unavailable and self.rng.random() < 0.12),
                item_id=hid(self.spec.uid, "item", label, i),
                options=combo,
            )
            product.variants[item.item_id] = item
        return product

    def _planted_product(self, label: str, name: str, variants: list[tuple[dict[str, str], float]]):
        from are.simulation.apps.shopping import Item, Product

        product = Product(name=name, product_id=hid(self.spec.uid, "product", label))
        for i, (options, price) in enumerate(variants):
            item = Item(price=price, available=True, item_id=hid(self.spec.uid, "item", label, i), options=dict(options))
            product.variants[item.item_id] = item
        return product

    def _shopping(self):
        from are.simulation.apps.shopping import CartItem, Order, ShoppingApp

        app = ShoppingApp(name="Shopping")
        names: set[str] = set()
        planted: dict[str, Any] = {}

        def add(product):
            assert product.name not in names, product.name
            names.add(product.name)
            app.products[product.product_id] = product
            return product

        # planted products
        b = [self._brand() for _ in range(8)]
        scarf = add(
            self._planted_product(
                "scarf", f"{b[0]} Merino Wool Scarf", [({"Color": "Navy"}, 39.0), ({"Color": "Burgundy"}, 39.0), ({"Color": "Charcoal"}, 42.0)]
            )
        )
        hoodie = add(
            self._planted_product(
                "hoodie",
                f"{b[1]} Organic Cotton Hoodie",
                [
                    ({"Size": "S", "Color": "Forest Green"}, 54.0),
                    ({"Size": "M", "Color": "Forest Green"}, 54.0),
                    ({"Size": "L", "Color": "Forest Green"}, 56.0),
                ],
            )
        )
        coffee = add(self._planted_product("coffee_set", f"{b[2]} Ceramic Pour-Over Coffee Set", [({"Color": "Matte White"}, 48.0), ({"Color": "Sand"}, 48.0)]))
        mug = add(self._planted_product("travel_mug", f"{b[3]} Stainless Steel Travel Mug", [({"Capacity": "350ml"}, 22.0), ({"Capacity": "500ml"}, 26.0)]))
        headphones = add(
            self._planted_product("headphones", f"{b[4]} Noise-Cancelling Headphones", [({"Color": "Black"}, 199.0), ({"Color": "Silver"}, 209.0)])
        )
        yoga = add(
            self._planted_product(
                "yoga_mat", f"{b[5]} Cork Yoga Mat", [({"Color": "Purple", "Thickness": "4mm"}, 64.0), ({"Color": "Teal", "Thickness": "4mm"}, 64.0)]
            )
        )
        speaker = add(self._planted_product("speaker", f"{b[6]} Waterproof Bluetooth Speaker", [({"Color": "Black"}, 79.0), ({"Color": "Orange"}, 79.0)]))

        def item(product, i):
            return list(product.variants.values())[i]

        autumn = f"AUTUMN{self.rng.randint(10, 25)}"
        flash = f"FLASH{self.rng.randint(30, 50)}"
        app.discount_codes[item(coffee, 1).item_id] = {autumn: 15.0}
        app.discount_codes[item(mug, 1).item_id] = {autumn: 15.0}
        app.discount_codes[item(headphones, 0).item_id] = {flash: 20.0, autumn: 10.0}
        planted.update(
            scarf=scarf,
            hoodie=hoodie,
            coffee=coffee,
            mug=mug,
            headphones=headphones,
            yoga=yoga,
            speaker=speaker,
            autumn=autumn,
            flash=flash,
        )

        # bulk catalogue
        i = 0
        while len(app.products) < self.scale.products:
            noun, _cat, options, price = self.rng.choice(T.PRODUCT_TYPES)
            adjective = self.rng.choice(T.PRODUCT_ADJECTIVES)
            name = f"{self._brand()} {adjective} {noun}"
            if name in names:
                continue
            add(self._product(f"bulk{i:04d}", name, options, price))
            i += 1
        # a few bulk discount codes
        bulk_items = [it for p in list(app.products.values())[7:] for it in p.variants.values()]
        for _ in range(max(3, self.scale.products // 25)):
            code = f"{self.words.word().upper()}{self.rng.randint(5, 30)}"
            for it in self.rng.sample(bulk_items, 3):
                app.discount_codes.setdefault(it.item_id, {})[code] = float(self.rng.choice((5, 10, 15, 20)))

        # orders: bulk past orders plus one planted shipped order (the speaker)
        catalogue = [p for p in app.products.values() if p not in planted.values()]
        orders = []
        for n in range(self.scale.orders):
            when = datetime.fromtimestamp(self._when(START - timedelta(days=150), START - timedelta(days=8)), tz=UTC)
            items = {}
            for p in self.rng.sample(catalogue, self.rng.randint(1, 3)):
                it = self.rng.choice(list(p.variants.values()))
                items[it.item_id] = CartItem(
                    item_id=it.item_id, quantity=self.rng.choice((1, 1, 1, 2)), price=it.price, available=it.available, options=dict(it.options)
                )
            total = round(sum(c.price * c.quantity for c in items.values()), 2)
            status = "delivered" if self.rng.random() < 0.9 else "cancelled"
            orders.append(Order(order_status=status, order_date=when, order_total=total, order_id=hid(self.spec.uid, "order", n), order_items=items))
        sp_item = item(speaker, 1)
        speaker_order = Order(
            order_status="shipped",
            order_date=datetime(2024, 10, 12, 18, 42, tzinfo=UTC),
            order_total=sp_item.price,
            order_id=hid(self.spec.uid, "order", "speaker"),
            order_items={sp_item.item_id: CartItem(item_id=sp_item.item_id, quantity=1, price=sp_item.price, available=True, options=dict(sp_item.options))},
        )
        orders.append(speaker_order)
        orders.sort(key=lambda o: o.order_date)
        for o in orders:
            app.orders[o.order_id] = o
        planted["speaker_order"] = speaker_order
        self.facts["shop"] = planted
        self.shop_domain = f"{slug(self.fake.company().split()[0].rstrip(','))}shop.{self.spec.tld}"
        self.shopping_app = app

    # -----------------------------------------------------------------------------------------
    # cabs
    # -----------------------------------------------------------------------------------------

    def _cabs(self):
        from are.simulation.apps.cab import CabApp, Ride

        app = CabApp(name="Cabs")
        office = f"{self.employer}, {self._street_address()}, {self.city}"
        gym = f"{self.fake.last_name()} Fitness, {self._street_address()}, {self.city}"
        airport = f"{self.city} International Airport"
        station = f"{self.city} Central Station"
        self.facts["places"] = {"home": self.user.address, "office": office, "gym": gym, "airport": airport, "station": station}
        restaurants = [f"{self.fake.last_name()}'s {kind}, {self._street_address()}, {self.city}" for kind in ("Bistro", "Trattoria", "Kitchen", "Brasserie")]
        self.facts["restaurants"] = restaurants
        destinations = [office, gym, airport, station, *restaurants] + [
            f"{self.fake.last_name()}'s {kind}, {self._street_address()}, {self.city}" for kind in ("Cafe", "Bar", "Cinema")
        ]
        distances = {d: round(self.rng.uniform(3, 22), 2) for d in destinations}
        rides = []
        for n in range(self.scale.rides):
            dest = self.rng.choice(destinations)
            start, end = (self.user.address, dest) if self.rng.random() < 0.6 else (dest, self.user.address)
            service = self.rng.choice(("Default", "Default", "Default", "Premium", "Van"))
            per_km = {"Default": 1.0, "Premium": 2.0, "Van": 1.5}[service]
            when = self._when(START - timedelta(days=120), START - timedelta(hours=14))
            dist = distances[dest]
            status = "COMPLETED" if self.rng.random() < 0.93 else "CANCELLED"
            rides.append(
                Ride(
                    ride_id=hid(self.spec.uid, "ride", n),
                    status=status,
                    service_type=service,
                    start_location=start,
                    end_location=end,
                    price=round(dist * per_km * self.rng.uniform(0.95, 1.3), 2),
                    duration=round(dist / 40 * 60 + self.rng.uniform(2, 9), 1),
                    time_stamp=when,
                    distance_km=dist,
                    delay=float(self.rng.randint(2, 9)),
                )
            )
        # make sure September has a few rides
        for n in range(3):
            dest = destinations[n]
            when = ts(f"2024-09-{5 + 7 * n:02d} 08:{10 + n * 7:02d}:00")
            rides.append(
                Ride(
                    ride_id=hid(self.spec.uid, "ride", "sep", n),
                    status="COMPLETED",
                    service_type="Default",
                    start_location=self.user.address,
                    end_location=dest,
                    price=round(distances[dest] * 1.1, 2),
                    duration=round(distances[dest] / 40 * 60 + 4, 1),
                    time_stamp=when,
                    distance_km=distances[dest],
                    delay=4.0,
                )
            )
        rides.sort(key=lambda r: r.time_stamp)
        app.ride_history = rides
        app.quotation_history = list(rides)
        sept = [r for r in rides if r.status == "COMPLETED" and "2024-09-01 00:00:00" <= fmt(r.time_stamp) < "2024-10-01 00:00:00"]
        self.facts["september_rides"] = {"count": len(sept), "total": round(sum(r.price for r in sept), 2)}
        self.cab_app = app

    # -----------------------------------------------------------------------------------------
    # apartments
    # -----------------------------------------------------------------------------------------

    def _apartment(self, label: str, **over):
        from are.simulation.apps.apartment_listing import Apartment

        street = over.pop("street", None) or self.rng.choice(self.streets)
        beds = over.pop("bedrooms", self.rng.choice((1, 1, 2, 2, 2, 3, 3, 4)))
        name = over.pop("name", None) or self.rng.choice(T.APARTMENT_NAME_PATTERNS).format(last=self.fake.last_name(), street=street)
        fields = dict(
            name=name,
            location=f"{self.rng.randint(2, 480)} {street}, {self.city}",
            zip_code=self.rng.choice(self.zips),
            price=float(self.rng.randrange(900, 4200, 25) + beds * 250),
            bedrooms=beds,
            bathrooms=max(1, beds - self.rng.choice((0, 1, 1))),
            property_type=self.rng.choice(T.APARTMENT_PROPERTY_TYPES),
            square_footage=int(350 + beds * 320 + self.rng.randint(-80, 200)),
            furnished_status=self.rng.choice(T.FURNISHED),
            floor_level=self.rng.choice(T.FLOORS),
            pet_policy=self.rng.choice(T.PET_POLICIES),
            lease_term=self.rng.choice(T.LEASE_TERMS),
            amenities=sorted(self.rng.sample(T.APARTMENT_AMENITIES, self.rng.randint(1, 5))),
            apartment_id=hid(self.spec.uid, "apartment", label),
        )
        fields.update(over)
        return Apartment(**fields)

    def _apartments(self):
        from are.simulation.apps.apartment_listing import ApartmentListingApp

        app = ApartmentListingApp(name="RentAFlat")
        zip_short, zip_cheap, zip_new = self.zips[0], self.zips[1], self.zips[2]
        budget = 3000.0
        planted = {
            # exactly two pet-friendly 2-bedrooms under budget in zip_short
            "short_a": self._apartment(
                "short_a",
                zip_code=zip_short,
                bedrooms=2,
                bathrooms=1,
                pet_policy="Pets allowed",
                price=2650.0,
                furnished_status="Unfurnished",
                property_type="Apartment",
            ),
            "short_b": self._apartment(
                "short_b",
                zip_code=zip_short,
                bedrooms=2,
                bathrooms=2,
                pet_policy="Pets allowed",
                price=2890.0,
                furnished_status="Semi-furnished",
                property_type="Condo",
            ),
            # cheapest furnished 1-bedroom in zip_cheap
            "cheap": self._apartment("cheap", zip_code=zip_cheap, bedrooms=1, bathrooms=1, furnished_status="Furnished", price=1480.0),
            "cheap_runner_up": self._apartment("cheap_runner_up", zip_code=zip_cheap, bedrooms=1, bathrooms=1, furnished_status="Furnished", price=1725.0),
            # two listings on the same street (ambiguity)
            "street_a": self._apartment("street_a", street=self.streets[0], bedrooms=1, bathrooms=1, price=1890.0),
            "street_b": self._apartment("street_b", street=self.streets[0], bedrooms=2, bathrooms=1, price=2540.0),
        }
        planted["street_a"].location = f"{self.rng.randint(2, 99)} {self.streets[0]}, {self.city}"
        planted["street_b"].location = f"{self.rng.randint(101, 480)} {self.streets[0]}, {self.city}"
        for apt in planted.values():
            app.apartments[apt.apartment_id] = apt
        n = 0
        while len(app.apartments) < self.scale.apartments:
            apt = self._apartment(f"bulk{n:04d}", street=self.rng.choice(self.streets[1:]))
            n += 1
            # keep the planted searches unambiguous
            if apt.zip_code == zip_short and apt.bedrooms == 2 and apt.pet_policy == "Pets allowed" and apt.price <= budget:
                continue
            if apt.zip_code == zip_cheap and apt.bedrooms == 1 and apt.furnished_status == "Furnished" and apt.price <= 1725.0:
                continue
            if apt.zip_code == zip_new and apt.bedrooms == 2:
                continue
            app.apartments[apt.apartment_id] = apt
        # a few saved ones (not the planted)
        saved = [a for a in app.apartments if a not in {p.apartment_id for p in planted.values()}][:3]
        for a in saved:
            app.apartments[a].saved = True
        app.saved_apartments = list(saved)
        self.facts["apartments"] = {
            "planted": planted,
            "zip_short": zip_short,
            "zip_cheap": zip_cheap,
            "zip_new": zip_new,
            "budget": budget,
            "street": self.streets[0],
        }
        self.apartment_app = app

    # -----------------------------------------------------------------------------------------
    # files
    # -----------------------------------------------------------------------------------------

    def _files(self):
        tree: dict[str, Any] = {}

        def put(path: str) -> None:
            node = tree
            parts = path.strip("/").split("/")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            if parts[-1]:
                node.setdefault(parts[-1], None)

        def mkdir(path: str) -> None:
            node = tree
            for part in path.strip("/").split("/"):
                node = node.setdefault(part, {})

        for d in (
            "Documents/Work",
            "Documents/Personal",
            "Documents/Receipts",
            "Documents/Travel",
            "Documents/Taxes/2022",
            "Documents/Insurance",
            "Documents/Medical",
            "Downloads",
            "Pictures",
            "Music",
            "Videos",
            "Desktop",
        ):
            mkdir(d)
        for _ in range(self.scale.work_docs):
            folder = self.rng.choice(
                (
                    f"Documents/Work/{self.project}",
                    "Documents/Work/Reports",
                    "Documents/Work/Meetings",
                    "Documents/Work/Archive",
                    "Documents/Personal",
                    "Documents/Travel",
                    "Desktop",
                )
            )
            put(f"{folder}/{self.words.file_name(category=self.rng.choice(('office', 'text')))}")
        for month in range(1, 11):
            put(f"Documents/Receipts/2024-{month:02d}_{slug(self.fake.company().split()[0])}_receipt.pdf")
        for name in ("tax_return_2022.pdf", "payslip_summary_2022.pdf", "bank_interest_statement_2022.pdf"):
            put(f"Documents/Taxes/2022/{name}")
        for name in ("home_insurance_policy.pdf", "car_insurance_renewal_2024.pdf", "travel_insurance.pdf"):
            put(f"Documents/Insurance/{name}")
        tax_files = ["payslip_summary_2023.pdf", "bank_interest_statement_2023.pdf", "charity_donation_receipts_2023.pdf"]
        for name in tax_files:
            put(f"Downloads/{name}")
        for _ in range(max(6, self.scale.work_docs // 6)):
            put(f"Downloads/{self.words.file_name(category=self.rng.choice(('office', 'image', 'text')))}")
        trips = [f"{year} {city}" for year, city in zip((2022, 2023, 2023, 2024, 2024), [*self.other_cities, self.city][:5])]
        for n in range(self.scale.photos):
            put(f"Pictures/{self.rng.choice(trips)}/IMG_{1000 + n:04d}.jpg")
        for n in range(self.scale.songs):
            artist = f"{self.words.first_name()} {self.words.last_name()}"
            put(
                f"Music/{artist}/{self.words.word().capitalize()} {self.words.word().capitalize()}/{n % 12 + 1:02d} - "
                f"{self.words.word().capitalize()} {self.words.word()}.mp3"
            )
        put("Videos/birthday_party.mp4")
        self.facts["files"] = {"tax_files": tax_files, "tax_dir": "/Documents/Taxes/2023"}

        def to_node(name: str, children: dict | None) -> dict[str, Any]:
            if children is None:
                return {"name": name, "type": "file"}
            return {"name": name, "type": "directory", "children": [to_node(k, v) for k, v in sorted(children.items())]}

        self.files_state = {"files": to_node("", tree)}

    # -----------------------------------------------------------------------------------------
    # calendar
    # -----------------------------------------------------------------------------------------

    def _calendar(self):
        from are.simulation.apps.calendar import CalendarApp, CalendarEvent

        app = CalendarApp(name="Calendar")
        R = self.roles
        u = self.user.full
        events: list[CalendarEvent] = []

        def ev(label, title, start, end, tag, attendees, location=None, description=None):
            events.append(
                CalendarEvent(
                    event_id=hid(self.spec.uid, "cal", label),
                    title=title,
                    start_datetime=ts(start),
                    end_datetime=ts(end),
                    tag=tag,
                    location=location,
                    description=description,
                    attendees=list(attendees),
                )
            )
            return events[-1]

        first_day = START - timedelta(days=28 if self.spec.large else 14)
        last_day = START + timedelta(days=28 if self.spec.large else 14)
        team = [u, R["boss"].full, R["coworker1"].full, R["coworker2"].full, R["coworker3"].full]
        day = first_day.replace(hour=0, minute=0, second=0)
        while day <= last_day:
            d = day.strftime("%Y-%m-%d")
            if day.weekday() < 5:
                ev(f"standup/{d}", "Team standup", f"{d} 09:00:00", f"{d} 09:15:00", "work", team, "Video call")
            if day.weekday() == 1:
                ev(f"one_on_one/{d}", f"1:1 with {R['boss'].first}", f"{d} 11:00:00", f"{d} 11:30:00", "work", [u, R["boss"].full], f"{self.employer} office")
            if day.weekday() in (0, 3):
                ev(f"gym/{d}", "Gym", f"{d} 18:00:00", f"{d} 19:00:00", "personal", [u], self.facts["places"]["gym"].split(",")[0])
            day += timedelta(days=1)
        planted = {
            "namesake_work": ev(
                "namesake_work",
                f"Design sync with {R['namesake_work'].first}",
                "2024-10-16 14:00:00",
                "2024-10-16 14:45:00",
                "work",
                [u, R["namesake_work"].full],
                "Meeting room 3",
            ),
            "namesake_friend": ev(
                "namesake_friend",
                f"Lunch with {R['namesake_friend'].first}",
                "2024-10-17 12:30:00",
                "2024-10-17 13:30:00",
                "social",
                [u, R["namesake_friend"].full],
                f"{self.fake.last_name()}'s Cafe, {self.city}",
            ),
            "dentist": ev(
                "dentist",
                "Dentist appointment",
                "2024-10-21 08:30:00",
                "2024-10-21 09:15:00",
                "personal",
                [u],
                self.facts["dentist_office"],
                f"Check-up with Dr. {R['dentist'].last}",
            ),
            "dentist_past": ev(
                "dentist_past", "Dentist appointment", "2024-04-22 08:30:00", "2024-04-22 09:15:00", "personal", [u], self.facts["dentist_office"], "Cleaning"
            ),
        }
        self.facts["calendar"] = planted
        self.facts["one_on_one_today"] = hid(self.spec.uid, "cal", "one_on_one/2024-10-15")
        # bulk: never in the scenario week (Mon Oct 14 .. Sun Oct 27) so planted slots stay free
        blocked_from, blocked_to = ts("2024-10-14 00:00:00"), ts("2024-10-28 00:00:00")
        bulk_people = [p for k, p in self.people.items() if k != "user"]
        n = 0
        while n < self.scale.calendar_events:
            start = self._when(START - timedelta(days=60), START + timedelta(days=45), work_hours=True)
            if blocked_from <= start < blocked_to:
                continue
            title, tag = self.rng.choice(T.CALENDAR_TITLES)
            other = self.rng.choice(bulk_people)
            title = title.format(topic=self.rng.choice(self.topics), name=other.full)
            length = self.rng.choice((30, 45, 60, 60, 90))
            attendees = [u] + ([other.full] if "{name}" not in title and self.rng.random() < 0.5 else [])
            if other.full in title:
                attendees.append(other.full)
            ev(
                f"bulk/{n}",
                title,
                fmt(start),
                fmt(start + length * 60),
                tag,
                attendees,
                self.rng.choice((None, "Video call", f"{self._street_address()}, {self.city}")),
                self._fill(self.rng.choice(T.WORK_SENTENCES)) if tag == "work" and self.rng.random() < 0.6 else None,
            )
            n += 1
        events.sort(key=lambda e: (e.start_datetime, e.event_id))
        for e in events:
            app.events[e.event_id] = e
        self.calendar_app = app

    # -----------------------------------------------------------------------------------------
    # emails
    # -----------------------------------------------------------------------------------------

    def _body(self, to_first: str, opener: str, closer: str, signer: str, paragraphs: int | None = None, kind: str = "work") -> str:
        lo, hi = self.scale.paragraphs
        n = paragraphs if paragraphs is not None else self.rng.randint(lo, hi)
        parts = [self.rng.choice(T.GREETINGS).format(first=to_first), opener]
        parts += [self._paragraph(kind=kind) for _ in range(max(0, n - 1))]
        parts += [closer, f"{self.rng.choice(T.SIGNOFFS)}\n{signer}"]
        return "\n\n".join(parts)

    def _emails_app(self):
        from are.simulation.apps.email_client import Email, EmailClientV2, EmailFolderName

        app = EmailClientV2(name="Emails", user_email=self.user.email)
        R = self.roles
        u = self.user
        inbox: list[Email] = []
        sent: list[Email] = []
        cur = self.cur

        def mail(label, sender, recipients, subject, content, when, *, read=True, cc=(), box=inbox):
            e = Email(
                email_id=hid(self.spec.uid, "email", label),
                sender=sender,
                recipients=list(recipients),
                subject=subject,
                content=content,
                timestamp=float(when),
                is_read=read,
                cc=list(cc),
            )
            box.append(e)
            return e

        # planted: the accountant's invoices
        acc = R["accountant"]
        invoices = []
        number = self.rng.randint(1200, 8800)
        for k, (sent_at, month, due, paid) in enumerate(
            (
                ("2024-08-14 15:02:00", "August", "2024-09-15", True),
                ("2024-09-13 10:45:00", "September", "2024-10-31", False),
                ("2024-10-14 16:20:00", "October", "2024-11-15", False),
            )
        ):
            amount = round(self.rng.uniform(480, 1900), 2)
            inv = f"INV-{number + k * 37}"
            due_day = datetime.strptime(due, "%Y-%m-%d")
            due_text = f"{T.MONTHS[due_day.month - 1]} {due_day.day:02d}, {due_day.year}"  # not %B: locale-free
            status = "This one is already settled, thank you." if paid else f"Payment is due by {due_text} (bank transfer, reference {inv})."
            e = mail(
                f"invoice/{month}",
                acc.email,
                [u.email],
                f"Invoice {inv} ({month} bookkeeping)",
                f"Hi {u.first},\n\nPlease find the summary of invoice {inv} for the {month} bookkeeping and payroll "
                f"filings: total {money(amount, cur)}. {status}\n\n{self._paragraph(2, 3)}\n\nBest regards,\n{acc.full}\n{acc.company}",
                ts(sent_at),
                read=k < 2,
            )
            invoices.append({"number": inv, "amount": amount, "due": due_text, "month": month, "paid": paid, "email_id": e.email_id, "subject": e.subject})
        self.facts["invoices"] = invoices

        # planted: newsletters of one brand, the latest one is the one to delete
        brand = self.fake.company().split()[0].rstrip(",")
        self.facts["newsletter_brand"] = brand
        news_sender = f"newsletter@{slug(brand)}.{self.spec.tld}"
        newsletters = []
        for k in range(6 if self.spec.large else 3):
            paragraphs = [
                f"This week at {brand}:",
                self._paragraph(kind="news"),
                self._paragraph(kind="news"),
                "You are receiving this email because you subscribed. Unsubscribe any time.",
            ]
            newsletters.append(
                mail(
                    f"news/{k}",
                    news_sender,
                    [u.email],
                    f"{brand} Weekly: {self.words.catch_phrase()}",
                    "\n\n".join(paragraphs),
                    ts("2024-10-14 06:00:00") - k * 7 * 86400,
                    read=k > 0,
                )
            )
        latest_news = newsletters[0]
        self.facts["newsletter_email_id"] = latest_news.email_id

        # planted: landlord, boss, partner, realtor
        mail(
            "landlord/rent",
            R["landlord"].email,
            [u.email],
            "Rent reminder and building maintenance",
            f"Hi {u.first},\n\nA quick reminder that the November rent is due on the 1st. The water will also be shut off "
            f"on Thursday from 10:00 to 12:00 for maintenance. Please make sure nothing is left in the corridor.\n\nRegards,\n{R['landlord'].full}",
            ts("2024-10-11 09:30:00"),
        )
        mail(
            "boss/q4",
            R["boss"].email,
            [u.email],
            f"Q4 planning for {self.project}",
            self._body(
                u.first,
                f"Ahead of next week, could you pull together the Q4 priorities for {self.project}?",
                "Let's review them together in our next 1:1.",
                R["boss"].full,
            ),
            ts("2024-10-14 17:05:00"),
        )
        mail(
            "partner/weekend",
            R["partner"].email,
            [u.email],
            "This weekend",
            f"Hey {u.first},\n\nShall we finally do that dinner on Friday? {R['sibling'].first} said they might join.\n\n"
            f"{self._paragraph(1, 2, kind='social')}\n\n{R['partner'].first}",
            ts("2024-10-14 20:12:00"),
            read=False,
        )
        mail(
            "realtor/listings",
            R["realtor"].email,
            [u.email],
            "New listings coming up",
            f"Hi {u.first},\n\nAs discussed, I'll send you the new two-bedroom listings in {self.facts['apartments']['zip_new']} "
            f"as soon as they go live on RentAFlat. The market is moving fast, so it's worth being ready to save the good ones.\n\nBest,\n{R['realtor'].full}",
            ts("2024-10-10 12:00:00"),
        )
        for o in list(self.shopping_app.orders.values())[-min(12, len(self.shopping_app.orders)) :]:
            names = ", ".join(self._item_name(i) for i in o.order_items)
            mail(
                f"order/{o.order_id}",
                f"orders@{self.shop_domain}",
                [u.email],
                f"Your order {o.order_id[:8].upper()} is confirmed",
                f"Hi {u.first},\n\nThanks for your order ({names}). Order total: {money(o.order_total, cur)}.\n\nWe'll let you know when it ships.",
                o.order_date.timestamp() + 60,
            )

        # bulk
        people = [p for k, p in self.people.items() if k != "user"]
        workers = [p for p in people if p.email.endswith(self.employer_domain)]
        companies = [self.fake.company() for _ in range(12)]
        window = (START - timedelta(days=75), START - timedelta(minutes=30))
        for n in range(self.scale.inbox):
            kind = self.rng.random()
            when = self._when(*window)
            if kind < 0.4:
                p = self.rng.choice(workers)
                topic = self.rng.choice(self.topics)
                cc = [self.rng.choice(workers).email] if self.rng.random() < 0.3 else []
                cc = [c for c in cc if c != p.email]
                mail(
                    f"bulk/{n}",
                    p.email,
                    [u.email],
                    self.rng.choice(T.WORK_SUBJECTS).format(topic=topic),
                    self._body(u.first, self.rng.choice(T.WORK_OPENERS).format(topic=topic), self.rng.choice(T.WORK_CLOSERS), p.full),
                    when,
                    read=self.rng.random() < 0.8,
                    cc=cc,
                )
            elif kind < 0.7:
                p = self.rng.choice(people)
                place = f"{self.fake.last_name()}'s"
                mail(
                    f"bulk/{n}",
                    p.email,
                    [u.email],
                    self.rng.choice(T.SOCIAL_SUBJECTS).format(place=place),
                    self._body(
                        u.first,
                        self.rng.choice(T.SOCIAL_LINES).format(place=place, street=self.rng.choice(self.streets)),
                        "Speak soon!",
                        p.first,
                        kind="social",
                    ),
                    when,
                    read=self.rng.random() < 0.85,
                )
            else:
                company = self.rng.choice(companies)
                domain = f"{slug(company.split()[0].rstrip(','))}.{self.spec.tld}"
                mail(
                    f"bulk/{n}",
                    f"no-reply@{domain}",
                    [u.email],
                    f"{company}: {self.words.catch_phrase()}",
                    "\n\n".join(
                        [
                            f"Hello {u.first},",
                            self._paragraph(kind="news"),
                            self._paragraph(kind="news"),
                            f"{company}, {self.fake.address().replace(chr(10), ', ')}",
                        ]
                    ),
                    when,
                    read=self.rng.random() < 0.6,
                )
        for n in range(self.scale.sent):
            p = self.rng.choice(people)
            topic = self.rng.choice(self.topics)
            mail(
                f"sent/{n}",
                u.email,
                [p.email],
                f"Re: {topic}",
                self._body(
                    p.first, self.rng.choice(T.WORK_OPENERS).format(topic=topic), self.rng.choice(T.WORK_CLOSERS), u.full, paragraphs=self.rng.randint(1, 3)
                ),
                self._when(*window),
                box=sent,
            )
        for box, folder in ((inbox, EmailFolderName.INBOX), (sent, EmailFolderName.SENT)):
            box.sort(key=lambda e: (-e.timestamp, e.email_id))
            app.folders[folder].emails = box
        self.email_app = app

    def _item_name(self, item_id: str) -> str:
        for p in self.shopping_app.products.values():
            if item_id in p.variants:
                opts = ", ".join(f"{k}: {v}" for k, v in p.variants[item_id].options.items())
                return f"{p.name} ({opts})" if opts else p.name
        return item_id

    # -----------------------------------------------------------------------------------------
    # messages (phone numbers) and chats (internal ids)
    # -----------------------------------------------------------------------------------------

    def _chat_line(self, work: bool = False) -> str:
        r = self.rng.random()
        if r < 0.2:
            return self._fill(self.rng.choice(T.WORK_SENTENCES if work else T.SOCIAL_SENTENCES))
        if r < 0.35 and not work:
            return self._fill(self.rng.choice(T.CHAT_EXTRA))
        line = self.rng.choice(T.WORK_CHAT_LINES if work else T.CHAT_LINES)
        return line.format(
            place=f"{self.fake.last_name()}'s",
            day=self.rng.choice(T.DAYS),
            food=self.rng.choice(T.FOODS),
            time=f"{self.rng.randint(9, 20)}:{self.rng.choice(('00', '15', '30', '45'))}",
            topic=self.rng.choice(self.topics),
        )

    def _conversation(self, app_key: str, key: str, title: str, participants: list[str], lines: list[tuple[str, float, str]]):
        from are.simulation.apps.messaging_v2 import ConversationV2, MessageV2

        msgs = [
            MessageV2(sender_id=s, message_id=hid(self.spec.uid, app_key, key, i), timestamp=float(t), content=c)
            for i, (s, t, c) in enumerate(sorted(lines, key=lambda x: x[1]))
        ]
        conv = ConversationV2(
            participant_ids=list(participants),
            messages=msgs,
            title=title,
            conversation_id=hid(self.spec.uid, app_key, "conv", key),
            last_updated=max((m.timestamp for m in msgs), default=START_TIME - 86400),
        )
        conv.participant_ids = sorted(set(participants))  # __post_init__ de-duplicates through set(): pin the order
        return conv

    def _history(self, ids: list[str], n: int, *, work: bool = False, end: float | None = None) -> list[tuple[str, float, str]]:
        end = end or (START_TIME - 3600)
        t = end - n * self.rng.uniform(3, 9) * 3600
        out = []
        for _ in range(n):
            t += self.rng.uniform(0.05, 12) * 3600
            out.append((self.rng.choice(ids), min(t, end), self._chat_line(work)))
        return out

    def _messages(self):
        from are.simulation.apps.messaging_v2 import MessagingAppMode, MessagingAppV2

        R = self.roles
        u = self.user
        name_to_id = {p.full: p.phone for p in self.people.values()}
        app = MessagingAppV2(
            name="Messages",
            mode=MessagingAppMode.PHONE_NUMBER,
            current_user_id=u.phone,
            current_user_name=u.full,
            name_to_id=dict(name_to_id),
            id_to_name={v: k for k, v in name_to_id.items()},
        )
        lo, hi = self.scale.messages_per_conversation
        convs = []
        bf = R["best_friend"]
        party_day = "2024-10-19"
        party_lines = [
            (bf.phone, ts("2024-10-13 19:02:00"), f"Party at mine on Saturday! Starts at 20:30, {bf.address}"),
            (u.phone, ts("2024-10-13 19:10:00"), "Yes!! Count me in. Anything I can bring?"),
            (bf.phone, ts("2024-10-13 19:14:00"), "Could you bring a cheese board? And maybe some ice"),
            (u.phone, ts("2024-10-13 19:15:00"), "Deal 🧀"),
        ]
        self.facts["party"] = {"day": party_day, "time": "20:30", "bring": "a cheese board and some ice", "address": bf.address}
        for role in ("partner", "sibling", "mother", "best_friend", "friend2", "friend3", "namesake_friend", "namesake_work"):
            p = R[role]
            lines = self._history([u.phone, p.phone], self.rng.randint(lo, hi), end=ts("2024-10-13 12:00:00"))
            if role == "best_friend":
                lines += party_lines
            if role == "friend2":
                hoodie = self.facts["shop"]["hoodie"].name
                lines.append((u.phone, ts("2024-10-14 18:30:00"), "Is your birthday still on the 26th? I have a gift idea 😉"))
                lines.append((p.phone, ts("2024-10-14 18:41:00"), "It is! You don't have to get me anything"))
                self.facts["gift"] = {"product": hoodie}
            convs.append(self._conversation("msg", role, p.full, [u.phone, p.phone], lines))
        club = [R["best_friend"], R["friend2"], R["friend3"]]
        convs.append(
            self._conversation(
                "msg",
                "book_club",
                "Book club",
                [u.phone] + [p.phone for p in club],
                self._history([u.phone] + [p.phone for p in club], self.rng.randint(lo, hi)),
            )
        )
        fam = [R["partner"], R["sibling"], R["mother"]]
        convs.append(
            self._conversation(
                "msg", "family", "Family", [u.phone] + [p.phone for p in fam], self._history([u.phone] + [p.phone for p in fam], self.rng.randint(lo, hi))
            )
        )
        self.facts["book_club_conversation"] = convs[-2].conversation_id
        bulk = [p for k, p in self.people.items() if k.startswith("bulk")]
        for i, p in enumerate(bulk[: self.scale.bulk_conversations]):
            convs.append(self._conversation("msg", f"bulk{i}", p.full, [u.phone, p.phone], self._history([u.phone, p.phone], self.rng.randint(lo, hi))))
        for c in sorted(convs, key=lambda c: (-c.last_updated, c.conversation_id)):
            app.conversations[c.conversation_id] = c
        self.messages_app = app

    def chat_id(self, person: Person) -> str:
        return hid(self.spec.uid, "chat-user", person.key)

    def _chats(self):
        from are.simulation.apps.messaging_v2 import MessagingAppMode, MessagingAppV2

        R = self.roles
        u = self.user
        chat_people = [
            p
            for p in self.people.values()
            if p.email.endswith(self.employer_domain) or p.key in ("user", "best_friend", "friend2", "friend3", "partner", "sibling")
        ]
        name_to_id = {p.full: self.chat_id(p) for p in chat_people}
        uid = self.chat_id(u)
        app = MessagingAppV2(
            name="Chats",
            mode=MessagingAppMode.NAME,
            current_user_id=uid,
            current_user_name=u.full,
            name_to_id=dict(name_to_id),
            id_to_name={v: k for k, v in name_to_id.items()},
        )
        lo, hi = self.scale.messages_per_conversation
        convs = []
        team = [R["boss"], R["coworker1"], R["coworker2"], R["coworker3"]]
        team_ids = [uid] + [self.chat_id(p) for p in team]
        convs.append(self._conversation("chat", "team", f"{self.project} team", team_ids, self._history(team_ids, self.rng.randint(lo, hi), work=True)))
        self.facts["team_chat"] = convs[-1].conversation_id
        for role in ("boss", "coworker1", "coworker2", "coworker4", "namesake_work"):
            p = R[role]
            ids = [uid, self.chat_id(p)]
            convs.append(self._conversation("chat", role, p.full, ids, self._history(ids, self.rng.randint(lo, hi), work=True)))
        others = [p for p in chat_people if p.key.startswith("bulk")]
        for i, p in enumerate(others[: self.scale.bulk_chats]):
            ids = [uid, self.chat_id(p)]
            convs.append(self._conversation("chat", f"bulk{i}", p.full, ids, self._history(ids, self.rng.randint(lo, hi), work=True)))
        for c in sorted(convs, key=lambda c: (-c.last_updated, c.conversation_id)):
            app.conversations[c.conversation_id] = c
        self.chats_app = app

    # -----------------------------------------------------------------------------------------
    # serialization
    # -----------------------------------------------------------------------------------------

    def _serialize(self) -> list[dict[str, Any]]:
        apps = [
            ("Contacts", "ContactsApp", self.contacts_app.get_state()),
            ("Emails", "EmailClientV2", self.email_app.get_state()),
            ("Calendar", "CalendarApp", self.calendar_app.get_state()),
            ("Messages", "MessagingAppV2", self.messages_app.get_state()),
            ("Chats", "MessagingAppV2", self.chats_app.get_state()),
            ("Shopping", "ShoppingApp", self.shopping_app.get_state()),
            ("Cabs", "CabApp", self.cab_app.get_state()),
            ("RentAFlat", "ApartmentListingApp", self.apartment_app.get_state()),
            ("Files", "VirtualFileSystem", self.files_state),
        ]
        from are.simulation.utils.serialization import EnumEncoder

        # exactly what Scenario.initialize() snapshots and the exporter writes
        return [{"name": n, "class_name": c, "app_state": json.loads(json.dumps(s, cls=EnumEncoder))} for n, c, s in apps]

    def app_states(self) -> list[dict[str, Any]]:
        """The universe's apps as ``{name, class_name, app_state}`` (a fresh deep copy)."""
        return copy.deepcopy(self._states)

    def universe_bytes(self) -> int:
        return len(json.dumps(self._states, sort_keys=True, ensure_ascii=False).encode())

    # -----------------------------------------------------------------------------------------
    # augmentation: extra app states for distractor ENV events (ARE's EnvEventsExpander)
    # -----------------------------------------------------------------------------------------

    def _augmentation_apps(self) -> list[dict[str, Any]]:
        rng = random.Random(self.seed + 99)
        small = not self.spec.large

        def conv_noise(app_state: dict[str, Any], n_conv: int, work: bool) -> dict[str, Any]:
            out = {}
            user_id = app_state["current_user_id"]
            convs = list(app_state["conversations"].values())
            for conv in convs[:n_conv]:
                others = [p for p in conv["participant_ids"] if p != user_id]
                msgs = []
                for i in range(4):
                    sender = rng.choice(others)
                    msgs.append(
                        {
                            "sender_id": sender,
                            "message_id": hid(self.spec.uid, "aug", conv["conversation_id"], i),
                            "timestamp": START_TIME,
                            "content": self._chat_line(work),
                        }
                    )
                out[conv["conversation_id"]] = {**{k: v for k, v in conv.items() if k != "messages"}, "messages": msgs}
            return {**{k: v for k, v in app_state.items() if k != "conversations"}, "conversations": out}

        states = {a["name"]: a["app_state"] for a in self._states}
        messages = conv_noise(states["Messages"], 6 if small else 14, False)
        chats = conv_noise(states["Chats"], 3 if small else 6, True)

        products = {}
        codes: dict[str, dict[str, float]] = {}
        for n in range(12 if small else 40):
            noun, _cat, options, price = rng.choice(T.PRODUCT_TYPES)
            name = f"{self._brand()} {rng.choice(T.PRODUCT_ADJECTIVES)} {noun} (new)"
            p = self._product(f"aug{n:03d}", name, options, price, max_variants=3, unavailable=False)
            products[p.product_id] = {
                "name": p.name,
                "product_id": p.product_id,
                "variants": {k: {"item_id": v.item_id, "options": v.options, "available": v.available, "price": v.price} for k, v in p.variants.items()},
            }
            if n % 5 == 0:
                first_item = next(iter(p.variants))
                codes[first_item] = {f"NEW{rng.randint(10, 99)}": float(rng.choice((10, 15, 20)))}
        shopping = {"products": products, "discount_codes": codes, "cart": {}, "orders": {}}

        apartments = {}
        for n in range(10 if small else 30):
            apt = self._apartment(f"aug{n:03d}", street=rng.choice(self.streets[1:]))
            if apt.zip_code == self.facts["apartments"]["zip_new"] and apt.bedrooms == 2:
                apt.bedrooms = 3
            d = {
                k: getattr(apt, k)
                for k in (
                    "name",
                    "location",
                    "zip_code",
                    "price",
                    "bedrooms",
                    "bathrooms",
                    "property_type",
                    "square_footage",
                    "furnished_status",
                    "floor_level",
                    "pet_policy",
                    "lease_term",
                    "amenities",
                )
            }
            apartments[apt.apartment_id] = d
        rent = {"apartments": apartments, "saved_apartments": []}

        people = [p for k, p in self.people.items() if k.startswith("bulk")]
        emails = []
        for n in range(12 if small else 30):
            p = rng.choice(people)
            topic = rng.choice(self.topics)
            emails.append(
                {
                    "email_id": hid(self.spec.uid, "aug-email", n),
                    "sender": p.email,
                    "recipients": [self.user.email],
                    "subject": rng.choice(T.WORK_SUBJECTS).format(topic=topic),
                    "cc": [],
                    "attachments": {},
                    "content": self._body(self.user.first, rng.choice(T.WORK_OPENERS).format(topic=topic), rng.choice(T.WORK_CLOSERS), p.full, paragraphs=2),
                    "timestamp": START_TIME,
                    "is_read": False,
                    "parent_id": None,
                }
            )
        mail = {"user_email": self.user.email, "view_limit": 5, "folders": {"INBOX": {"folder_name": "INBOX", "emails": emails}}}
        return [
            {"name": "Emails", "class_name": "EmailClientV2", "app_state": mail},
            {"name": "Messages", "class_name": "MessagingAppV2", "app_state": messages},
            {"name": "Chats", "class_name": "MessagingAppV2", "app_state": chats},
            {"name": "Shopping", "class_name": "ShoppingApp", "app_state": shopping},
            {"name": "RentAFlat", "class_name": "ApartmentListingApp", "app_state": rent},
        ]

    def tool_maps(self, tools_by_app: dict[str, list[str]], modes: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
        """``tool_names_mapping`` / ``tool_descriptions_mapping`` for every app tool (keyed by ``AppTool.name``)."""
        rng = random.Random(self.seed + 7)
        names: dict[str, str] = {}
        descriptions: dict[str, str] = {}
        for app_name in sorted(tools_by_app):
            for method in sorted(tools_by_app[app_name]):
                if method not in T.TOOL_TEXT:
                    raise KeyError(f"no alternative name/description for {app_name}__{method}; add it to corpus/text.py")
                alternatives, description = T.TOOL_TEXT[method]
                names[f"{app_name}__{method}"] = f"{app_name}__{rng.choice(alternatives)}"
                descriptions[f"{app_name}__{method}"] = description + (T.MESSAGING_MODE_NOTE[modes[app_name]] if app_name in modes else "")
        return names, descriptions
