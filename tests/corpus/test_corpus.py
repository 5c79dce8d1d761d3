"""The generated Gaia2-format corpus (``scenarios/corpus/``, built by ``scripts/build_corpus.py``).

* the manifest covers every bundled scenario file, sizes match, the splits are disjoint, and the
  corpus meets its quotas (>= 44 scenarios, >= 6 per capability, >= 12 multi-turn, >= 4 with a turn
  the environment starts (2 and 3 turns, >= 4 apps), one notification between turns, >= 2 universes
  of Gaia2 size);
* every file has Gaia2's shape and imports with ARE's own importer;
* the ``augmentation`` block feeds ARE's noise phase (EnvEventsExpander adds events from it, tool
  renames apply) without breaking the oracle run;
* the generator's output does not depend on today's date: one universe and its scenarios, generated in
  subprocesses whose clock says two different dates, are identical and equal to the committed files;
* (slow) the committed files are exactly what the generator produces, under another PYTHONHASHSEED and
  a faked "today";
* (slow) orchestra's oracle replay passes on every corpus scenario, and every applicable perturbation
  of it is rejected (one pass over the corpus).
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
CORPUS = SCENARIOS / "corpus"
MANIFEST = SCENARIOS / "manifest.json"
CORPUS_FILES = sorted(CORPUS.glob("*/validation/*.json"))
CONFIG_OF = {"Execution": "execution", "Search": "search", "Adaptability": "adaptability", "Time": "time", "Ambiguity": "ambiguity"}
APP_CLASSES = {
    "AgentUserInterface": "AgentUserInterface",
    "SystemApp": "SystemApp",
    "Contacts": "ContactsApp",
    "Emails": "EmailClientV2",
    "Calendar": "CalendarApp",
    "Messages": "MessagingAppV2",
    "Chats": "MessagingAppV2",
    "Shopping": "ShoppingApp",
    "Cabs": "CabApp",
    "RentAFlat": "ApartmentListingApp",
    "Files": "VirtualFileSystem",
}


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def manifest() -> dict:
    return _load(MANIFEST)


def _is_answer(e: dict) -> bool:
    return e["event_type"] == "AGENT" and e["action"]["app"] == "AgentUserInterface" and e["action"]["function"] == "send_message_to_user"


def _turn_index(data: dict) -> dict[str, int]:
    """ARE's turn of each event (``build_event_id_to_turn_idx``): answers to the user among its ancestors."""
    events = {e["event_id"]: e for e in data["events"]}
    turn: dict[str, int] = {}

    def idx(eid: str) -> int:
        if eid not in turn:
            turn[eid] = max((idx(d) + _is_answer(events[d]) for d in events[eid]["dependencies"]), default=0)
        return turn[eid]

    return {eid: idx(eid) for eid in events}


def _turns(data: dict) -> int:
    return 1 + max(_turn_index(data).values())


def _turn_openers(data: dict) -> dict[int, list[dict]]:
    """Turn k >= 1 -> the events hung directly on turn k-1's answer (what ARE schedules when the turn starts)."""
    events = {e["event_id"]: e for e in data["events"]}
    index = _turn_index(data)
    openers: dict[int, list[dict]] = collections.defaultdict(list)
    for e in data["events"]:
        if any(_is_answer(events[d]) for d in e["dependencies"]):
            openers[index[e["event_id"]]].append(e)
    return openers


# ------------------------------------------------------------------ manifest


def test_manifest_lists_every_bundled_file_with_its_size(manifest):
    bundled = {p.relative_to(SCENARIOS).as_posix() for p in SCENARIOS.rglob("*.json") if p.name != "manifest.json"}
    listed = {e["path"] for e in manifest["scenarios"].values()}
    assert listed == bundled
    for sid, entry in manifest["scenarios"].items():
        path = SCENARIOS / entry["path"]
        assert path.stat().st_size == entry["bytes"], sid
        assert path.stem == sid


