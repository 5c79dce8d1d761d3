"""Judge settings: which judge gives the verdict (`JudgeConfig`), and the judge model's usage (no ARE import here).

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

The judge-call cache is `orchestra.judging.cache`, the LLM judge's engine `orchestra.judging.engine`;
the ARE side (building the judges) lives in `orchestra.are.judges`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

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
