"""`orchestra run`: a team (`--team FILE`) or one agent (`--scaffold` + `--model`) over scenarios, one line per rollout."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from pydantic import ValidationError

from orchestra.a2a.config import A2AConfig, parse_agent_option
from orchestra.cli._interrupt import Interrupt
from orchestra.cli._options import (
    SOURCE_HELP,
    add_executor_options,
    add_filter_options,
    add_noise_options,
    add_session_options,
    executor_of,
    filter_kwargs,
    no_scenario_error,
    non_negative_int,
    positive_int,
    session_config,
)
from orchestra.cli._output import emit_json, noise_totals, outcome_line, outcome_record, totals_line
from orchestra.cli._team import team_from_args
from orchestra.cli._trace import add_trace_options
from orchestra.config import DEFAULT_MAX_STEPS
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.openai_client import TOKEN_REQUEST
from orchestra.record import RolloutRecord
from orchestra.runs.batch import BatchRun
from orchestra.runs.executors import Executor
from orchestra.runs.preflight import DEFAULT_TIMEOUT, PROBE_TIMEOUT, endpoint_health, preflight
from orchestra.runs.progress import display_for
from orchestra.runs.run_dir import Manifest, RunDir
from orchestra.runs.runner import specs_for
from orchestra.runs.summary import format_summary, summarize
from orchestra.scenario_files import ScenarioFile, resolve
from orchestra.spec import AgentConfig, RolloutSpec
from orchestra.teams.catalog import team_path
from orchestra.teams.config import A2A_NO_MODEL

_Spec = tuple[RolloutSpec, ScenarioFile]

SUMMARY = "summary.json"

#: `--max-consecutive-errors`' default: errors that follow one another this long are the setup's, not the scenarios'.
DEFAULT_MAX_CONSECUTIVE_ERRORS = 10

#: The options that only shape a one-agent run; with `--team` they live in the team file.
AGENT_ONLY = {
    "agent": "--agent",
    "a2a_timeout": "--a2a-timeout",
    "max_steps": "--max-steps",
    "constrained": "--constrained",
    "constrained_format": "--constrained-format",
    "temperature": "--temperature",
}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a team (--team) or one agent (--scaffold + --model) over scenarios and judge each rollout")
    p.add_argument("--team", metavar="FILE", help="a team file (orchestra/teams/shipped/*.yaml) or a shipped team's name (`orchestra teams list`)")
    p.add_argument(
        "--agent",
        metavar="a2a:URL",
        help="the agent under test is a remote A2A agent (its card at URL/.well-known/agent-card.json); --model is then its "
        "model proxy's upstream (docs/agent2agent.md)",
    )
    p.add_argument("--a2a-timeout", type=float, metavar="SECONDS", help="with --agent: wall seconds the A2A agent has to answer one message (default 600)")
    p.add_argument("--scaffold", help="registered scaffold name (see `orchestra plugins`; default tool_calling); with --team: every agent's")
    p.add_argument(
        "--model",
        help='litellm model string, e.g. "openai/gpt-4o-mini", "orchestra/oracle", "orchestra/scripted:FILE"; '
        "with --team: every agent's model (e.g. orchestra/oracle to run a team offline)",
    )
    p.add_argument("--endpoint", help="api_base of an OpenAI-compatible server (vLLM, llama.cpp, Ollama)")
    p.add_argument("--api-key", help="API key (default: the provider's environment variable)")
    p.add_argument("--scenarios", nargs="+", required=True, metavar="SOURCE", help=SOURCE_HELP)
    p.add_argument("--max-steps", type=positive_int, help=f"whole-scenario step budget (ARE's default: {DEFAULT_MAX_STEPS})")
    p.add_argument(
        "--concurrency",
        type=positive_int,
        default=1,
        help="rollouts in flight at once, 1 or more (useful with remote models); per worker with --executor process|ray",
    )
    p.add_argument(
        "--runs",
        type=positive_int,
        default=1,
        metavar="K",
        help="run each scenario K times (independent rollouts, run index 0..K-1; pass@1 ± stderr, pass@k, pass^k in the summary)",
    )
    p.add_argument("--seed", type=int, help="sampling seed: each rollout's model gets seed + its run index (OpenAI-style `seed`)")
    p.add_argument("--constrained", action="store_true", default=None, help="constrain replies to the scaffold's action schema (small local models)")
    p.add_argument("--constrained-format", choices=("llama_cpp.server", "llama-server", "openai"))
    p.add_argument("--temperature", type=float, default=None, help="sent only when given (ARE's agent sends none)")
    p.add_argument(
        "--token-ids",
        action="store_true",
        help="ask the endpoint (vLLM, SGLang, ...) for each call's token ids and logprobs; with --out, each episode's training "
        "trace (the trainable agents' turns in token ids) is kept as training/NAME.json (docs/rl.md)",
    )
    m = p.add_argument_group("model calls (every agent's model)")
    m.add_argument("--model-retries", type=non_negative_int, help="retries of a call that timed out, was rate-limited (429) or hit a 5xx (default 4)")
    m.add_argument("--model-backoff", type=float, metavar="SECONDS", help="wait before the first retry, doubling each time (default 1)")
    m.add_argument("--model-timeout", type=float, metavar="SECONDS", help="wall-clock limit of one call (default 600)")
    p.add_argument(
        "--are-model-failures",
        action="store_true",
        help="parity runs: judge a rollout whose model calls all failed as ARE does (default: it is an ERROR whatever the judge says)",
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="the run folder: results.jsonl (one record per line, as each finishes), manifest.json, summary.json, "
        "rollouts/NAME.json, team.yaml; running the same command again resumes (finished rollouts are skipped)",
    )
    p.add_argument(
        "--max-consecutive-errors",
        type=non_negative_int,
        default=DEFAULT_MAX_CONSECUTIVE_ERRORS,
        metavar="N",
        help=f"stop the run after N rollouts in a row ended in ERROR (a model that died mid-run; default {DEFAULT_MAX_CONSECUTIVE_ERRORS}, 0: never); "
        "what finished is kept and the same command resumes",
    )
    p.add_argument("--no-progress", action="store_true", help="plain lines even on a terminal (no progress bar)")
    p.add_argument("--no-preflight", action="store_true", help="skip the checks before the first rollout (models, endpoints, scenario files)")
    p.add_argument(
        "--preflight-timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"seconds an endpoint has to answer its model listing at preflight (default {DEFAULT_TIMEOUT:g}); "
        f"its one-token test request may take {PROBE_TIMEOUT:g} s or this, whichever is longer",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per rollout")
    add_session_options(p)
    add_noise_options(p)
    add_filter_options(p)
    add_executor_options(p)
    add_trace_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    team_yaml: str | None = None
    if args.team is not None:
        agent_only = [flag for dest, flag in AGENT_ONLY.items() if getattr(args, dest) is not None]
        if agent_only:
            where = (
                "main: {a2a: URL} or an app-agent's a2a: URL"
                if "--agent" in agent_only or "--a2a-timeout" in agent_only
                else "max_steps, scaffold_options, model"
            )
            raise OrchestraError(f"{' / '.join(agent_only)}: not with --team (set it in the team file: {where})")
        settings: dict[str, Any] = {**_call_settings(args), **({"extra": dict(TOKEN_REQUEST)} if args.token_ids else {})}
        host, team = team_from_args(args, model_settings=settings)
        config, team_yaml = team.config.session, team.yaml
        specs = _some(specs_for(resolve(args.scenarios, **filter_kwargs(args)), team=team.config, session=team.session, **_spec_settings(args)), args)
    else:
        a2a = _a2a_agent(args)
        if args.model is None and a2a is None:
            raise OrchestraError("give --team FILE, or --model (and --scaffold) for a one-agent run, or --agent a2a:URL")
        host = Host.create()
        scaffold = args.scaffold or "tool_calling"
        agent = AgentConfig(
            scaffold=scaffold,
            a2a=a2a,
            model=ModelConfig(
                model=args.model or A2A_NO_MODEL,
                endpoint=args.endpoint,
                api_key=args.api_key,
                temperature=args.temperature,
                extra=dict(TOKEN_REQUEST) if args.token_ids else {},
                **_call_settings(args),
            ),
            max_steps=args.max_steps if args.max_steps is not None else DEFAULT_MAX_STEPS,  # an A2A agent's too (docs/agent2agent.md: its steps)
            scaffold_options={}
            if a2a is not None
            else {"constrained": bool(args.constrained), "constrained_format": args.constrained_format or "llama_cpp.server"},
        )
        host.scaffold(scaffold)  # fail early on an unknown scaffold
        config = session_config(args)
        specs = _some(specs_for(resolve(args.scenarios, **filter_kwargs(args)), agent=agent, session=config, **_spec_settings(args)), args)
    executor = executor_of(args, host)  # options that do not fit the executor fail before anything loads
    host.judge_builder(config.judge.mode)  # fail early on an unknown judge
    if not args.no_preflight:
        preflight(specs, host, timeout=args.preflight_timeout, team_file=str(team_path(args.team)) if args.team is not None else None)
    return _run_batch(args, specs, host, executor, team_yaml)


def _run_batch(args: argparse.Namespace, specs: list[_Spec], host: Host, executor: Executor, team_yaml: str | None) -> int:
    """Run what is left of the batch, streaming records to the run folder; a summary at the end."""
    batch = BatchRun.open(specs, args.out, runs=args.runs, plugins=host.third_party())
    if batch.run_dir is not None and team_yaml is not None:
        (batch.run_dir.path / "team.yaml").write_text(team_yaml)
    if batch.earlier or batch.retried:
        retried = f", {batch.retried} ERROR rollout(s) run again" if batch.retried else ""
        print(
            f"orchestra: resuming {args.out}: {len(batch.earlier)} of {len(specs)} rollout(s) finished before{retried}; running {len(batch.todo)}",
            file=sys.stderr,
        )
    display = display_for(
        json_rows=args.json,
        line=outcome_line,
        emit=lambda o: emit_json(outcome_record(o)),
        total=len(specs),
        done=batch.earlier,
        rich=False if args.no_progress else None,
    )
    ctrl_c = Interrupt(args, display=display, last_words=lambda why: _stopped(args, batch.records, len(specs), batch.run_dir, why=why))

    async def rollouts(tg: anyio.abc.TaskGroup) -> None:
        with display:
            await batch.run(
                host=host,
                executor=executor,
                concurrency=args.concurrency,
                max_consecutive_errors=args.max_consecutive_errors,
                on_record=display.add,
                keeping=ctrl_c.keeping,
                health=endpoint_health(specs, host, timeout=args.preflight_timeout),  # after an ERROR: a dead endpoint stops the run now
            )

    ctrl_c.run(rollouts)
    everything = batch.records
    if ctrl_c.why is not None or batch.stopped is not None:
        _stopped(args, everything, len(specs), batch.run_dir, why=ctrl_c.why or batch.stopped or "")
        return ctrl_c.code if ctrl_c.why is not None else 1
    errors = sum(o.status == "ERROR" for o in everything)
    run_dir = batch.run_dir
    summary = summarize(everything, Manifest.model_validate_json(run_dir.manifest_path.read_text()) if run_dir is not None else None)
    if run_dir is not None:
        try:
            (run_dir.path / SUMMARY).write_text(summary.model_dump_json(indent=1) + "\n")
        except OSError as exc:
            raise run_dir.unwritable(exc) from None
    if not args.json:
        print(f"\n{totals_line(everything)}", file=sys.stderr)
        totals = noise_totals(everything)
        if totals:
            print(totals, file=sys.stderr)
        if args.runs > 1 or len(summary.capabilities) > 2:
            print(format_summary(summary), file=sys.stderr)
    return 1 if errors else 0


def _stopped(args: argparse.Namespace, everything: list[RolloutRecord], total: int, run_dir: RunDir | None, *, why: str) -> None:
    """A run that stopped early (Ctrl-C, errors in a row): why, what finished, and the command that resumes."""
    argv = getattr(args, "argv", None) or sys.argv[1:]
    if run_dir is not None and not everything:  # nothing kept: results.jsonl may not even exist
        print(f"\norchestra: {why}: none of {total} rollout(s) finished; rerun with: orchestra {shlex.join(argv)}", file=sys.stderr)
    elif run_dir is not None:
        print(
            f"\norchestra: {why}: {len(everything)} of {total} rollout(s) finished, kept in {run_dir.results}; resume with: orchestra {shlex.join(argv)}",
            file=sys.stderr,
        )
    else:
        print(
            f"\norchestra: {why}: {len(everything)} of {total} rollout(s) finished; nothing kept (give --out DIR to keep results and resume)",
            file=sys.stderr,
        )


def _a2a_agent(args: argparse.Namespace) -> A2AConfig | None:
    """`--agent a2a:URL` (with `--a2a-timeout`), or None."""
    if args.agent is None:
        if args.a2a_timeout is not None:
            raise OrchestraError("--a2a-timeout: only with --agent a2a:URL")
        return None
    scaffold_flags = [
        flag for flag, given in (("--scaffold", args.scaffold), ("--constrained", args.constrained), ("--constrained-format", args.constrained_format)) if given
    ]
    if scaffold_flags:
        raise OrchestraError(
            f"{' / '.join(scaffold_flags)}: not with --agent a2a:URL (the remote agent runs its own loop; --model is the model its proxy calls)"
        )
    try:
        config = parse_agent_option(args.agent)
    except ValueError as exc:  # one line naming the option (a pydantic error included)
        raise OrchestraError(str(exc)) from None
    if args.a2a_timeout is not None:
        try:
            config = A2AConfig(url=config.url, timeout_seconds=args.a2a_timeout)
        except ValidationError as exc:
            raise OrchestraError(f"--a2a-timeout {args.a2a_timeout:g}: {exc.errors()[0]['msg']}") from None
    return config


def _call_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The `ModelConfig` fields the model-call options set (only those given)."""
    given = {"max_retries": args.model_retries, "backoff_seconds": args.model_backoff, "timeout_seconds": args.model_timeout}
    return {k: v for k, v in given.items() if v is not None}


def _spec_settings(args: argparse.Namespace) -> dict[str, Any]:
    return {"are_model_failures": args.are_model_failures, "runs": args.runs, "seed": args.seed}


def _some(specs: list[_Spec], args: argparse.Namespace) -> list[_Spec]:
    """The specs, unless there are none (`no_scenario_error`)."""
    if not specs:
        raise no_scenario_error(args, args.scenarios)
    return specs
