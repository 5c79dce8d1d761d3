"""Tool schemas derived from ARE's type hints: valid, faithful to defaults, and usable for checks.

Every tool of every ARE app that can be built without arguments is covered, so a new or changed
type hint in an ARE upgrade shows up here rather than as a malformed schema sent to a model.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import shutil
from collections.abc import Iterator
from typing import Annotated, Any, Literal, NewType, Optional, TypedDict, Union

import jsonschema
import pytest

from orchestra.are.imports import import_are
from orchestra.are.loading import parse_scenario_json
from orchestra.are.tools import agent_tools
from orchestra.tool_schemas import (
    TEXT_REPLY_TOOL,
    action_union_schema,
    json_schema_for_type,
    openai_tool,
    parameters_schema,
    specs_for_app,
    validate_arguments,
)
from orchestra.types import ToolArg, ToolSpec

Validator = jsonschema.Draft202012Validator
UNKNOWN_ARG = "definitely_not_an_argument"


# --------------------------------------------------------------------------------------------
# Fixtures: the tools of every ARE app
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app_specs() -> Iterator[dict[str, list[ToolSpec]]]:
    """Tool specs per ARE app class (every class in ALL_APPS that builds with no arguments).

    File-system apps each make a sandbox folder that only their `__del__` removes, which is not
    run for reference cycles at exit; remove them explicitly afterwards.
    """
    import_are()
    from are.simulation.apps import ALL_APPS

    apps = []
    out: dict[str, list[ToolSpec]] = {}
    for cls in ALL_APPS:
        try:
            app = cls()
        except Exception:  # pragma: no cover - an app needing constructor arguments
            continue
        apps.append(app)
        out[cls.__name__] = specs_for_app(app)
    yield out
    for app in apps:
        for owner in (app, getattr(app, "sandbox_fs", None)):
            tmpdir = getattr(owner, "tmpdir", None)
            if isinstance(tmpdir, str):
                shutil.rmtree(tmpdir, ignore_errors=True)


@pytest.fixture(scope="module")
def all_specs(app_specs: dict[str, list[ToolSpec]]) -> list[ToolSpec]:
    return [s for specs in app_specs.values() for s in specs]


@pytest.fixture(scope="module")
def by_name(all_specs: list[ToolSpec]) -> dict[str, ToolSpec]:
    return {s.name: s for s in all_specs}


def _example(schema: dict[str, Any]) -> Any:
    """A value the schema accepts (the first non-null choice wherever there is a choice)."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if "anyOf" in schema:
        branches = [b for b in schema["anyOf"] if b.get("type") != "null"] or schema["anyOf"]
        return _example(branches[0])
    kind = schema.get("type")
    if kind == "array":
        return [_example(schema.get("items", {}))]
    if kind == "object":
        props = schema.get("properties")
        if props is not None:
            return {k: _example(props[k]) for k in schema.get("required", [])}
        values = schema.get("additionalProperties")
        return {"key": _example(values)} if isinstance(values, dict) else {"key": "value"}
    return {"string": "text", "integer": 3, "number": 2.5, "boolean": True, "null": None}.get(kind, "anything")


_WRONG_CANDIDATES: list[Any] = [{"unexpected": "object"}, ["unexpected", "array"], 12345, "unexpected string", True]


def _wrong_value(schema: dict[str, Any]) -> Any:
    """A value of the wrong JSON type for `schema`, or a sentinel when everything is accepted."""
    for value in _WRONG_CANDIDATES:
        if not Validator(schema).is_valid(value):
            return value
    return _WRONG_CANDIDATES  # sentinel: unconstrained


# --------------------------------------------------------------------------------------------
# Every tool of every app
# --------------------------------------------------------------------------------------------


