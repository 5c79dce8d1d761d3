"""A2A (the Agent2Agent protocol, `a2a-sdk`): an agent outside orchestra as the agent under test or an app-agent.

`config` (`A2AConfig`, the `a2a:` field of an agent) and `metadata` (the documented message metadata)
are plain pydantic; `client` imports `a2a-sdk` lazily (the `a2a` extra), and `driver` plays a remote
agent on the rollout's clock through a loopback `orchestra serve` for its MCP tools and model proxy.
Importing this package imports neither.
"""
