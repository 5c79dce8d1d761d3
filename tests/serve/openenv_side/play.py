"""Play one `orchestra serve` episode with OpenEnv's published client (runs in .venv-openenv; never imports orchestra).

    python play.py URL [--scenario bundled/ID | --index I [--split bundled]] [--policy proxy|wrong|file:PATH]
                       [--model orchestra/oracle] [--seed N] [--max-steps 60] [--http] [--after-done-step] [--api-key KEY]
    python play.py URL --plan episodes.json      # several episodes in one process (the client's import costs ~4 s)

Transport: `openenv.GenericEnvClient(base_url=URL).sync()` — OpenEnv's own client, which speaks only the WebSocket
`/ws` (`{"type": "reset"|"step"|"state"|"close", "data": ...}`). One connection is one episode.

Policies (where each step's completion comes from):
  proxy       the session's model proxy, `POST URL/sessions/{session_id}/v1/chat/completions` with the observation's
              request (messages, tools, ...): the upstream named by `--model` (orchestra/oracle plays ARE's oracle).
              The whole chat.completion is sent back as the step's `completion`.
  wrong       always tells the user "I could not do it." (a tool call of AgentUserInterface__send_message_to_user):
              a policy that must fail.
  file:PATH   a JSON list of completions (assistant messages or chat.completions), sent in order.

`--http` plays the same episode over OpenEnv's HTTP routes instead (`POST /reset`, `POST /step` with
`session_id`, `GET /state?session_id=`), which orchestra serve keeps stateful.

`--after-done-step` sends one more step after the end and records what came back (orchestra's contract: an error
— a `{"type": "error"}` frame on the WebSocket, which OpenEnv's client raises as RuntimeError; 409 over HTTP).

Prints one JSON object on stdout (a list of them with --plan): scenario, session_id, steps, reward, done, success, the final metadata (the
episode's info), the state, the per-step rewards and done flags, and the task API's view of the scenario.
Exit status 0 when the episode reached `done` within --max-steps, 1 otherwise (the JSON still prints).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import requests

WRONG = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_wrong_0",
            "type": "function",
            "function": {"name": "AgentUserInterface__send_message_to_user", "arguments": json.dumps({"content": "I could not do it."})},
        }
    ],
}

REQUEST_KEYS = ("messages", "tools", "tool_choice", "parallel_tool_calls", "stop", "response_format")


class Policy:
    def __init__(self, spec: str, base_url: str, headers: dict[str, str] | None = None) -> None:
        self.spec, self.base_url, self.n, self.headers = spec, base_url.rstrip("/"), 0, headers or {}
        self.queue: list[Any] | None = None
        if spec.startswith("file:"):
            with open(spec[5:], encoding="utf-8") as f:
                self.queue = list(json.load(f))
        elif spec not in ("proxy", "wrong"):
            raise SystemExit(f"play.py: unknown policy {spec!r} (proxy, wrong, file:PATH)")

    def __call__(self, observation: dict[str, Any]) -> Any:
        self.n += 1
        if self.spec == "wrong":
            return json.loads(json.dumps(WRONG))
        if self.queue is not None:
            if not self.queue:
                raise SystemExit(f"play.py: {self.spec}: no completion left for step {self.n}")
            return self.queue.pop(0)
        session_id = observation.get("session_id")
        if not session_id:
            raise SystemExit(f"play.py: the observation names no session_id (keys: {sorted(observation)})")
        body = {k: observation[k] for k in REQUEST_KEYS if observation.get(k) is not None}
        body["model"] = "served"
        url = f"{self.base_url}/sessions/{session_id}/v1/chat/completions"
        response = requests.post(url, json=body, headers=self.headers, timeout=120)
        if response.status_code != 200:
            raise SystemExit(f"play.py: POST {url} -> {response.status_code}: {response.text[:500]}")
        return response.json()


def _headers(ep: dict[str, Any]) -> dict[str, str] | None:
    return {"Authorization": f"Bearer {ep['api_key']}"} if ep.get("api_key") else None


def reset_kwargs(ep: dict[str, Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    if ep.get("scenario"):
        kwargs["scenario"] = ep["scenario"]
    else:
        kwargs["split"], kwargs["index"] = ep.get("split", "bundled"), ep["index"]
    if ep.get("model"):
        kwargs["model"] = ep["model"]
    if ep.get("seed") is not None:
        kwargs["seed"] = ep["seed"]
    return kwargs


def task_view(base: str, ep: dict[str, Any]) -> dict[str, Any]:
    """The task API's answer for the episode's task (when played by split + index)."""
    if ep.get("scenario"):
        return {}
    r = requests.post(f"{base}/orchestra/task", json={"split": ep.get("split", "bundled"), "index": ep["index"]}, headers=_headers(ep), timeout=30)
    return {"status": r.status_code, "body": r.json() if r.headers.get("content-type", "").startswith("application/json") else r.text}


def play_ws(base: str, ep: dict[str, Any], policy: Policy) -> dict[str, Any]:
    from openenv import GenericEnvClient

    steps: list[dict[str, Any]] = []
    after_done: str | None = None
    with GenericEnvClient(base_url=base, message_timeout_s=ep.get("message_timeout", 60.0), headers=_headers(ep)).sync() as env:
        result = env.reset(**reset_kwargs(ep))
        first = result.observation
        session_id = first.get("session_id")
        while not result.done and len(steps) < ep.get("max_steps", 60):
            completion = policy(result.observation)
            result = env.step({"completion": completion})
            steps.append({"reward": result.reward, "done": result.done})
        state = env.state()
        if ep.get("after_done_step") and result.done:
            try:
                env.step({"completion": WRONG})
                after_done = "no error"
            except RuntimeError as exc:  # OpenEnv's client: a {"type": "error"} frame
                after_done = str(exc)
            # the same socket must still answer
            state_after = env.state()
            after_done += f" | state after: done={state_after.get('done')}"
    return {"session_id": session_id, "result": result, "steps": steps, "state": state, "first": first, "after_done": after_done}


class _Result:
    def __init__(self, body: dict[str, Any]) -> None:
        self.observation = body.get("observation") or {}
        self.reward, self.done, self.metadata = body.get("reward"), bool(body.get("done")), body.get("metadata")


def play_http(base: str, ep: dict[str, Any], policy: Policy) -> dict[str, Any]:
    timeout = ep.get("message_timeout", 60.0)

    def post(path: str, body: dict[str, Any]) -> requests.Response:
        return requests.post(base + path, json=body, headers=_headers(ep), timeout=timeout)

    def ok(r: requests.Response, path: str) -> dict[str, Any]:
        if r.status_code != 200:
            raise SystemExit(f"play.py: POST {path} -> {r.status_code}: {r.text[:500]}")
        return r.json()

    result = _Result(ok(post("/reset", reset_kwargs(ep)), "/reset"))
    first = result.observation
    session_id = (result.metadata or {}).get("session_id") or first.get("session_id")
    steps: list[dict[str, Any]] = []
    while not result.done and len(steps) < ep.get("max_steps", 60):
        result = _Result(ok(post("/step", {"action": {"completion": policy(result.observation)}, "session_id": session_id}), "/step"))
        steps.append({"reward": result.reward, "done": result.done})
    r = requests.get(f"{base}/state", params={"session_id": session_id}, headers=_headers(ep), timeout=30)
    state = r.json() if r.status_code == 200 else {"status": r.status_code, "body": r.text[:500]}
    after_done = None
    if ep.get("after_done_step") and result.done:
        r = post("/step", {"action": {"completion": WRONG}, "session_id": session_id})
        after_done = f"{r.status_code} {r.text[:300]}"
    return {"session_id": session_id, "result": result, "steps": steps, "state": state, "first": first, "after_done": after_done}


def play(base: str, ep: dict[str, Any]) -> dict[str, Any]:
    """One episode: `ep` has scenario | (split, index), and optionally policy, model, seed, http, max_steps, after_done_step."""
    ep = {"policy": "proxy", "model": "orchestra/oracle", **ep}
    started = time.monotonic()
    played = (play_http if ep.get("http") else play_ws)(base, ep, Policy(ep["policy"], base, _headers(ep)))
    result = played["result"]
    metadata = result.metadata or (result.observation or {}).get("metadata") or {}
    return {
        "transport": "http" if ep.get("http") else "ws",
        "scenario": ep.get("scenario") or f"{ep.get('split', 'bundled')}[{ep['index']}]",
        "policy": ep["policy"],
        "session_id": played["session_id"],
        "first_observation_keys": sorted(played["first"]),
        "first_messages": len(played["first"].get("messages") or []),
        "first_tools": len(played["first"].get("tools") or []),
        "steps": len(played["steps"]),
        "step_results": played["steps"],
        "done": result.done,
        "reward": result.reward,
        "success": metadata.get("success"),
        "metadata": metadata,
        "state": played["state"],
        "after_done_step": played["after_done"],
        "task": task_view(base, ep),
        "seconds": round(time.monotonic() - started, 2),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("url")
    p.add_argument("--plan", help="a JSON file: a list of episodes (objects with the keys of the flags below); prints a JSON list")
    p.add_argument("--scenario", help="a scenario reset takes, e.g. bundled/starter_adaptability_reply")
    p.add_argument("--split", default="bundled")
    p.add_argument("--index", type=int, help="a task index of --split (reset(split=, index=))")
    p.add_argument("--policy", default="proxy")
    p.add_argument("--model", default="orchestra/oracle", help="the session's upstream model (reset's `model`); '' to omit")
    p.add_argument("--seed", type=int)
    p.add_argument("--max-steps", type=int, default=60)
    p.add_argument("--message-timeout", type=float, default=60.0, help="OpenEnv client's per-message timeout (its default: 60 s)")
    p.add_argument("--http", action="store_true", help="play over HTTP /reset /step /state instead of the WebSocket")
    p.add_argument("--api-key", help="orchestra serve's --api-key: sent as `Authorization: Bearer KEY` (the client's headers=)")
    p.add_argument("--after-done-step", action="store_true", help="send one more step after the end and record the error")
    args = p.parse_args(argv)
    base = args.url.rstrip("/")
    if args.plan:
        with open(args.plan, encoding="utf-8") as f:
            episodes = json.load(f)
        results = [play(base, ep) for ep in episodes]
        print(json.dumps(results, default=str))
        return 0 if all(r["done"] for r in results) else 1
    if not args.scenario and args.index is None:
        p.error("name the scenario: --scenario or --index (or --plan)")
    ep = {k: v for k, v in vars(args).items() if k not in ("url", "plan")}
    out = play(base, ep)
    print(json.dumps(out, default=str))
    return 0 if out["done"] else 1


if __name__ == "__main__":
    sys.exit(main())
