"""A scripted judge model: deterministic replies chosen by rules over the prompt.

Served as the litellm provider `orchestra-judge`, so both orchestra's judge engine and ARE's own
`LiteLLMEngine` reach it through `litellm.completion` — which is what lets a test compare
orchestra's `llm` judge with ARE's `are-benchmark` judge on identical judge-model replies, offline.

    --judge llm --judge-model orchestra-judge/rules.json

The file (JSON or YAML) is `{"rules": [{"contains": TEXT or [TEXT, ...], "reply": TEXT}, ...],
"default": TEXT}`. A call is answered by the first rule whose texts all occur in the last user
message of the prompt (ARE's checker prompts put the agent's and the oracle's texts there), else by
`default`; with no default, an unmatched prompt is an error naming the file. With
`"pick": "earliest"`, the matching rule whose (first) text occurs earliest in the prompt wins
instead of the first in list order — ARE's checker prompts show the agent's text before the
oracle's, so rules keyed on agent texts then never fire on the oracle's text. Usage is
synthetic: one token per four characters.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from orchestra.litellm_setup import LazyProvider

PROVIDER = "orchestra-judge"


class JudgeScriptError(ValueError):
    """A judge script file is missing, malformed, or has no rule for a prompt."""


def load_script(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise JudgeScriptError(f"judge script {p}: cannot read it ({exc.strerror})") from None
    try:
        if p.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:
        raise JudgeScriptError(f"judge script {p}: not valid {'YAML' if p.suffix in ('.yaml', '.yml') else 'JSON'} ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("rules", []), list):
        raise JudgeScriptError(f'judge script {p}: expected {{"rules": [{{"contains": ..., "reply": ...}}], "default": ...}}')
    for i, rule in enumerate(data.get("rules", [])):
        if not isinstance(rule, dict) or "reply" not in rule or "contains" not in rule:
            raise JudgeScriptError(f"judge script {p}: rules[{i}] needs 'contains' and 'reply'")
    return data


def reply_for(script: dict[str, Any], messages: list[dict[str, Any]], source: str = "<script>") -> str:
    """The scripted reply to a prompt (see module docstring)."""
    users = [m for m in messages if m.get("role") == "user"]
    prompt = str(users[-1].get("content", "")) if users else ""
    best: tuple[int, int] | None = None
    choice = ""
    for _i, rule in enumerate(script.get("rules", [])):
        needles = rule["contains"] if isinstance(rule["contains"], list) else [rule["contains"]]
        if all(str(n) in prompt for n in needles):
            if script.get("pick") != "earliest":
                return str(rule["reply"])
            rank = (prompt.index(str(needles[0])), -len(str(needles[0])))
            if best is None or rank < best:
                best, choice = rank, str(rule["reply"])
    if best is not None:
        return choice
    if "default" in script:
        return str(script["default"])
    raise JudgeScriptError(f"judge script {source}: no rule matches the prompt and there is no 'default' (prompt starts {prompt[:120]!r})")


def register() -> None:
    """Add the `orchestra-judge` provider to litellm's provider map (idempotent, keeps the others)."""
    from orchestra.litellm_setup import register_providers

    register_providers({PROVIDER: handler})


def _answer(litellm: Any, kw: dict[str, Any]) -> Any:
    from litellm.types.utils import Choices, Message, Usage

    path = kw["model"]
    text = reply_for(load_script(path), kw["messages"], path)
    response = kw["model_response"]
    response.choices = [Choices(index=0, finish_reason="stop", message=Message(role="assistant", content=text))]
    response.model = f"{PROVIDER}/{path}"
    prompt = math.ceil(len(json.dumps(kw["messages"], sort_keys=True, default=str)) / 4)
    completion = max(1, math.ceil(len(text) / 4))
    response.usage = Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)
    return response


#: The process-wide litellm `CustomLLM` that answers from the judge script named by the model.
handler = LazyProvider(_answer)
