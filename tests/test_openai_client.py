"""The lean path to an OpenAI-compatible server: which models take it, what it sends, what it keeps
(token ids and logprobs exactly as the server sent them), and how a broken server fails."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from aiohttp import web

from orchestra.models import ModelConfig, ModelError
from orchestra.openai_client import complete_openai, request_body, takes_openai_path
from orchestra.rollout import execute
from orchestra.scenario_files import resolve
from orchestra.spec import AgentConfig, RolloutSpec
from orchestra.types import ModelRequest
from orchestra_dev.mock_openai import MockServer

TOKENS = {"logprobs": True, "return_token_ids": True}


def _search_scenario() -> Any:
    return next(iter(resolve(["bundled:search"], limit=1)))


@pytest.mark.parametrize(
    ("model", "endpoint", "lean"),
    [
        ("openai/policy", "http://127.0.0.1:1/v1", True),
        ("hosted_vllm/Qwen", "http://127.0.0.1:1/v1", True),
        ("openai/gpt-4o-mini", None, False),  # a hosted provider: litellm
        ("orchestra/oracle", None, False),
        ("anthropic/claude", "http://127.0.0.1:1/v1", False),
    ],
)
def test_the_rule_says_which_models_go_straight_to_their_server(model: str, endpoint: str | None, lean: bool) -> None:
    assert takes_openai_path(ModelConfig(model=model, endpoint=endpoint)) is lean


def test_litellm_can_be_forced_for_every_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCHESTRA_MODEL_CLIENT", "litellm")
    assert not takes_openai_path(ModelConfig(model="openai/policy", endpoint="http://127.0.0.1:1/v1"))


def test_the_body_is_the_chat_completions_api() -> None:
    request = ModelRequest(messages=[{"role": "user", "content": "hi"}], action_format="tool_calls", tools=[{"type": "function"}], tool_choice="auto")
    body = request_body(ModelConfig(model="openai/policy", endpoint="http://x", temperature=0.5, extra={"seed": 3, **TOKENS}), request)
    assert body == {
        "model": "policy",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.5,
        "tools": [{"type": "function"}],
        "tool_choice": "auto",
        "seed": 3,
        **TOKENS,
    }


@pytest.mark.parametrize("ids_in_logprobs", [False, True], ids=["token_ids", "token_id-in-logprobs"])
def test_every_turn_keeps_the_servers_ids_and_logprobs(ids_in_logprobs: bool) -> None:
    file = _search_scenario()
    with MockServer(0.0, token_ids=True, ids_in_logprobs=ids_in_logprobs, prefer=("__send_message_to_user",)) as server:
        model = ModelConfig(model="openai/policy", endpoint=server.base_url, api_key="x", extra=TOKENS)
        record = anyio.run(lambda: execute(RolloutSpec(scenario=str(file.path), agent=AgentConfig(model=model)), file=file))
        assert record.training is not None, record.error
        [main] = record.training.agents
        turn = main.turns[-1]
        assert turn.prompt_token_ids == server.last_prompt_ids
        assert turn.completion_token_ids == server.last_completion_ids
        assert turn.per_token_logps == server.last_logprobs
        assert turn.loss_mask == [1] * len(turn.completion_token_ids) and not turn.retokenized
    # the clock was charged from those very token counts
    clock = RolloutSpec(scenario=str(file.path), agent=AgentConfig(model=model)).session.clock
    assert turn.dt == round(clock.model_seconds(len(turn.prompt_token_ids), len(turn.completion_token_ids)), 6)
    assert record.trajectory is not None and record.trajectory.agents[0].steps[0].outputs[0].client == "openai"


class _Broken:
    """A loopback server answering every chat completion with one broken reply."""

    def __init__(self, reply: tuple[int, str]) -> None:
        self.reply, self.requests = reply, 0
        self.loop: asyncio.AbstractEventLoop | None = None
        self.ready = threading.Event()

    async def handle(self, request: web.Request) -> web.Response:
        self.requests += 1
        status, text = self.reply
        return web.Response(status=status, text=text, content_type="application/json")

    def __enter__(self) -> str:
        def serve() -> None:
            loop = self.loop = asyncio.new_event_loop()
            app = web.Application()
            app.router.add_post("/v1/chat/completions", self.handle)
            runner = web.AppRunner(app, access_log=None)
            loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, "127.0.0.1", 0)
            loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            self.ready.set()
            loop.run_forever()
            loop.run_until_complete(runner.cleanup())

        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()
        assert self.ready.wait(30)
        return f"http://127.0.0.1:{self.port}/v1"

    def __exit__(self, *exc: object) -> None:
        assert self.loop is not None
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


@pytest.mark.parametrize(
    ("reply", "permanent"),
    [
        ((200, "this is not json"), True),
        ((200, json.dumps({"id": "x", "object": "chat.completion"})), True),  # no `choices`
        ((400, json.dumps({"error": "bad request"})), True),
        ((500, json.dumps({"error": "overloaded"})), False),  # retried, then given up
    ],
    ids=["invalid-json", "no-choices", "http-400", "http-500"],
)
def test_a_broken_server_fails_the_call_in_seconds(reply: tuple[int, str], permanent: bool) -> None:
    request = ModelRequest(messages=[{"role": "user", "content": "hi"}], action_format="tool_calls")
    with _Broken(reply) as url:
        config = ModelConfig(model="openai/policy", endpoint=url, max_retries=2, backoff_seconds=0.01)
        started = time.monotonic()
        with pytest.raises(ModelError) as info:
            anyio.run(lambda: complete_openai(config, request))
        assert time.monotonic() - started < 10
    assert info.value.permanent is permanent
    assert url.split("/v1")[0] in str(info.value)


def test_a_server_without_token_ids_gets_its_turns_counted_with_the_models_tokenizer(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    from orchestra.tokenization import tokenizer_at

    words = ["<|user|>", "<|assistant|>", "<|end|>", "hi", "ok", "[UNK]"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.save(str(tmp_path / "tokenizer.json"))
    template = "{% for m in messages %}<|{{ m.role }}|> {{ m.content }} <|end|> {% endfor %}{% if add_generation_prompt %}<|assistant|> {% endif %}"
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}))
    file = _search_scenario()
    with MockServer(0.0, prefer=("__send_message_to_user",)) as server:  # usage only: no ids
        model = ModelConfig(model="openai/policy", endpoint=server.base_url, api_key="x", tokenizer=str(tmp_path))
        record = anyio.run(lambda: execute(RolloutSpec(scenario=str(file.path), agent=AgentConfig(model=model)), file=file))
    assert record.training is not None, record.error
    turn = record.training.agents[0].turns[0]
    assert turn.retokenized
    chat = tokenizer_at(str(tmp_path))
    step = record.trajectory.agents[0].steps[0]  # type: ignore[union-attr]
    prompt = record.trajectory.prompt(step.prompt.id)  # type: ignore[union-attr]
    assert turn.prompt_token_ids == chat.encode(chat.render(prompt, None, generation_prompt=True))


def test_the_corpus_gives_the_same_records_on_the_lean_path_and_through_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 30's guard: the lean client (over `orchestra.http1`), the lean client over httpx, and
    litellm give every bundled scenario the same event log, verdict, reward, simulated seconds
    and token counts (the mock reports usage), and each record says which path it took."""
    from orchestra.rl import EnvConfig
    from orchestra.rl.batches import rollouts

    files = list(resolve(["bundled"]))
    assert len(files) >= 50
    config = EnvConfig(max_steps=3)
    specs = [(config.spec(str(f.path)), f) for f in files]

    def run(client: str | None, url: str) -> dict[str, tuple[Any, ...]]:
        if client is None:
            monkeypatch.delenv("ORCHESTRA_MODEL_CLIENT", raising=False)
        else:
            monkeypatch.setenv("ORCHESTRA_MODEL_CLIENT", client)

        async def go() -> list[Any]:
            return [r async for r in rollouts(specs, url, model="bench", concurrency=8, token_ids=False)]

        out = {}
        for r in anyio.run(go):
            assert r.error is None, r.error
            res = r.result
            clients = {o.client for a in r.trajectory.agents for s in a.steps for o in s.outputs} if r.trajectory else set()
            out[str(r.spec.scenario)] = (
                res.event_log_sha256,
                r.status,
                r.reward,
                res.sim_seconds,
                res.prompt_tokens,
                res.completion_tokens,
                res.model_calls,
                clients,
            )
        return out

    with MockServer(latency=0.0) as server:
        lean = run(None, server.base_url)
        over_httpx = run("httpx", server.base_url)
        via_litellm = run("litellm", server.base_url)
    strip = lambda d: {k: v[:-1] for k, v in d.items()}  # noqa: E731 - everything but the path taken
    assert strip(lean) == strip(over_httpx) == strip(via_litellm)
    assert all(v[4] > 0 and v[6] == 3 for v in lean.values())  # usage was read, every call made
    assert {c for v in lean.values() for c in v[-1]} == {c for v in over_httpx.values() for c in v[-1]} == {"openai"}
    assert {c for v in via_litellm.values() for c in v[-1]} == {"litellm"}
