"""Shared helpers for tests that run agents (not a test module)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from orchestra.config import SessionConfig
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.record import RolloutResult
from orchestra.rollout import AgentConfig, Rollout, RolloutSpec, execute
from orchestra.scenario_files import bundled_root, read_scenario_file

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
#: The seven hand-built starter scenarios (the corpus lives in scenarios/corpus/).
STARTER = sorted(p for p in SCENARIOS.glob("*/validation/starter_*.json"))


def scenario(name: str) -> Path:
    matches = [p for p in STARTER if p.stem == name]
    assert matches, f"bundled scenario {name} not found under {SCENARIOS}"
    return matches[0]


def scenario_features(path: Path) -> set[tuple[str, str]]:
    """What a bundled scenario stands for in a matrix, as `scenarios/manifest.json` records it: its
    capability (its folder), its universe and its number of turns (one, or several)."""
    entry = _manifest()[path.stem]
    return {("capability", path.parts[-3]), ("universe", entry["universe"]), ("turns", "multi" if entry["turns"] > 1 else "single")}


def _manifest() -> dict[str, Any]:
    scenarios: dict[str, Any] = json.loads((SCENARIOS / "manifest.json").read_text())["scenarios"]
    return scenarios


def stratified(paths: list[Path]) -> list[Path]:
    """The fewest of `paths` (greedy, deterministic: ties go to the first in sorted order) that between
    them cover every capability, every universe and both single- and multi-turn scenarios: what a
    slow matrix (every scaffold pair, every sandbox) runs on, where the whole corpus is run once by
    the matrix's default case."""
    left = sorted(paths)
    wanted = set().union(*(scenario_features(p) for p in left))
    chosen: list[Path] = []
    while wanted:
        best = max(left, key=lambda p: len(scenario_features(p) & wanted))  # max keeps the first of equals
        chosen.append(best)
        wanted -= scenario_features(best)
        left.remove(best)
    return sorted(chosen)


#: The apps the local-model tests keep (`trimmed_scenario`): the user interface, the system app and one
#: app to look things up in — ARE's prompt lists every tool of every app, and a 0.5B model on 2 CPU
#: cores reads the six-app starters' ~6,000-token prompt in 90 s (64-72 tokens/s at that length), this
#: one's ~2,000 tokens in about 20 s (~100 tokens/s: a shorter context is faster per token).
SMALL_APPS = ("AgentUserInterface", "SystemApp", "Contacts")


def trimmed_scenario(name: str, folder: Path, apps: tuple[str, ...] = SMALL_APPS) -> Path:
    """Starter `name` with only `apps` (by instance name), written as `folder/<name>.json`: a scenario
    in ARE's format (ARE's importer loads it, its judge judges it, with or without Gaia2's noise)
    with a shorter prompt. The task's data may have gone with the dropped apps, so the task may not
    be answerable from the world any more: it is for tests of plumbing, not of skill. Fails if an
    event of the scenario acts on an app that was left out."""
    data = json.loads(scenario(name).read_text())
    used = {(e.get("action") or {}).get("app") for e in data["events"]} - {None}
    assert used <= set(apps), f"{name}: its events use {sorted(used - set(apps))}, which trimming would drop"
    data["apps"] = [a for a in data["apps"] if a["name"] in apps]
    augmentation = data.get("augmentation") or {}
    if augmentation.get("apps"):  # the noise phase's extra app states, and its tool renaming
        augmentation["apps"] = [a for a in augmentation["apps"] if a["name"] in apps]
    for key in ("tool_names_mapping", "tool_descriptions_mapping"):
        if augmentation.get(key):
            augmentation[key] = {tool: v for tool, v in augmentation[key].items() if tool.split("__")[0] in apps}
    assert {a["name"] for a in data["apps"]} == set(apps), f"{name} has no app among {sorted(set(apps) - {a['name'] for a in data['apps']})}"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}.json"
    target.write_text(json.dumps(data, indent=1))
    return target


#: A Gaia2 folder in ARE's layout with one bundled starter per config (`gaia2_folder`).
GAIA2_STARTERS = {
    "execution": "execution/validation/starter_execution_calendar.json",
    "search": "search/validation/starter_search_lookup.json",
    "adaptability": "adaptability/validation/starter_adaptability_reply.json",
    "time": "time/validation/starter_time_deadline.json",
    "ambiguity": "ambiguity/validation/starter_ambiguity_clarify.json",
    "mini": "execution/validation/starter_multiturn_followup.json",
}


def gaia2_folder(root: Path) -> Path:
    """`root` made a Gaia2 folder in ARE's layout (`<config>/validation/*.json`): `GAIA2_STARTERS`."""
    for config, rel in GAIA2_STARTERS.items():
        target = root / config / "validation" / Path(rel).name
        target.parent.mkdir(parents=True)
        shutil.copy(bundled_root() / rel, target)
    return root


