"""Scripted policies for the parity harness: file formats, fresh state per run, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestra.parity.policy import PolicyError, PolicyExhausted, as_factory, load_policy_file


def test_list_policy_plays_replies_in_order_and_restarts_for_each_run(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(["a", {"text": "b"}]))
    factory = load_policy_file(path)
    first, second = factory(), factory()
    assert [first([]), first([])] == ["a", "b"]
    assert second([]) == "a"
    with pytest.raises(PolicyExhausted, match="2 replies are used up"):
        first([])


@pytest.mark.parametrize("suffix, text", [(".jsonl", '"a"\n{"text": "b"}\n'), (".yaml", "- a\n- text: b\n")])
def test_jsonl_and_yaml_lists(tmp_path: Path, suffix: str, text: str) -> None:
    path = tmp_path / f"p{suffix}"
    path.write_text(text)
    policy = load_policy_file(path)()
    assert [policy([]), policy([])] == ["a", "b"]


def test_python_policy_is_loaded_fresh_for_each_run(tmp_path: Path) -> None:
    path = tmp_path / "p.py"
    path.write_text("calls = []\ndef policy(messages):\n    calls.append(1)\n    return f'{len(calls)} {messages[-1][\"content\"]}'\n")
    factory = load_policy_file(path)
    one, two = factory(), factory()
    assert one([{"role": "user", "content": "hi"}]) == "1 hi"
    assert one([{"role": "user", "content": "hi"}]) == "2 hi"
    assert two([{"role": "user", "content": "yo"}]) == "1 yo"  # module state does not leak between runs


def test_python_make_policy(tmp_path: Path) -> None:
    path = tmp_path / "p.py"
    path.write_text("def make_policy():\n    replies = iter(['x', 'y'])\n    return lambda messages: next(replies)\n")
    factory = load_policy_file(path)
    assert factory()([]) == "x" and factory()([]) == "x"


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("p.json", "{not json", "not valid JSON"),
        ("p.json", "[]", "non-empty list"),
        ("p.yaml", "x: [\n", "p.yaml: not valid YAML"),
        ("p.yml", "- a\n b: c\n", "p.yml: not valid YML"),
        ("p.jsonl", '"a"\n{oops\n', "p.jsonl: not valid JSONL"),
        ("p.json", "[1]", r"p.json\[0\]: each reply is a string"),
        ("p.txt", "a", "unknown policy file type '.txt'"),
        ("p.py", "x = 1\n", "defines neither make_policy"),
        ("p.py", "raise RuntimeError('boom')\n", "importing it failed: RuntimeError: boom"),
    ],
)
def test_bad_policy_files_say_what_and_where(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(PolicyError, match=message):
        load_policy_file(path)


def test_policy_file_that_is_not_utf8_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(b'["caf\xe9"]')
    with pytest.raises(PolicyError, match="p.json: not UTF-8 text"):
        load_policy_file(path)


def test_missing_file_and_bad_objects() -> None:
    with pytest.raises(PolicyError, match="not found"):
        load_policy_file("/nonexistent/policy.json")
    with pytest.raises(PolicyError, match="a policy is a list of replies or a callable"):
        as_factory(42)  # type: ignore[arg-type]
