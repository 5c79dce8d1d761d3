"""The LLM judge's engine: ARE's `LLMEngine` call contract over any litellm model, cached (no ARE import here)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from orchestra.errors import OrchestraError
from orchestra.judging.cache import JudgeCallCache
from orchestra.judging.settings import JudgeUsage


class JudgeCallError(OrchestraError):
    """A call to the LLM judge's model failed (the message names the judge model and its endpoint)."""


_ROLE_CONVERSIONS = {"tool-response": "user", "tool-call": "assistant"}


class JudgeEngine:
    """The LLM judge's engine: ARE's `LLMEngine` call contract over any litellm model, cached.

    ARE's judge calls `engine(messages, additional_trace_tags=[...])` and reads `(text, metadata)`.
    The reply is post-processed exactly as ARE's `LiteLLMEngine.chat_completion` does (role
    conversion, `True`/`False` lowered, cut at stop sequences), so a model's reply means the same
    to the judge here as under `are-benchmark` — unless `are_bool_bug=False`, which keeps the
    model's `True`/`False` verbatim (ARE's `[[True]]` checkers can then accept). Usage accumulates in `usage` (a rollout reads the
    difference); nothing here knows about the simulated clock.
    """

    def __init__(
        self,
        model: str,
        *,
        endpoint: str | None = None,
        api_key: str | None = None,
        cache_dir: Path | None = None,
        max_tokens: int | None = None,
        are_bool_bug: bool = True,
    ) -> None:
        self.model = model
        self.are_bool_bug = are_bool_bug
        self.max_tokens = max_tokens
        self.endpoint = endpoint
        self.api_key = api_key
        self.cache = JudgeCallCache(cache_dir) if cache_dir is not None else None
        self.usage = JudgeUsage()
        self._lock = threading.Lock()

    @property
    def model_name(self) -> str:
        return self.model

    def __call__(self, messages: list[dict[str, Any]], stop_sequences: list[str] | None = None, **kwargs: Any) -> tuple[str, None]:
        converted = [{"role": _ROLE_CONVERSIONS.get(str(m["role"]), str(m["role"])), "content": m.get("content", "")} for m in messages]
        stops = list(stop_sequences or [])
        key = JudgeCallCache.key(self.model, converted, stops, self.max_tokens, not self.are_bool_bug) if self.cache else None
        entry = self.cache.get(key) if self.cache and key else None
        if entry is not None:
            with self._lock:
                self.usage.cache_hits += 1
            return entry["text"], None
        text, usage, cost = self._complete(converted)
        if self.are_bool_bug:  # ARE 1.2.0's LiteLLMEngine.chat_completion (litellm_engine.py:125)
            text = text.replace("False", "false").replace("True", "true")
        for stop in stops:
            text = text.split(stop)[0]
        with self._lock:
            self.usage.calls += 1
            self.usage.prompt_tokens += usage[0]
            self.usage.completion_tokens += usage[1]
            self.usage.cost_usd = round(self.usage.cost_usd + cost, 10)
        if self.cache and key:
            self.cache.put(key, {"model": self.model, "text": text, "prompt_tokens": usage[0], "completion_tokens": usage[1], "cost_usd": cost})
        return text, None

    def _complete(self, messages: list[dict[str, Any]]) -> tuple[str, tuple[int, int], float]:
        from orchestra.litellm_setup import import_litellm

        litellm = import_litellm()
        if self.model.startswith("orchestra-judge/"):
            from orchestra.judging import script as judge_script

            judge_script.register()
        extra: dict[str, Any] = {"max_tokens": self.max_tokens} if self.max_tokens is not None else {}
        try:
            response = litellm.completion(model=self.model, messages=messages, api_base=self.endpoint, api_key=self.api_key, **extra)
        except Exception as exc:  # litellm says only "Connection error." for a dead server: name the judge and where it is
            where = f"judge model {self.model}" + (f" at {self.endpoint}" if self.endpoint else "")
            first = (str(exc).strip().splitlines() or [""])[0]
            raise JudgeCallError(f"{where}: {type(exc).__name__}: {first}") from exc
        text = response.choices[0].message.content
        if text is None:
            raise ValueError(f"judge model {self.model} returned no text")
        usage = getattr(response, "usage", None)
        counts = (int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0))
        try:
            cost = float(litellm.completion_cost(completion_response=response) or 0.0)
        except Exception:  # unknown model prices (local servers): cost 0, usage still counted
            cost = 0.0
        return str(text), counts, cost