def open_rollout(
    scenario: Path | str,
    *,
    model: str = "orchestra/oracle",
    scaffold: str = "tool_calling",
    host: Host | None = None,
    judge_pool: Any = None,
    max_steps: int = 80,
    session_config: SessionConfig | None = None,
) -> Rollout:
    """A started one-agent rollout (`Rollout.open`): use it as a context manager."""
    agent = AgentConfig(scaffold=scaffold, model=ModelConfig(model=model), max_steps=max_steps)
    spec = RolloutSpec(scenario=str(scenario), agent=agent, session=session_config or SessionConfig())
    return Rollout.open(spec, host=host or Host.create(entry_points=False), judge_pool=judge_pool)


def write_script(tmp_path: Path, entries: list[dict[str, Any]], name: str = "script.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(entries))
    return str(path)


def run_agent_on(
    scenario: Path,
    *,
    model: str,
    scaffold: str = "tool_calling",
    host: Host | None = None,
    judge_pool: Any = None,
    max_steps: int = 80,
    session_config: SessionConfig | None = None,
    backoff_seconds: float = 0.0,
    scaffold_options: dict[str, Any] | None = None,
    endpoint: str | None = None,
) -> RolloutResult:
    agent = AgentConfig(
        scaffold=scaffold,
        model=ModelConfig(model=model, endpoint=endpoint, backoff_seconds=backoff_seconds),
        max_steps=max_steps,
        scaffold_options=scaffold_options or {},
    )
    host = host or Host.create()

    file = read_scenario_file(scenario)
    spec = RolloutSpec(scenario=str(file.path), agent=agent, session=session_config or SessionConfig())

    async def go() -> RolloutResult:
        record = await execute(spec, host=host, judge_pool=judge_pool, file=file)
        assert record.result is not None, record.error
        return record.result

    return anyio.run(go)


STEP_PLUGIN = '''
"""Test plugin: once AFTER rollout(s) closed, the next agent step runs the test's action."""
import os
import time
from pathlib import Path

from orchestra.hookspecs import hookimpl

closed = 0


@hookimpl
def rollout_closed(rollout):
    global closed
    closed += 1


@hookimpl
def pre_step(agent):
    if closed >= AFTER:
        ACTION
    return None
'''

#: `plugin_team`'s action for `interrupt_when_blocked`: block in synchronous code for an hour, in a
#: process that sets BLOCKER_MARK (it writes the mark first); in-process runs never block.
BLOCK = """mark = os.environ.get("BLOCKER_MARK")
        if mark:
            Path(mark).write_text("blocked")
            time.sleep(3600)"""


def plugin_team(tmp_path: Path, *, plugin: str, after: int, action: str, name: str = "blocked") -> Path:
    """A one-agent oracle team (`tmp_path/<name>.yaml`) whose plugin `plugin` (written into `tmp_path`,
    which the caller puts on sys.path) runs `action` (Python, in `pre_step`) at the first agent step
    after `after` rollouts closed."""
    (tmp_path / f"{plugin}.py").write_text(STEP_PLUGIN.replace("AFTER", str(after)).replace("ACTION", action))
    team = tmp_path / f"{name}.yaml"
    team.write_text(f"name: {name}\nmain:\n  scaffold: tool_calling\n  model: orchestra/oracle\nplugins: [{plugin}]\n")
    return team


def blocking_team(tmp_path: Path, *, plugin: str, after: int) -> Path:
    """`plugin_team` with `BLOCK`: the first agent step after `after` rollouts closed blocks, in a
    process that sets BLOCKER_MARK (`interrupt_when_blocked`)."""
    return plugin_team(tmp_path, plugin=plugin, after=after, action=BLOCK)


def interrupt_when_blocked(
    argv: list[str],
    tmp_path: Path,
    *,
    ready: Callable[[], bool] = lambda: True,
    wait_s: float = 300,
    on_blocked: Callable[[subprocess.Popen[str]], None] = lambda proc: None,
) -> subprocess.CompletedProcess[str]:
    """`orchestra ARGV` as the program, with `blocking_team`'s plugin importable from `tmp_path`:
    once a rollout is blocked (and `ready()`), `on_blocked(proc)`, then SIGINT; the finished process.
    Ctrl-C that waits for the blocked rollout never ends: the limit only keeps a broken run from
    hanging the suite (measured: the process is gone about 0.2-0.5 s after the signal)."""
    mark = tmp_path / "blocked.mark"
    env = {**os.environ, "BLOCKER_MARK": str(mark), "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "orchestra.cli", *argv], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + wait_s
        while not (mark.exists() and ready()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the blocked rollout never started"
            time.sleep(0.05)
        on_blocked(proc)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)