def test_every_instantiable_app_has_tools(app_specs: dict[str, list[ToolSpec]]) -> None:
    # The survey is only meaningful if it actually covers the apps Gaia2 scenarios use.
    for name in (
        "EmailClientV2",
        "MessagingAppV2",
        "CalendarApp",
        "ContactsApp",
        "CabApp",
        "ShoppingApp",
        "ApartmentListingApp",
        "CityApp",
        "SystemApp",
        "AgentUserInterface",
        "Files",
        "VirtualFileSystem",
    ):
        assert app_specs.get(name), f"no tools found for {name}"
    assert sum(len(v) for v in app_specs.values()) > 100


def test_every_parameters_schema_is_valid_and_requires_exactly_the_args_without_defaults(all_specs: list[ToolSpec]) -> None:
    problems = []
    for spec in all_specs:
        schema = parameters_schema(spec)
        try:
            Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            problems.append(f"{spec.name}: invalid schema: {exc.message}")
            continue
        json.dumps(schema)  # must be plain JSON
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert list(schema["properties"]) == [a.name for a in spec.args], spec.name
        expected_required = [a.name for a in spec.args if a.required]
        if schema["required"] != expected_required:
            problems.append(f"{spec.name}: required {schema['required']} != {expected_required}")
        for arg in spec.args:
            prop = schema["properties"][arg.name]
            if arg.description and prop.get("description") != arg.description:
                problems.append(f"{spec.name}.{arg.name}: description lost")
            if not arg.required and "default" in prop and not Validator(prop).is_valid(prop["default"]):
                problems.append(f"{spec.name}.{arg.name}: default {prop['default']!r} violates its own schema")
            if not arg.required and arg.default is not None and prop.get("default") != arg.default:
                problems.append(f"{spec.name}.{arg.name}: default {arg.default!r} not advertised")
    assert not problems, "\n".join(problems)


def test_every_tool_accepts_a_well_typed_call(all_specs: list[ToolSpec]) -> None:
    problems = []
    for spec in all_specs:
        props = parameters_schema(spec)["properties"]
        minimal = {a.name: _example(props[a.name]) for a in spec.args if a.required}
        full = {a.name: _example(props[a.name]) for a in spec.args}
        for call in (minimal, full):
            errors = validate_arguments(spec, call)
            if errors:
                problems.append(f"{spec.name}({call}): {errors}")
    assert not problems, "\n".join(problems)


def test_every_tool_reports_wrong_types_missing_and_unknown_args_by_name(all_specs: list[ToolSpec]) -> None:
    problems = []
    checked_types = 0
    for spec in all_specs:
        props = parameters_schema(spec)["properties"]
        valid = {a.name: _example(props[a.name]) for a in spec.args}
        for arg in spec.args:
            wrong = _wrong_value(props[arg.name])
            if wrong is _WRONG_CANDIDATES:
                continue
            checked_types += 1
            errors = validate_arguments(spec, {**valid, arg.name: wrong})
            if len(errors) != 1 or f"'{arg.name}'" not in errors[0] or "must be" not in errors[0]:
                problems.append(f"{spec.name}: wrong type for {arg.name}: {errors}")
        for arg in spec.args:
            if arg.required:
                errors = validate_arguments(spec, {k: v for k, v in valid.items() if k != arg.name})
                if errors != [e for e in errors if "missing" in e and f"'{arg.name}'" in e] or not errors:
                    problems.append(f"{spec.name}: missing {arg.name}: {errors}")
        errors = validate_arguments(spec, {**valid, UNKNOWN_ARG: 1})
        if len(errors) != 1 or f"'{UNKNOWN_ARG}'" not in errors[0] or "unknown" not in errors[0]:
            problems.append(f"{spec.name}: unknown arg: {errors}")
    assert not problems, "\n".join(problems)
    assert checked_types > 200


def test_every_openai_tool_has_the_function_calling_shape(all_specs: list[ToolSpec]) -> None:
    for spec in all_specs:
        tool = openai_tool(spec)
        assert tool["type"] == "function"
        assert set(tool["function"]) == {"name", "description", "parameters"}
        assert tool["function"]["name"] == spec.name
        assert tool["function"]["description"] == spec.description
        assert tool["function"]["parameters"] == parameters_schema(spec)


