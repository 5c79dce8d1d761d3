"""A model's own tokenizer, for servers that send no token ids: the turn counted, and marked so.

A trainer needs the ids the model saw and sampled. A server that returns them (vLLM's
`return_token_ids`, `orchestra.openai_client`) is always preferred; for one that does not, the
turn is rendered with the model's chat template and encoded with its tokenizer — the ids the
tokenizer gives, which are the sampled ones only if the server renders and samples exactly so —
and the turn is marked `retokenized` (`orchestra.types.Tokens`), never silently.

The tokenizer is a Hugging Face tokenizer folder (`tokenizer.json`, and `tokenizer_config.json`
with its `chat_template`), named by `ModelConfig.tokenizer`. The `tokenizers` and `jinja2`
packages are already in orchestra's lock (litellm and ARE need them); no model weights are read.
"""

from __future__ import annotations

import datetime
import functools
import json
import logging
import threading
from pathlib import Path
from typing import Any

from orchestra.errors import OrchestraError
from orchestra.types import ModelRequest, ModelResponse, Tokens

log = logging.getLogger(__name__)

__all__ = ["ChatTokenizer", "retokenized", "tokenizer_at"]


class ChatTokenizer:
    """A tokenizer and its chat template: `prompt_ids(messages, tools)` and `completion_ids(...)`."""

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        self.folder = folder
        file = folder / "tokenizer.json"
        if not file.is_file():
            raise OrchestraError(f"tokenizer {folder}: no tokenizer.json (a Hugging Face tokenizer folder)")
        self.tokenizer = Tokenizer.from_file(str(file))
        config_file = folder / "tokenizer_config.json"
        config = json.loads(config_file.read_text(encoding="utf-8")) if config_file.is_file() else {}
        template = config.get("chat_template")
        if not isinstance(template, str) and (folder / "chat_template.jinja").is_file():
            template = (folder / "chat_template.jinja").read_text(encoding="utf-8")
        if not isinstance(template, str):
            raise OrchestraError(f"tokenizer {folder}: no chat template (tokenizer_config.json's `chat_template`, or chat_template.jinja)")
        self.specials = {k: _token_text(v) for k, v in config.items() if k.endswith("_token") and v is not None}
        self._template = _compile(template)
        self._lock = threading.Lock()  # a `tokenizers.Tokenizer` is not documented as thread-safe
        self._warned = False

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, *, generation_prompt: bool) -> str:
        """The chat template's text for `messages`. Tool-call arguments are given to the template as
        objects, as Hugging Face's `apply_chat_template` and vLLM's server expect (a template writes
        `arguments | tojson`: a JSON text there would be rendered as a quoted string)."""
        messages = [_with_argument_objects(m) for m in messages]
        return str(self._template.render(messages=messages, tools=tools, add_generation_prompt=generation_prompt, **self.specials))

    def encode(self, text: str) -> list[int]:
        with self._lock:
            return list(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def tokens(self, request: ModelRequest, assistant: dict[str, Any]) -> Tokens:
        """The turn in ids: the prompt as the template renders it for generation, and the completion
        as the template renders the assistant's message after it."""
        prompt = self.render(request.messages, request.tools, generation_prompt=True)
        whole = self.render([*request.messages, assistant], request.tools, generation_prompt=False)
        completion = whole[len(prompt) :] if whole.startswith(prompt) else self._completion_after_opener(request, assistant, prompt, whole)
        return Tokens(prompt_ids=tuple(self.encode(prompt)), completion_ids=tuple(self.encode(completion)), retokenized=True)

    def _completion_after_opener(self, request: ModelRequest, assistant: dict[str, Any], prompt: str, whole: str) -> str:
        """The completion when the generation prompt is not a prefix of the rendered reply.

        The common case: the generation prompt opens something the rendered message does not
        repeat (`<|im_start|>assistant\n<think>\n` against `<|im_start|>assistant\n...`; a
        thinking model's template). The completion is then the rendered message after what both
        share (and after the opener, where the message repeats it). Where even the history renders
        differently, only the message's content is left — logged, once per tokenizer."""
        common = _common_prefix(prompt, whole)
        history = self.render(request.messages, request.tools, generation_prompt=False)
        if common >= len(history) and whole.startswith(history):
            rest, opener = whole[common:], prompt[common:]
            return rest[len(opener) :] if rest.startswith(opener) else rest
        if not self._warned:
            self._warned = True
            log.warning(
                "tokenizer %s: the chat template renders the history differently once the reply follows it; "
                "retokenized completions are the reply's content only (the template's own markup is not in them)",
                self.folder,
            )
        return str(assistant.get("content") or "")


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _with_argument_objects(message: dict[str, Any]) -> dict[str, Any]:
    """`message` with each tool call's `arguments` as the object its JSON text is (a text that is no
    JSON object stays as written)."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        return message
    parsed = []
    for call in calls:
        fn = call.get("function") if isinstance(call, dict) else None
        args = fn.get("arguments") if isinstance(fn, dict) else None
        if isinstance(fn, dict) and isinstance(args, str):
            try:
                value = json.loads(args)
            except json.JSONDecodeError:
                value = None
            if isinstance(value, dict):
                call = {**call, "function": {**fn, "arguments": value}}
        parsed.append(call)
    return {**message, "tool_calls": parsed}


def _token_text(value: Any) -> Any:
    return value.get("content") if isinstance(value, dict) else value


#: What a chat template's `strftime_now` renders (e.g. Llama 3's "Today Date" line): a fixed instant,
#: the one Gaia2's scenarios start at (2024-10-15 07:00 UTC), never the machine's clock — the
#: prompt's token count is charged to the simulated clock, so a calendar date would make event
#: logs and training traces change from one day to the next.
TEMPLATE_NOW = datetime.datetime(2024, 10, 15, 7, 0, tzinfo=datetime.UTC)


def _compile(source: str) -> Any:
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise OrchestraError(f"chat template: {message}")

    def tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None, separators: Any = None, sort_keys: bool = False) -> str:
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt: str) -> str:
        return TEMPLATE_NOW.strftime(fmt)

    # what transformers' renderer gives templates: loop controls, `tojson`'s keyword arguments, `strftime_now`
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.filters["tojson"] = tojson
    return env.from_string(source)


@functools.lru_cache(maxsize=16)
def tokenizer_at(folder: str) -> ChatTokenizer:
    """The tokenizer of a folder, loaded once per process."""
    return ChatTokenizer(Path(folder).expanduser())


def retokenized(response: ModelResponse, request: ModelRequest, folder: str) -> ModelResponse:
    """`response` with its turn counted by the model's tokenizer (when the server sent no ids)."""
    from orchestra.wire import completion_message

    if response.tokens is not None:
        return response
    assistant = completion_message(response)
    assistant.pop("usage", None)
    response.tokens = tokens = tokenizer_at(folder).tokens(request, assistant)
    response.usage = type(response.usage)(len(tokens.prompt_ids), len(tokens.completion_ids), response.usage.reasoning_tokens)
    return response
