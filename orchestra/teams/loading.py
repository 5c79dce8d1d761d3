"""Reading team files (`orchestra/teams/shipped/*.yaml`) into a `TeamConfig`, with errors that say where.

Every problem is reported as `FILE:LINE[:COLUMN]: FIELD.PATH: what is wrong`, one line each,
in one `TeamError` (an `OrchestraError`: the command line exits 2, no traceback). Positions come
from PyYAML's node tree (`compose`), which keeps each key's and value's line: pydantic's error
`loc` is walked down that tree to the node it names.

What is checked, in order (a later stage runs only when the earlier ones passed):

1. the file itself (missing, a folder, not UTF-8: the first bad byte's line and column), YAML
   syntax, an empty file, a top level that is not a mapping, duplicate keys (PyYAML silently
   keeps the last one);
2. the schema (`TeamConfig`): a typo'd key (with the closest valid key), a missing model,
   a proportion outside [0, 1], both or neither of `apps` and `proportion`, ...;
3. `plugins:` — each module (or `module:object`) must import;
4. names that only exist at run time: every scaffold (main, defaults, overrides) must be one the
   caller says is registered (`scaffolds`: the command line gives those of the host it builds with
   the team's plugins); every app name (in `apps` and `overrides`) must be one ARE knows
   (`orchestra.are.app_names.known_app_names`); an agent played by a remote A2A agent (`a2a:`)
   takes no `scaffold` or `scaffold_options` (it runs its own loop: they would be ignored);
5. secrets: `${VAR}` references are kept verbatim in the config (so outputs show the reference,
   never the value) and listed with their position; they are expanded only where a model is
   called (`orchestra.models.complete`). Unset variables are reported, not raised: `teams check`
   warns, `run --team` refuses to start (`require_secrets`).
"""

from __future__ import annotations

import difflib
import importlib
import os
import types
import typing
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from orchestra.config import SessionConfig
from orchestra.errors import OrchestraError
from orchestra.models import ENV_REF, ModelConfig, env_refs, expand_env, mask_secrets
from orchestra.teams.catalog import shipped_root, shipped_teams, team_path  # noqa: F401  (shipped_root, team_path: re-exported)
from orchestra.teams.config import NEVER_APP_AGENTS, TeamConfig

Loc = tuple[str | int, ...]