def test_manifest_splits_are_frozen_by_universe(manifest):
    train, heldout = set(manifest["splits"]["train"]), set(manifest["splits"]["heldout"])
    assert manifest["version"] == 1
    assert train and heldout and not train & heldout
    for sid, entry in manifest["scenarios"].items():
        assert entry["universe"] in manifest["splits"][entry["split"]], sid
    universes_by_split = collections.defaultdict(set)
    for entry in manifest["scenarios"].values():
        universes_by_split[entry["split"]].add(entry["universe"])
    assert universes_by_split["train"] <= train and universes_by_split["heldout"] == heldout
    # both splits exercise every capability
    for split in ("train", "heldout"):
        caps = {c for e in manifest["scenarios"].values() if e["split"] == split and e["universe"] != "starter" for c in e["capabilities"]}
        assert caps == set(CONFIG_OF), split


def test_manifest_entries_match_files(manifest):
    for sid, entry in manifest["scenarios"].items():
        data = _load(SCENARIOS / entry["path"])
        assert data["metadata"]["definition"]["scenario_id"] == sid
        assert entry["capabilities"] == [t for t in data["metadata"]["definition"]["tags"] if t != "Universe"]
        assert entry["turns"] == _turns(data)


def test_corpus_quotas(manifest):
    corpus = {sid: e for sid, e in manifest["scenarios"].items() if e["universe"] != "starter"}
    assert len(corpus) >= 44
    per_cap = collections.Counter(c for e in corpus.values() for c in e["capabilities"])
    assert set(per_cap) == set(CONFIG_OF) and min(per_cap.values()) >= 6, per_cap
    assert sum(e["turns"] >= 2 for e in corpus.values()) >= 12
    # Gaia2's usual Adaptability shape: a turn k >= 2 opened by the environment, with no user message
    env_started = collections.defaultdict(set)  # turns -> scenarios
    env_apps = set()
    between_turns = set()  # an ENV notification before the user's next message
    for sid, e in corpus.items():
        for first in _turn_openers(_load(SCENARIOS / e["path"])).values():
            kinds = {ev["event_type"] for ev in first}
            if kinds == {"ENV"}:
                env_started[e["turns"]].add(sid)
                env_apps |= {ev["action"]["app"] for ev in first}
            elif kinds == {"ENV", "USER"}:
                delay = {ev["event_type"]: ev["event_relative_time"] for ev in first}
                if delay["ENV"] < delay["USER"]:
                    between_turns.add(sid)
    assert sum(map(len, env_started.values())) >= 4 and env_started[2] and env_started[3], dict(env_started)
    assert len(env_apps) >= 4, env_apps
    assert between_turns
    assert sum(e["bytes"] for e in corpus.values()) < 60_000_000
    # >= 2 universes at Gaia2 scale: >= 2 MB of serialized app state
    big = set()
    for e in corpus.values():
        if e["bytes"] > 2_000_000:
            apps = _load(SCENARIOS / e["path"])["apps"]
            if len(json.dumps(apps)) >= 2_000_000:
                big.add(e["universe"])
    assert len(big) >= 2, big


