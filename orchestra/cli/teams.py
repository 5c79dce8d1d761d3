"""`orchestra teams check FILE...` (validate team files without running) and `orchestra teams list`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from orchestra.teams.catalog import shipped_teams, team_path

if TYPE_CHECKING:  # pragma: no cover - import for type checkers only
    from orchestra.host import Host
    from orchestra.teams.config import AgentConfig, TeamConfig


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("teams", help="check team files (orchestra/teams/shipped/*.yaml) or list the shipped teams")
    tsub = p.add_subparsers(dest="teams_command", required=True, metavar="SUBCOMMAND")
    check = tsub.add_parser(
        "check",
        help="validate team files without running them (exit 2 if any is invalid)",
        description="Validate each team file: YAML, schema, plugins (imported), scaffolds (registered), app names "
        "(known to ARE), ${VAR} references (unset ones are warnings). One line per file.",
    )
    check.add_argument("files", nargs="+", metavar="FILE", help="a team file, or the name of a shipped team (e.g. oracle)")
    check.set_defaults(func=run_check)
    lst = tsub.add_parser("list", help="the shipped teams (orchestra/teams/shipped/*.yaml) with their descriptions")
    lst.set_defaults(func=run_list)


def describe_agent(agent: AgentConfig) -> str:
    """`react openai/gpt-4o` (+ endpoint when set); a remote A2A agent: `a2a URL` (+ its proxy's
    model when it has one: `model proxy openai/gpt-4o`)."""
    from orchestra.teams.config import A2A_NO_MODEL

    endpoint = f" @ {agent.model.endpoint}" if agent.model.endpoint else ""
    if agent.a2a is not None:
        proxy = f" (model proxy: {agent.model.model}{endpoint})" if agent.model.model != A2A_NO_MODEL else ""
        return f"a2a {agent.a2a.url}{proxy}"
    return f"{agent.scaffold} {agent.model.model}{endpoint}"


def summary(team: TeamConfig) -> str:
    """One line: the main agent, which apps become app-agents and with what, the overrides."""
    parts = [f"team {team.name}", f"main: {describe_agent(team.main)}"]
    a2a = team.app_agents
    if a2a is None:
        parts.append("no app-agents")
    else:
        which = (
            f"proportion {a2a.proportion} (ARE's draw)"
            if a2a.proportion is not None
            else ("all apps" if a2a.apps == "all" else ", ".join(a2a.apps or []) or "none (apps: [] replaces no app)")
        )
        d = a2a.defaults
        inherited = d.model is None and d.scaffold is None and d.a2a is None and team.main.a2a is None  # an A2A main's loop is not inherited
        agents = "as main" if inherited else describe_agent(team.app_agent("(defaults)"))
        parts.append(f"app-agents: {which} -> {agents}")
        if a2a.overrides:
            parts.append("overrides: " + "; ".join(f"{app} -> {describe_agent(team.app_agent(app))}" for app in a2a.overrides))
    if team.plugins:
        parts.append(f"plugins: {', '.join(team.plugins)}")
    return " | ".join(parts)


def run_check(args: argparse.Namespace) -> int:
    from orchestra.host import Host
    from orchestra.teams.loading import TeamError, read_team

    hosts: dict[tuple[int, ...], Host] = {}

    def host(plugins: Sequence[object]) -> Host:
        key = tuple(id(p) for p in plugins)
        if key not in hosts:
            hosts[key] = Host.create(plugins)
        return hosts[key]

    failed = 0
    for name in args.files:
        try:
            team = read_team(team_path(name), scaffolds=lambda plugins: host(plugins).scaffolds)
        except TeamError as exc:
            failed += 1
            for i, problem in enumerate(exc.problems):
                print(f"{'FAIL' if i == 0 else '':<4}  {problem}", flush=True)
            continue
        print(f"OK    {team.path}: {summary(team.config)}", flush=True)
        for warning in team.warnings:
            print(f"orchestra: warning: {warning}", file=sys.stderr, flush=True)
        for ref in team.unset_secrets():
            print(f"orchestra: warning: {ref.unset_message(team.path)} (`orchestra run --team` will refuse to start without it)", file=sys.stderr, flush=True)
    if len(args.files) > 1:
        print(f"\n{len(args.files)} team file(s): {len(args.files) - failed} ok, {failed} invalid", file=sys.stderr)
    return 2 if failed else 0


def run_list(args: argparse.Namespace) -> int:
    """Name, file and one-line description of each shipped team (not validated: `teams check` does that)."""
    import yaml

    for path in shipped_teams():
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            description = str(data.get("description") or "").strip() if isinstance(data, dict) else ""
        except yaml.YAMLError:
            description = "(not valid YAML; see `orchestra teams check`)"
        print(f"{path.stem:<16}  {description.splitlines()[0] if description else ''}")
    return 0
