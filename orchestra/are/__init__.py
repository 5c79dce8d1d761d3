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
* `ids`: id determinism (app seeds from sha256, `uuid4` record ids inside a rollout's calls into ARE,
  lists ARE builds from a `set` sorted);
* `tools`: ARE's app tools as `ToolSpec`s; `agent_format`: ARE's default agent's prompt, parser and texts
  (and its app-agent prompt); `agent2agent`: ARE's `AppAgent` expert tool, task text and logged event;
* `event_log`: ARE's event log in a canonical, hashable form; `reward`: rewards from ARE's scripted judge;
* `native_verdict`: ARE's exporter and offline judging path on a recorded trace; `default_agent`:
  ARE's own default agent on a simulated clock, with any litellm model (both used by the parity
  harness, `orchestra.parity`, which lives above this package).

This package is the door, below everything that uses it: no module here imports an orchestra module
that itself imports `orchestra.are` (lazily or for type checking included).

Nothing here patches ARE: what changes are attributes of objects orchestra owns (the environment's
clock, each app's RNG seed), plus `uuid.uuid4` while a rollout's synchronous call into ARE runs, and
the order of the lists ARE builds from a `set` in the values its tools return (`ids.sort_sets`).
"""
