"""JSON Schemas for ARE's agent tools, derived from the real Python type hints.

Why this module exists: ARE's own `AppTool.to_open_ai()` is not a usable schema (ARE-NOTES §5.6).
It maps only `int` and `float` to JSON types, leaves every other type as a Python string
(`"str"`, `"list[str] | None"`), and lists *every* argument as required, defaults included. A model
given that schema (OpenAI function calling) or a grammar compiled from it (llama.cpp constrained
decoding) is told the wrong thing. `AppToolArg.type_obj` keeps the real type hint and
`has_default`/`default` say which arguments are optional, so a correct schema can be derived; that
is what this module does.

What it provides:

* `json_schema_for_type(hint)`: one Python type hint -> a JSON Schema fragment.
* `parameters_schema(spec)` / `openai_tool(spec)`: the `parameters` object of a tool, and the whole
  OpenAI `tools[]` entry.
* `action_union_schema(specs, allow_text_reply=...)`: one schema covering "call exactly one of these
  tools", for grammar-constrained decoding of `{"name": ..., "arguments": {...}}` with small local
  models (LOCAL-MODELS §5.2).
* `validate_arguments(spec, arguments)`: human-readable problems with a proposed call, so a scaffold
  can answer a bad call with a message the model can act on instead of an ARE traceback.
* `spec_from_app_tool(tool)` / `specs_for_app(app)`: `ToolSpec`s straight from an ARE app, without
  a scenario (for tests and tool catalogues).

Schemas use the subset of JSON Schema draft 2020-12 that both OpenAI function calling (non-strict)
and llama.cpp's json-schema-to-grammar understand: `type`, `properties`, `required`,
`additionalProperties`, `items`, `prefixItems`, `anyOf`, `enum`, `const`, `format`, `description`,
`default`. No `$ref`, no `type: [..]` lists (unions are always `anyOf`, which every consumer handles
the same way). Nothing here imports ARE at module import time.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime as _dt
import decimal
import enum
import inspect
import json
import pathlib
import types
import typing
import uuid
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from orchestra.are.tools import HIDDEN_AUI_TOOLS, spec_from_app_tool
from orchestra.types import ToolArg, ToolSpec

if TYPE_CHECKING:  # pragma: no cover - import for type checkers only
    import jsonschema

#: The pseudo-tool a constrained model "calls" to answer in plain text instead of calling a tool
#: (`tool_choice="auto"` under a grammar: without it the model could never stop calling tools).
TEXT_REPLY_TOOL = "reply_to_user"

JsonSchema = dict[str, Any]

__all__ = [
    "TEXT_REPLY_TOOL",
    "JsonSchema",
    "action_union_schema",
    "argument_schema",
    "describe_schema",
    "json_schema_for_type",
    "openai_tool",
    "parameters_schema",
    "spec_from_app_tool",
    "specs_for_app",
    "text_reply_parameters",
    "validate_arguments",
]

# --------------------------------------------------------------------------------------------
# Type hint -> JSON Schema
# --------------------------------------------------------------------------------------------

#: Hints given as strings. ARE's `build_tool` stores the *string* "Any" for an unannotated
#: parameter; other strings only appear for unresolved forward references. Resolving arbitrary
#: strings would mean `eval`, so only these plain names are understood; the rest map to `{}`.
_STRING_HINTS: dict[str, JsonSchema] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    "None": {"type": "null"},
    "NoneType": {"type": "null"},
    "list": {"type": "array"},
    "dict": {"type": "object"},
    "Any": {},
    "object": {},
    "": {},
}

#: Plain classes. Order matters only for subclasses and is handled in `_schema_for_class`.
#: Datetime-like values travel as strings in JSON; `format` documents which (llama.cpp's grammar
#: converter and OpenAI both understand `date-time`, `date`, `time`, `uuid`).
_CLASS_SCHEMAS: tuple[tuple[type, JsonSchema], ...] = (
    (bool, {"type": "boolean"}),
    (int, {"type": "integer"}),
    (float, {"type": "number"}),
    (decimal.Decimal, {"type": "number"}),
    (str, {"type": "string"}),
    (bytes, {"type": "string"}),
    (bytearray, {"type": "string"}),
    (_dt.datetime, {"type": "string", "format": "date-time"}),  # before date: datetime subclasses date
    (_dt.date, {"type": "string", "format": "date"}),
    (_dt.time, {"type": "string", "format": "time"}),
    (uuid.UUID, {"type": "string", "format": "uuid"}),
    (pathlib.PurePath, {"type": "string"}),
    (list, {"type": "array"}),
    (tuple, {"type": "array"}),
    (set, {"type": "array", "uniqueItems": True}),
    (frozenset, {"type": "array", "uniqueItems": True}),
    (dict, {"type": "object"}),
)

_ARRAY_ORIGINS = (
    list,
    collections.abc.Sequence,
    collections.abc.MutableSequence,
    collections.abc.Iterable,
    collections.abc.Collection,
)
_SET_ORIGINS = (set, frozenset, collections.abc.Set, collections.abc.MutableSet)
_MAPPING_ORIGINS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)


def json_schema_for_type(hint: Any) -> JsonSchema:
    """A JSON Schema for a Python type hint, as ARE's tools declare them.

    Covers `str`, `int`, `float`, `bool`, `None`, `list[X]` (and other sequences/sets),
    `tuple[...]`, `dict[str, X]`/`dict`, `Any`/`object`, `Optional`/`Union`/`X | Y`, `Literal[...]`,
    `Enum` subclasses (enum of member values), `TypedDict`, `Annotated`, `NewType`, and
    datetime-like classes (strings with a `format`). Anything else maps to `{}` ("any value"): an
    unknown hint must never stop a tool from being offered, and an unconstrained argument is
    better than a wrong constraint. Never raises.

    The result is a fresh dict the caller may extend (e.g. with `description`).
    """
    try:
        return _schema(hint, depth=0)
    except Exception:  # a hint we cannot introspect: no constraint rather than no tool
        return {}


def _schema(hint: Any, depth: int) -> JsonSchema:
    if depth > 32:  # pathological nesting; JSON Schema cannot express recursion without $ref anyway
        return {}
    if hint is None or hint is types.NoneType:
        return {"type": "null"}
    if hint is Any or hint is object or hint is inspect.Parameter.empty:
        return {}
    if isinstance(hint, str):
        return dict(_STRING_HINTS.get(hint.strip(), {}))
    if isinstance(hint, typing.TypeVar):
        bound = hint.__bound__
        return _schema(bound, depth + 1) if bound is not None else {}
    supertype = getattr(hint, "__supertype__", None)  # typing.NewType
    if supertype is not None:
        return _schema(supertype, depth + 1)

    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        return _schema(args[0], depth + 1)
    if origin is typing.Union or origin is types.UnionType:
        return _union([_schema(a, depth + 1) for a in args])
    if origin is typing.Literal:
        return _enum_schema(list(args))
    if origin is tuple:
        return _tuple_schema(args, depth)
    if origin in _SET_ORIGINS:
        out: JsonSchema = {"type": "array", "uniqueItems": True}
        return _with_items(out, args, depth)
    if origin in _ARRAY_ORIGINS:
        return _with_items({"type": "array"}, args, depth)
    if origin in _MAPPING_ORIGINS:
        out = {"type": "object"}
        if len(args) == 2:
            # JSON object keys are always strings; only the value type can be constrained.
            values = _schema(args[1], depth + 1)
            if values:
                out["additionalProperties"] = values
        return out
    if origin is type:
        return {}
    if origin is not None:  # some other generic (Callable, a user generic class, ...)
        return _schema_for_class(origin, depth) if isinstance(origin, type) else {}
    if isinstance(hint, type):
        return _schema_for_class(hint, depth)
    return {}


def _schema_for_class(cls: type, depth: int) -> JsonSchema:
    if issubclass(cls, enum.Enum):  # before int/str: IntEnum and StrEnum subclass those
        return _enum_schema(list(cls))
    if typing.is_typeddict(cls):
        return _typeddict_schema(cls, depth)
    for base, schema in _CLASS_SCHEMAS:
        if issubclass(cls, base):
            return dict(schema)
    if dataclasses.is_dataclass(cls) or hasattr(cls, "model_json_schema"):
        # The tool would receive a plain dict from JSON, so only "an object" is promised.
        return {"type": "object"}
    return {}


def _with_items(out: JsonSchema, args: tuple[Any, ...], depth: int) -> JsonSchema:
    if args:
        items = _schema(args[0], depth + 1)
        if items:
            out["items"] = items
    return out


def _tuple_schema(args: tuple[Any, ...], depth: int) -> JsonSchema:
    if not args:
        return {"type": "array"}
    if args == ((),):  # tuple[()]: the empty tuple
        return {"type": "array", "maxItems": 0}
    if len(args) == 2 and args[1] is Ellipsis:  # tuple[X, ...]
        return _with_items({"type": "array"}, args[:1], depth)
    return {
        "type": "array",
        "prefixItems": [_schema(a, depth + 1) for a in args],
        "minItems": len(args),
        "maxItems": len(args),
    }


def _typeddict_schema(cls: type, depth: int) -> JsonSchema:
    hints = typing.get_type_hints(cls)
    required_keys = getattr(cls, "__required_keys__", frozenset(hints))
    return {
        "type": "object",
        "properties": {k: _schema(v, depth + 1) for k, v in hints.items()},
        "required": [k for k in hints if k in required_keys],
        "additionalProperties": False,
    }


def _json_value(value: Any) -> Any:
    """A JSON-compatible form of a literal/enum value (Enum members become their value)."""
    if isinstance(value, enum.Enum):
        value = value.value
    return json.loads(json.dumps(value, allow_nan=False))


def _json_type(value: Any) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return None


def _enum_schema(members: list[Any]) -> JsonSchema:
    """`enum` of JSON values, with `type` when all share one (helps grammar converters and readers).

    For an Enum class the members' *values* are offered (what ARE serialises them as); if a value
    is not JSON (a tuple of objects, say) the member names are offered instead.
    """
    try:
        values = [_json_value(m) for m in members]
    except (TypeError, ValueError):
        values = [m.name if isinstance(m, enum.Enum) else str(m) for m in members]
    deduped: list[Any] = []
    for v in values:
        if not any(v == d and type(v) is type(d) for d in deduped):
            deduped.append(v)
    out: JsonSchema = {"enum": deduped}
    kinds = {_json_type(v) for v in deduped}
    if len(kinds) == 1 and None not in kinds:
        out = {"type": kinds.pop(), **out}
    return out


def _union(members: list[JsonSchema]) -> JsonSchema:
    """`anyOf` of the members, simplified: `{}` absorbs everything, duplicates go, and `integer`
    goes when `number` is present (JSON's number already includes integers, and overlapping
    branches only make grammars ambiguous)."""
    if any(not m for m in members):
        return {}
    flat: list[JsonSchema] = []
    for m in members:
        flat.extend(m["anyOf"] if set(m) == {"anyOf"} else [m])
    unique: list[JsonSchema] = []
    seen: set[str] = set()
    for m in flat:
        key = json.dumps(m, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            unique.append(m)
    if {"type": "number"} in unique:
        unique = [m for m in unique if m != {"type": "integer"}]
    if len(unique) == 1:
        return unique[0]
    return {"anyOf": unique}


# --------------------------------------------------------------------------------------------
# Tool schemas
# --------------------------------------------------------------------------------------------


def _validator_cls() -> type[jsonschema.protocols.Validator]:
    import jsonschema

    return jsonschema.Draft202012Validator


def _accepts(schema: JsonSchema, value: Any) -> bool:
    return bool(_validator_cls()(schema).is_valid(value))


def _json_default(value: Any) -> tuple[bool, Any]:
    """(True, JSON form) if `value` can be written as a JSON default, else (False, None)."""
    try:
        return True, _json_value(value)
    except (TypeError, ValueError):
        return False, None


def argument_schema(arg: ToolArg) -> JsonSchema:
    """The schema of one argument: its type, `description`, and `default` when it has one.

    An optional argument whose default is `None` but whose hint does not admit `None`
    (`x: str = None`, a common slip) is made nullable: the tool demonstrably accepts `None`, and a
    model echoing the advertised default must not be told it is wrong.
    """
    schema = json_schema_for_type(arg.type_hint)
    if not arg.required and arg.default is None and schema and not _accepts(schema, None):
        schema = _union([schema, {"type": "null"}])
    if arg.description:
        schema["description"] = arg.description
    if not arg.required:
        ok, default = _json_default(arg.default)
        if ok:
            schema["default"] = default
    return schema


def parameters_schema(spec: ToolSpec) -> JsonSchema:
    """The `parameters` object of a tool: every argument, only default-less ones required.

    `additionalProperties: false` because ARE calls the method with the model's arguments as
    keywords, so an unknown name is a `TypeError` inside ARE; the schema should say so up front
    (and grammar-constrained decoding then cannot invent arguments).
    """
    properties = {arg.name: argument_schema(arg) for arg in spec.args}
    return {
        "type": "object",
        "properties": properties,
        "required": [arg.name for arg in spec.args if arg.required],
        "additionalProperties": False,
    }


def openai_tool(spec: ToolSpec) -> JsonSchema:
    """The OpenAI / litellm `tools[]` entry for a tool (non-strict function calling).

    Not `strict: true`: OpenAI's strict mode would demand every property in `required`, which is
    exactly the mistake of ARE's `to_open_ai()` (optional arguments would lose their defaults).

    Built once per tool (a schema costs about half a millisecond, and every rollout of a scenario
    offers the same tools): kept by the tool's name, description and arguments; the same dict is
    handed to every request, so no caller may change it.
    """
    key = (spec.name, spec.description, tuple((a.name, a.type_text, a.description, a.required, repr(a.default)) for a in spec.args))
    cached = _SCHEMAS.get(key)
    if cached is None:
        if len(_SCHEMAS) >= _SCHEMAS_MAX:
            _SCHEMAS.clear()
        cached = _SCHEMAS[key] = _openai_tool(spec)
    return cached


#: `openai_tool`'s schemas by tool (bounded: cleared when full).
_SCHEMAS: dict[tuple[Any, ...], JsonSchema] = {}
_SCHEMAS_MAX = 8192


def _openai_tool(spec: ToolSpec) -> JsonSchema:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": parameters_schema(spec),
        },
    }


def text_reply_parameters() -> JsonSchema:
    """Arguments of the `TEXT_REPLY_TOOL` pseudo-tool: the reply text."""
    return {
        "type": "object",
        "properties": {"content": {"type": "string", "description": "The reply, in plain text."}},
        "required": ["content"],
        "additionalProperties": False,
    }


def _call_branch(name: str, parameters: JsonSchema) -> JsonSchema:
    return {
        "type": "object",
        "properties": {"name": {"const": name}, "arguments": parameters},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def action_union_schema(specs: Iterable[ToolSpec], *, allow_text_reply: bool) -> JsonSchema:
    """One schema for "call exactly one of these tools": `{"name": <tool>, "arguments": {...}}`.

    Meant for grammar-constrained decoding with small local models (LOCAL-MODELS §5.2), whose
    free-form tool calls are unreliable: `anyOf` has one branch per tool, each pinning `name` with
    `const` and `arguments` to that tool's `parameters_schema`, so the grammar allows only real
    tools with well-typed arguments. `name` comes first so the model commits to a tool before
    writing its arguments. With `allow_text_reply` (`tool_choice="auto"`), an extra branch for
    the pseudo-tool `TEXT_REPLY_TOOL` with `{"content": string}` lets the model answer in text.

    Raises `ValueError` for duplicate names, a tool named like the pseudo-tool while it is
    allowed, or an empty choice.
    """
    branches: list[JsonSchema] = []
    names: set[str] = set()
    for spec in specs:
        if spec.name in names:
            raise ValueError(f"duplicate tool name {spec.name!r}")
        names.add(spec.name)
        branches.append(_call_branch(spec.name, parameters_schema(spec)))
    if allow_text_reply:
        if TEXT_REPLY_TOOL in names:
            raise ValueError(f"a real tool is named {TEXT_REPLY_TOOL!r}, the text-reply pseudo-tool")
        branches.append(_call_branch(TEXT_REPLY_TOOL, text_reply_parameters()))
    if not branches:
        raise ValueError("no tools and no text reply: there is nothing the model could emit")
    return {"anyOf": branches}


# --------------------------------------------------------------------------------------------
# Validating a proposed call
# --------------------------------------------------------------------------------------------

_NOUNS = {
    "string": ("a string", "strings"),
    "integer": ("an integer", "integers"),
    "number": ("a number", "numbers"),
    "boolean": ("a boolean (true or false)", "booleans"),
    "null": ("null", "nulls"),
    "array": ("an array", "arrays"),
    "object": ("an object", "objects"),
}


def describe_schema(schema: Any) -> str:
    """A short English description of what a schema accepts ("an array of strings or null")."""
    if not isinstance(schema, Mapping) or not schema:
        return "any value"
    if "const" in schema:
        return f"exactly {json.dumps(schema['const'])}"
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(describe_schema(s) for s in schema["anyOf"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(describe_schema({**schema, "type": k}) for k in kind)
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, Mapping) and items:
            plural = _NOUNS.get(items.get("type", ""), (None, None))[1]
            simple = plural is not None and set(items) <= {"type"}
            return f"an array of {plural}" if simple else f"an array whose items are each {describe_schema(items)}"
        return "an array"
    if kind == "object":
        values = schema.get("additionalProperties")
        if isinstance(values, Mapping) and values:
            return f"an object whose values are each {describe_schema(values)}"
        return "an object"
    if kind == "string" and schema.get("format"):
        return f"a string ({schema['format']})"
    if isinstance(kind, str) and kind in _NOUNS:
        return _NOUNS[kind][0]
    return "any value"


def _describe_value(value: Any) -> str:
    """The JSON type and (shortened) value the model sent: `string "abc"`, `integer 5`, `null`."""
    kind = _json_type(value)
    if kind == "null":
        return "null"
    try:
        text = json.dumps(value, allow_nan=False) if kind else repr(value)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{kind or type(value).__name__} {text}"


def _type_matches(schema: Any, kind: str | None) -> bool:
    declared = schema.get("type") if isinstance(schema, Mapping) else None
    return declared == kind or (declared == "number" and kind == "integer")


def _leaf_errors(error: jsonschema.ValidationError) -> list[jsonschema.ValidationError]:
    """Look inside a failed `anyOf` when only one branch has the value's JSON type.

    `["a", 5]` against `list[str] | None` fails the `anyOf` as a whole; the useful message is the
    one from the array branch ("at [1] must be a string"), not "must be an array of strings or
    null".
    """
    if error.validator == "anyOf" and error.context:
        kind = _json_type(error.instance)
        matching = [i for i, branch in enumerate(error.validator_value) if _type_matches(branch, kind)]
        if len(matching) == 1:
            subs = [e for e in error.context if e.relative_schema_path and e.relative_schema_path[0] == matching[0]]
            if subs:
                return [leaf for e in subs for leaf in _leaf_errors(e)]
    return [error]


def _path_text(path: Iterable[Any]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f"[{json.dumps(p)}]" for p in path)


def validate_arguments(spec: ToolSpec, arguments: Any) -> list[str]:
    """Problems with calling `spec` with `arguments`, as messages a model can act on; [] if none.

    Checked with `jsonschema` against `parameters_schema(spec)`: missing required arguments,
    unknown arguments, and wrongly typed values. Every message names the argument and what was
    expected, e.g. "argument 'recipients' must be an array of strings or null, got string
    \"bob@x.com\"". Ordered: missing, then unknown, then the rest in the tool's argument order.
    """
    if not isinstance(arguments, Mapping):
        return [f"arguments of {spec.name} must be a JSON object, got {_describe_value(arguments)}"]
    schema = parameters_schema(spec)
    properties: dict[str, JsonSchema] = schema["properties"]
    order = {name: i for i, name in enumerate(properties)}
    arguments = dict(arguments)

    missing = [name for name in schema["required"] if name not in arguments]
    unknown = [name for name in arguments if name not in properties]
    problems = [f"missing required argument '{n}' (expected {describe_schema(properties[n])})" for n in missing]
    if unknown:
        takes = ", ".join(properties) if properties else "no arguments"
        problems += [f"unknown argument '{n}' ({spec.name} takes: {takes})" for n in unknown]

    typed: list[tuple[int, str, str]] = []
    errors = _validator_cls()(schema).iter_errors(arguments)
    for error in (leaf for top in errors for leaf in _leaf_errors(top)):
        if error.validator in ("required", "additionalProperties") and not error.absolute_path:
            continue  # reported above, once per argument and with the expected type
        path = list(error.absolute_path)
        if not path:
            typed.append((-1, "", f"arguments of {spec.name}: {error.message}"))
            continue
        name, rest = str(path[0]), path[1:]
        where = f"argument '{name}'" + (f" at {_path_text(rest)}" if rest else "")
        if error.validator in ("type", "anyOf", "enum", "const", "oneOf"):
            text = f"{where} must be {describe_schema(error.schema)}, got {_describe_value(error.instance)}"
        elif error.validator in ("required", "additionalProperties"):
            text = f"{where}: {error.message}"
        else:
            text = f"{where} (expected {describe_schema(properties.get(name, {}))}): {error.message}"
        typed.append((order.get(name, len(order)), name, text))
    typed.sort(key=lambda t: (t[0], t[1]))
    for _, _, text in typed:
        if text not in problems:
            problems.append(text)
    return problems


# --------------------------------------------------------------------------------------------
# ToolSpecs from ARE apps (no scenario needed)
# --------------------------------------------------------------------------------------------


def specs_for_app(app: Any) -> list[ToolSpec]:
    """The agent tools of one ARE app instance as `ToolSpec`s (AUI tools ARE's agent hides left out)."""
    return [spec_from_app_tool(t) for t in app.get_tools() if t.name not in HIDDEN_AUI_TOOLS]
