"""`orchestra run`: one agent (scaffold + model) over scenarios, one line per rollout."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import anyio

from orchestra.cli._output import emit_json, outcome_line, outcome_record
from orchestra.cli._sources import SOURCE_HELP, add_filter_options, filter_kwargs
from orchestra.cli._trace import add_trace_options
from orchestra.cli.replay import add_session_options, session_config
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.rollout import AgentConfig, RolloutRecord, execute_all, specs_for
from orchestra.scenario_files import resolve


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run one agent (scaffold + model) over scenarios and judge each rollout")
    p.add_argument("--scaffold", default="tool_calling", help="registered scaffold name (see `orchestra plugins`)")
    p.add_argument("--model", required=True, help='litellm model string, e.g. "openai/gpt-4o-mini", "orchestra/oracle", "orchestra/scripted:FILE"')
    p.add_argument("--endpoint", help="api_base of an OpenAI-compatible server (vLLM, llama.cpp, Ollama)")
    p.add_argument("--api-key", help="API key (default: the provider's environment variable)")
    p.add_argument("--scenarios", nargs="+", required=True, metavar="SOURCE", help=SOURCE_HELP)
    p.add_argument("--max-steps", type=int, default=80, help="whole-scenario step budget (ARE's default: 80)")
    p.add_argument("--concurrency", type=int, default=1, help="rollouts in flight at once (useful with remote models)")
    p.add_argument("--constrained", action="store_true", help="constrain replies to the scaffold's action schema (small local models)")
    p.add_argument("--constrained-format", default="llama_cpp.server", choices=("llama_cpp.server", "llama-server", "openai"))
    p.add_argument("--temperature", type=float, default=None, help="sent only when given (ARE's agent sends none)")
    p.add_argument("--reward-mode", choices=("binary", "dense"), default="binary")
    p.add_argument("--out", type=Path, help="write each rollout's result (event log, verdict) here")
    p.add_argument("--json", action="store_true", help="one JSON object per rollout")
    add_session_options(p)
    add_filter_options(p)
    add_trace_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    host = Host.create()
    agent = AgentConfig(
        scaffold=args.scaffold,
        model=ModelConfig(model=args.model, endpoint=args.endpoint, api_key=args.api_key, temperature=args.temperature),
        max_steps=args.max_steps,
        scaffold_options={"constrained": args.constrained, "constrained_format": args.constrained_format},
    )
    host.scaffold(args.scaffold)  # fail early on an unknown scaffold
    config = session_config(args)

    specs = specs_for(resolve(args.scenarios, **filter_kwargs(args)), agent=agent, session=config)

    async def main() -> list[RolloutRecord]:
        outcomes = []
        async for o in execute_all(specs, host=host, concurrency=args.concurrency):
            outcomes.append(o)
            if args.out and o.result is not None:
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / f"{o.result.scenario_id}.json").write_text(json.dumps(o.result.model_dump(), indent=1, default=str) + "\n")
            emit_json(outcome_record(o)) if args.json else print(outcome_line(o), flush=True)
        return outcomes

    outcomes = anyio.run(main)
    judged = [o.result for o in outcomes if o.result is not None]
    errors = sum(1 for o in outcomes if o.result is None or o.error or o.result.error)
    if not args.json:
        mean = sum(r.reward for r in judged) / len(judged) if judged else 0.0
        print(f"\n{len(outcomes)} rollout(s): {sum(r.success for r in judged)} passed, mean reward {mean:.3f}, {errors} error(s)", file=sys.stderr)
    return 1 if errors else 0
