"""Gaia2's leaderboard protocol — ARE's `are-benchmark gaia2-run` — on orchestra's runner.

Three phases, each scenario run `runs` times (3, as gaia2-run):

| phase | configs | what changes |
|---|---|---|
| `standard` | execution, search, adaptability, time, ambiguity | the main agent alone (ARE: `a2a_app_prop=0`) |
| `agent2agent` | `mini` | every app an app-agent (ARE: `a2a_app_prop=1.0`), the main agent's model unless the team says otherwise |
| `noise` | `mini` | the main agent alone, `SessionConfig(noise=NoiseConfig())` (ARE: `ToolAugmentationConfig()` + `EnvEventsConfig(10/min, seed 0)`) |

Scenarios come from the Gaia2 dataset in the local Hugging Face cache when all six of its configs
are there, else from the bundled corpus, else from a folder in ARE's layout (`DIR/<config>/...`).
The dataset has a `mini` config; a source without one gets `mini_selection` — Gaia2-mini is a
fixed subset stratified by capability, 32 of each capability's 160 scenarios (one fifth), so the
selection takes one fifth (rounded up) of each config's scenarios, spread over universes, ranked by
a hash of the scenario id: deterministic, no seed, no date.

Gaia2's score weighs its seven capabilities the same — five core ones (the standard phase's
configs), Agent2Agent and Noise (the two `mini` phases) — with ARE's report formulas
(`orchestra.runs.summary.are_success_rate` / `macro_success_rate`).
"""

from __future__ import annotations