# ------------------------------------------------------------------ files


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.stem for p in CORPUS_FILES])
def test_file_shape(path):
    data = _load(path)
    definition = data["metadata"]["definition"]
    assert data["version"] == "are_simulation_v1"
    assert definition["scenario_id"] == path.stem
    assert definition["start_time"] == 1728975600.0
    tags = definition["tags"]
    assert len(tags) == 2 and tags[0] == "Universe" and CONFIG_OF[tags[1]] == path.parent.parent.name
    assert {a["name"]: a["class_name"] for a in data["apps"]} == APP_CLASSES
    contacts = next(a for a in data["apps"] if a["name"] == "Contacts")["app_state"]["contacts"]
    assert sum(c["is_user"] for c in contacts.values()) == 1
    assert data["completed_events"] == []
    events = {e["event_id"]: e for e in data["events"]}
    assert any(e["event_type"] == "USER" and not e["dependencies"] for e in events.values())
    for e in events.values():
        if e["action"]["function"] == "send_message_to_agent":
            assert e["event_type"] == "USER"
        if e["event_type"] == "ENV":  # ARE's DAG rules (Scenario.validate_predecessors, build_turn_trigger)
            assert len(e["dependencies"]) == 1, e["event_id"]
            parent = events[e["dependencies"][0]]
            assert parent["event_type"] in ("USER", "ENV") or _is_answer(parent), e["event_id"]
        if any(_is_answer(events[d]) for d in e["dependencies"]):  # after an answer: ENV or a user message only
            assert e["event_type"] == "ENV" or e["action"]["function"] == "send_message_to_agent", e["event_id"]
        for arg in e["action"]["args"]:
            assert arg["value_type"] != "NoneType"
            if arg["value_type"] in ("list", "dict"):
                json.loads(arg["value"])
    # the oracle timeline fits ARE's duration cap (420 s for Time, 1800 s otherwise)
    ends: dict[str, float] = {}

    def end(eid: str) -> float:
        if eid not in ends:
            e = events[eid]
            ends[eid] = max((end(d) for d in e["dependencies"]), default=0.0) + (e["event_relative_time"] or 0.0)
        return ends[eid]

    assert max(end(eid) for eid in events) < (400 if tags[1] == "Time" else 1700)
    if tags[1] in ("Time", "Adaptability"):  # something is time-checked by the judge
        assert any(e["class_name"] == "OracleEvent" and (e["event_relative_time"] > 1 or e["event_time_comparator"]) for e in events.values())
    aug = data["augmentation"]
    assert {a["name"] for a in aug["apps"]} >= {"Messages", "Chats", "Shopping", "RentAFlat"}
    assert set(aug["tool_names_mapping"]) == set(aug["tool_descriptions_mapping"])
    assert all(k.split("__")[0] in APP_CLASSES for k in aug["tool_names_mapping"])


def test_every_file_imports_with_ares_importer():
    from orchestra.are.imports import import_are

    import_are()
    from are.simulation.data_handler.importer import JsonScenarioImporter

    assert len(CORPUS_FILES) >= 44
    for path in CORPUS_FILES:
        scenario, _, _ = JsonScenarioImporter().import_from_json_to_benchmark(
            path.read_text(encoding="utf-8"), apps_to_skip=["SandboxLocalFileSystem"], load_completed_events=False
        )
        assert scenario.scenario_id == path.stem
        assert {a.name for a in scenario.serialized_apps} == set(APP_CLASSES), path.stem
        assert [t.value for t in scenario.tags] == _load(path)["metadata"]["definition"]["tags"]  # one bad tag drops all
        assert scenario.augmentation_data and scenario.augmentation_data["tool_names_mapping"]


# ------------------------------------------------------------------ noise augmentation


