"""`--team FILE` for the commands that run a team (`orchestra run`, `orchestra gaia2`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from orchestra.cli._options import session_config
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.teams.loading import ResolvedTeam, read_team, team_path


def team_from_args(args: argparse.Namespace, *, plugins: Sequence[object] = (), model_settings: Mapping[str, Any] | None = None) -> tuple[Host, ResolvedTeam]:
    """The host the team runs on (its plugins, then `plugins`) and the team `--team` names, checked
    against that host and resolved: `--model/--endpoint/--api-key/--scaffold` applied, the session
    flags over the file's `session:`, `model_settings` on every agent's model, secrets checked."""
    if (args.endpoint or args.api_key) and not args.model:
        raise OrchestraError("--endpoint / --api-key with --team need --model (they replace every agent's model)")
    hosts: list[Host] = []

    def scaffolds(team_plugins: Sequence[object]) -> Mapping[str, Any]:  # the team is checked against the host it runs on
        hosts.append(Host.create([*team_plugins, *plugins]))
        return hosts[-1].scaffolds

    team_file = read_team(team_path(args.team), scaffolds=scaffolds)
    for warning in team_file.warnings:
        print(f"orchestra: warning: {warning}", file=sys.stderr)
    host = hosts[-1]
    if args.scaffold:
        host.scaffold(args.scaffold)  # fail early on an unknown scaffold
    model = ModelConfig(model=args.model, endpoint=args.endpoint, api_key=args.api_key) if args.model else None
    session = session_config(args, team_file.config.session)  # the flags given, over the file's `session:`
    resolved = team_file.resolve(model=model, scaffold=args.scaffold, session=session, model_settings=model_settings)
    return host, resolved
