"""Run folders for the report's tests (not a test module): real rollouts, every verdict.

`mixed_run(folder)` runs one batch of four configurations into one run folder, as `orchestra run
--out` keeps it (`results.jsonl` streamed, `manifest.json`, `rollouts/NAME.json`):

* the oracle policy on a starter scenario, as recorded and with the `wrong_arg` perturbation: PASS and FAIL;
* the oracle team (an app-agent per app) on the adaptability scenario: PASS, with delegations;
* a scripted `react` agent that first calls a tool it does not have, then answers the user: PASS
  on the ambiguity scenario (an answer is all it asks), FAIL on the multi-turn one;
* a scripted agent whose model refuses the key (AuthenticationError): ERROR.

Two runs of each (`sample_index` 0 and 1). Each scenario serves one configuration only: a run
folder keys its rollouts by scenario, perturbation and run index.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from orchestra.models import ModelConfig
from orchestra.record import RolloutRecord
from orchestra.rollout import AgentConfig
from orchestra.runs.run_dir import Manifest, RunDir, rollout_name
from orchestra.runs.runner import execute_all, specs_for
from orchestra.runs.summary import summarize
from orchestra.scenario_files import ScenarioFile
from orchestra.teams.loading import load_team
from support.helpers import scenario

REPO = Path(__file__).resolve().parents[2]

#: A react agent that calls an unknown tool, then answers (with a thought each time).
WRONG = [
    {"text": 'Thought: I will look the answer up first.\nAction:\n{"action": "Nonexistent__lookup", "action_input": {"query": "deadline"}}<end_action>'},
    {
        "text": 'Thought: I cannot find it; I will just answer.\nAction:\n{"action": "AgentUserInterface__send_message_to_user", '
        '"action_input": {"content": "I could not do it, sorry."}}<end_action>'
    },
]
REFUSED = [{"raise": "AuthenticationError"}]


def keep(folder: Path, run_dir: RunDir, record: RolloutRecord) -> None:
    """As `orchestra run --out` keeps a finished rollout: its whole record, then its line."""
    rollouts = folder / "rollouts"
    rollouts.mkdir(parents=True, exist_ok=True)
    (rollouts / f"{rollout_name(record)}.json").write_text(json.dumps(record.model_dump(mode="json"), indent=1, default=str) + "\n")
    run_dir.append(record)


def mixed_run(folder: Path, runs: int = 2) -> list[RolloutRecord]:
    scripts = folder.parent / f"{folder.name}-scripts"
    scripts.mkdir(parents=True, exist_ok=True)
    (scripts / "wrong.json").write_text(json.dumps(WRONG))
    (scripts / "refused.json").write_text(json.dumps(REFUSED))

    def files(*names: str) -> list[ScenarioFile]:
        return [ScenarioFile(scenario(n)) for n in names]

    def agent(script: Path) -> AgentConfig:
        return AgentConfig(scaffold="react", model=ModelConfig(model=f"orchestra/scripted:{script}"))

    batch = [
        *specs_for(files("starter_execution_calendar"), perturbations=[None, "wrong_arg"], runs=runs),
        *specs_for(files("starter_adaptability_reply"), team=load_team(REPO / "orchestra" / "teams" / "shipped" / "oracle.yaml"), runs=runs),
        *specs_for(files("starter_ambiguity_clarify", "starter_multiturn_followup"), agent=agent(scripts / "wrong.json"), runs=runs),
        *specs_for(files("starter_search_lookup"), agent=agent(scripts / "refused.json"), runs=runs),
    ]
    run_dir = RunDir(folder).open(batch, runs=runs)
    records: list[RolloutRecord] = []

    async def main() -> None:
        async for record in execute_all(batch):
            keep(folder, run_dir, record)
            records.append(record)

    anyio.run(main)
    manifest = Manifest.model_validate_json(run_dir.manifest_path.read_text())
    (folder / "summary.json").write_text(summarize(records, manifest).model_dump_json(indent=1) + "\n")
    return records