@pytest.mark.parametrize("name", ["univ_03_exec_files_taxes", "univ_05_time_reply_within_deadline"])
def test_augmentation_feeds_ares_noise(name):
    """ARE's EnvEventsExpander adds events from `augmentation.apps`; tool renames apply; the oracle run stays clean."""
    from orchestra.are.imports import import_are

    import_are()
    from are.simulation.data_handler.importer import JsonScenarioImporter
    from are.simulation.scenarios.scenario_imported_from_json.utils import preprocess_scenario
    from are.simulation.scenarios.utils.scenario_expander import EnvEventsConfig
    from are.simulation.types import ToolAugmentationConfig
    from are.simulation.validation import ScriptedGraphPerEventJudgeConfig

    path = next(p for p in CORPUS_FILES if p.stem == name)
    data = _load(path)
    scenario, _, _ = JsonScenarioImporter().import_from_json_to_benchmark(path.read_text(encoding="utf-8"), load_completed_events=False)
    time_tagged = "Time" in data["metadata"]["definition"]["tags"]
    preprocess_scenario(
        scenario,
        judge_config=ScriptedGraphPerEventJudgeConfig(engine=lambda messages, **kw: ("", None)),
        max_scenario_duration=420 if time_tagged else 1800,
        tool_augmentation_config=ToolAugmentationConfig(tool_failure_probability=0.0),
        env_events_config=EnvEventsConfig(num_env_events_per_minute=10, env_events_seed=0),
    )  # raises if any event of the oracle run (noise included) fails
    added = collections.Counter(e.action.app.name for e in scenario.events if "env_expansion" in e.event_id and hasattr(e.action, "app"))
    assert {"Messages", "Chats", "Shopping", "RentAFlat"} <= set(added), added
    assert any("env_expansion" in e.event_id for e in scenario.oracle_run_event_log)
    names = data["augmentation"]["tool_names_mapping"]
    tools = {t.name: t for t in scenario.get_tools()}
    renamed = [n for n in names if n in tools]
    assert len(renamed) == len(names)
    assert all(tools[n]._public_name == names[n] for n in renamed)


# ------------------------------------------------------------------ generator: no wall-clock date

# Run first in a child interpreter: from then on its clock says `TODAY` (epoch seconds). time.time(),
# datetime.now/utcnow/today and date.today all move; only this child process is affected.
FAKE_TODAY_PRELUDE = """
import datetime as _dt, time as _time
_shift = {today!r} - _time.time()
_real_time = _time.time
_time.time = lambda: _real_time() + _shift
_time.time_ns = lambda: int((_real_time() + _shift) * 1e9)
class _FakeDateTime(_dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return cls.fromtimestamp(_time.time(), tz)
    @classmethod
    def utcnow(cls):
        return cls.fromtimestamp(_time.time(), _dt.timezone.utc).replace(tzinfo=None)
    @classmethod
    def today(cls):
        return cls.fromtimestamp(_time.time())
class _FakeDate(_dt.date):
    @classmethod
    def today(cls):
        return cls.fromtimestamp(_time.time())
_dt.datetime, _dt.date = _FakeDateTime, _FakeDate
assert abs(_dt.datetime.now().timestamp() - {today!r}) < 3600, "the fake clock did not take"
"""
# Far enough apart (months and years) that anything drawn relative to "now" differs between them.
FAKE_TODAYS = (1_803_000_000.0, 1_960_000_000.0)  # 2027-02-19 and 2032-02-10 (UTC)

ONE_UNIVERSE = """
import hashlib, json, sys
from orchestra_dev.corpus.export import augmentation_block, export_scenario, render
from orchestra_dev.corpus.scenarios import ASSIGNMENTS, CONFIG_OF, TEMPLATES, scenario_id
from orchestra_dev.corpus.universe import SPECS, Universe
spec = next(s for s in SPECS if s.uid == sys.argv[1])
universe = Universe(spec, int(sys.argv[2]))
augmentation = augmentation_block(universe)
digests = {}
for slug in ASSIGNMENTS[spec.uid]:
    capability, template = TEMPLATES[slug]
    sid = scenario_id(spec.uid, slug)
    text = render(export_scenario(universe, sid, capability, template, augmentation))
    digests[f"{CONFIG_OF[capability]}/validation/{sid}.json"] = hashlib.sha256(text.encode()).hexdigest()
print(json.dumps(digests, sort_keys=True))
"""


def _faked_today(today: float, code: str) -> list[str]:
    return [sys.executable, "-c", FAKE_TODAY_PRELUDE.format(today=today) + code]


