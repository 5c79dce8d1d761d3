"""`orchestra.tokenization`: a server that sends no ids gets its turns counted with the model's own
tokenizer and chat template — rendered as Hugging Face's renderer would render them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orchestra.tokenization import ChatTokenizer
from orchestra.types import ModelRequest

CALL = {"id": "1", "type": "function", "function": {"name": "Contacts__search_contacts", "arguments": '{"query": "Tom"}'}}
REQUEST = ModelRequest(messages=[{"role": "user", "content": "hi"}], action_format="tool_calls")


def _tokenizer(folder: Path, template: str) -> ChatTokenizer:
    """A tiny byte-level tokenizer (every character a token) with `template` as its chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.BPE(vocab={chr(i): i for i in range(32, 127)} | {"\n": 10}, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    tok.decoder = decoders.Fuse()
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}))
    return ChatTokenizer(folder)


def _text(chat: ChatTokenizer, ids: Any) -> str:
    return "".join(chr(i) for i in ids)


QWEN_LIKE = (
    "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content or '' }}"
    "{% for c in m.tool_calls or [] %}<call>{{ c.function | tojson }}</call>{% endfor %}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def test_tool_call_arguments_reach_the_template_as_objects(tmp_path: Path) -> None:
    chat = _tokenizer(tmp_path, QWEN_LIKE)
    tokens = chat.tokens(REQUEST, {"role": "assistant", "content": "", "tool_calls": [CALL]})
    completion = _text(chat, tokens.completion_ids)
    assert completion == '<call>{"name": "Contacts__search_contacts", "arguments": {"query": "Tom"}}</call><|end|>\n'
    assert tokens.retokenized


def test_a_generation_prompt_that_opens_a_think_block_keeps_the_rendered_reply(tmp_path: Path) -> None:
    thinking = QWEN_LIKE.replace("<|assistant|>\n{% endif %}", "<|assistant|>\n<think>\n{% endif %}")
    chat = _tokenizer(tmp_path, thinking)
    tokens = chat.tokens(REQUEST, {"role": "assistant", "content": "ok", "tool_calls": [CALL]})
    assert _text(chat, tokens.prompt_ids).endswith("<|assistant|>\n<think>\n")
    assert _text(chat, tokens.completion_ids).startswith("ok<call>") and _text(chat, tokens.completion_ids).endswith("</call><|end|>\n")


@pytest.mark.parametrize(
    ("template", "rendered"),
    [
        ("{% for m in messages %}{{ m.content }}{% break %}{% endfor %}", "hi"),
        ("{% for m in messages %}{{ m | tojson(ensure_ascii=True) }}{% endfor %}", '{"role": "user", "content": "h\\u00e9"}'),
        ("{% for m in messages %}{{ m | tojson(separators=(',', ':')) }}{% endfor %}", '{"role":"user","content":"hé"}'),
        ("{{ strftime_now('%d %b %Y') }}", "15 Oct 2024"),  # a fixed instant, never today's date
    ],
    ids=["break", "tojson-ensure_ascii", "tojson-separators", "strftime_now"],
)
def test_the_template_features_transformers_gives_templates(tmp_path: Path, template: str, rendered: str) -> None:
    chat = _tokenizer(tmp_path, template)
    content = "hi" if "break" in template else "hé"
    assert (
        chat.render([{"role": "user", "content": content}, {"role": "user", "content": "x"}][: 1 if "tojson" in template else 2], None, generation_prompt=False)
        == rendered
    )
