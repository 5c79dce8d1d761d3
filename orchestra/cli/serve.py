"""`orchestra serve`: Gaia2 as a server any trainer and any outside agent can reach (docs/serve.md).

Each session is one episode — a scenario on its own simulated clock and judge — played either by a
client sending completions (step mode: `POST /sessions/{id}/step`, OpenEnv's `/step` and `/ws`)
or by an agent outside orchestra (agent mode): its tools over MCP (`/sessions/{id}/mcp`), its model
through the session's proxy (`/sessions/{id}/v1`), which charges the simulated clock from the
call's token usage and shows due notifications as ARE's agent sees them. An agent-mode session
whose team has app-agents also serves each of them as an A2A agent (`/sessions/{id}/a2a/{App}`,
with its agent card; the `a2a` extra), so an outside orchestrator can delegate to them.

Binds 127.0.0.1 unless told otherwise; bound elsewhere it wants --api-key. No tool reaches the
host: the tools are ARE's simulated apps.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from orchestra.cli._trace import add_trace_options
from orchestra.errors import OrchestraError

API_KEY_ENV = "ORCHESTRA_SERVE_API_KEY"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="Gaia2 as a server: OpenEnv routes, MCP tools and a model proxy per session, on the simulated clock",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one, printed on start)")
    p.add_argument("--max-sessions", type=int, default=64, help="open sessions at most; one more is refused with HTTP 429 (default 64)")
    p.add_argument("--idle-timeout", type=float, default=600.0, help="seconds a session may sit untouched before it is closed unjudged (default 600)")
    p.add_argument("--out", type=Path, help="keep every finished episode's record and training trace here (run-folder format)")
    p.add_argument(
        "--api-key",
        help=f"require `Authorization: Bearer KEY` on every route that reaches a session or a scenario; /health, /metadata, /schema, /openapi.json, /mcp and /list_environments stay open (default: ${API_KEY_ENV}; needed off loopback)",
    )
    p.add_argument(
        "--allow-scenario-files",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="whether a session may name a scenario file on this machine (default: yes on loopback, no when bound elsewhere: then bundled/ and hf: sources only)",
    )
    p.add_argument("--log-level", default="warning", help="uvicorn's log level (default warning)")
    add_trace_options(p)  # each session's spans (its model calls through the proxy, its MCP tool calls) as for `orchestra run`
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import socket

    import uvicorn
    from pydantic import ValidationError

    from orchestra.serve.app import ServeConfig, Server

    api_key = args.api_key or os.environ.get(API_KEY_ENV) or None
    if args.host not in ("127.0.0.1", "localhost", "::1") and not api_key:
        raise OrchestraError(f"--host {args.host} exposes the server beyond this machine: give --api-key (or ${API_KEY_ENV})")
    loopback = args.host in ("127.0.0.1", "localhost", "::1")
    allow_files = loopback if args.allow_scenario_files is None else args.allow_scenario_files
    try:
        config = ServeConfig(
            host=args.host,
            port=args.port,
            max_sessions=args.max_sessions,
            idle_timeout=args.idle_timeout,
            out=str(args.out) if args.out else None,
            api_key=api_key,
            allow_scenario_files=allow_files,
        )
    except ValidationError as exc:
        flags = {"max_sessions": "--max-sessions", "idle_timeout": "--idle-timeout", "port": "--port"}
        problems = "; ".join(f"{flags.get(str(e['loc'][0]), e['loc'][0])} {e.get('input')!r}: {e['msg']}" for e in exc.errors())
        raise OrchestraError(f"orchestra serve: {problems}") from None
    server = Server(config)
    sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        raise OrchestraError(f"orchestra serve: cannot bind {args.host}:{args.port}: {exc.strerror}") from None
    sock.listen(2048)  # before the line below: "listening" means a client may connect now
    port = sock.getsockname()[1]
    server.base_url, server._base_url_known = f"http://{args.host}:{port}", True
    uv = uvicorn.Server(
        uvicorn.Config(
            server.app,
            log_level=args.log_level,
            ws="websockets-sansio",
            lifespan="on",
            timeout_graceful_shutdown=30,
            # a client between two steps of a busy server must not find its kept-alive connection closed under it
            timeout_keep_alive=120,
            backlog=2048,
        )
    )
    print(f"orchestra serve: listening on http://{args.host}:{port}", file=sys.stderr, flush=True)
    uv.run(sockets=[sock])
    return 0