def _env(**extra: str) -> dict[str, str]:
    # The generator is dev-only code under devtools/ (not installed): put it on the child's path.
    path = os.pathsep.join(p for p in (str(REPO / "devtools"), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "PYTHONPATH": path, **extra}


def test_generator_output_does_not_depend_on_todays_date():
    """One small universe and all its scenarios, generated under two faked dates: same bytes, and the committed ones.

    Faker's date providers draw relative to *today*; the corpus once said "December" on one day and
    "January" on another. Generated text may depend on the seed and the scenario's start time only.
    """
    pytest.importorskip("faker")
    from orchestra_dev.corpus.universe import SPECS

    seed = 20241015  # scripts/build_corpus.py's DEFAULT_SEED
    uid = next(s.uid for s in SPECS if not s.large)
    procs = [
        subprocess.Popen(_faked_today(today, ONE_UNIVERSE) + [uid, str(seed)], cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for today in FAKE_TODAYS
    ]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
        outputs.append(json.loads(out.strip().splitlines()[-1]))
    assert outputs[0] == outputs[1], sorted(k for k in outputs[0] if outputs[0][k] != outputs[1].get(k))
    committed = {rel: hashlib.sha256((CORPUS / rel).read_bytes()).hexdigest() for rel in outputs[0]}
    assert outputs[0] == committed, sorted(k for k in committed if committed[k] != outputs[0][k])


# ------------------------------------------------------------------ generator (slow)


@pytest.mark.slow
def test_generator_reproduces_committed_files_under_another_hash_seed():
    """The whole corpus and manifest regenerate byte for byte, under another hash seed and another "today"."""
    pytest.importorskip("faker")
    code = f"import runpy, sys\nsys.argv = [{str(REPO / 'scripts' / 'build_corpus.py')!r}, '--check']\nrunpy.run_path(sys.argv[0], run_name='__main__')\n"
    proc = subprocess.run(_faked_today(FAKE_TODAYS[1], code), cwd=REPO, env=_env(PYTHONHASHSEED="4242"), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "OK:" in proc.stdout


@pytest.mark.slow
def test_every_app_loads_in_every_file():
    """ARE builds each app with its own load_state; it logs and *drops* an app whose state fails to load."""
    from orchestra.are.imports import import_are

    import_are()
    from are.simulation.data_handler.importer import JsonScenarioImporter

    for path in CORPUS_FILES:
        scenario, _, _ = JsonScenarioImporter().import_from_json_to_benchmark(path.read_text(encoding="utf-8"), load_completed_events=False)
        scenario.initialize()
        assert {a.name for a in scenario.apps} >= set(APP_CLASSES) - {"SystemApp"}, path.stem


@pytest.mark.slow
def test_oracle_replay_passes_and_every_corpus_perturbation_is_rejected_or_not_applicable():
    """`orchestra judge-check` over the whole corpus: the oracle replay passes on every corpus
    scenario (1.0), every applicable perturbation scores 0.0. (The plain oracle replay is this
    run's unperturbed rollouts: one pass over the corpus proves both.)"""
    from orchestra.are.judge_pool import JudgePool
    from orchestra.oracle.perturbations import KINDS
    from orchestra.runs.runner import execute_sources_sync

    applicable = {k: 0 for k in KINDS if k != "wrong_answer"}  # n/a under the scripted judge, by design
    oracle = []
    for o in execute_sources_sync([CORPUS], perturbations=(None, *applicable), judge_pool=JudgePool()):
        assert o.error is None, o.error
        if o.perturbation is None:
            assert not o.not_applicable, o.scenario_id
            assert o.result is not None and o.result.success and o.result.reward == 1.0, (o.scenario_id, o.result.rationale if o.result else None)
            oracle.append(o.scenario_id)
            continue
        if o.not_applicable:
            continue
        applicable[o.perturbation] += 1
        assert not o.result.success and o.result.reward == 0.0, (o.scenario_id, o.perturbation, o.note)
    assert sorted(oracle) == sorted(p.stem for p in CORPUS_FILES)  # every corpus file replayed, once
    assert all(n >= 5 for n in applicable.values()), applicable
