"""The only door between orchestra and ARE (meta-agents-research-environments 1.2.0).

Every `are.*` import in orchestra is inside this package, so the surface orchestra depends on is
visible in one place and an ARE upgrade is checked here first. One concept per module, each
importing ARE lazily (importing `orchestra` never imports ARE):

* `imports`: importing ARE without its import-time side effects (litellm's cost-map fetch, dotenv);
* `loading`: ARE's importer fronted by validation (one `ScenarioError` naming file and problem),
  and `prepare_for_rollout` (ARE's `preprocess_scenario` with a pooled judge, no thread);
* `environment`: the simulated clock (`SimClock`) and `DrivenEnvironment`, ARE's `Environment`
  stepped event by event instead of by its wall-clock thread;
* `judge_pool`: ARE's scripted judge, built once and reused; `judges`: the scripted, llm and strict modes;
* `ids`: id determinism (app seeds from sha256, `uuid4` record ids inside a rollout's calls into ARE);
* `tools`: ARE's app tools as `ToolSpec`s; `agent_format`: ARE's default agent's prompt, parser and texts
  (and its app-agent prompt); `agent2agent`: ARE's `AppAgent` expert tool, task text and logged event;
* `default_agent`, `orchestra_agent`, `agent_parity`, `policy`: ARE's own agent, for parity checks.

Nothing here patches ARE: what changes are attributes of objects orchestra owns (the environment's
clock, each app's RNG seed), plus `uuid.uuid4` while a rollout's synchronous call into ARE runs.
"""
