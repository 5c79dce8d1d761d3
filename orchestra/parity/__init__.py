"""The parity harness: ARE's own default agent and an orchestra scaffold, same scripted policy, compared.

A checking tool above the rollout path (it drives `orchestra.rollout.execute`) and above the door to
ARE (`orchestra.are`, whose `default_agent` runs ARE's agent on a simulated clock and whose
`native_verdict` judges a trace with ARE's offline path). One concept per module, none imported by
importing this package:

* `policy`: scripted policies (a list of replies, a Python file) served to both agents as one
  litellm provider, `orchestra-parity`, that records every request it receives;
* `trace`: `AgentTrace`, the comparable record of one agent run (requests, agent tool calls, verdict);
* `are_agent`: ARE's side of a run (`orchestra.are.default_agent` with the policy as its model);
* `orchestra_agent`: orchestra's side (a scaffold through `orchestra.rollout.execute`, on the parity clock);
* `compare`: the comparison of two traces and its report (`ParityReport`);
* `harness`: `run_parity` (both sides on one scenario, then `compare`) and the oracle-derived policy;
* `native_verdict`: ARE's own offline verdict on an orchestra trajectory (`OracleConfig.native_parity`).
"""
