"""`orchestra run`: a team (`--team FILE`) or one agent (`--scaffold` + `--model`) over scenarios, one line per rollout."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio

from orchestra.cli._options import (
    SOURCE_HELP,
    add_filter_options,
    add_session_options,
    filter_kwargs,
    no_scenario_error,
    positive_int,
    session_config,
)
from orchestra.cli._output import emit_json, outcome_line, outcome_record
from orchestra.cli._trace import add_trace_options
from orchestra.config import DEFAULT_MAX_STEPS
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.record import RolloutRecord
from orchestra.runner import execute_all, specs_for
from orchestra.scenario_files import ScenarioFile, resolve
from orchestra.spec import AgentConfig, RolloutSpec
from orchestra.teams.config import TeamConfig
from orchestra.teams.loading import TeamFile, read_team, redacted, team_path, with_judge_key

_Spec = tuple[RolloutSpec, ScenarioFile]

#: The options that only shape a one-agent run; with `--team` they live in the team file.
AGENT_ONLY = {"max_steps": "--max-steps", "constrained": "--constrained", "constrained_format": "--constrained-format", "temperature": "--temperature"}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a team (--team) or one agent (--scaffold + --model) over scenarios and judge each rollout")
    p.add_argument("--team", metavar="FILE", help="a team file (teams/*.yaml) or a shipped team's name (`orchestra teams list`)")
    p.add_argument("--scaffold", help="registered scaffold name (see `orchestra plugins`; default tool_calling); with --team: every agent's")
    p.add_argument("--model", help='litellm model string, e.g. "openai/gpt-4o-mini", "orchestra/oracle", "orchestra/scripted:FILE"; '
                   "with --team: every agent's model (e.g. orchestra/oracle to run a team offline)")
    p.add_argument("--endpoint", help="api_base of an OpenAI-compatible server (vLLM, llama.cpp, Ollama)")
    p.add_argument("--api-key", help="API key (default: the provider's environment variable)")
    p.add_argument("--scenarios", nargs="+", required=True, metavar="SOURCE", help=SOURCE_HELP)
    p.add_argument("--max-steps", type=positive_int, help=f"whole-scenario step budget (ARE's default: {DEFAULT_MAX_STEPS})")
    p.add_argument("--concurrency", type=positive_int, default=1, help="rollouts in flight at once, 1 or more (useful with remote models)")
    p.add_argument("--constrained", action="store_true", default=None, help="constrain replies to the scaffold's action schema (small local models)")
    p.add_argument("--constrained-format", choices=("llama_cpp.server", "llama-server", "openai"))
    p.add_argument("--temperature", type=float, default=None, help="sent only when given (ARE's agent sends none)")
    p.add_argument("--out", type=Path, help="write each rollout's result (event log, verdict) here, and the team used (team.yaml)")
    p.add_argument("--json", action="store_true", help="one JSON object per rollout")
    add_session_options(p)
    add_filter_options(p)
    add_trace_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.team is not None:
        team_file, host, team = _team(args)
        config = session_config(args, team.session)  # the team file's session, with the flags given applied
        team = team.model_copy(update={"session": config})
        team_file.require_secrets(team)  # before any scenario loads: a missing key fails now, by name
        specs = _some(specs_for(resolve(args.scenarios, **filter_kwargs(args)), team=team, session=with_judge_key(config)), args)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "team.yaml").write_text(f"# {team_file.path} as run (secrets as references)\n" + redacted(team))
    else:
        if args.model is None:
            raise OrchestraError("give --team FILE, or --model (and --scaffold) for a one-agent run")
        host = Host.create()
        scaffold = args.scaffold or "tool_calling"
        agent = AgentConfig(
            scaffold=scaffold,
            model=ModelConfig(model=args.model, endpoint=args.endpoint, api_key=args.api_key, temperature=args.temperature),
            max_steps=args.max_steps if args.max_steps is not None else DEFAULT_MAX_STEPS,
            scaffold_options={"constrained": bool(args.constrained), "constrained_format": args.constrained_format or "llama_cpp.server"},
        )
        host.scaffold(scaffold)  # fail early on an unknown scaffold
        config = session_config(args)
        specs = _some(specs_for(resolve(args.scenarios, **filter_kwargs(args)), agent=agent, session=config), args)
    host.judge_builder(config.judge.mode)  # fail early on an unknown judge

    async def main() -> list[RolloutRecord]:
        outcomes = []
        async for o in execute_all(specs, host=host, concurrency=args.concurrency):
            outcomes.append(o)
            if args.out:  # the whole record, failed ones too: spec, verdict, ledgers, event log (or the partial one)
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / f"{o.scenario_id}.json").write_text(json.dumps(o.model_dump(mode="json"), indent=1) + "\n")
            emit_json(outcome_record(o)) if args.json else print(outcome_line(o), flush=True)
        return outcomes

    outcomes = anyio.run(main)
    judged = [o.result for o in outcomes if o.result is not None]
    errors = sum(1 for o in outcomes if o.result is None or o.error or o.result.error)
    if not args.json:
        mean = sum(r.reward for r in judged) / len(judged) if judged else 0.0
        print(f"\n{len(outcomes)} rollout(s): {sum(r.success for r in judged)} passed, mean reward {mean:.3f}, {errors} error(s)", file=sys.stderr)
    return 1 if errors else 0


def _some(specs: list[_Spec], args: argparse.Namespace) -> list[_Spec]:
    """The specs, unless there are none (`no_scenario_error`)."""
    if not specs:
        raise no_scenario_error(args, args.scenarios)
    return specs


def _team(args: argparse.Namespace) -> tuple[TeamFile, Host, TeamConfig]:
    """The team file (checked), a host with its plugins, and the team with `--model/--scaffold` applied."""
    agent_only = [flag for dest, flag in AGENT_ONLY.items() if getattr(args, dest) is not None]
    if agent_only:
        raise OrchestraError(f"{' / '.join(agent_only)}: not with --team (set it in the team file: max_steps, scaffold_options, model)")
    if (args.endpoint or args.api_key) and not args.model:
        raise OrchestraError("--endpoint / --api-key with --team need --model (they replace every agent's model)")
    hosts: list[Host] = []

    def host_for(plugins: Sequence[object]) -> Host:  # the host the team is checked against is the one it runs on
        hosts.append(Host.create(plugins))
        return hosts[-1]

    team_file = read_team(team_path(args.team), host=host_for)
    for warning in team_file.warnings:
        print(f"orchestra: warning: {warning}", file=sys.stderr)
    model = ModelConfig(model=args.model, endpoint=args.endpoint, api_key=args.api_key) if args.model else None
    if args.scaffold:
        hosts[-1].scaffold(args.scaffold)  # fail early on an unknown scaffold
    return team_file, hosts[-1], team_file.config.with_overrides(model=model, scaffold=args.scaffold)
