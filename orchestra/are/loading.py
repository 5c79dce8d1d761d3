"""Loading and validating scenarios through ARE's importer, and preparing one for a rollout (ARE's `preprocess_scenario`, pooled judge, no thread)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import marshal
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestra.errors import ScenarioError

if TYPE_CHECKING:  # pragma: no cover - import for type checkers only
    from are.simulation.scenarios.scenario_imported_from_json.benchmark_scenario import (
        BenchmarkScenarioImportedFromJson,
    )
    from are.simulation.validation.judge import GraphPerEventJudge

    from orchestra.config import NoiseConfig
from orchestra.are import ids
from orchestra.are.environment import DrivenEnvironment
from orchestra.are.gc_pause import paused_gc
from orchestra.are.ids import reseed_apps
from orchestra.are.imports import import_are

SUPPORTED_VERSION = "are_simulation_v1"
#: ARE's benchmark runner caps scenarios at these durations (are/simulation/scenarios/config.py).
MAX_SCENARIO_DURATION = 1800
MAX_TIME_SCENARIO_DURATION = 420

USER_CONTACTS_APP_NAMES = ("Contacts", "ContactsApp")

# --------------------------------------------------------------------------------------------
# Loading scenarios
# --------------------------------------------------------------------------------------------


def parse_scenario_json(text: str, source: str | Path) -> BenchmarkScenarioImportedFromJson:
    """Import a Gaia2-format scenario with ARE's importer, failing loudly where ARE fails silently."""
    import_are()
    import pydantic
    from are.simulation.apps import ALL_APPS
    from are.simulation.data_handler.importer import JsonScenarioImporter
    from are.simulation.types import CapabilityTag

    raw = precheck_scenario_json(text, source)
    definition = raw["metadata"]["definition"]
    tags = definition.get("tags") or []
    unknown_tags = [t for t in tags if t not in CapabilityTag.__members__]
    if unknown_tags:
        raise ScenarioError(
            source,
            f"unknown capability tag(s) {unknown_tags} in metadata.definition.tags "
            f"(known: {sorted(CapabilityTag.__members__)}); ARE would silently drop all tags",
        )
    apps = raw["apps"]
    known_classes = {cls.__name__ for cls in ALL_APPS}
    for i, app in enumerate(apps):
        cls_name = app.get("class_name") or app.get("name")
        if cls_name not in known_classes:
            raise ScenarioError(source, f"apps[{i}] ({app.get('name')!r}): unknown app class {cls_name!r}")

    try:
        scenario, _, _ = JsonScenarioImporter().import_from_json_to_benchmark(
            json_str=text, apps_to_skip=["SandboxLocalFileSystem"], load_completed_events=False
        )
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise ScenarioError(source, f"invalid scenario at {where}: {first.get('msg')} ({exc.error_count()} error(s))") from None
    except Exception as exc:  # ARE raises bare Exceptions / ValueErrors from deep inside
        raise ScenarioError(source, f"ARE could not import the scenario: {type(exc).__name__}: {exc}") from None

    if not scenario.scenario_id:
        raise ScenarioError(source, "metadata.definition.scenario_id is empty")
    if definition.get("start_time") is None:
        raise ScenarioError(source, "metadata.definition.start_time is null; a fixed start time is required for determinism")
    return scenario


