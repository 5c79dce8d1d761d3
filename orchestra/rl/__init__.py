"""Gaia2 as an RL environment: the step API over a rollout (`env`), which scenarios (`selection`)
and batched rollouts against an OpenAI-compatible server (`batches`)."""