class TeamError(OrchestraError):
    """A team file cannot be used. `problems` holds one located message per problem."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class SecretRef:
    """A `${VAR}` reference in a team file: which variable, in which field, on which line."""

    var: str
    path: str
    line: int | None

    @property
    def is_set(self) -> bool:
        return self.var in os.environ

    def unset_message(self, file: Path) -> str:
        """`FILE:LINE: FIELD: environment variable VAR is not set` (no line when the file has none)."""
        where = f"{file}:{self.line}" if self.line else str(file)
        return f"{where}: {self.path}: environment variable {self.var} is not set"


@dataclass(frozen=True)
class ResolvedTeam:
    """A team ready to run (`TeamFile.resolve`): the config, the session its specs carry (the judge's
    `${VAR}` key expanded: never written), and the team as run as YAML (secrets as references)."""

    config: TeamConfig
    session: SessionConfig
    yaml: str


@dataclass
class TeamFile:
    """A loaded team file: the validated config, its plugins (imported) and its secret references."""

    path: Path
    config: TeamConfig
    plugins: list[object] = field(default_factory=list)
    secrets: list[SecretRef] = field(default_factory=list)
    #: Things that are valid but probably not meant (an ARE class name where scenarios use another name).
    warnings: list[str] = field(default_factory=list)
    _positions: dict[Loc, int] = field(default_factory=dict, repr=False)

    def unset_secrets(self, config: TeamConfig | None = None) -> list[SecretRef]:
        """References to unset variables, in `config` (default: the file's own; pass the config
        after `--model` overrides, which may have dropped some) — positioned where the file has them."""
        refs = self.secrets if config is None else [SecretRef(var, _fmt(loc), self._line(loc)) for loc, var in _config_refs(config)]
        return [r for r in refs if not r.is_set]

    def resolve(
        self,
        *,
        model: ModelConfig | None = None,
        scaffold: str | None = None,
        session: SessionConfig | None = None,
        model_settings: Mapping[str, Any] | None = None,
    ) -> ResolvedTeam:
        """The team as it will run, in one call: every agent's `model` / `scaffold` replaced when
        given (`--model`, `--scaffold`), the session (`session`: the command line's flags over the
        file's `session:`; default the file's), `model_settings` (`ModelConfig` fields:
        retries, timeouts) on every agent's model; then every `${VAR}` it uses checked as set
        (`TeamError` naming file, line and field), the judge's key expanded for the rollouts only,
        and the team as run written back as YAML with its secrets as references."""
        team = self.config.with_overrides(model=model, scaffold=scaffold)
        chosen = session or team.session
        team = team.model_copy(update={"session": chosen})
        if model_settings:

            def settle(s: Any) -> Any:
                if s.model is None:
                    return s
                merged = {**dict(s.model), **model_settings}
                if "extra" in model_settings:  # keys added to the file's, not replacing them
                    merged["extra"] = {**s.model.extra, **model_settings["extra"]}
                return s.model_copy(update={"model": ModelConfig.model_validate(merged)})

            team = team.map_agents(settle)
        self.require_secrets(team)  # before any scenario loads: a missing key fails now, by name
        return ResolvedTeam(config=team, session=with_judge_key(chosen), yaml=f"# {self.path} as run (secrets as references)\n" + redacted(team))

    def require_secrets(self, config: TeamConfig | None = None) -> None:
        """Refuse to run when a referenced variable is unset (named with file, line and field)."""
        missing = self.unset_secrets(config)
        if missing:
            raise TeamError([r.unset_message(self.path) for r in missing])

    def _line(self, loc: Loc) -> int | None:
        """The line of `loc`, or of its deepest ancestor the file has (`model: x` shorthand)."""
        for n in range(len(loc), 0, -1):
            if loc[:n] in self._positions:
                return self._positions[loc[:n]]
        return None


#: What a caller gives the loader to check scaffold names: the scaffolds registered on the host the
#: team will run on, given the team's own plugins (a plugin of the team may register one).
ScaffoldNames = Callable[[Sequence[object]], Collection[str]]


def load_team(path: str | Path, *, scaffolds: ScaffoldNames | None = None) -> TeamConfig:
    """The validated team of the file at `path` (see `read_team`)."""
    return read_team(path, scaffolds=scaffolds).config


def read_team(path: str | Path, *, scaffolds: ScaffoldNames | None = None) -> TeamFile:
    """Load and check a team file; raise `TeamError` listing every problem with its position.

    `scaffolds(plugins)` gives the registered scaffold names the team's are checked against (the
    command line passes those of the host it builds with the team's plugins; an error it raises is
    reported at the file's `plugins:`). Without it the names are not checked here: an unknown
    scaffold fails when the rollout builds its agent, naming the registered ones. `path` may be a
    shipped team's name (`oracle`: `orchestra teams list`)."""
    path = team_path(path)
    if path.is_dir():
        raise TeamError([f"{path}: is a folder, not a team file (give the .yaml file itself)"])
    if not path.is_file():
        names = ", ".join(p.stem for p in shipped_teams()) or "none"
        raise TeamError([f"{path}: no such team file (shipped teams, usable by name: {names})"])
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TeamError([f"{path}: cannot read the team file: {exc.strerror}"]) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TeamError([_not_utf8(path, data, exc)]) from None
    node, data = _parse_yaml(text, path)
    positions = dict(_positions(node))
    where = _Locator(path, node)

    try:
        config = TeamConfig.model_validate(data)
    except ValidationError as exc:
        raise TeamError(_by_line(_schema_problems(exc, where), path)) from None

    plugins, problems = _import_plugins(config.plugins, where)
    if problems:
        raise TeamError(problems)
    if scaffolds is not None:
        try:
            registered = scaffolds(plugins)
        except OrchestraError as exc:
            why = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())  # pluggy's messages span lines
            raise TeamError([f"{where.at(('plugins',))}: plugins: the host could not be built with this team's plugins: {why}"]) from None
        problems = _scaffold_problems(config, registered, where)
    problems += _a2a_problems(config, where) + _app_problems(config, where) + _ref_problems(node, where)
    if problems:
        raise TeamError(_by_line(problems, path))
    secrets = [SecretRef(var, _fmt(loc), positions.get(loc)) for loc, var in _node_refs(node)]
    return TeamFile(path=path, config=config, plugins=plugins, secrets=secrets, warnings=_app_warnings(config, where), _positions=positions)


