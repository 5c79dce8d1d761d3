"""Scenario sources: where Gaia2-format scenarios come from, resolved in a deterministic order.

One argument names any source:

| source | meaning |
|---|---|
| `path/to/file.json` | one scenario file |
| `path/to/dir` | every `*.json` below it (ARE's layout `DIR/<config>/<split>/*.json` included) |
| `bundled` / `bundled:CONFIG` | the scenarios shipped in this repository's `scenarios/` (optionally one config, e.g. `bundled:time`) |
| `hf:CONFIG[/SPLIT][@REVISION]` | the public Gaia2 dataset on the Hugging Face hub, from the local HF cache |

ARE's own local loader collects files in completion order and silently drops files that fail to
import; here every source expands in sorted order and every problem is an error naming the source.
Hub access is offline unless `ORCHESTRA_HF_ONLINE=1`: with the dataset in the HF cache everything
works; without it, one clear error says what to download and how — never a silent network wait.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from orchestra.errors import ScenarioError

HF_DATASET = os.environ.get("ORCHESTRA_HF_DATASET", "meta-agents-research-environments/gaia2")
#: The revision public harnesses pin (ARE-NOTES §1.1).
HF_DEFAULT_REVISION = "78ea3bdbdeec2bdcd6afa5420915d8a22f23ed99"
HF_CONFIGS = ("execution", "search", "adaptability", "time", "ambiguity", "mini", "demo")
MANIFEST_NAME = "manifest.json"


class ScenarioFile:
    """One scenario's JSON text (read lazily, once) and a path naming where it came from."""

    def __init__(self, path: str | Path, text: str | None = None, loader: Callable[[], str] | None = None) -> None:
        self.path = Path(path)
        self._text = text
        self._loader = loader

    @property
    def text(self) -> str:
        if self._text is None:
            if self._loader is None:
                self._text = _read_text(self.path)
            else:
                self._text = self._loader()
        return self._text

    @property
    def stem(self) -> str:
        return self.path.stem

    def __repr__(self) -> str:
        return f"ScenarioFile({str(self.path)!r})"