# --------------------------------------------------------------------------------------------
# Spot checks on real tools
# --------------------------------------------------------------------------------------------


def _prop(by_name: dict[str, ToolSpec], tool: str, arg: str) -> dict[str, Any]:
    return parameters_schema(by_name[tool])["properties"][arg]


def test_email_recipients_are_an_optional_array_of_strings(by_name: dict[str, ToolSpec]) -> None:
    spec = by_name["EmailClientV2__send_email"]
    recipients = _prop(by_name, spec.name, "recipients")
    assert "recipients" not in parameters_schema(spec)["required"]
    v = Validator(recipients)
    assert v.is_valid(["a@example.com", "b@example.com"]) and v.is_valid(None)
    assert not v.is_valid("a@example.com") and not v.is_valid([1])
    assert validate_arguments(spec, {"recipients": ["a@example.com"], "subject": "Hi", "content": "Hello"}) == []
    [msg] = validate_arguments(spec, {"recipients": "a@example.com"})
    assert "'recipients'" in msg and "array of strings" in msg
    [msg] = validate_arguments(spec, {"recipients": ["a@example.com", 5]})
    assert "'recipients'" in msg and "[1]" in msg and "a string" in msg


def test_int_arg_is_a_required_integer(by_name: dict[str, ToolSpec]) -> None:
    spec = by_name["CabApp__get_ride"]
    assert _prop(by_name, spec.name, "idx")["type"] == "integer"
    assert parameters_schema(spec)["required"] == ["idx"]
    assert validate_arguments(spec, {"idx": 0}) == []
    [msg] = validate_arguments(spec, {"idx": "0"})
    assert "'idx'" in msg and "integer" in msg
    [msg] = validate_arguments(spec, {"idx": True})  # JSON booleans are not integers
    assert "'idx'" in msg
    [msg] = validate_arguments(spec, {})
    assert "missing" in msg and "'idx'" in msg and "integer" in msg


def test_optional_args_are_not_required_and_nullable(by_name: dict[str, ToolSpec]) -> None:
    spec = by_name["ApartmentListingApp__search_apartments"]
    schema = parameters_schema(spec)
    assert schema["required"] == []
    bedrooms = Validator(schema["properties"]["number_of_bedrooms"])
    assert bedrooms.is_valid(None) and bedrooms.is_valid(2) and not bedrooms.is_valid("2")
    price = Validator(schema["properties"]["max_price"])  # int | float | None
    assert price.is_valid(1500) and price.is_valid(1500.5) and price.is_valid(None) and not price.is_valid("1500")
    assert schema["properties"]["saved_only"] == {**schema["properties"]["saved_only"], "type": "boolean", "default": False}


def test_defaults_are_advertised(by_name: dict[str, ToolSpec]) -> None:
    offset = _prop(by_name, "CabApp__get_ride_history", "offset")
    assert offset["type"] == "integer" and offset["default"] == 0
    assert _prop(by_name, "EmailClientV2__send_email", "subject")["default"] == ""


def test_list_and_dict_args(by_name: dict[str, ToolSpec]) -> None:
    user_ids = _prop(by_name, "MessagingAppV2__create_group_conversation", "user_ids")
    assert user_ids["type"] == "array" and user_ids["items"] == {"type": "string"}
    assert "user_ids" in parameters_schema(by_name["MessagingAppV2__create_group_conversation"])["required"]
    updates = _prop(by_name, "ContactsApp__edit_contact", "updates")
    assert updates["type"] == "object"
    [msg] = validate_arguments(by_name["ContactsApp__edit_contact"], {"contact_id": "c1", "updates": ["age", 3]})
    assert "'updates'" in msg and "an object" in msg