def _by_line(problems: list[str], path: Path) -> list[str]:
    """Problems in file order (each starts `PATH:LINE[:COL]:`), so a long list reads top to bottom."""

    def key(problem: str) -> list[int]:
        position = problem.removeprefix(f"{path}:").split(": ", 1)[0]  # "6:20", "6", or "" (no position)
        return [int(n) for n in position.split(":") if n.isdigit()]

    return sorted(problems, key=key)


def with_judge_key(session: SessionConfig) -> SessionConfig:
    """The session with its LLM judge's `${VAR}` api_key expanded. The judge calls litellm itself
    (not `orchestra.models.complete`), so the key is expanded here, just before the rollouts; it is
    never written anywhere (`JudgeConfig.api_key` is excluded from every dump and repr)."""
    key = session.judge.api_key
    if not key or not env_refs(key):
        return session
    try:
        expanded = expand_env(key, where="session.judge.api_key")
    except OrchestraError as exc:
        raise TeamError([str(exc)]) from None
    return session.model_copy(update={"judge": session.judge.model_copy(update={"api_key": expanded})})


def redacted(config: TeamConfig) -> str:
    """The team as YAML a user can run again (`--team` accepts it), for `--out`: `${VAR}`
    references as written; an API key given as a literal value (`--api-key`) is masked."""
    return yaml.safe_dump(mask_secrets(config.model_dump(mode="json")), sort_keys=False, allow_unicode=True)


def import_plugin(spec: str) -> object:
    """`package.module` → the module; `package.module:name` → that object of the module."""
    module_name, _, attr = spec.partition(":")
    module = importlib.import_module(module_name)
    if not attr:
        return module
    obj: object = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


# ------------------------------------------------------------------------------------------ YAML


def _not_utf8(path: Path, data: bytes, exc: UnicodeDecodeError) -> str:
    """Where the first byte that is not UTF-8 is (a file saved as Latin-1 / cp1252, usually)."""
    before = data[: exc.start]
    line = before.count(b"\n") + 1
    column = len(before) - (before.rfind(b"\n") + 1) + 1
    return f"{path}:{line}:{column}: the file is not UTF-8 (byte 0x{data[exc.start]:02x} cannot be decoded); save it as UTF-8"


def _parse_yaml(text: str, path: Path) -> tuple[yaml.MappingNode, Any]:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        pos = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        context = exc.context or ""
        if context and exc.context_mark is not None and exc.context_mark is not mark:
            context += f" (line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1})"
        what = ": ".join(p for p in (context, exc.problem) if p)
        if exc.problem and "'\\t'" in exc.problem:
            what += " (YAML indents with spaces, never tabs)"
        raise TeamError([f"{path}{pos}: YAML syntax error: {what}"]) from None
    except yaml.YAMLError as exc:
        raise TeamError([f"{path}: YAML syntax error: {exc}"]) from None
    finally:
        loader.dispose()
    if node is None or data is None:
        raise TeamError([f"{path}: the file is empty; a team needs at least `name:` and `main:` (see orchestra/teams/shipped/README.md)"])
    if not isinstance(node, yaml.MappingNode):
        kind = type(data).__name__ if not isinstance(data, list) else "list"
        raise TeamError([f"{path}:{node.start_mark.line + 1}: the top level must be a mapping (name:, main:, ...), got a {kind}"])
    duplicates = list(_duplicate_keys(node, ()))
    if duplicates:
        raise TeamError([f"{path}:{line}: {_fmt(loc)}: duplicate key (first given on line {first})" for loc, line, first in duplicates])
    return node, data