def _read_text(p: Path) -> str:
    if not p.is_file():
        raise ScenarioError(p, "no such scenario file")
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(p, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_scenario_file(path: str | Path) -> ScenarioFile:
    file = ScenarioFile(path)
    file.text  # noqa: B018 - read now, so a missing file fails here
    return file


#: Where the bundled corpus is when orchestra is installed from a wheel (it ships with the checkout only).
BUNDLED_ENV = "ORCHESTRA_BUNDLED_SCENARIOS"


def bundled_root() -> Path:
    """The bundled corpus: `$ORCHESTRA_BUNDLED_SCENARIOS`, else the source checkout's `scenarios/`.

    The corpus (34 MB) is not in the wheel: an installed orchestra finds it through the variable
    (a checkout's `scenarios/` folder), and says so when neither is there."""
    env = os.environ.get(BUNDLED_ENV)
    root = Path(env).expanduser() if env else Path(__file__).resolve().parents[1] / "scenarios"
    if not root.is_dir():
        where = f"{BUNDLED_ENV}={env} is not a folder" if env else f"this installed orchestra has none ({root} does not exist)"
        raise ScenarioError(
            "bundled",
            f"the bundled scenarios ship with orchestra's source checkout (scenarios/), not with the package: {where}; "
            f"set {BUNDLED_ENV} to a checkout's scenarios/ folder, or give scenario files or folders",
        )
    return root


def _json_files(folder: Path) -> list[Path]:
    return sorted(f for f in folder.rglob("*.json") if f.is_file() and f.name != MANIFEST_NAME)


def expand(source: str | Path) -> Iterator[ScenarioFile]:
    """The scenario files of one source, in deterministic order."""
    text = str(source)
    if text == "bundled" or text.startswith("bundled:"):
        root = bundled_root()
        config = text.partition(":")[2]
        files = _json_files(root)
        if config:
            files = [f for f in files if len(f.relative_to(root).parts) >= 3 and f.parent.parent.name == config]
            if not files:
                raise ScenarioError(text, f"no bundled scenarios for config {config!r} (folders <config>/<split>/ under {root})")
        yield from (ScenarioFile(f) for f in files)
        return
    if text.startswith("hf:"):
        yield from _hf_files(text)
        return
    p = Path(source)
    if p.is_dir():
        files = _json_files(p)
        if not files:
            raise ScenarioError(p, "folder holds no *.json scenario files")
        yield from (ScenarioFile(f) for f in files)
    elif p.is_file():
        yield ScenarioFile(p)
    else:
        raise ScenarioError(p, "no such file or folder (sources: a file, a folder, bundled[:CONFIG], hf:CONFIG[/SPLIT][@REV])")


def resolve(
    sources: Iterable[str | Path],
    *,
    capabilities: Iterable[str] = (),
    scenario_ids: Iterable[str] = (),
    limit: int | None = None,
) -> Iterator[ScenarioFile]:
    """Every scenario of every source, de-duplicated, filtered, in order; lazily."""
    caps = {c.lower() for c in capabilities}
    ids = set(scenario_ids)
    seen: set[str] = set()
    count = 0
    for source in sources:
        for file in expand(source):
            key = str(file.path)
            if key in seen:
                continue
            seen.add(key)
            if ids and file.stem not in ids and _scenario_id(file) not in ids:
                continue
            if caps and not caps & {t.lower() for t in scenario_tags(file)}:
                continue
            yield file
            count += 1
            if limit is not None and count >= limit:
                return


def _definition(file: ScenarioFile) -> dict[str, Any]:
    try:
        raw = json.loads(file.text)
    except json.JSONDecodeError:
        return {}
    return ((raw.get("metadata") or {}).get("definition") or {}) if isinstance(raw, dict) else {}


def _scenario_id(file: ScenarioFile) -> str:
    return str(_definition(file).get("scenario_id") or file.stem)


def scenario_tags(file: ScenarioFile) -> list[str]:
    return list(_definition(file).get("tags") or [])


# ------------------------------------------------------------------ Hugging Face


def parse_hf_source(source: str) -> tuple[str, str, str]:
    """`hf:CONFIG[/SPLIT][@REVISION]` -> (config, split, revision)."""
    spec = source.removeprefix("hf:")
    spec, _, revision = spec.partition("@")
    config, _, split = spec.partition("/")
    if config not in HF_CONFIGS:
        raise ScenarioError(source, f"unknown Gaia2 config {config!r}; choose from {', '.join(HF_CONFIGS)}")
    return config, split or "validation", revision or HF_DEFAULT_REVISION


def _hf_files(source: str) -> Iterator[ScenarioFile]:
    config, split, revision = parse_hf_source(source)
    dataset = load_hf_dataset(config, split, revision, source=source)
    yield from files_from_rows(dataset, label=f"hf/{config}/{split}")


def files_from_rows(rows: Iterable[dict[str, Any]], *, label: str) -> Iterator[ScenarioFile]:
    """Gaia2 rows (`scenario_id`, `data`: the whole scenario JSON) as scenario files, sorted by id."""
    items = sorted(((str(r["scenario_id"]), r["data"]) for r in rows), key=lambda kv: kv[0])
    for scenario_id, data in items:
        yield ScenarioFile(Path(label) / f"{scenario_id}.json", text=data)


def load_hf_dataset(config: str, split: str, revision: str, *, source: str) -> Any:
    """Load one Gaia2 config from the local HF cache (or the hub, only if ORCHESTRA_HF_ONLINE=1)."""
    online = os.environ.get("ORCHESTRA_HF_ONLINE") == "1"
    if not online:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["HF_DATASETS_OFFLINE"] = "1"
    try:
        import datasets
        import huggingface_hub.constants as hub_constants
    except ImportError as exc:  # pragma: no cover - datasets is an ARE dependency
        raise ScenarioError(source, f"the `datasets` package is needed for hf: sources ({exc})") from None
    if not online:
        datasets.config.HF_HUB_OFFLINE = True
        datasets.config.HF_DATASETS_OFFLINE = True
        hub_constants.HF_HUB_OFFLINE = True
    try:
        return datasets.load_dataset(HF_DATASET, name=config, split=split, revision=revision)
    except Exception as exc:
        cache = os.environ.get("HF_HOME", str(Path.home() / ".cache" / "huggingface"))
        raise ScenarioError(
            source,
            f"Gaia2 config {config!r} split {split!r} (revision {revision[:12]}) is not in the local Hugging Face "
            f"cache ({cache}). On a machine with hub access run:\n"
            f"  python -c \"import datasets; datasets.load_dataset('{HF_DATASET}', name='{config}', split='{split}', revision='{revision}')\"\n"
            f"then copy that cache here (or point HF_HOME at it). Set ORCHESTRA_HF_ONLINE=1 to let orchestra download "
            f"itself. ({type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''})",
        ) from None
