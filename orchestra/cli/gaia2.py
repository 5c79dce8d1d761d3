"""`orchestra gaia2`: Gaia2's leaderboard protocol (ARE's `gaia2-run`) — standard, agent2agent and
noise phases, ARE's submission layout, the seven-column table (`orchestra.gaia2.protocol`, docs/gaia2.md)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from orchestra.cli._interrupt import Interrupt
from orchestra.cli._options import add_noise_knobs, add_session_options, non_negative_int, positive_int, session_config
from orchestra.cli._output import emit_json, outcome_line, outcome_record
from orchestra.cli._team import team_from_args
from orchestra.config import DEFAULT_MAX_STEPS, SessionConfig
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.record import RolloutRecord
from orchestra.runs.batch import BatchRun
from orchestra.runs.preflight import DEFAULT_TIMEOUT, endpoint_health, preflight
from orchestra.runs.progress import display_for
from orchestra.spec import AgentConfig
from orchestra.teams.config import TeamConfig
from orchestra.teams.loading import with_judge_key

if TYPE_CHECKING:  # pragma: no cover - types only
    from orchestra.gaia2.phases import Phase
    from orchestra.gaia2.protocol import Gaia2Plan, Gaia2Result

DEFAULT_OUT = Path("gaia2_results")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gaia2", help="Gaia2's leaderboard protocol: standard, agent2agent and noise phases, ARE's submission files, the seven-column table")
    p.add_argument("--team", metavar="FILE", help="a team file or a shipped team's name; its main agent runs standard and noise, agent2agent adds app-agents")
    p.add_argument("--scaffold", help="registered scaffold name (default tool_calling); with --team: every agent's")
    p.add_argument("--model", help="litellm model string (e.g. orchestra/oracle); with --team: every agent's model")
    p.add_argument("--endpoint", help="api_base of an OpenAI-compatible server")
    p.add_argument("--api-key", help="API key (default: the provider's environment variable)")
    p.add_argument("--runs", type=positive_int, default=3, metavar="K", help="runs of each scenario (default 3, as gaia2-run)")
    p.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, metavar="DIR", help=f"the submission folder (default {DEFAULT_OUT}); the same command again resumes"
    )
    p.add_argument(
        "--source",
        default="auto",
        help="auto (default: the Gaia2 dataset when all its configs are in the local Hugging Face cache, else the bundled corpus), "
        "hf[@REVISION], bundled, or a folder in ARE's layout (DIR/<config>/...)",
    )
    p.add_argument("--concurrency", type=positive_int, default=1, help="rollouts in flight at once")
    p.add_argument("--limit", type=positive_int, help="at most this many scenarios per phase and config (a quick check; not a submission)")
    p.add_argument("--id", dest="scenario_ids", action="append", default=[], metavar="ID", help="keep this scenario id; repeatable (not a submission)")
    p.add_argument("--max-steps", type=positive_int, help=f"one agent's step budget (default {DEFAULT_MAX_STEPS}); with --team: in the team file")
    p.add_argument("--no-progress", action="store_true", help="plain lines even on a terminal")
    p.add_argument("--no-preflight", action="store_true", help="skip the checks before the first rollout")
    p.add_argument("--preflight-timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS")
    p.add_argument("--json", action="store_true", help="one JSON object per rollout, then the table as JSON")
    add_session_options(p)
    add_noise_knobs(p.add_argument_group("the noise phase (Gaia2's noise; docs/gaia2.md)"), turns_on=False, env_events=non_negative_int)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from orchestra.gaia2.protocol import plan_gaia2, select_files
    from orchestra.gaia2.sources import choose_source
    from orchestra.gaia2.traces import TraceWriter

    writer = TraceWriter()
    team, agent, host, base, for_specs = _policy(args, writer)
    source, line = choose_source(args.source)
    print(f"orchestra: gaia2: {line}", file=sys.stderr)
    source.check()  # a folder with none of Gaia2's configs: one line, now
    plan = plan_gaia2(
        team=team,
        agent=agent,
        session=base,
        source=source,
        out=args.out,
        runs=args.runs,
        select=select_files(scenario_ids=args.scenario_ids, limit=args.limit),
        session_for_specs=for_specs,
        writer=writer,
    )
    if source.missing:  # a folder without some of Gaia2's configs: their columns stay empty, as with --limit
        print(
            f"orchestra: gaia2: {args.source} has no {', '.join(f'{c}/' for c in source.missing)} folder: those columns stay empty (not a submission)",
            file=sys.stderr,
        )
    host.judge_builder(base.judge.mode)
    if not args.no_preflight:
        preflight([s for b in plan.batches for s in b.specs], host, timeout=args.preflight_timeout)
    return _run_phases(args, host, plan)


def _policy(
    args: argparse.Namespace, writer: object
) -> tuple[TeamConfig | None, AgentConfig | None, Host, SessionConfig, Callable[[SessionConfig], SessionConfig]]:
    """The team (or one agent), the host it runs on (its plugins and the trace writer), the base
    session, and what a phase's session becomes in a team's specs (the judge's key expanded)."""
    if args.team is not None:
        if args.max_steps is not None:
            raise OrchestraError("--max-steps: not with --team (set max_steps in the team file)")
        host, team = team_from_args(args, plugins=[writer])
        return team.config, None, host, team.config.session, with_judge_key
    if args.model is None:
        raise OrchestraError("give --team FILE, or --model (and --scaffold) for one agent")
    host = Host.create([writer])
    scaffold = args.scaffold or "tool_calling"
    host.scaffold(scaffold)
    agent = AgentConfig(
        scaffold=scaffold,
        model=ModelConfig(model=args.model, endpoint=args.endpoint, api_key=args.api_key),
        max_steps=args.max_steps if args.max_steps is not None else DEFAULT_MAX_STEPS,
    )
    return None, agent, host, session_config(args), lambda s: s


class _Phases:
    """The command line's view of the phases: a line as each starts, the progress display, and
    what finished in the phase that was running when the run stopped."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.phase: Phase | None = None
        self.batch: BatchRun | None = None
        self.display: Any = None

    def started(self, phase: Phase, batch: BatchRun) -> Callable[[RolloutRecord], None] | None:
        self.phase, self.batch = phase, batch
        total = len(batch.batch)
        if not batch.todo:
            print(f"orchestra: gaia2: {phase.name}: all {total} rollout(s) finished before; not run again", file=sys.stderr)
            return None
        if batch.earlier or batch.retried:
            print(f"orchestra: gaia2: {phase.name}: resuming: {len(batch.earlier)} of {total} finished before; running {len(batch.todo)}", file=sys.stderr)
        else:
            print(f"orchestra: gaia2: {phase.name}: {total} rollout(s)", file=sys.stderr)
        self.display = display_for(
            json_rows=self.args.json,
            line=outcome_line,
            emit=lambda o: emit_json(outcome_record(o)),
            total=total,
            done=batch.earlier,
            rich=False if self.args.no_progress else None,
        )
        self.display.__enter__()
        return self.display.add

    def finished(self, phase: Phase, batch: BatchRun) -> None:
        self.close()

    def __exit__(self, *exc: object) -> None:  # the Ctrl-C handling closes "the display" before its last words
        self.close()

    def close(self) -> None:
        display, self.display = self.display, None
        if display is not None:
            display.__exit__(None, None, None)

    def last_words(self, why: str) -> None:
        """Ctrl-C: what finished in the phase, where it is kept, and the command that resumes."""
        if self.batch is None or self.phase is None or self.batch.run_dir is None:
            return
        argv = getattr(self.args, "argv", None) or sys.argv[1:]
        finished, total, phase = len(self.batch.records), len(self.batch.batch), self.phase.name
        if not finished:  # nothing kept in this phase: its results.jsonl may not even exist
            print(
                f"\norchestra: {why} in phase {phase}: none of its {total} rollout(s) finished (earlier phases are complete); "
                f"rerun with: orchestra {shlex.join(argv)}",
                file=sys.stderr,
            )
            return
        print(
            f"\norchestra: {why} in phase {phase}: {finished} of its {total} rollout(s) finished, kept in {self.batch.run_dir.results} "
            f"(earlier phases are complete); resume with: orchestra {shlex.join(argv)}",
            file=sys.stderr,
        )


def _run_phases(args: argparse.Namespace, host: Host, plan: Gaia2Plan) -> int:
    """Every phase's remaining rollouts, each kept as it finishes, then ARE's files and the table.

    Run as the program, Ctrl-C ends the process at once, even while a rollout is inside synchronous
    work (a scenario loading, the judge) that an event-loop signal receiver would first wait for:
    every finished rollout is on disk (its record, its trajectory, its trace) and the rollouts in
    flight are abandoned; the same command reruns only those. Called in-process (`main(argv)`), the
    rollouts are cancelled at their next await and this returns."""
    from orchestra.gaia2.protocol import open_phases, run_phases
    from orchestra.gaia2.table import format_table

    open_phases(plan, host.third_party())  # a folder of another configuration is refused before the Ctrl-C handling starts
    phases = _Phases(args)
    ctrl_c = Interrupt(args, display=phases, last_words=phases.last_words)
    result: list[Gaia2Result] = []

    async def rollouts(tg: anyio.abc.TaskGroup) -> None:
        try:
            health = endpoint_health([s for b in plan.batches for s in b.specs], host, timeout=args.preflight_timeout)  # a dead endpoint stops the run
            result.append(await run_phases(plan, host, concurrency=args.concurrency, observer=phases, keeping=ctrl_c.keeping, health=health))
        finally:
            phases.close()

    ctrl_c.run(rollouts)
    if ctrl_c.why is not None or not result:
        phases.last_words(ctrl_c.why or "interrupted")
        return ctrl_c.code
    if result[0].stopped is not None:  # the submission folder could not be written, or the model's endpoint died, mid-run
        phases.last_words(result[0].stopped)
        return 1
    table = result[0].table
    assert table is not None
    if args.json:
        emit_json(json.loads(table.model_dump_json()))
    else:
        print("\n" + format_table(table), file=sys.stderr)
        print(f"\norchestra: gaia2: submission folder {args.out} (ARE's gaia2-run layout; upload: docs/gaia2.md)", file=sys.stderr)
    return 1 if any(c.errors for c in table.columns) else 0