def test_var_keyword_parameters_are_not_offered(by_name: dict[str, ToolSpec]) -> None:
    # ARE lists `**kwargs` as a required argument named "kwargs"; the model must not be asked for it.
    for name in ("Files__cat", "Files__ls", "VirtualFileSystem__info"):
        schema = parameters_schema(by_name[name])
        assert "kwargs" not in schema["properties"] and "kwargs" not in schema["required"]
        assert validate_arguments(by_name[name], {"path": "/"}) == []


def test_non_object_arguments_are_reported(by_name: dict[str, ToolSpec]) -> None:
    [msg] = validate_arguments(by_name["CabApp__get_ride"], [0])
    assert "JSON object" in msg


def test_agent_tools_of_a_real_scenario_give_valid_schemas(scenario_path: Any) -> None:
    path = scenario_path("starter_execution_calendar")
    scenario = parse_scenario_json(path.read_text(), path)
    scenario.initialize()
    tools = agent_tools(scenario)
    assert tools
    for spec, _ in tools.values():
        Validator.check_schema(parameters_schema(spec))
    union = action_union_schema([spec for spec, _ in tools.values()], allow_text_reply=True)
    Validator.check_schema(union)
    assert Validator(union).is_valid({"name": TEXT_REPLY_TOOL, "arguments": {"content": "done"}})


# --------------------------------------------------------------------------------------------
# The action union for constrained decoding
# --------------------------------------------------------------------------------------------


def test_action_union_accepts_real_calls_and_rejects_unknown_tools(all_specs: list[ToolSpec], by_name: dict[str, ToolSpec]) -> None:
    union = action_union_schema(all_specs, allow_text_reply=False)
    Validator.check_schema(union)
    assert len(union["anyOf"]) == len(all_specs)
    v = Validator(union)
    assert v.is_valid({"name": "CabApp__get_ride", "arguments": {"idx": 1}})
    assert v.is_valid({"name": "EmailClientV2__send_email", "arguments": {"recipients": ["a@example.com"], "subject": "Hi"}})
    assert not v.is_valid({"name": "CabApp__get_ride", "arguments": {"idx": "one"}})
    assert not v.is_valid({"name": "CabApp__get_ride", "arguments": {}})
    assert not v.is_valid({"name": "CabApp__get_ride", "arguments": {"idx": 1, UNKNOWN_ARG: 1}})
    assert not v.is_valid({"name": "No__such_tool", "arguments": {}})
    assert not v.is_valid({"name": TEXT_REPLY_TOOL, "arguments": {"content": "hi"}})
    assert not v.is_valid({"name": "CabApp__get_ride", "arguments": {"idx": 1}, "extra": 1})
    assert not v.is_valid({"name": "CabApp__get_ride"})


def test_action_union_text_reply_branch(by_name: dict[str, ToolSpec]) -> None:
    union = action_union_schema([by_name["CabApp__get_ride"]], allow_text_reply=True)
    Validator.check_schema(union)
    v = Validator(union)
    assert v.is_valid({"name": TEXT_REPLY_TOOL, "arguments": {"content": "All done."}})
    assert not v.is_valid({"name": TEXT_REPLY_TOOL, "arguments": {}})
    assert not v.is_valid({"name": TEXT_REPLY_TOOL, "arguments": {"content": 3}})
    assert v.is_valid({"name": "CabApp__get_ride", "arguments": {"idx": 1}})


def _spec(name: str, *args: ToolArg) -> ToolSpec:
    return ToolSpec(name=name, app_name="A", app_class="A", method=name, description="d", args=args, return_type="str", writes=False)


def test_action_union_rejects_ambiguous_or_empty_choices() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        action_union_schema([_spec("A__f"), _spec("A__f")], allow_text_reply=False)
    with pytest.raises(ValueError, match=TEXT_REPLY_TOOL):
        action_union_schema([_spec(TEXT_REPLY_TOOL)], allow_text_reply=True)
    with pytest.raises(ValueError):
        action_union_schema([], allow_text_reply=False)
    only_text = action_union_schema([], allow_text_reply=True)
    assert Validator(only_text).is_valid({"name": TEXT_REPLY_TOOL, "arguments": {"content": ""}})


