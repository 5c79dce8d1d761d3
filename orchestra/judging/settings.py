"""Judge settings, the judge-call cache and the LLM judge's engine (no ARE import here).

Three built-in judge modes, one setting everywhere (`SessionConfig.judge`, the CLI's `--judge`);
plugins add more through the `register_judges` hook (the built-ins are registered the same way, by
the built-in `judges` plugin):

* `scripted` (the default): ARE's `ScriptedGraphPerEventJudgeConfig`. Tool counts, hard argument
  checks, causality and timing. It **does not check free text** (the answer to the user, email and
  message bodies, titles): every `llm_checker` argument is skipped.
* `llm`: ARE's `GraphPerEventJudge` with its LLM checkers, configured as `are-benchmark run`
  configures it (`GraphPerEventJudgeConfig(engine=...)`), the engine being any litellm model
  (`model`, `endpoint`). Calls are cached on disk, keyed by model and prompt, so re-judging a
  trajectory gives the same verdict without new calls; their usage and cost are reported apart from
  the agent's and never charge the simulated clock.
* `strict`: deterministic and offline. ARE's scripted judge, plus a check of every free-text
  argument ARE would send to an LLM: the facts of the oracle's text must be in the agent's text
  (`orchestra.judging.facts`).

The ARE side (building the judges) lives in `orchestra.are.judges`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import warnings
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from orchestra.errors import OrchestraError

JudgeMode = Literal["scripted", "llm", "strict"]
JUDGE_MODES: tuple[JudgeMode, ...] = ("scripted", "llm", "strict")
CACHE_ENV = "ORCHESTRA_JUDGE_CACHE"


def default_cache_dir() -> Path:
    """`$ORCHESTRA_JUDGE_CACHE`, else `~/.cache/orchestra/judge-calls` (where the cache lives
    never changes a verdict: a hit returns exactly what the miss stored)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "orchestra" / "judge-calls"


class JudgeCallError(OrchestraError):
    """A call to the LLM judge's model failed (the message names the judge model and its endpoint)."""


class JudgeConfig(BaseModel):
    """Which judge produces the verdict. Recorded with every result (`JudgeConfig.label`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: str = Field("scripted", min_length=1, description="a registered judge: scripted, llm, strict (built-in) or a plugin's")
    model: str | None = Field(None, description="litellm model string of the LLM judge (mode llm), e.g. openai/gpt-4o-mini")
    endpoint: str | None = Field(None, description="api_base of an OpenAI-compatible server for the judge model")
    api_key: str | None = Field(None, repr=False, exclude=True, description="the judge model's API key (never recorded)")
    max_tokens: int | None = Field(None, gt=0, description="cap on each judge reply (default: none, as ARE's engine)")
    cache_dir: Path | None = Field(None, description=f"judge-call cache folder (default: ${CACHE_ENV} or ~/.cache/orchestra/judge-calls)")
    use_cache: bool = True
    are_bool_bug: bool = Field(
        True,
        description="reproduce ARE 1.2.0's engine, which lowers True/False in every judge reply so its [[True]] checkers "
        "reject every free text not equal to the oracle's (verdicts equal are-benchmark's); False keeps the judge "
        "model's reply verbatim, so the LLM judge can accept a correct paraphrase (mode llm only)",
    )

    @model_validator(mode="after")
    def _check(self) -> JudgeConfig:
        if self.mode == "llm" and not self.model:
            raise ValueError("judge mode 'llm' needs a judge model (--judge-model, a litellm model string)")
        given = [o for o, v in (("--judge-model", self.model), ("--judge-endpoint", self.endpoint), ("--judge-max-tokens", self.max_tokens)) if v]
        if self.mode != "llm" and given:
            raise ValueError(f"{' / '.join(given)} only apply to --judge llm (the judge is {self.mode!r})")
        if self.mode != "llm" and not self.are_bool_bug:
            raise ValueError(f"--no-judge-are-bool-bug only applies to --judge llm (the judge is {self.mode!r})")
        return self

    @property
    def label(self) -> str:
        """What produced a verdict: `scripted`, `strict`, `llm:<model>`, or `llm:<model>+verbatim-bools`
        (the opt-out of ARE's True/False lowering, whose verdicts differ from are-benchmark's)."""
        if self.mode != "llm":
            return self.mode
        return f"llm:{self.model}" + ("" if self.are_bool_bug else "+verbatim-bools")

    def resolved_cache_dir(self) -> Path | None:
        if self.mode != "llm" or not self.use_cache:
            return None
        return self.cache_dir or default_cache_dir()

    def pool_key(self) -> tuple[Any, ...]:
        return (self.mode, self.model, self.endpoint, self.api_key, self.max_tokens, self.are_bool_bug, str(self.resolved_cache_dir()))


class JudgeUsage(BaseModel):
    """The judge model's calls in one rollout (or a process): never the agent's, never on the clock."""

    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def minus(self, before: JudgeUsage) -> JudgeUsage:
        return JudgeUsage(
            calls=self.calls - before.calls,
            cache_hits=self.cache_hits - before.cache_hits,
            prompt_tokens=self.prompt_tokens - before.prompt_tokens,
            completion_tokens=self.completion_tokens - before.completion_tokens,
            cost_usd=round(self.cost_usd - before.cost_usd, 10),
        )


class JudgeCallCache:
    """Judge-model replies on disk, one JSON file per (model, prompt).

    The key is a sha256 of the model string, the messages, the stop sequences (and a reply cap,
    when one is set) — not the
    endpoint or the key: the same model behind another URL is the same judge. Writes are atomic
    (temp file + rename), so concurrent rollouts may share a folder.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._warned = False

    @staticmethod
    def key(model: str, messages: list[dict[str, Any]], stop: list[str] | None = None, max_tokens: int | None = None, verbatim_bools: bool = False) -> str:
        request: dict[str, Any] = {"model": model, "messages": messages, "stop": list(stop or [])}
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        if verbatim_bools:  # the stored reply is post-processed: a verbatim one is another entry
            request["verbatim_bools"] = True
        payload = json.dumps(request, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise OSError(f"judge-call cache entry {path} is unreadable ({exc}); delete it to re-ask the judge model") from None
        return data if isinstance(data, dict) and isinstance(data.get("text"), str) else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store a reply. A folder that cannot be written (read-only, full) costs only the cache:
        the reply was already obtained, so the verdict stands and a warning says why reruns re-ask."""
        path = self._path(key)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(entry, indent=1, sort_keys=True, ensure_ascii=False))
            os.replace(tmp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            if not self._warned:
                self._warned = True
                warnings.warn(f"judge-call cache {self.folder} cannot be written ({exc}); judge replies are not cached", stacklevel=2)


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
