"""Options several commands share: scenario sources and filters, the session (clock, notifications,
reward mode) and the judge.

Session and judge options default to "not given" (None): `session_config(args, base)` applies
only what the user gave to a base setting — `SessionConfig()` for `replay` and `judge-check`, a
team file's `session:` for `run --team` — as data (validated pydantic copies), so a team's
settings and the command line merge in one place and a flag always wins.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestra.errors import OrchestraError

if TYPE_CHECKING:  # pragma: no cover - `orchestra scenarios` takes the filters without pydantic, the host or the configs
    from pydantic import BaseModel

    from orchestra.config import SessionConfig
    from orchestra.host import Host
    from orchestra.runs.executors import Executor

#: The built-in judges and the judge-call cache variable (`orchestra.judging.settings`; repeated here so
#: the option help needs no import of the configs).
JUDGE_MODES = ("scripted", "llm", "strict")
CACHE_ENV = "ORCHESTRA_JUDGE_CACHE"

SOURCE_HELP = "scenario file, folder, bundled[:CONFIG] or hf:CONFIG[/SPLIT][@REVISION]"


# ------------------------------------------------------------------------------ scenario selection


def add_filter_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("scenario selection")
    g.add_argument("--capability", action="append", default=[], metavar="TAG", help="keep scenarios tagged TAG (e.g. Time); repeatable")
    g.add_argument("--id", dest="scenario_ids", action="append", default=[], metavar="ID", help="keep this scenario id; repeatable")
    g.add_argument("--limit", type=positive_int, help="at most this many scenarios (1 or more)")


def positive_int(text: str) -> int:
    """An option's whole number, 1 or more (`--limit`, `--concurrency`, `--max-steps`)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {n}")
    return n