def precheck_scenario_json(text: str, source: str | Path) -> dict[str, Any]:
    """The checks that need no ARE import (listings and the runner's preflight use them): a JSON
    object of ARE's version with `metadata.definition` and apps. The parsed object, or `ScenarioError`."""
    if not text.strip():
        raise ScenarioError(source, "empty file")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(source, f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    if not isinstance(raw, dict):
        raise ScenarioError(source, f"expected a JSON object at top level, got {type(raw).__name__}")
    version = raw.get("version")
    if version != SUPPORTED_VERSION:
        raise ScenarioError(source, f"unsupported scenario version {version!r}; expected {SUPPORTED_VERSION!r}")
    metadata = raw.get("metadata")
    definition = metadata.get("definition") if isinstance(metadata, dict) else None
    if not isinstance(definition, dict):
        raise ScenarioError(source, "missing metadata.definition")
    apps = raw.get("apps")
    if not isinstance(apps, list) or not apps:
        raise ScenarioError(source, "no apps in the file (ARE would try to download them from the HF hub)")
    if not all(isinstance(a, dict) for a in apps):
        raise ScenarioError(source, "apps: a list of objects")
    _check_user_contact(apps, source)
    return raw


def _check_user_contact(apps: list[dict[str, Any]], source: str | Path) -> None:
    """The scripted judge needs a `Contacts`/`ContactsApp` app holding exactly one `is_user` contact."""
    contacts_apps = [a for a in apps if a.get("name") in USER_CONTACTS_APP_NAMES]
    if not contacts_apps:
        raise ScenarioError(source, "no app named 'Contacts' or 'ContactsApp': the judge needs the user's contact")
    state = contacts_apps[0].get("app_state") or {}
    contacts = state.get("contacts") or {}
    values = contacts.values() if isinstance(contacts, dict) else contacts
    users = [c for c in values if isinstance(c, dict) and c.get("is_user")]
    if len(users) != 1:
        raise ScenarioError(
            source,
            f"app {contacts_apps[0].get('name')!r} must hold exactly one contact with is_user=true (the user contact the judge needs); found {len(users)}",
        )


# --------------------------------------------------------------------------------------------
# Preparing a scenario for a rollout (ARE's preprocess_scenario, pooled judge, no thread)
# --------------------------------------------------------------------------------------------


class FilesContentWarning(UserWarning):
    """The Files app's contents cannot be read here; its files will read as empty."""


def files_content_path() -> str:
    import_are()
    from are.simulation import config

    return str(config.DEMO_FS_PATH)


def warn_if_file_contents_unavailable(scenario: Any) -> bool:
    """Gaia2's `Files` app reads contents from `DEMO_FS_PATH` (by default on the HF hub); offline
    ARE silently serves empty files. Say so — once per process (Python's default warning filter)."""
    if not any(type(app).__name__ == "SandboxLocalFileSystem" for app in scenario.apps or []):
        return False
    path = files_content_path()
    if not path.startswith("hf://") and Path(path).exists():
        return False
    import warnings

    warnings.warn(
        FilesContentWarning(
            f"the scenario's Files app reads file contents from DEMO_FS_PATH={path!r}, which is not available "
            "locally: files will read as empty. Download the gaia2_filesystem dataset and set DEMO_FS_PATH to its "
            "demo_filesystem folder."
        ),
        stacklevel=2,
    )
    return True


def _file_system_apps(scenario: Any) -> list[Any]:
    """The apps whose state is a directory tree on disk (ARE's `Files`: `SandboxLocalFileSystem`,
    or `VirtualFileSystem` around one): reloading one is most of a preprocessing's CPU."""
    from are.simulation.apps.sandbox_file_system import SandboxLocalFileSystem
    from are.simulation.apps.virtual_file_system import VirtualFileSystem

    return [app for app in scenario.apps or [] if isinstance(app, SandboxLocalFileSystem | VirtualFileSystem)]


@functools.cache
def _stable_local_file_system_class() -> type:
    """fsspec's local file system, made machine- and date-independent for ARE's Files app.

    * `ls` lists by name (`walk`, `find` and `get_state` list through it): `os.scandir`'s order is
      the file system's (ext4 hashes names with a per-volume seed, tmpfs lists newest first).
    * `info` (and so `ls(detail=True)`) says what the scenario defines, not what the disk holds:
      `created`/`mtime` are the scenario's start (the host's clock wrote them), a folder's size is 0
      (4096 on ext4, other values on tmpfs), and `uid`/`gid`/`ino`/`nlink` are left out.
    Without it `Files__ls` and `Files__info` show another order, times and inodes on another machine
    or day — and the event log, which keeps return values, would differ. Built on first use, so
    that listing scenarios never imports fsspec.
    """
    from fsspec.implementations.local import LocalFileSystem

    class StableLocalFileSystem(LocalFileSystem):
        as_of: float = 0.0
        #: A tree still to write, `(root, tree)`: a world loaded cold or started from a template
        #: writes its Files app's tree at the first use of its file system, not at its load.
        pending: tuple[str, dict[str, Any]] | None = None

        def __getattribute__(self, name: str) -> Any:
            if name[0] != "_" and name not in ("pending", "as_of"):
                pending = object.__getattribute__(self, "pending")
                if pending is not None:
                    object.__setattr__(self, "pending", None)
                    write_tree(*pending)
            return object.__getattribute__(self, name)

        def ls(self, path: str, detail: bool = False, **kwargs: Any) -> list[Any]:
            entries = super().ls(path, detail=detail, **kwargs)
            return sorted(entries, key=lambda e: e["name"] if isinstance(e, dict) else str(e))

        def info(self, path: Any, **kwargs: Any) -> dict[str, Any]:
            out = dict(super().info(path, **kwargs))
            for machine_field in ("uid", "gid", "ino", "nlink"):
                out.pop(machine_field, None)
            out["created"] = out["mtime"] = self.as_of
            if out.get("type") == "directory":
                out["size"] = 0
            return out

    return StableLocalFileSystem


def stabilize_file_systems(scenario: Any, pending: dict[str, dict[str, Any]] | None = None) -> None:
    """Give every Files app of `scenario` the machine-independent listing and metadata of
    `_stable_local_file_system_class`, dated at the scenario's start. Set on the app instances' own
    fsspec wrapper (`SandboxLocalFileSystem.local_fs.fs`, which ARE fills with fsspec's shared local
    file system): nothing global changes. Idempotent; call it after anything that may give an app
    a new wrapper (loading, ARE's `reset`). `pending` (app name -> tree): trees to write into the
    apps' folders at their first use (a rollout started from a template)."""
    from are.simulation.apps.virtual_file_system import VirtualFileSystem

    stable = _stable_local_file_system_class()
    for app in _file_system_apps(scenario):
        sandbox = app.sandbox_fs if isinstance(app, VirtualFileSystem) else app
        wrapper = getattr(sandbox, "local_fs", None)
        if wrapper is not None and hasattr(wrapper, "fs") and not isinstance(wrapper.fs, stable):
            fs = stable(skip_instance_cache=True)
            fs.as_of = float(scenario.start_time or 0.0)
            wrapper.fs = fs
        if pending is not None and app.name in pending and wrapper is not None:
            tree = pending[app.name]
            wrapper.fs.pending = (sandbox.tmpdir, tree)
            _set_contents_fallback(sandbox, tree)


def _set_contents_fallback(sandbox: Any, tree: dict[str, Any]) -> None:
    """The end of ARE's `SandboxLocalFileSystem.load_state` (sandbox_file_system.py:201-206) for a
    tree left pending: the file contents' fallback (`DEMO_FS_PATH`) set for the tree's files, now —
    ARE's `FallbackFileSystem` asks it before it touches the folder, so it cannot wait for the tree.
    It writes a placeholder for each of the tree's files the fallback holds (ARE's own call), the
    pending write the others. Left out where that folder does not exist: there ARE's call only
    records the root and returns (`FallbackFileSystem.set_fallback_root`), and files read as empty
    either way (`warn_if_file_contents_unavailable`)."""
    directory = str(getattr(sandbox, "state_directory", "") or "")
    if directory and _fallback_exists(directory):
        sandbox.local_fs.set_fallback_root(directory, _tree_files(tree))


def _fallback_exists(directory: str) -> bool:
    """Whether the Files contents' folder exists: a local path is asked each time it matters (once
    per world), a remote one (`hf://`, a network round trip) once per process."""
    return os.path.isdir(directory) if "://" not in directory else _remote_exists(directory)


@functools.lru_cache(maxsize=16)
def _remote_exists(directory: str) -> bool:
    try:
        from fsspec.core import url_to_fs

        fs, root = url_to_fs(directory)
        return bool(fs.exists(root))
    except Exception:  # unreachable: as ARE finds it, there is nothing to fall back on
        return False


def _tree_files(tree: dict[str, Any]) -> set[str]:
    """The file paths ARE's `restore_tree` reports for `tree` (its `expected_paths`)."""
    out: set[str] = set()

    def walk(node: dict[str, Any], parent: str) -> None:
        path = os.path.join(parent, node["name"])
        if node.get("type") == "directory":
            for child in node.get("children") or []:
                walk(child, path)
        elif node.get("type") == "file":
            out.add(path)

    for child in tree.get("children") or []:
        walk(child, "/")
    return out


def discard_pending_trees(scenario: Any) -> None:
    """Trees never used are never written: the rollout ended before its agent looked (ARE's clean-up
    of the folder would otherwise write the whole tree just to remove it)."""
    from are.simulation.apps.virtual_file_system import VirtualFileSystem

    for app in _file_system_apps(scenario):
        sandbox = app.sandbox_fs if isinstance(app, VirtualFileSystem) else app
        fs: Any = getattr(getattr(sandbox, "local_fs", None), "fs", None)
        if getattr(fs, "pending", None) is not None:
            fs.pending = None


def _tree_fingerprint(root: str) -> tuple[tuple[str, str, int, int, int, int], ...]:
    """Every entry under `root` in listing order, with its mode, size, mtime and inode: equal
    fingerprints mean nothing under `root` was created, removed, renamed or written."""
    st = os.lstat(root)
    entries = [(root, "", st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino)]
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            st = os.lstat(os.path.join(folder, name))
            entries.append((folder, name, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino))
    return tuple(entries)


def _sandbox_state(app: Any) -> dict[str, Any]:
    """What ARE's `SandboxLocalFileSystem.get_state()` (sandbox_file_system.py:134-163) returns for a
    sandbox that holds only folders and files, read with `os.scandir` instead of fsspec's
    `info`/`ls` per entry: the same tree (names, "directory"/"file", children in `ls` order, which
    is `os.scandir`'s) and the same `tmpdir`."""

    def build(path: str, name: str) -> dict[str, Any]:
        children = []
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir():
                    children.append(build(entry.path, entry.name))
                else:
                    children.append({"name": entry.name, "type": "file"})
        return {"name": name, "type": "directory", "children": children}

    return {"files": build(app.tmpdir, ""), "tmpdir": app.tmpdir}


def initialize_scenario(scenario: Any) -> dict[str, dict[str, Any]]:
    """ARE's `Scenario.initialize()` (are/simulation/scenarios/scenario.py:150-179), step for step,
    except how the file-system apps' initial state is read for `_initial_apps` (the JSON copy
    `soft_reset` reloads from): `_sandbox_state` walks the folder ARE's `load_state` just wrote
    with `os.scandir`, where ARE's `get_state` makes fsspec `info`/`ls` calls for each of its
    ~1,700 entries (0.1 s of CPU on a 2.6 MB universe). The serialized text is the same.
    The Files apps' trees are not written yet (`_file_trees_deferred`): what it returns, by app
    name, for `stabilize_file_systems(pending=)`. A scenario class with its own `initialize` gets
    ARE's call unchanged (and writes its trees at once: it returns no tree)."""
    from are.simulation.scenarios.scenario import Scenario
    from are.simulation.scenarios.utils.scenario_expander import EnvEventsExpander
    from are.simulation.utils import EnumEncoder

    if type(scenario).initialize is not Scenario.initialize:
        scenario.initialize()
        return {}
    if scenario._initialized:
        return {}
    with _file_trees_deferred(scenario) as deferred:
        scenario.init_and_populate_apps()
    if scenario.apps is not None:
        for app in scenario.apps:
            app.set_seed(scenario.seed)
    scenario.apply_augmentation_configs()
    file_systems = {id(app): app.name in deferred for app in _file_system_apps(scenario)}

    def state_of(app: Any) -> Any:
        if id(app) not in file_systems:
            return app.get_state()
        if file_systems[id(app)]:  # what the walk would read once the tree is written
            return {"files": deferred[app.name], "tmpdir": app.tmpdir}
        return _sandbox_state(app)

    scenario._initial_apps = {
        app.name: {"class_name": app.__class__.__name__, "serialized_state": json.dumps(state_of(app), cls=EnumEncoder)} for app in scenario.apps or []
    }
    scenario.build_events_flow()
    if scenario.env_events_config is not None:
        expander = EnvEventsExpander(env_events_config=scenario.env_events_config)
        expander.add_env_events_to_scenario(scenario=scenario)
    scenario._initialized = True
    return {name: tree for name, tree in deferred.items() if any(a.name == name for a in _file_system_apps(scenario))}


@contextlib.contextmanager
def _file_trees_deferred(scenario: Any) -> Iterator[dict[str, dict[str, Any]]]:
    """ARE's `init_and_populate_apps` with each Files app's tree left to be written at its first use.

    ARE's `load_state` of a Files app writes its universe's tree to disk (an `open(O_CREAT)` per
    file, a `mkdir` per folder, through fsspec: ~1,240 files in a Gaia2 universe, most of a cold
    start's CPU and half of a corpus replay's), and most rollouts never open Files. Inside, each
    Files app's state (in `serialized_apps`, restored after) has an empty tree, so ARE loads the app
    as it always does — its folder, its fallback — with nothing in it; the tree, as a walk of the
    folder would read it once written (`_disk_tree`), comes out by app name, for
    `stabilize_file_systems(pending=)` (it is written, and ARE's fallback set for it, at the first
    call into the app's file system: `_tree_written`). A tree ARE would write in a way this does not
    mirror (an unknown node type, a name that is a path, a file and a folder of one name) is left
    to ARE, written at once."""
    deferred: dict[str, dict[str, Any]] = {}
    originals: list[tuple[Any, Any]] = []
    for exported in scenario.serialized_apps or []:
        state = exported.app_state
        if exported.class_name not in ("SandboxLocalFileSystem", "VirtualFileSystem") or not isinstance(state, dict):
            continue
        files = state.get("files")
        if not isinstance(files, dict):
            continue
        tree = _disk_tree(files)
        if tree is None or not tree["children"]:
            continue
        originals.append((exported, state))
        exported.app_state = {**state, "files": {**files, "children": []}}
        deferred[exported.name] = tree
    try:
        yield deferred
    finally:
        for exported, state in originals:
            exported.app_state = state


def _disk_tree(files: dict[str, Any]) -> dict[str, Any] | None:
    """What `_sandbox_state` reads back (its `files`) after ARE's `load_state` wrote `files`
    (`restore_tree`: folders merged, a file written once), children in the order ARE makes them;
    None for a tree this does not mirror (see `_file_trees_deferred`)."""
    root: dict[str, Any] = {"name": "", "type": "directory", "children": []}
    kinds: dict[str, str] = {}
    nodes: dict[str, dict[str, Any]] = {"/": root}

    def restore(node: Any, parent: str) -> bool:
        if not isinstance(node, dict):
            return False
        name, kind = node.get("name"), node.get("type")
        if not isinstance(name, str) or not name or name in (".", "..") or "/" in name or "\x00" in name:
            return False
        path = os.path.join(parent, name)
        if kind == "directory":
            if kinds.get(path, "directory") != "directory":
                return False
            if path not in nodes:
                nodes[path] = {"name": name, "type": "directory", "children": []}
                nodes[parent]["children"].append(nodes[path])
                kinds[path] = "directory"
            children = node.get("children", [])
            return isinstance(children, list) and all(restore(child, path) for child in children)
        if kind == "file":
            if kinds.get(path, "file") != "file":
                return False
            if path not in kinds:
                kinds[path] = "file"
                nodes[parent]["children"].append({"name": name, "type": "file"})
            return True
        return False

    children = files.get("children", [])
    if not isinstance(children, list) or not all(restore(child, "/") for child in children):
        return None
    return root


def soft_reset_keeping(scenario: Any, untouched: set[str]) -> None:
    """ARE's `Scenario.soft_reset()` (are/simulation/scenarios/scenario.py:181-204), step for
    step, except that the file-system apps named in `untouched` are neither reset nor reloaded.

    For the Files app ARE's `reset()` makes a new, empty sandbox folder (the old one is removed
    with `rm -r` when collected) and `load_state` writes the universe's tree into it again: an
    `open(O_CREAT)` per file, ~0.7 s of CPU on a 2.6 MB universe. When the oracle run left the
    folder exactly as the load made it (same entries, sizes, mtimes, inodes: `_tree_fingerprint`),
    that would write the same tree, so the app keeps its folder. Everything else of ARE's reset
    still happens to it: its failure probability (which rebuilds its tool registry), the
    augmentation configs, its seed (and `reseed_apps` after this, as for every app)."""
    initial = getattr(scenario, "_initial_apps", None)
    for app in scenario.apps or []:
        failure_probability = app.failure_probability
        if app.name not in untouched:
            name = app.name
            app.reset()
            app.name = name
            if initial and app.name in initial:
                app.load_state(json.loads(initial[app.name]["serialized_state"]))
        if failure_probability is not None:
            app.set_failure_probability(failure_probability)
    scenario.apply_augmentation_configs()
    for event in scenario.events or []:
        if event.event_relative_time is not None:
            event.event_time = None
    for app in scenario.apps or []:
        app.set_seed(scenario.seed)


def scenario_duration_cap(scenario: Any) -> int:
    """ARE's benchmark caps: 420 s for Time-tagged scenarios, 1800 s otherwise."""
    from are.simulation.types import CapabilityTag

    return MAX_TIME_SCENARIO_DURATION if CapabilityTag.Time in (scenario.tags or ()) else MAX_SCENARIO_DURATION


@dataclass
class PreparedScenario:
    """A scenario ready for one rollout: initialized, oracle-run, judge attached, turns wired."""

    scenario: Any
    source: str
    oracle_log: list[Any] = field(default_factory=list)
    #: Verdicts of intermediate turns, recorded as ARE's online turn triggers judge them.
    turn_verdicts: list[dict[str, Any]] = field(default_factory=list)
    judge: Any = None
    #: The noise the scenario was prepared with (None: clean), whether it had augmentation data,
    #: and how many environment events ARE's expander added.
    noise: NoiseConfig | None = None
    augmentation: bool = False
    env_events_scheduled: int = 0
    #: The id stream's position once the world was made, before the judge was attached (`ids.scope_rng_state`).
    world_rng_state: object | None = None

    @property
    def scenario_id(self) -> str:
        return str(self.scenario.scenario_id)

    @property
    def nb_turns(self) -> int:
        return int(self.scenario.nb_turns or 1)


def prepare_for_rollout(
    scenario: Any,
    judge: GraphPerEventJudge | None,
    *,
    source: str,
    duration: float | None = None,
    noise: NoiseConfig | None = None,
) -> PreparedScenario:
    """Mirror `preprocess_scenario` (are/.../scenario_imported_from_json/utils.py:43-157).

    Differences, each deliberate: the judge comes from a pool instead of being built per scenario;
    the oracle run is thread-free on a simulated clock (so the oracle timeline the judge compares
    against is exact and identical in every process); app RNGs are seeded process-independently.
    `noise` sets ARE's augmentation configs before `initialize()` (`orchestra.are.noise`): ARE's
    expander adds the environment events, ARE renames the tools; tool failures are the session's.
    """
    if judge is None:
        raise ValueError("a judge is required")
    oracle_log = _prepare_world(scenario, source=source, duration=duration, noise=noise)
    world_rng_state = ids.scope_rng_state()
    prepared = _attach_judge(scenario, judge, source=source, oracle_log=oracle_log, noise=noise)
    prepared.world_rng_state = world_rng_state
    return prepared


def _with_system_app(scenario: Any, source: str, duration: float | None, noise: NoiseConfig | None) -> None:
    """What ARE's `preprocess_scenario` does before initializing: the system app, the duration cap, the noise."""
    from are.simulation.apps.system import SystemApp
    from are.simulation.data_handler.models import ExportedApp

    if scenario.serialized_apps and "SystemApp" not in [a.name for a in scenario.serialized_apps]:
        scenario.serialized_apps.append(ExportedApp(name="SystemApp", class_name="SystemApp", app_state={}))
    if scenario.apps is not None and "SystemApp" not in [a.name for a in scenario.apps]:
        scenario.apps.append(SystemApp())
    scenario.duration = duration if duration is not None else scenario_duration_cap(scenario)
    # noise (and its pydantic models) only loads with a scenario: `orchestra scenarios` stays light
    from orchestra.are.noise import configure as configure_noise

    configure_noise(scenario, noise, source)


def _prepare_world(scenario: Any, *, source: str, duration: float | None, noise: NoiseConfig | None) -> list[Any]:
    """Initialize the scenario, run its oracle on a driven environment, reset the apps: the world a
    rollout starts in (the judge is attached after, by `_attach_judge`); returns the oracle run's log."""
    with paused_gc():
        return _prepare_world_now(scenario, source=source, duration=duration, noise=noise)


def _prepare_world_now(scenario: Any, *, source: str, duration: float | None, noise: NoiseConfig | None) -> list[Any]:
    import_are()
    from are.simulation.types import OracleEvent

    from orchestra.are.noise import check_public_names

    _with_system_app(scenario, source, duration, noise)
    try:
        trees = initialize_scenario(scenario)
    except Exception as exc:
        raise ScenarioError(source, f"ARE could not initialize the scenario: {type(exc).__name__}: {exc}") from None
    if noise is not None:
        check_public_names(scenario, source)
    loaded = {a.name for a in scenario.apps or []}
    dropped = [a.name for a in scenario.serialized_apps or [] if a.name not in loaded]
    if dropped:
        raise ScenarioError(source, f"ARE dropped app(s) {dropped} while loading their state (see ARE's log)")
    reseed_apps(scenario)
    stabilize_file_systems(scenario, pending=trees)
    warn_if_file_contents_unavailable(scenario)

    has_oracle = any(isinstance(e, OracleEvent) for e in scenario.events)
    if not has_oracle:
        raise ScenarioError(source, "the scenario has no oracle events: there is nothing to judge against")

    file_trees = {app.name: (app, _tree_fingerprint(app.tmpdir)) for app in _file_system_apps(scenario)}
    oracle_env = DrivenEnvironment(scenario, oracle_mode=True)
    oracle_env.start()
    oracle_env.run_oracle()
    oracle_env.stop()
    oracle_log = oracle_env.event_log()
    failed = [e for e in oracle_log if e.failed()]
    if failed:
        details = "; ".join(f"{e.tool_name}: {e.metadata.exception}" for e in failed[:3])
        raise ScenarioError(source, f"the oracle run failed ({len(failed)} event(s)): {details}")
    ran = {e.event_id for e in oracle_log}
    missed = [e.event_id for e in scenario.events if isinstance(e, OracleEvent) and e.event_id not in ran]
    if missed:
        raise ScenarioError(
            source,
            f"oracle action(s) {missed} did not happen within the scenario duration ({scenario.duration} s); "
            "the judge would expect nothing of them — raise the duration",
        )
    untouched = {name for name, (app, tree) in file_trees.items() if _tree_fingerprint(app.tmpdir) == tree}
    soft_reset_keeping(scenario, untouched)
    reseed_apps(scenario)
    stabilize_file_systems(scenario)
    return oracle_log


def _attach_judge(scenario: Any, judge: Any, *, source: str, oracle_log: list[Any], noise: NoiseConfig | None) -> PreparedScenario:
    """The end of ARE's `preprocess_scenario`: the oracle run's log and the judge on the scenario,
    the turns wired to the judge's online trigger, the judge's state initialized."""
    from are.simulation.scenarios.scenario_imported_from_json.utils import is_send_message_to_user

    from orchestra.are.noise import expansion_events, has_augmentation

    scenario.oracle_run_event_log = oracle_log
    scenario.judge = judge
    prepared = PreparedScenario(
        scenario=scenario,
        source=source,
        oracle_log=oracle_log,
        judge=judge,
        noise=noise,
        augmentation=has_augmentation(scenario),
        env_events_scheduled=len(expansion_events(scenario)),
    )

    def recording_trigger(env: Any, turn_idx: int) -> tuple[bool, dict[str, str]]:
        success, matches = judge.trigger_condition(env, turn_idx)
        prepared.turn_verdicts.append(
            {
                "turn": len(prepared.turn_verdicts),
                "success": bool(success),
                "rationale": None if success else str(judge.state.last_turn_rationale),
                "sim_seconds": float(env.time_manager.time()) - float(scenario.start_time),
            }
        )
        return success, matches

    scenario.initialize_turns(
        trigger_condition=recording_trigger,
        validation_fn=judge.validate,
        offline_validation=False,
        is_end_of_turn_event=is_send_message_to_user,
    )
    try:
        judge.initialize_state(scenario)
    except Exception as exc:
        raise ScenarioError(source, f"the scripted judge cannot judge this scenario: {type(exc).__name__}: {exc}") from None
    return prepared


# --------------------------------------------------------------------------------------------
# Rollouts from one loaded scenario: a template, and copies of its world
# --------------------------------------------------------------------------------------------


@dataclass
class ScenarioTemplate:
    """A scenario loaded, initialized and oracle-run once (`load_template`): each rollout started
    from it (`instantiate`) gets a world of its own, equal to a cold start's, for a fraction of the
    cost — no oracle run, no app-state serialization, no Files tree written until the agent looks.

    The template's own apps are never handed to a rollout; what members share is read-only: the
    oracle run's log, and the apps' initial states as the JSON text a cold start reloads them from.
    """

    text: str
    source: str
    duration: float | None
    noise: NoiseConfig | None
    #: ARE's `_initial_apps`: app name -> class name and serialized initial state (JSON text).
    initial_apps: dict[str, dict[str, str]]
    oracle_log: list[Any]
    scenario_id: str
    #: Where the load's id stream was once the world was made: a member resumes it there before its
    #: judge is attached, so ARE's turn-condition action ids (in the exported trace) are a cold start's.
    world_rng_state: object | None = None
    #: The apps' states as the file has them (ARE's `serialized_apps`, shared read-only by the members):
    #: what the judges read the universe's names from (`judges._scenario_gazetteer`).
    file_app_states: dict[str, Any] = field(default_factory=dict)
    _member_text: str | None = field(default=None, repr=False)
    _state_blobs: dict[str, bytes] = field(default_factory=dict, repr=False)

    def initial_state(self, app: str) -> dict[str, Any]:
        """App `app`'s initial state, a fresh object for each call (a member's apps own theirs).
        Parsed from its JSON once, then copied out of a `marshal` blob: the same builtins-only data
        as `json.loads` would give, several times faster — this is most of a member's start."""
        blob = self._state_blobs.get(app)
        if blob is None:
            blob = self._state_blobs[app] = marshal.dumps(json.loads(self.initial_apps[app]["serialized_state"]))
        state: dict[str, Any] = marshal.loads(blob)
        return state

    @property
    def member_text(self) -> str:
        """The file with its apps' states left out (members load them from `initial_apps`): what a
        member parses, a few kB where the file may be megabytes. Made at the first member."""
        if self._member_text is None:
            raw = json.loads(self.text)
            for app in raw["apps"]:
                app["app_state"] = {}
            self._member_text = json.dumps(raw)
        return self._member_text

    @property
    def key(self) -> tuple[str, float | None, str | None]:
        return template_key(self.text, self.duration, self.noise)


def template_key(text: str, duration: float | None, noise: NoiseConfig | None) -> tuple[str, float | None, str | None]:
    """What a template is of: the file's bytes and the settings its load depends on."""
    return (hashlib.sha256(text.encode()).hexdigest(), duration, noise.model_dump_json() if noise is not None else None)


class Templates:
    """The worlds this process loaded, by file and settings (`template_key`), most recent last: a
    rollout of a file loaded before starts from a copy of it (`instantiate`) instead of loading it
    again. Bounded (`size` templates; 0 turns warm starts off); safe to share between threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, float | None, str | None], ScenarioTemplate] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[tuple[str, float | None, str | None], threading.Lock] = {}

    def loading(self, key: tuple[str, float | None, str | None]) -> threading.Lock:
        """The lock held while `key`'s world loads: rollouts of a file started together (a GRPO group)
        load it once, the others wait and start from its template."""
        with self._lock:
            return self._loading.setdefault(key, threading.Lock())

    def get(self, key: tuple[str, float | None, str | None]) -> ScenarioTemplate | None:
        with self._lock:
            template = self._items.get(key)
            if template is not None:
                self._items.move_to_end(key)
            return template

    def put(self, template: ScenarioTemplate) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._items[template.key] = template
            self._items.move_to_end(template.key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


#: The process's templates. `ORCHESTRA_WARM_STARTS=N`: how many (default 8; 0: every rollout loads its scenario cold).
WARM_STARTS_ENV = "ORCHESTRA_WARM_STARTS"
_templates = Templates(int(os.environ.get(WARM_STARTS_ENV, "8") or 0))


def process_templates() -> Templates:
    """The process-wide templates (`Templates`)."""
    return _templates


def template_of(prepared: PreparedScenario, text: str, *, duration: float | None, noise: NoiseConfig | None) -> ScenarioTemplate:
    """The template a cold start leaves behind: what it loaded, for the next rollouts of the file."""
    return _template(prepared.scenario, text, prepared.source, duration, noise, prepared.oracle_log, prepared.world_rng_state)


def load_template(text: str, source: str, *, duration: float | None = None, noise: NoiseConfig | None = None) -> ScenarioTemplate:
    """Parse, initialize and oracle-run a scenario once (the work of a cold start, less the judge)."""
    scenario = parse_scenario_json(text, source)
    oracle_log = _prepare_world(scenario, source=source, duration=duration, noise=noise)
    return _template(scenario, text, source, duration, noise, oracle_log, ids.scope_rng_state())


def _template(
    scenario: Any, text: str, source: str, duration: float | None, noise: NoiseConfig | None, oracle_log: list[Any], world_rng_state: object | None
) -> ScenarioTemplate:
    """A loaded, oracle-run world as a template (its apps' initial states, its oracle log, where its id stream was)."""
    return ScenarioTemplate(
        text=text,
        source=source,
        duration=duration,
        noise=noise,
        initial_apps={name: dict(entry) for name, entry in scenario._initial_apps.items()},
        oracle_log=list(oracle_log),
        scenario_id=str(scenario.scenario_id),
        world_rng_state=world_rng_state,
        file_app_states=file_app_states(scenario),
    )


def file_app_states(scenario: Any) -> dict[str, Any]:
    """App name -> its state as the scenario file gives it (`serialized_apps`)."""
    return {exported.name: exported.app_state for exported in scenario.serialized_apps or []}


def _parse_member(template: ScenarioTemplate) -> Any:
    """The template's scenario object anew, from its text without app states (checked at its load)."""
    from are.simulation.data_handler.importer import JsonScenarioImporter

    scenario, _, _ = JsonScenarioImporter().import_from_json_to_benchmark(
        json_str=template.member_text, apps_to_skip=["SandboxLocalFileSystem"], load_completed_events=False
    )
    return scenario


def instantiate(template: ScenarioTemplate, judge: Any, *, source: str | None = None) -> PreparedScenario:
    """A rollout's world from `template`: a fresh scenario object (its own apps, events and Files
    folder), in the state a cold start leaves it after its oracle run and reset; the judge attached.
    `source`: the file it runs as (default the template's; the same bytes under another name)."""
    source = source or template.source
    with paused_gc():
        scenario = _parse_member(template)
        _with_system_app(scenario, source, template.duration, template.noise)
        _initialize_from(scenario, template)
        reseed_apps(scenario)
        stabilize_file_systems(scenario, pending=_pending_trees(scenario, template))
    for exported in scenario.serialized_apps or []:  # parsed without them (`member_text`); the judges read names there
        if exported.name in template.file_app_states:
            exported.app_state = template.file_app_states[exported.name]
    ids.restore_scope_rng_state(template.world_rng_state)
    prepared = _attach_judge(scenario, judge, source=source, oracle_log=list(template.oracle_log), noise=template.noise)
    prepared.world_rng_state = template.world_rng_state
    return prepared


def _initialize_from(scenario: Any, template: ScenarioTemplate) -> None:
    """`initialize_scenario` then the reset after the oracle run (`soft_reset_keeping`), done as a
    cold start ends up: each app built and loaded from the initial state the cold start reloads it
    from (`_initial_apps`), the Files apps' trees left to be written on first use (`_pending_trees`)."""
    from are.simulation.apps import ALL_APPS
    from are.simulation.scenarios.utils.scenario_expander import EnvEventsExpander

    classes = {cls.__name__: cls for cls in ALL_APPS}
    file_system_classes = {"SandboxLocalFileSystem", "VirtualFileSystem"}
    apps = []
    for exported in scenario.serialized_apps or []:
        entry = template.initial_apps.get(exported.name)
        if entry is None:  # dropped on the template's load too (and reported there)
            continue
        cls = classes[entry["class_name"]]
        app = cls(name=exported.name) if (exported.class_name and exported.class_name != exported.name) else cls()
        if entry["class_name"] not in file_system_classes:
            app.load_state(template.initial_state(exported.name))
        apps.append(app)
    scenario.apps = apps
    for app in scenario.apps:
        app.set_seed(scenario.seed)
    scenario.apply_augmentation_configs()
    scenario._initial_apps = template.initial_apps
    scenario.build_events_flow()
    if scenario.env_events_config is not None:
        EnvEventsExpander(env_events_config=scenario.env_events_config).add_env_events_to_scenario(scenario=scenario)
    scenario._initialized = True
    # the reset after the oracle run (`soft_reset_keeping`): failure probabilities, augmentation, relative times, seeds
    for app in scenario.apps:
        if app.failure_probability is not None:
            app.set_failure_probability(app.failure_probability)
    scenario.apply_augmentation_configs()
    for event in scenario.events or []:
        if event.event_relative_time is not None:
            event.event_time = None
    for app in scenario.apps:
        app.set_seed(scenario.seed)


def _pending_trees(scenario: Any, template: ScenarioTemplate) -> dict[str, dict[str, Any]]:
    """Each Files app's initial tree (what a cold start writes at load), by app name."""
    out = {}
    for app in _file_system_apps(scenario):
        out[app.name] = template.initial_state(app.name).get("files") or {}
    return out


def initial_state_sha256(scenario: Any) -> str:
    """A hash of the world a rollout starts in: every app's state (a Files app's tree, written or
    still pending), canonical JSON. Equal hashes are what "the members of a group start from the
    same state" means — checked on each member, not assumed."""
    from are.simulation.apps.virtual_file_system import VirtualFileSystem
    from are.simulation.utils import EnumEncoder

    file_systems = {id(app) for app in _file_system_apps(scenario)}
    parts: dict[str, Any] = {}
    for app in scenario.apps or []:
        if id(app) in file_systems:
            sandbox = app.sandbox_fs if isinstance(app, VirtualFileSystem) else app
            pending = getattr(getattr(getattr(sandbox, "local_fs", None), "fs", None), "pending", None)
            parts[app.name] = _sorted_tree(pending[1] if pending is not None else _sandbox_state(app)["files"])
        else:
            parts[app.name] = app.get_state()
    blob = json.dumps(parts, sort_keys=True, cls=EnumEncoder, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _sorted_tree(node: dict[str, Any]) -> dict[str, Any]:
    """A tree with each folder's children by name (a disk lists them in its own order)."""
    children = node.get("children")
    if children is None:
        return node
    return {**node, "children": sorted((_sorted_tree(c) for c in children), key=lambda c: str(c.get("name")))}


def write_tree(root: str, tree: dict[str, Any]) -> None:
    """A Files app's tree under `root` as ARE's `load_state` writes it (folders, and empty files whose
    contents ARE reads on demand from `DEMO_FS_PATH`), with plain system calls."""

    def make(node: dict[str, Any], parent: str) -> None:
        path = os.path.join(parent, node["name"])
        if node.get("type") == "directory":
            os.makedirs(path, exist_ok=True)
            for child in node.get("children") or []:
                make(child, path)
        elif not os.path.exists(path):
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))

    for child in tree.get("children") or []:
        make(child, root)


def oracle_events(scenario: Any) -> dict[str, Any]:
    """The scenario's `OracleEvent`s (what the agent is expected to do), by event id."""
    import_are()
    from are.simulation.types import OracleEvent

    return {e.event_id: e for e in scenario.events if isinstance(e, OracleEvent)}


def oracle_run_agent_events(oracle_log: list[Any]) -> list[Any]:
    """The AGENT events of the oracle run, in (time, id) order."""
    import_are()
    from are.simulation.types import EventType

    return sorted((e for e in oracle_log if e.event_type == EventType.AGENT), key=lambda e: (e.event_time, e.event_id))
