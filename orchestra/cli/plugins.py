"""`orchestra plugins`: every loaded plugin, where it comes from, what it registers, its hooks."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from orchestra.host import Host


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plugins", help="list plugins, what each registers, and the hooks each implements")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    infos = Host.create().plugins()
    if args.json:
        print(json.dumps([asdict(i) for i in infos], indent=2))
        return 0
    for info in infos:
        print(f"{info.name}  ({info.source})")
        print(f"  hooks: {', '.join(info.hooks) or '-'}")
        for kind, names in info.registered.items():
            print(f"  registers {kind}: {', '.join(names)}")
    return 0