def non_negative_int(text: str) -> int:
    """An option's whole number, 0 or more (`--model-retries`)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {n}")
    return n


def filter_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {"capabilities": args.capability, "scenario_ids": args.scenario_ids, "limit": args.limit}


def no_scenario_error(args: argparse.Namespace, sources: Sequence[object]) -> OrchestraError:
    """The error for sources and filters that select no scenario (`--id` misspelt): a mistake to
    report (exit 2), not a successful run of zero rollouts."""
    given = [f"{flag} {v}" for flag, values in (("--capability", args.capability), ("--id", args.scenario_ids)) for v in values]
    filters = f" matching {' '.join(given)}" if given else ""
    return OrchestraError(f"no scenario{filters} in {', '.join(map(str, sources))} (`orchestra scenarios SOURCE` lists ids and capabilities)")


# ------------------------------------------------------------------------------ the session and the judge

#: Option destination -> the `ClockConfig` field it sets.
CLOCK_OPTIONS = {"decode_rate": "decode_rate_tps", "prefill_rate": "prefill_rate_tps", "tool_call_seconds": "tool_call_seconds", "time_scale": "time_scale"}
#: Option destination -> the `SessionConfig` field it sets.
SESSION_OPTIONS = {"notifications": "notification_verbosity", "reward_mode": "reward_mode"}
#: Option destination -> the `JudgeConfig` field it sets, and the flag (for messages).
JUDGE_OPTIONS = {
    "judge": ("mode", "--judge"),
    "judge_model": ("model", "--judge-model"),
    "judge_endpoint": ("endpoint", "--judge-endpoint"),
    "judge_api_key": ("api_key", "--judge-api-key"),
    "judge_max_tokens": ("max_tokens", "--judge-max-tokens"),
    "judge_cache": ("cache_dir", "--judge-cache"),
    "judge_use_cache": ("use_cache", "--no-judge-cache"),
    "judge_are_bool_bug": ("are_bool_bug", "--judge-are-bool-bug"),
}
#: Judge options that mean something for the LLM judge only.
LLM_ONLY = ("judge_api_key", "judge_cache", "judge_use_cache")


def add_session_options(p: argparse.ArgumentParser, *, reward_mode: bool = True) -> None:
    """The clock, notification, reward-mode and judge options; none has a default here (see module doc)."""
    from orchestra.clock import ClockConfig

    g = p.add_argument_group("simulated clock")
    defaults = ClockConfig()
    g.add_argument("--decode-rate", type=float, help=f"completion tokens per simulated second (default {defaults.decode_rate_tps:g})")
    g.add_argument("--prefill-rate", type=float, help=f"prompt tokens per simulated second (default {defaults.prefill_rate_tps:g})")
    g.add_argument("--tool-call-seconds", type=float, help=f"simulated seconds per tool call (default {defaults.tool_call_seconds:g})")
    g.add_argument("--time-scale", type=float, help=f"multiplier on every turn's cost (default {defaults.time_scale:g})")
    p.add_argument("--notifications", choices=("low", "medium", "high"), help="ARE notification verbosity (default medium)")
    if reward_mode:
        p.add_argument("--reward-mode", choices=("binary", "dense"), help="binary (default): ARE's verdict; dense: partial credit in [0, 0.8] on failure")
    j = p.add_argument_group("judge")
    j.add_argument(
        "--judge",
        metavar="MODE",
        help=f"a registered judge ({', '.join(JUDGE_MODES)} built in; `orchestra plugins` lists all). scripted: ARE's scripted judge, "
        "does not check free text (default); llm: ARE's LLM judge as are-benchmark runs it; strict: scripted + offline fact checks of free text",
    )
    j.add_argument("--judge-model", help="litellm model string of the LLM judge (--judge llm), e.g. openai/gpt-4o-mini")
    j.add_argument("--judge-endpoint", help="api_base of an OpenAI-compatible server for the judge model")
    j.add_argument("--judge-api-key", help="the judge model's API key (default: the provider's environment variable)")
    j.add_argument("--judge-max-tokens", type=int, help="cap each judge reply (default: no cap, as ARE's judge engine)")
    j.add_argument("--judge-cache", type=Path, metavar="DIR", help=f"judge-call cache folder (default: ${CACHE_ENV} or ~/.cache/orchestra/judge-calls)")
    j.add_argument("--no-judge-cache", dest="judge_use_cache", action="store_const", const=False, help="always ask the judge model (no cache reads or writes)")
    add_switch(
        j,
        "judge-are-bool-bug",
        "--judge llm: lower True/False in judge replies as ARE 1.2.0's engine does (default: verdicts equal "
        "are-benchmark's, which rejects every free text not equal to the oracle's)",
        "--judge llm: keep the judge model's [[True]] verbatim so correct free text can pass (see docs/judges.md)",
    )


#: Option destination -> the `NoiseConfig` field it sets.
NOISE_OPTIONS = {"tool_failure_probability": "tool_failure_probability", "env_events_per_minute": "env_events_per_minute"}


def add_noise_options(p: argparse.ArgumentParser) -> None:
    """`--noise` and its two knobs (Gaia2's noise, reproducible; `docs/noise.md`). Any of them turns
    noise on, with Gaia2's defaults for what is not given; `--no-noise` turns a team file's off."""
    g = p.add_argument_group("noise (Gaia2's noise phase, reproducible; docs/noise.md)")
    add_switch(
        g,
        "noise",
        "tool failures (p=0.1, every app tool), renamed/re-described tools and 10 environment events per minute "
        "from each scenario's `augmentation` data, as Gaia2's noise phase; the same failures and events on every rerun",
        "no noise, even where the team file's session has some",
    )
    add_noise_knobs(g, turns_on=True)


def add_noise_knobs(g: Any, *, turns_on: bool, env_events: Any = float) -> None:
    """`--tool-failure-probability` and `--env-events-per-minute` (`NOISE_OPTIONS`) on `g`."""
    on = "turns noise on; " if turns_on else ""
    g.add_argument("--tool-failure-probability", type=float, metavar="P", help=f"chance that an app tool call fails ({on}default 0.1)")
    g.add_argument(
        "--env-events-per-minute", type=env_events, metavar="N", help=f"environment (distractor) events per simulated minute ({on}default 10; 0: none)"
    )


def add_switch(g: Any, name: str, on_help: str, off_help: str) -> None:
    """`--NAME` / `--no-NAME` (destination NAME, None when neither is given): giving both is an
    argparse error, where `BooleanOptionalAction` would silently keep the last."""
    dest = name.replace("-", "_")
    both = g.add_mutually_exclusive_group()
    both.add_argument(f"--{name}", dest=dest, action="store_const", const=True, help=on_help)
    both.add_argument(f"--no-{name}", dest=dest, action="store_const", const=False, help=off_help)


def _noise(args: argparse.Namespace, base: Any) -> Any:
    """The `NoiseConfig` (or None) the noise options make of `base`'s."""
    from orchestra.config import NoiseConfig

    given = {NOISE_OPTIONS[d]: v for d, v in _given(args, NOISE_OPTIONS).items()}
    switch = getattr(args, "noise", None)
    if switch is False:
        if given:
            raise OrchestraError(f"--no-noise with {' / '.join('--' + d.replace('_', '-') for d in _given(args, NOISE_OPTIONS))}: choose one")
        return None
    if not switch and not given:
        return base
    return _updated(base or NoiseConfig(), given, {field: "--" + dest.replace("_", "-") for dest, field in NOISE_OPTIONS.items()})


def _given(args: argparse.Namespace, options: dict[str, Any]) -> dict[str, Any]:
    """The options of `options` the user gave, by destination."""
    return {dest: getattr(args, dest) for dest in options if getattr(args, dest, None) is not None}


def _updated(model: BaseModel, update: dict[str, Any], flags: dict[str, str]) -> Any:
    """`model` with `update` applied and validated (pydantic's `model_copy` does not validate);
    a validation error names the flags."""
    from pydantic import ValidationError

    data = {**dict(model), **update}
    try:
        return type(model).model_validate(data)
    except ValidationError as exc:
        raise OrchestraError(
            "; ".join(
                (f"{flags[str(e['loc'][0])]}: " if e["loc"] and str(e["loc"][0]) in flags else "") + e["msg"].removeprefix("Value error, ")
                for e in exc.errors()
            )
        ) from None


def session_config(args: argparse.Namespace, base: SessionConfig | None = None) -> SessionConfig:
    """`base` (default `SessionConfig()`) with the session, judge and noise options the user gave.

    A `--judge` naming another mode than the base's replaces the base's judge (its model, cache,
    ...); the other judge options adjust whichever judge results."""
    from orchestra.config import SessionConfig
    from orchestra.judging.settings import JudgeConfig

    base = base or SessionConfig()
    clock_flags = {field: "--" + dest.replace("_", "-") for dest, field in CLOCK_OPTIONS.items()}
    clock = _updated(base.clock, {CLOCK_OPTIONS[d]: v for d, v in _given(args, CLOCK_OPTIONS).items()}, clock_flags)
    judge_given = {JUDGE_OPTIONS[d][0]: v for d, v in _given(args, JUDGE_OPTIONS).items()}
    judge_base = base.judge if judge_given.get("mode", base.judge.mode) == base.judge.mode else JudgeConfig()
    cache = judge_given.get("cache_dir")
    if cache is not None and cache.exists() and not cache.is_dir():
        raise OrchestraError(f"--judge-cache {cache}: is a file, not a folder")
    mode = judge_given.get("mode", judge_base.mode)
    if mode != "llm":
        ignored = [JUDGE_OPTIONS[d][1] for d in LLM_ONLY if getattr(args, d, None) is not None]
        if ignored:
            raise OrchestraError(f"{' / '.join(ignored)} only apply to --judge llm (the judge is {mode!r})")
    judge = _updated(judge_base, judge_given, {field: flag for field, flag in JUDGE_OPTIONS.values()})
    top = {SESSION_OPTIONS[d]: v for d, v in _given(args, SESSION_OPTIONS).items()}
    return _updated(
        base,
        {**top, "clock": clock, "judge": judge, "noise": _noise(args, base.noise)},
        {field: "--" + dest.replace("_", "-") for dest, field in SESSION_OPTIONS.items()},
    )


# ------------------------------------------------------------------------------ where rollouts run


def add_executor_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("where rollouts run (docs/scale.md)")
    g.add_argument(
        "--executor",
        default="local",
        metavar="NAME",
        help="local: this process's event loop (default); process: a pool of worker processes (CPU-bound judging and app state); "
        "ray: Ray actors on a private local cluster or --ray-address (the `ray` extra); or a plugin's (`orchestra plugins`). "
        "Same records, results file and resume",
    )
    g.add_argument("--workers", type=positive_int, metavar="N", help="worker processes or Ray actors (default: one per CPU)")
    g.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="join this Ray cluster (host:port or auto; ray:// is untested) instead of starting a local one; "
        "a host:port that accepts no connection within 30 s fails the run (docs/scale.md)",
    )


def executor_of(args: argparse.Namespace, host: Host) -> Executor:
    """The executor the options name, built now: an option that does not fit it, an unknown name or
    a Ray head that does not answer fails before any scenario loads."""
    executor: Executor = host.executor(args.executor, workers=args.workers, address=args.ray_address)
    return executor
