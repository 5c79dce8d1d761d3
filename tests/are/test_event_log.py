"""`orchestra.are.event_log.serializable` gives what ARE's `make_serializable` gives, for every kind of value ARE's branches tell apart."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, ClassVar

import pytest

pytest.importorskip("are")

from are.simulation.utils.serialization import make_serializable  # noqa: E402

from orchestra.are.event_log import serializable  # noqa: E402


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 2


class Name(str):
    pass


class Mapping(dict[str, Any]):
    pass


class Items(list[Any]):
    pass


@dataclasses.dataclass
class Inner:
    tags: list[str]
    colour: Colour = Colour.RED
    counter: ClassVar[int] = 0  # not a field: ARE leaves it out


@dataclasses.dataclass
class Outer:
    name: str
    inner: Inner
    extra: dict[Any, Any]
    when: float | None = None


@dataclasses.dataclass
class DictDataclass(dict[str, Any]):  # a dataclass first, as ARE tests
    x: int = 1


class Opaque:
    def __repr__(self) -> str:
        return f"<Opaque at {hex(id(self))}>"


VALUES: list[Any] = [
    None,
    True,
    3,
    2.5,
    "text",
    Name("sub"),
    Colour.RED,
    Level.HIGH,
    [1, "a", [Colour.RED]],
    Items([1, 2]),
    Mapping(a=1),
    {1: "one", ("t", 2): [None], Colour.RED: {"deep": Inner(["x"])}},
    (1, 2),
    {"only"},
    frozenset(),
    Outer("o", Inner(["a", "b"]), {"k": Opaque()}, 1.0),
    DictDataclass(),
    DictDataclass,  # a dataclass class: ARE reads its fields' defaults
    Opaque(),
    b"bytes",
]


@pytest.mark.parametrize("value", VALUES, ids=[type(v).__name__ for v in VALUES])
def test_serializable_is_ares_make_serializable(value: Any) -> None:
    assert serializable(value) == make_serializable(value)
    assert type(serializable(value)) is type(make_serializable(value))
