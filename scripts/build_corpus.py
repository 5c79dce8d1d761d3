#!/usr/bin/env python
"""Build the Gaia2-format corpus under ``scenarios/corpus/`` and the frozen split manifest.

Six seeded universes (``univ_00`` .. ``univ_05``; two of them Gaia2-sized, > 2 MB of app state) and
39 scenarios over the five Gaia2 capabilities (7 of them multi-turn), written with ARE's own scenario
API and exporter (see ``devtools/orchestra_dev/corpus/``). Layout is ARE's local dataset layout::

    scenarios/corpus/<config>/validation/<scenario_id>.json    config in {execution, search,
                                                                adaptability, time, ambiguity}
    scenarios/manifest.json                                     splits by universe + one entry per
                                                                bundled scenario file (corpus and
                                                                starter)

so ``are-benchmark run --oracle -d scenarios/corpus --config time --split validation`` works.

Usage::

    python scripts/build_corpus.py                 # (re)write scenarios/corpus/ and scenarios/manifest.json
    python scripts/build_corpus.py --check         # regenerate in a temp dir, diff, exit 1 on drift
    python scripts/build_corpus.py --seed 7 --out /tmp/c --manifest /tmp/c/manifest.json   # another corpus

Output is byte-identical across runs and PYTHONHASHSEED values (Faker and every choice are seeded;
no wall clock, uuid4 or hash()).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT / "devtools") not in sys.path:
    sys.path.insert(0, str(REPO_ROOT / "devtools"))  # the generator is dev-only code (devtools/orchestra_dev)

from orchestra_dev.corpus.export import augmentation_block, export_scenario, render  # noqa: E402
from orchestra_dev.corpus.scenarios import ASSIGNMENTS, CONFIG_OF, TEMPLATES, scenario_id  # noqa: E402
from orchestra_dev.corpus.universe import SPECS, SPLITS, Universe  # noqa: E402

DEFAULT_SEED = 20241015
DEFAULT_OUT = REPO_ROOT / "scenarios" / "corpus"
SPLIT = "validation"
STARTER_UNIVERSE = "starter"


def _turns(data: dict) -> int:
    """ARE's turn count (``build_event_id_to_turn_idx``): 1 + the most answers to the user on any event's ancestry.

    Not the number of user messages: a turn may start with an ENV event hung on the previous answer.
    """
    events = {e["event_id"]: e for e in data["events"]}

    def is_answer(e: dict) -> bool:
        action = e.get("action") or {}
        return e["event_type"] == "AGENT" and action.get("app") == "AgentUserInterface" and action.get("function") == "send_message_to_user"

    turn: dict[str, int] = {}

    def idx(eid: str) -> int:
        if eid not in turn:
            deps = [events[d] for d in events[eid]["dependencies"]]
            turn[eid] = max((idx(d["event_id"]) + is_answer(d) for d in deps), default=0)
        return turn[eid]

    return 1 + max((idx(eid) for eid in events), default=0)


def _capabilities(data: dict) -> list[str]:
    return [t for t in data["metadata"]["definition"]["tags"] if t != "Universe"]


def build_corpus(out: Path, seed: int, log=print) -> dict[str, dict]:
    """Write every corpus file under ``out``; return manifest entries (paths relative to ``out.parent``)."""
    entries: dict[str, dict] = {}
    split_of = {uid: split for split, uids in SPLITS.items() for uid in uids}
    for spec in SPECS:
        t0 = time.perf_counter()
        universe = Universe(spec, seed)
        augmentation = augmentation_block(universe)
        log(
            f"universe {spec.uid} ({spec.locale}, {split_of[spec.uid]}): {universe.user.full} in {universe.city}, "
            f"{universe.universe_bytes():,} bytes of app state, {time.perf_counter() - t0:.1f}s"
        )
        for slug in ASSIGNMENTS[spec.uid]:
            t1 = time.perf_counter()
            capability, template = TEMPLATES[slug]
            sid = scenario_id(spec.uid, slug)
            data = export_scenario(universe, sid, capability, template, augmentation)
            text = render(data)
            path = out / CONFIG_OF[capability] / SPLIT / f"{sid}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            size = len(text.encode("utf-8"))
            entries[sid] = {
                "universe": spec.uid,
                "split": split_of[spec.uid],
                "capabilities": _capabilities(data),
                "turns": _turns(data),
                "path": f"{out.name}/{CONFIG_OF[capability]}/{SPLIT}/{sid}.json",
                "bytes": size,
            }
            log(f"  {sid}: {CONFIG_OF[capability]}, {entries[sid]['turns']} turn(s), {size:,} bytes, {time.perf_counter() - t1:.1f}s")
    return entries


def starter_entries(root: Path) -> dict[str, dict]:
    """The hand-written starter scenarios (``scenarios/<config>/validation/starter_*.json``)."""
    entries = {}
    for path in sorted(root.glob(f"*/{SPLIT}/starter_*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        sid = data["metadata"]["definition"]["scenario_id"]
        entries[sid] = {
            "universe": STARTER_UNIVERSE,
            "split": "train",
            "capabilities": _capabilities(data),
            "turns": _turns(data),
            "path": path.relative_to(root).as_posix(),
            "bytes": path.stat().st_size,
        }
    return entries


def manifest(corpus: dict[str, dict], starter: dict[str, dict]) -> dict:
    return {
        "version": 1,
        "splits": {
            "train": [*SPLITS["train"], STARTER_UNIVERSE],
            "heldout": list(SPLITS["heldout"]),
        },
        "scenarios": {sid: entry for sid, entry in sorted({**starter, **corpus}.items())},
    }


def write_all(out: Path, manifest_path: Path, seed: int, log=print) -> None:
    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    corpus = build_corpus(out, seed, log)
    man = manifest(corpus, starter_entries(manifest_path.parent))
    manifest_path.write_text(json.dumps(man, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    total = sum(e["bytes"] for e in corpus.values())
    log(f"wrote {len(corpus)} scenarios ({total:,} bytes) to {out} and {manifest_path} in {time.perf_counter() - t0:.1f}s")


def check(out: Path, manifest_path: Path, seed: int) -> int:
    with tempfile.TemporaryDirectory(prefix="corpus_check_") as tmp:
        fresh_out = Path(tmp) / out.name
        corpus = build_corpus(fresh_out, seed, log=lambda *_: None)
        status = 0
        fresh = {p.relative_to(fresh_out) for p in fresh_out.rglob("*.json")}
        committed = {p.relative_to(out) for p in out.rglob("*.json")} if out.exists() else set()
        for rel in sorted(committed - fresh):
            print(f"stale file (no longer generated): {out / rel}")
            status = 1
        for rel in sorted(fresh):
            target = out / rel
            if not target.exists():
                print(f"missing: {target}")
                status = 1
                continue
            new, old = (fresh_out / rel).read_bytes(), target.read_bytes()
            if new != old:
                at = next((i for i, (a, b) in enumerate(zip(new, old)) if a != b), min(len(new), len(old)))
                print(
                    f"differs: {target} (first difference at byte {at}: committed {old[max(0, at - 60) : at + 60]!r}, "
                    f"regenerated {new[max(0, at - 60) : at + 60]!r})"
                )
                status = 1
        man = json.dumps(manifest(corpus, starter_entries(manifest_path.parent)), indent=2, sort_keys=True) + "\n"
        if not manifest_path.exists() or manifest_path.read_text(encoding="utf-8") != man:
            print(f"differs: {manifest_path}")
            status = 1
        if status == 0:
            print(f"OK: {len(fresh)} corpus scenarios and {manifest_path.name} up to date in {out}")
        return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="corpus folder (default: scenarios/corpus)")
    parser.add_argument("--manifest", type=Path, help="manifest path (default: <out>/../manifest.json)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"base seed (default {DEFAULT_SEED})")
    parser.add_argument("--check", action="store_true", help="regenerate into a temp dir and diff against --out")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    manifest_path = (args.manifest or out.parent / "manifest.json").resolve()
    if args.check:
        return check(out, manifest_path, args.seed)
    write_all(out, manifest_path, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
