"""Where a Gaia2 run's scenarios come from: the dataset in the local Hugging Face cache, the bundled
corpus or a folder in ARE's layout (`Gaia2Source`, `choose_source`), and Gaia2-mini for a source
without one (`mini_selection`).

The dataset has a `mini` config; a source without one gets `mini_selection` — Gaia2-mini is a
fixed subset stratified by capability, 32 of each capability's 160 scenarios (one fifth), so the
selection takes one fifth (rounded up) of each config's scenarios, spread over universes, ranked by
a hash of the scenario id: deterministic, no seed, no date.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orchestra.errors import OrchestraError
from orchestra.scenario_files import HF_DATASET, HF_DEFAULT_REVISION, ScenarioError, ScenarioFile, expand, load_hf_dataset

#: gaia2-run's standard configs, in ARE's order (`CapabilityTag.gaia2_capabilities()`; a test checks).
STANDARD_CONFIGS = ("ambiguity", "adaptability", "execution", "search", "time")


MINI = "mini"


#: Gaia2-mini takes this share of each capability's scenarios (32 of 160).
MINI_SHARE = 5


SPLIT = "validation"


@dataclass
class Gaia2Source:
    """Where a run's scenarios come from: `hf` (the dataset, from the local HF cache), `bundled`
    (this repository's corpus) or a folder in ARE's layout."""

    kind: str
    folder: Path | None = None
    revision: str = HF_DEFAULT_REVISION
    #: A folder's configs it has no folder for (their columns stay empty), as `files` met them.
    missing: list[str] = field(default_factory=list)
    _cache: dict[str, list[ScenarioFile]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        if self.kind == "hf":
            return f"the Gaia2 dataset ({HF_DATASET}@{self.revision[:12]}, local Hugging Face cache)"
        if self.kind == "bundled":
            return "the bundled corpus (scenarios/; mini: orchestra's selection, docs/gaia2.md)"
        return f"{self.folder} (ARE's layout)"

    @property
    def hf_metadata(self) -> dict[str, str] | None:
        return {"dataset": HF_DATASET, "split": SPLIT, "revision": self.revision} if self.kind == "hf" else None

    def files(self, config: str) -> list[ScenarioFile]:
        if config not in self._cache:
            self._cache[config] = self._files(config)
        return self._cache[config]

    def _files(self, config: str) -> list[ScenarioFile]:
        if self.kind == "hf":
            return list(expand(f"hf:{config}/{SPLIT}@{self.revision}"))
        if self.kind == "bundled":
            if config == MINI:
                return mini_selection({c: self.files(c) for c in STANDARD_CONFIGS})
            return list(expand(f"bundled:{config}"))
        assert self.folder is not None
        folder = self.folder / config
        if config == MINI and not folder.is_dir():
            return mini_selection({c: self.files(c) for c in STANDARD_CONFIGS})
        if not folder.is_dir():  # its column stays empty (`-`), as with --id / --limit: a quick check, not a submission
            if config not in self.missing:
                self.missing.append(config)
            return []
        return list(expand(folder))

    def check(self) -> None:
        """A folder with none of Gaia2's configs is not a Gaia2 folder (`ScenarioError`); one that
        lacks some is fine: `missing` names them, their columns stay empty."""
        if self.kind == "dir" and all(not self.files(c) for c in STANDARD_CONFIGS) and not self.files(MINI):
            assert self.folder is not None
            raise ScenarioError(self.folder, f"no Gaia2 scenarios: a Gaia2 folder holds {', '.join(STANDARD_CONFIGS)} (and optionally {MINI}) in ARE's layout")


def hf_missing(revision: str = HF_DEFAULT_REVISION) -> str | None:
    """None when every config gaia2-run needs is in the local HF cache, else the first that is not."""
    for config in (*STANDARD_CONFIGS, MINI):
        try:
            load_hf_dataset(config, SPLIT, revision, source=f"hf:{config}")
        except ScenarioError:
            return config
    return None


def choose_source(requested: str) -> tuple[Gaia2Source, str]:
    """The source for `--source` (auto | hf[@REV] | bundled | DIR), and the one line that says which."""
    kind, _, revision = requested.partition("@")
    revision = revision or HF_DEFAULT_REVISION
    if kind == "auto":
        missing = hf_missing(revision)
        if missing is None:
            source = Gaia2Source("hf", revision=revision)
            return source, f"scenarios: {source.label}"
        source = Gaia2Source("bundled")
        return source, f"scenarios: {source.label} — the Gaia2 dataset is not in the local Hugging Face cache (config {missing!r})"
    if kind == "hf":
        missing = hf_missing(revision)
        if missing is not None:
            load_hf_dataset(missing, SPLIT, revision, source=f"hf:{missing}")  # raises the error that says what to download
        source = Gaia2Source("hf", revision=revision)
    elif kind == "bundled":
        source = Gaia2Source("bundled")
    else:
        folder = Path(requested)
        if not folder.is_dir():
            raise OrchestraError(f"--source {requested}: not auto, hf[@REVISION], bundled or a folder")
        source = Gaia2Source("dir", folder=folder)
    return source, f"scenarios: {source.label}"


def _universe(file: ScenarioFile) -> str:
    from orchestra.scenario_info import describe

    entry = _bundled_universes().get(describe(file).scenario_id)
    return entry or ""


def _bundled_universes() -> dict[str, str]:
    from orchestra.scenario_files import MANIFEST_NAME, bundled_root

    path = bundled_root() / MANIFEST_NAME
    if not path.is_file():
        return {}
    return {sid: str(entry.get("universe") or "") for sid, entry in json.loads(path.read_text()).get("scenarios", {}).items()}


def _rank(scenario_id: str) -> str:
    return hashlib.sha256(f"gaia2-mini/{scenario_id}".encode()).hexdigest()


def mini_selection(files_by_config: dict[str, Sequence[ScenarioFile]], universe: Callable[[ScenarioFile], str] | None = None) -> list[ScenarioFile]:
    """Gaia2-mini for a source without a `mini` config: of each config, ceil(n / 5) scenarios (the
    dataset's mini is 32 of each capability's 160), taken round-robin over the config's universes
    (bundled: `scenarios/manifest.json`; elsewhere one universe), each universe's scenarios in the
    order of sha256("gaia2-mini/<scenario id>"). Sorted by path; the same files on every machine."""
    from orchestra.scenario_info import describe

    universe = universe or _universe
    chosen: list[ScenarioFile] = []
    for config in sorted(files_by_config):
        files = list(files_by_config[config])
        if not files:
            continue
        k = math.ceil(len(files) / MINI_SHARE)
        groups: dict[str, list[tuple[str, ScenarioFile]]] = defaultdict(list)
        for f in files:
            groups[universe(f)].append((_rank(describe(f).scenario_id), f))
        for g in groups.values():
            g.sort(key=lambda rf: rf[0])
        order = sorted(((i, rank, f) for g in groups.values() for i, (rank, f) in enumerate(g)), key=lambda t: (t[0], t[1]))
        chosen += [f for _, _, f in order[:k]]
    return sorted(chosen, key=lambda f: str(f.path))