# --------------------------------------------------------------------------------------------
# Type hints beyond the ones ARE's apps use today
# --------------------------------------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 3


class Point(TypedDict):
    x: int
    y: int


UserId = NewType("UserId", str)


class Opaque:
    pass


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (type(None), {"type": "null"}),
        (Any, {}),
        (object, {}),
        ("Any", {}),  # ARE's marker for an unannotated parameter
        ("str", {"type": "string"}),
        ("SomeForwardRef", {}),
        (list, {"type": "array"}),
        (dict, {"type": "object"}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (list[Any], {"type": "array"}),
        (set[str], {"type": "array", "uniqueItems": True, "items": {"type": "string"}}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (tuple[str, int], {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "minItems": 2, "maxItems": 2}),
        (dict[str, Any], {"type": "object"}),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
        (list[dict[str, float]], {"type": "array", "items": {"type": "object", "additionalProperties": {"type": "number"}}}),
        (Optional[str], {"anyOf": [{"type": "string"}, {"type": "null"}]}),  # noqa: UP045  (the old spelling is what is tested)
        (str | None, {"anyOf": [{"type": "string"}, {"type": "null"}]}),
        (Union[int, float], {"type": "number"}),  # noqa: UP007  (the old spelling is what is tested)
        (int | float | None, {"anyOf": [{"type": "number"}, {"type": "null"}]}),
        (str | Any, {}),
        (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        (Literal[1, "a"], {"enum": [1, "a"]}),
        (Literal["a"] | None, {"anyOf": [{"type": "string", "enum": ["a"]}, {"type": "null"}]}),
        (Color, {"type": "string", "enum": ["red", "green"]}),
        (Level, {"type": "integer", "enum": [1, 3]}),
        (Color | None, {"anyOf": [{"type": "string", "enum": ["red", "green"]}, {"type": "null"}]}),
        (dt.datetime, {"type": "string", "format": "date-time"}),
        (dt.date, {"type": "string", "format": "date"}),
        (Annotated[int, "meta"], {"type": "integer"}),
        (UserId, {"type": "string"}),
        (Point, {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "additionalProperties": False}),
        (Opaque, {}),
        (42, {}),
        (list["Opaque"], {"type": "array"}),
    ],
)
def test_json_schema_for_type(hint: Any, expected: dict[str, Any]) -> None:
    schema = json_schema_for_type(hint)
    assert schema == expected
    Validator.check_schema(schema)
    json.dumps(schema)


def test_json_schema_for_type_returns_fresh_dicts() -> None:
    a = json_schema_for_type(str)
    a["description"] = "changed"
    assert json_schema_for_type(str) == {"type": "string"}


def test_optional_arg_with_none_default_but_non_optional_hint_is_nullable() -> None:
    spec = _spec("A__f", ToolArg("x", str, "str", "an x", required=False, default=None), ToolArg("n", int, "int", "", required=True))
    schema = parameters_schema(spec)
    Validator.check_schema(schema)
    assert schema["required"] == ["n"]
    assert Validator(schema["properties"]["x"]).is_valid(None)
    assert "description" not in schema["properties"]["n"]
    assert validate_arguments(spec, {"n": 1, "x": None}) == []


def test_non_json_defaults_are_left_out() -> None:
    spec = _spec(
        "A__f",
        ToolArg("when", dt.datetime, "datetime", "", required=False, default=dt.datetime(2024, 1, 1)),
        ToolArg("color", Color, "Color", "", required=False, default=Color.RED),
    )
    props = parameters_schema(spec)["properties"]
    assert "default" not in props["when"]
    assert props["color"]["default"] == "red"
