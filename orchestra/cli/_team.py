"""`--team FILE` for the commands that run a team (`orchestra run`, `orchestra gaia2`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.teams.config import TeamConfig
from orchestra.teams.loading import TeamFile, read_team, team_path


def team_from_args(args: argparse.Namespace, *, plugins: Sequence[object] = ()) -> tuple[TeamFile, Host, TeamConfig]:
    """The team file `--team` names (checked against the host it runs on: the team's plugins, then
    `plugins`), that host, and the team with `--model/--endpoint/--api-key/--scaffold` applied."""
    if (args.endpoint or args.api_key) and not args.model:
        raise OrchestraError("--endpoint / --api-key with --team need --model (they replace every agent's model)")
    hosts: list[Host] = []

    def host_for(team_plugins: Sequence[object]) -> Host:  # the host the team is checked against is the one it runs on
        hosts.append(Host.create([*team_plugins, *plugins]))
        return hosts[-1]

    team_file = read_team(team_path(args.team), host=host_for)
    for warning in team_file.warnings:
        print(f"orchestra: warning: {warning}", file=sys.stderr)
    model = ModelConfig(model=args.model, endpoint=args.endpoint, api_key=args.api_key) if args.model else None
    if args.scaffold:
        hosts[-1].scaffold(args.scaffold)  # fail early on an unknown scaffold
    return team_file, hosts[-1], team_file.config.with_overrides(model=model, scaffold=args.scaffold)
