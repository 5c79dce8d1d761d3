"""Play one scenario through `orchestra serve` with an agent built on the OpenAI Agents SDK.

    python play.py URL SCENARIO... [--model orchestra/oracle | orchestra/scripted:FILE] [--api-key KEY]
    python play.py URL --play SCENARIO MODEL [--play SCENARIO MODEL ...]

One session per SCENARIO (in order, one after the other, in one process: importing the SDK costs
seconds of CPU); `--play` gives a scenario its own upstream model.

Runs in its own venv (`requirements-agent-lock.txt`: openai-agents and what it needs) and never
imports orchestra: it only speaks HTTP to the server, as any outside agent would.

1. `POST URL/sessions` with `mode: "agent"`: an agent-mode session whose model proxy calls MODEL
   upstream (the oracle, a scripted policy, any model orchestra knows).
2. An Agents SDK `Agent` with a short, generic system prompt, the session's MCP endpoint as its
   only MCP server (`MCPServerStreamableHttp`: the scenario's tools) and the session's
   OpenAI-compatible proxy as its model (`OpenAIChatCompletionsModel` over `AsyncOpenAI`).
3. `Runner.run(agent, task)`: the SDK calls the model, runs the tools it asks for over MCP, and
   stops when the model answers without tool calls. The proxy delivers what happens meanwhile
   (notifications, the user's next message) as a user message before a model call, and answers
   "The scenario has ended." once the scenario is over. A run that ended while the session goes
   on (the model stopped talking between turns) is continued with its own history: the proxy's
   next call idles, uncharged, until the user or the environment speaks, and shows what came.
4. `POST URL/sessions/{id}/finish`: ARE's verdict. Prints one JSON line per session: scenario,
   session id, success, reward, event-log hash, simulated seconds, SDK runs and model turns.

Exit status 0 whatever the verdicts (the caller reads the JSON); 2 when a session broke (its line
has "error"; the other sessions still run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import traceback
import urllib.error
import urllib.request
from typing import Any

from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI

#: Generic: nothing in it knows orchestra, ARE or the scenario.
INSTRUCTIONS = (
    "You are a personal assistant with access to the user's apps through tools. "
    "Carry out the user's request with the tools; reply to the user with "
    "AgentUserInterface__send_message_to_user. When the request depends on time or on something "
    "that has not happened yet, wait with SystemApp__wait_for_notification."
)
#: SDK runs at most per session (a run ends when the model answers without tool calls).
MAX_RUNS = 10


class ServerError(Exception):
    """The session API answered with an HTTP error (the server's one-line reason included)."""


def api(method: str, url: str, body: dict[str, Any] | None = None, *, key: str | None = None, timeout: float = 300) -> dict[str, Any]:
    """One JSON call to the server's session API (stdlib only: the agent needs no other client)."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")
        raise ServerError(f"{method} {url} -> HTTP {exc.code}: {detail}") from None


async def play(url: str, scenario: str, model: str, *, key: str | None, max_turns: int, seed: int | None, one_base_url: bool = False) -> dict[str, Any]:
    url = url.rstrip("/")
    body: dict[str, Any] = {"scenario": scenario, "mode": "agent", "model": model}
    if seed is not None:
        body["seed"] = seed
    t0 = time.monotonic()
    session = api("POST", f"{url}/sessions", body, key=key)
    t1 = time.monotonic()
    sid = session["session_id"]
    auth = {"Authorization": f"Bearer {key}"} if key else {}
    if one_base_url:  # the server-wide proxy, the session named in a header (one base URL for many sessions)
        client = AsyncOpenAI(base_url=f"{url}/v1", api_key=key or "x", max_retries=0, timeout=300, default_headers={"X-Orchestra-Session": sid})
    else:
        client = AsyncOpenAI(base_url=session["model_base_url"], api_key=key or "x", max_retries=0, timeout=300)
    mcp = MCPServerStreamableHttp(
        params={"url": session["mcp_url"], "headers": auth, "timeout": 60, "sse_read_timeout": 300},
        name="orchestra",
        cache_tools_list=True,  # a scenario's tools never change during a session
        client_session_timeout_seconds=300,  # a wait idles the simulated clock; fast, but be generous
    )
    runs = turns = 0
    final_output = None
    try:
        async with mcp:
            agent = Agent(
                name="assistant",
                instructions=INSTRUCTIONS,
                mcp_servers=[mcp],
                model=OpenAIChatCompletionsModel(model="orchestra", openai_client=client),
                model_settings=ModelSettings(),
            )
            conversation: str | list[Any] = session["task"]
            while runs < MAX_RUNS:
                result = await Runner.run(agent, conversation, max_turns=max_turns)
                runs += 1
                turns += len(result.raw_responses)
                final_output = result.final_output
                if api("GET", f"{url}/sessions/{sid}", key=key).get("done"):
                    break
                # The model stopped but the scenario goes on (the next turn): carry on with the same
                # history; the proxy shows the user's next message before the next model call.
                conversation = result.to_input_list()
    finally:
        t2 = time.monotonic()
        verdict = api("POST", f"{url}/sessions/{sid}/finish", {}, key=key)
    result_record = (verdict.get("record") or {}).get("result") or {}
    return {
        "scenario": scenario,
        "session_id": sid,
        "model": model,
        "success": verdict.get("success"),
        "reward": verdict.get("reward"),
        "event_log_sha256": result_record.get("event_log_sha256"),
        "sim_seconds": result_record.get("sim_seconds"),
        "stop_reason": result_record.get("stop_reason"),
        "error": (verdict.get("record") or {}).get("error"),
        "sdk_runs": runs,
        "sdk_turns": turns,
        "final_output": final_output,
        "wall_s": {"start": round(t1 - t0, 2), "play": round(t2 - t1, 2), "finish": round(time.monotonic() - t2, 2)},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("url", help="the server's base URL, e.g. http://127.0.0.1:8765")
    parser.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="bundled:CONFIG/ID, bundled/ID or a scenario file on the server's machine")
    parser.add_argument("--model", default="orchestra/oracle", help="the upstream model the session's proxy calls (default: %(default)s)")
    parser.add_argument("--play", nargs=2, action="append", default=[], metavar=("SCENARIO", "MODEL"), help="a scenario with its own model; repeatable")
    parser.add_argument("--api-key", default=os.environ.get("ORCHESTRA_SERVE_API_KEY"))
    parser.add_argument("--max-turns", type=int, default=80, help="the SDK's model calls per run (ARE's agent: 80 iterations)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument(
        "--one-base-url", action="store_true", help="call the model at URL/v1 with an X-Orchestra-Session header, not the session's own base URL"
    )
    args = parser.parse_args(argv)
    plays = [(s, args.model) for s in args.scenarios] + [tuple(p) for p in args.play]
    if not plays:
        parser.error("name at least one SCENARIO or --play SCENARIO MODEL")
    set_tracing_disabled(True)  # the SDK would export traces to OpenAI's servers; orchestra traces the session itself
    status = 0
    for scenario, model in plays:
        try:
            out = asyncio.run(play(args.url, scenario, model, key=args.api_key, max_turns=args.max_turns, seed=args.seed, one_base_url=args.one_base_url))
        except Exception as exc:  # noqa: BLE001 - one line for the caller, the traceback on stderr
            traceback.print_exc()
            out, status = {"scenario": scenario, "model": model, "error": f"{type(exc).__name__}: {exc}"}, 2
        print(json.dumps(out), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
