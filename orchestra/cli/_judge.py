"""The judge options shared by `replay`, `judge-check` and `run`."""

from __future__ import annotations

import argparse
from pathlib import Path

from pydantic import ValidationError

from orchestra.errors import OrchestraError
from orchestra.judges import CACHE_ENV, JUDGE_MODES, JudgeConfig


def add_judge_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("judge")
    g.add_argument("--judge", choices=JUDGE_MODES, default="scripted",
                   help="scripted: ARE's scripted judge, does not check free text (default); "
                   "llm: ARE's LLM judge as are-benchmark runs it; strict: scripted + offline fact checks of free text")
    g.add_argument("--judge-model", help="litellm model string of the LLM judge (--judge llm), e.g. openai/gpt-4o-mini")
    g.add_argument("--judge-endpoint", help="api_base of an OpenAI-compatible server for the judge model")
    g.add_argument("--judge-api-key", help="the judge model's API key (default: the provider's environment variable)")
    g.add_argument("--judge-max-tokens", type=int, help="cap each judge reply (default: no cap, as ARE's judge engine)")
    g.add_argument("--judge-cache", type=Path, metavar="DIR", help=f"judge-call cache folder (default: ${CACHE_ENV} or ~/.cache/orchestra/judge-calls)")
    g.add_argument("--no-judge-cache", action="store_true", help="always ask the judge model (no cache reads or writes)")
    g.add_argument("--judge-are-bool-bug", action=argparse.BooleanOptionalAction, default=True,
                   help="--judge llm: lower True/False in judge replies as ARE 1.2.0's engine does (default: verdicts equal "
                   "are-benchmark's, which rejects every free text not equal to the oracle's); --no-judge-are-bool-bug keeps "
                   "the judge model's [[True]] verbatim so correct free text can pass (see docs/judges.md)")


_OPTIONS = {"mode": "--judge", "model": "--judge-model", "endpoint": "--judge-endpoint", "api_key": "--judge-api-key",
            "max_tokens": "--judge-max-tokens", "cache_dir": "--judge-cache", "are_bool_bug": "--judge-are-bool-bug"}


def judge_config(args: argparse.Namespace) -> JudgeConfig:
    if args.judge_cache is not None and args.judge_cache.exists() and not args.judge_cache.is_dir():
        raise OrchestraError(f"--judge-cache {args.judge_cache}: is a file, not a folder")
    if args.judge != "llm":
        ignored = [o for o, v in (("--judge-api-key", args.judge_api_key), ("--judge-cache", args.judge_cache),
                                  ("--no-judge-cache", args.no_judge_cache)) if v]
        if ignored:
            raise OrchestraError(f"{' / '.join(ignored)} only apply to --judge llm (the judge is {args.judge!r})")
    try:
        return JudgeConfig(
            mode=args.judge,
            model=args.judge_model,
            endpoint=args.judge_endpoint,
            api_key=args.judge_api_key,
            max_tokens=args.judge_max_tokens,
            cache_dir=args.judge_cache,
            use_cache=not args.no_judge_cache,
            are_bool_bug=args.judge_are_bool_bug,
        )
    except ValidationError as exc:
        raise OrchestraError("; ".join(
            (f"{_OPTIONS[str(e['loc'][0])]}: " if e["loc"] and str(e["loc"][0]) in _OPTIONS else "") + e["msg"].removeprefix("Value error, ")
            for e in exc.errors()
        )) from None
