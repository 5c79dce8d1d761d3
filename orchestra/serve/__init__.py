"""`orchestra serve`: Gaia2 as a server — sessions (step or outside-agent mode), a model proxy on the
simulated clock, MCP tools per session and OpenEnv's routes (docs/serve.md).

`Server(ServeConfig(...)).app` is the ASGI app; `orchestra.cli.serve` runs it with uvicorn.
"""