def _children(node: yaml.Node) -> Iterator[tuple[str | int, yaml.Node, int]]:
    """(key, value node, line of the key) for a mapping; (index, item, line) for a sequence."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            yield (k.value if isinstance(k, yaml.ScalarNode) else str(k.value)), v, k.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            yield i, v, v.start_mark.line + 1


def _positions(node: yaml.Node, loc: Loc = ()) -> Iterator[tuple[Loc, int]]:
    yield loc, node.start_mark.line + 1
    for key, child, line in _children(node):
        yield (*loc, key), line
        for sub, sub_line in _positions(child, (*loc, key)):
            if sub != (*loc, key):
                yield sub, sub_line


def _duplicate_keys(node: yaml.Node, loc: Loc) -> Iterator[tuple[Loc, int, int]]:
    seen: dict[str | int, int] = {}
    for key, child, line in _children(node):
        if isinstance(node, yaml.MappingNode) and key in seen:
            yield (*loc, key), line, seen[key]
        seen.setdefault(key, line)
        yield from _duplicate_keys(child, (*loc, key))


def _fmt(loc: Loc) -> str:
    out = ""
    for el in loc:
        out += f"[{el}]" if isinstance(el, int) else (f".{el}" if out else str(el))
    return out or "(top level)"


class _Locator:
    """Maps a pydantic `loc` to the file position of the node it names."""

    def __init__(self, path: Path, root: yaml.Node) -> None:
        self.path = path
        self.root = root

    def resolve(self, loc: Sequence[str | int]) -> tuple[Loc, yaml.Node, bool]:
        """(the path that exists in the file, the deepest node on it, whether all of `loc` was found).

        Elements that are not keys of the current node are union-branch tags pydantic adds
        (`literal['all']`, `list[str]`) or a missing key; they are skipped."""
        node, complete = self.root, True
        found: Loc = ()
        for el in loc:
            child = next((c for k, c, _ in _children(node) if k == el), None)
            if child is None:
                complete = False
                continue
            node, found = child, (*found, el)
        return found, node, complete

    def at(self, loc: Sequence[str | int], *, key_line: bool = True) -> str:
        found, node, _ = self.resolve(loc)
        line = node.start_mark.line + 1
        if found and isinstance(found[-1], int):  # a list item: several may share a line (`[a, b]`)
            return f"{self.path}:{line}:{node.start_mark.column + 1}"
        if key_line and found:  # the key's line reads better than a block value's first line
            parent = self.resolve(found[:-1])[1]
            line = next((ln for k, _, ln in _children(parent) if k == found[-1]), line)
        return f"{self.path}:{line}"


# ---------------------------------------------------------------------------------------- schema


def _schema_problems(exc: ValidationError, where: _Locator) -> list[str]:
    problems: list[str] = []
    union_paths: set[Loc] = set()
    errors = exc.errors()
    # a key missing because it is misspelt (`mian:`) is reported once, as the misspelling
    typos = {(tuple(e["loc"][:-1]), str(e["loc"][-1])) for e in errors if e["type"] == "extra_forbidden"}
    # an agent whose `a2a:` is misspelt (`a2aa:`) needs no model: only the misspelling is reported
    a2a_typos = {parent for parent, key in typos if difflib.get_close_matches(key, _valid_keys(parent), n=1, cutoff=0.6) == ["a2a"]}
    for err in errors:
        loc = tuple(err["loc"])
        if err["type"] == "missing" and any(parent == loc[:-1] and difflib.get_close_matches(str(loc[-1]), [key], n=1, cutoff=0.6) for parent, key in typos):
            continue
        if err["type"] == "missing" and loc[-1:] == ("model",) and loc[:-1] in a2a_typos:
            continue
        found, node, complete = where.resolve(loc)
        if found and found[-1] == "apps" and isinstance(err.get("input"), list) and any(str(el).startswith("literal[") for el in loc):
            continue  # a list given for `apps`: its items' errors (list branch) say what is wrong, not "expected 'all'"
        if not complete and err["type"] != "missing" and any(isinstance(el, str) and "[" in el for el in loc):
            # one message per union (`apps: 'all' | [names]`), not one per branch pydantic tried
            if found in union_paths:
                continue
            union_paths.add(found)
        path = found + ((loc[-1],) if err["type"] == "missing" and not complete else ())
        problems.append(f"{where.at(found)}: {_fmt(path)}: {_message(err, found, complete)}")
    return problems


def _message(err: Any, found: Loc, complete: bool) -> str:
    kind, value = err["type"], err.get("input")
    if kind == "extra_forbidden":
        key = str(found[-1])
        valid = _valid_keys(found[:-1])
        close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        if not close and "model" in valid and key in ModelConfig.model_fields:
            hint = f"; {key!r} is a model setting: write it under `model:` (model: {{model: ..., {key}: ...}})"
        return f"unknown key {key!r}{hint} (valid keys here: {', '.join(valid)})"
    if kind == "missing" or (value is None and found and found[-1] == "model" and complete):
        missing = str(err["loc"][-1])
        if missing == "model":  # also `model:` with nothing after it (null)
            return "missing: every agent needs a model (a litellm model string, e.g. openai/gpt-4o-mini or orchestra/oracle)"
        return "missing (required)"
    if kind == "dict_type":
        return f"expected a mapping, got {value!r}"
    if kind == "model_type":  # pydantic: "Input should be a valid dictionary or instance of AgentConfig"
        keys = _valid_keys(found)
        hint = f" (keys: {', '.join(keys)})" if keys else ""
        shorthand = f"; e.g. main: {{model: {value}}}" if isinstance(value, str) and found == ("main",) else ""
        return f"expected a mapping{hint}, got {value!r}{shorthand}"
    if found and found[-1] == "apps" and not complete:
        return f"expected 'all' or a list of app names, got {value!r}"
    if found and found[-1] == "proportion" and kind in ("less_than_equal", "greater_than_equal"):
        return f"must be between 0 and 1 (the share of candidate apps served by app-agents), got {value!r}"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if kind != "value_error" and not isinstance(value, (dict, list)):
        msg += f", got {value!r}"
    return msg


def _valid_keys(loc: Loc) -> list[str]:
    """The field names of the model at `loc` in a team file (`main` → AgentConfig's fields)."""
    tp: Any = TeamConfig
    for el in loc:
        tp = _strip_optional(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            info = tp.model_fields.get(str(el))
            if info is None:
                return []
            tp = info.annotation
        elif typing.get_origin(tp) in (dict, list):
            tp = typing.get_args(tp)[-1]
        else:
            return []
    tp = _strip_optional(tp)
    return list(tp.model_fields) if isinstance(tp, type) and issubclass(tp, BaseModel) else []


def _strip_optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        models = [a for a in typing.get_args(tp) if isinstance(a, type) and issubclass(a, BaseModel)]
        if len(models) == 1:
            return models[0]
    return tp


# ------------------------------------------------------------------------- plugins, names, refs


def _import_plugins(specs: Sequence[str], where: _Locator) -> tuple[list[object], list[str]]:
    plugins, problems = [], []
    for i, spec in enumerate(specs):
        try:
            plugins.append(import_plugin(spec))
        except Exception as exc:  # an ImportError, or any error the module raises on import
            problems.append(f"{where.at(('plugins', i))}: plugins[{i}]: cannot import plugin {spec!r}: {type(exc).__name__}: {exc}")
    return plugins, problems


def _scaffold_problems(config: TeamConfig, registered: Collection[str], where: _Locator) -> list[str]:
    fields: list[tuple[Loc, str | None]] = [(("main", "scaffold"), config.main.scaffold)]
    if config.app_agents is not None:
        fields.append((("app_agents", "defaults", "scaffold"), config.app_agents.defaults.scaffold))
        fields += [(("app_agents", "overrides", app, "scaffold"), s.scaffold) for app, s in config.app_agents.overrides.items()]
    known = ", ".join(sorted(registered)) or "none"
    return [
        f"{where.at(loc)}: {_fmt(loc)}: unknown scaffold {name!r} (registered: {known})" for loc, name in fields if name is not None and name not in registered
    ]


def _a2a_problems(config: TeamConfig, where: _Locator) -> list[str]:
    """`scaffold` / `scaffold_options` given to an agent a remote A2A agent plays (its own `a2a:`, or
    an override's inherited from `app_agents.defaults.a2a`): refused, since nothing of orchestra's
    loop runs for it. (`max_steps` is kept: it bounds the steps the record counts, docs/agent2agent.md.)"""
    why = "a remote A2A agent runs its own loop, so no scaffold of orchestra's applies; its `model` is the upstream of its model proxy"
    layers: list[tuple[Loc, Any, bool]] = [(("main",), config.main, config.main.a2a is not None)]
    apps = config.app_agents
    if apps is not None:
        layers.append((("app_agents", "defaults"), apps.defaults, apps.defaults.a2a is not None))
        for app, settings in apps.overrides.items():
            layers.append((("app_agents", "overrides", app), settings, (settings.a2a or apps.defaults.a2a) is not None))
    problems = []
    for loc, settings, remote in layers:
        if not remote:
            continue
        source = "" if settings.a2a is not None else "app_agents.defaults.a2a plays this app-agent: "
        for name in ("scaffold", "scaffold_options"):
            if name in settings.model_fields_set and getattr(settings, name) is not None:
                problems.append(f"{where.at((*loc, name))}: {_fmt((*loc, name))}: not allowed beside a2a ({source}{why})")
    return problems


def _app_problems(config: TeamConfig, where: _Locator) -> list[str]:
    if config.app_agents is None:
        return []
    from orchestra.are.app_names import known_app_names

    known = known_app_names() - set(NEVER_APP_AGENTS)
    listed = config.app_agents.apps if isinstance(config.app_agents.apps, list) else None
    problems = []

    def unknown(loc: Loc, app: str) -> str:
        close = difflib.get_close_matches(app, sorted(known), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"{where.at(loc)}: {_fmt(loc)}: unknown app {app!r}{hint} (apps ARE knows: {', '.join(sorted(known))})"

    for i, app in enumerate(listed or []):
        if app not in known:
            problems.append(unknown(("app_agents", "apps", i), app))
    for app in config.app_agents.overrides:
        loc: Loc = ("app_agents", "overrides", app)
        if app in NEVER_APP_AGENTS:
            problems.append(f"{where.at(loc)}: {_fmt(loc)}: {app} cannot be an app-agent (ARE never replaces {', '.join(NEVER_APP_AGENTS)})")
        elif app not in known:
            problems.append(unknown(loc, app))
        elif listed is not None and app not in listed:
            problems.append(f"{where.at(loc)}: {_fmt(loc)}: override for {app!r}, which is not in app_agents.apps (it would never apply)")
    return problems


def _app_warnings(config: TeamConfig, where: _Locator) -> list[str]:
    """A class name (`CalendarApp`) where Gaia2 scenarios name the app otherwise (`Calendar`): valid
    for scenarios that use the class name, but on Gaia2's that app would silently stay an app."""
    if config.app_agents is None:
        return []
    from orchestra.are.app_names import app_aliases

    aliases = app_aliases()
    listed = config.app_agents.apps if isinstance(config.app_agents.apps, list) else []
    named: list[tuple[Loc, str]] = [(("app_agents", "apps", i), a) for i, a in enumerate(listed)]
    named += [(("app_agents", "overrides", a), a) for a in config.app_agents.overrides]
    return [
        f"{where.at(loc)}: {_fmt(loc)}: {app!r} is ARE's class name; Gaia2 scenarios name this app {' / '.join(map(repr, aliases[app]))} "
        "(app names are matched against each scenario's app names, as in its tool names)"
        for loc, app in named
        if app in aliases
    ]


def _scalars(node: yaml.Node, loc: Loc = ()) -> Iterator[tuple[Loc, yaml.ScalarNode]]:
    if isinstance(node, yaml.ScalarNode):
        yield loc, node
    for key, child, _ in _children(node):
        yield from _scalars(child, (*loc, key))


def _ref_problems(node: yaml.Node, where: _Locator) -> list[str]:
    """`${...}` that is not a well-formed reference (`${OPENAI_API_KEY}`) is an error, not a literal;
    so is an API key written into the file (secrets come only from the environment)."""
    problems = []
    for loc, scalar in _scalars(node):
        if scalar.tag != "tag:yaml.org,2002:str":  # `null`, numbers, booleans
            continue
        if "${" in ENV_REF.sub("", scalar.value):
            problems.append(
                f"{where.at(loc)}: {_fmt(loc)}: malformed environment reference in {scalar.value!r} (write ${{NAME}}, NAME made of letters, digits and _)"
            )
        elif loc and loc[-1] == "api_key" and scalar.value and not env_refs(scalar.value):
            problems.append(
                f"{where.at(loc)}: {_fmt(loc)}: an API key written into a team file; secrets come only from the "
                "environment: write api_key: ${NAME} and set NAME (a local server at an endpoint needs no api_key)"
            )
    return problems


def _node_refs(node: yaml.Node) -> Iterator[tuple[Loc, str]]:
    for loc, scalar in _scalars(node):
        if isinstance(scalar.value, str):
            for var in env_refs(scalar.value):
                yield loc, var


def _config_refs(config: TeamConfig) -> Iterator[tuple[Loc, str]]:
    def walk(value: Any, loc: Loc) -> Iterator[tuple[Loc, str]]:
        if isinstance(value, str):
            for var in env_refs(value):
                yield loc, var
        elif isinstance(value, dict):
            for k, v in value.items():
                yield from walk(v, (*loc, k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                yield from walk(v, (*loc, i))

    yield from walk(config.model_dump(exclude_defaults=True), ())
    yield from walk(config.session.judge.api_key, ("session", "judge", "api_key"))  # excluded from dumps
