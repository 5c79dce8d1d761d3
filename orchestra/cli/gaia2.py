"""`orchestra gaia2`: Gaia2's leaderboard protocol (ARE's `gaia2-run`) — standard, agent2agent and
noise phases, ARE's submission layout, the seven-column table (`orchestra.gaia2.protocol`, docs/gaia2.md)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from orchestra.cli._interrupt import Interrupt
from orchestra.cli._options import add_noise_knobs, add_session_options, non_negative_int, positive_int, session_config
from orchestra.cli._output import emit_json, outcome_line, outcome_record
from orchestra.cli._team import team_from_args
from orchestra.config import DEFAULT_MAX_STEPS
from orchestra.errors import OrchestraError
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.record import RolloutRecord
from orchestra.runs.preflight import DEFAULT_TIMEOUT, preflight
from orchestra.runs.progress import display_for
from orchestra.runs.run_dir import RunDir
from orchestra.runs.runner import execute_all, specs_for
from orchestra.scenario_files import ScenarioFile
from orchestra.spec import AgentConfig, RolloutSpec
from orchestra.teams.config import TeamConfig
from orchestra.teams.loading import with_judge_key

DEFAULT_OUT = Path("gaia2_results")
TABLE = "gaia2_table.json"


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
    from orchestra.are.submission import runner_config
    from orchestra.gaia2.phases import PHASES, phase_policy, phase_session
    from orchestra.gaia2.sources import choose_source
    from orchestra.gaia2.traces import TraceTarget, TraceWriter, trace_key

    writer = TraceWriter()
    team, agent, host, base = _policy(args, writer)
    source, line = choose_source(args.source)
    print(f"orchestra: gaia2: {line}", file=sys.stderr)
    model = (team.main if team is not None else agent).model.model  # type: ignore[union-attr]
    batches: list[tuple[Any, str, list[tuple[RolloutSpec, ScenarioFile]], Any]] = []
    for phase in PHASES:
        phase_team, phase_agent = phase_policy(phase, team=team, agent=agent)
        session = phase_session(phase, base)
        if phase_team is not None:  # the team's own session is the phase's: noise settings belong to the noise phase only
            phase_team = phase_team.model_copy(update={"session": session})
        label = phase_team.name if phase_team is not None else phase_agent.scaffold  # type: ignore[union-attr]
        config = runner_config(
            model=model,
            agent=f"orchestra:{label}",
            a2a_app_prop=phase.a2a_app_prop,
            a2a_model=model if phase.a2a_app_prop else None,
            noise=session.noise,
        )
        for name in phase.configs:
            files = _selected(source.files(name), args)
            specs = specs_for(files, team=phase_team, agent=phase_agent, session=with_judge_key(session) if phase_team is not None else session, runs=args.runs)
            folder = args.out / phase.name / name
            for spec, _ in specs:
                writer.targets[trace_key(spec)] = TraceTarget(folder=folder, phase=phase, config=name, runner_config=config, hf_metadata=source.hf_metadata)
            batches.append((phase, name, specs, config))
    everything = [s for _, _, specs, _ in batches for s in specs]
    if not everything:
        raise OrchestraError("no scenario selected (check --id / --limit and --source)")
    host.judge_builder(base.judge.mode)
    if not args.no_preflight:
        preflight(everything, host, timeout=args.preflight_timeout)
    return _run_phases(args, host, batches, source, model)


def _key(spec: RolloutSpec) -> str:
    from orchestra.runs.run_dir import rollout_key

    return rollout_key(spec)


def _selected(files: list[ScenarioFile], args: argparse.Namespace) -> list[ScenarioFile]:
    from orchestra.scenario_info import describe

    if args.scenario_ids:
        files = [f for f in files if f.stem in args.scenario_ids or describe(f).scenario_id in args.scenario_ids]
    return files[: args.limit] if args.limit else files


def _policy(args: argparse.Namespace, writer: object) -> tuple[TeamConfig | None, AgentConfig | None, Host, Any]:
    """The team (or one agent), the host it runs on (its plugins and the trace writer), the session."""
    if args.team is not None:
        if args.max_steps is not None:
            raise OrchestraError("--max-steps: not with --team (set max_steps in the team file)")
        team_file, host, team = team_from_args(args, plugins=[writer])
        base = session_config(args, team.session)
        team = team.model_copy(update={"session": base})
        team_file.require_secrets(team)
        return team, None, host, base
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
    return None, agent, host, session_config(args)


def _run_phases(args: argparse.Namespace, host: Host, batches: list[Any], source: Any, model: str) -> int:
    from orchestra.gaia2.phases import PHASES
    from orchestra.gaia2.table import format_table, gaia2_table
    from orchestra.gaia2.traces import write_output_jsonl

    records: dict[tuple[str, str], list[RolloutRecord]] = {}
    # Every phase's folder is checked before anything runs: a folder of another configuration is
    # refused at once, not after the phases before it ran again.
    run_dirs: dict[str, RunDir] = {}
    if (args.out / "results.jsonl").is_file() or (args.out / "manifest.json").is_file():
        raise OrchestraError(f"--out {args.out}: holds an `orchestra run` folder, not a gaia2 one; use another --out folder")
    for phase in PHASES:
        specs = [s for b in batches if b[0] is phase for s in b[2]]
        if specs:
            run_dirs[phase.name] = RunDir(args.out / phase.name, start_over=args.out).open(specs, runs=args.runs)
    for phase in PHASES:
        phase_batches = [b for b in batches if b[0] is phase]
        specs = [s for _, _, ss, _ in phase_batches for s in ss]
        if not specs:
            continue
        run_dir = run_dirs[phase.name]
        for torn in sorted(run_dir.path.glob("*/hf/*.json.tmp")):  # a trace being written when the command was killed
            torn.unlink()
        earlier = list(run_dir.finished.values())
        todo = run_dir.remaining(specs)
        if not todo:
            print(f"orchestra: gaia2: {phase.name}: all {len(specs)} rollout(s) finished before; not run again", file=sys.stderr)
        else:
            if earlier or run_dir.retried:
                print(f"orchestra: gaia2: {phase.name}: resuming: {len(earlier)} of {len(specs)} finished before; running {len(todo)}", file=sys.stderr)
            else:
                print(f"orchestra: gaia2: {phase.name}: {len(specs)} rollout(s)", file=sys.stderr)
            done, ctrl_c = _run(args, host, todo, run_dir, len(specs), earlier)
            earlier += done
            if ctrl_c.why is not None:
                _interrupted(args, run_dir, len(earlier), len(specs), why=ctrl_c.why)
                return ctrl_c.code
        by_key = {_key(r.spec): r for r in earlier if r.spec is not None}
        for _, name, ss, config in phase_batches:
            mine = [by_key[_key(spec)] for spec, _ in ss if _key(spec) in by_key]
            records[(phase.name, name)] = mine
            write_output_jsonl(args.out / phase.name / name, mine, config, trace_root=args.out)
    table = gaia2_table(records, source=source.label, runs=args.runs)
    (args.out / TABLE).write_text(table.model_dump_json(indent=1) + "\n")
    _are_report(args.out, model)
    if args.json:
        emit_json(json.loads(table.model_dump_json()))
    else:
        print("\n" + format_table(table), file=sys.stderr)
        print(f"\norchestra: gaia2: submission folder {args.out} (ARE's gaia2-run layout; upload: docs/gaia2.md)", file=sys.stderr)
    return 1 if any(c.errors for c in table.columns) else 0


def _are_report(out: Path, model: str) -> None:
    """ARE's own statistics on the folder, read back by ARE's upload script's reader."""
    from orchestra.are.submission import read_submission

    # (ARE's text report, `generate_validation_report`, lists capabilities in polars' unordered
    # `unique()` order, so it is not written: the generated files are byte-identical run to run.)
    (out / "computed_stats.json").write_text(json.dumps(read_submission(out, model=model), indent=2, sort_keys=True) + "\n")


def _run(
    args: argparse.Namespace, host: Host, todo: list[Any], run_dir: RunDir, total: int, earlier: list[RolloutRecord]
) -> tuple[list[RolloutRecord], Interrupt]:
    """One phase's remaining rollouts, each kept as it finishes; (records, its `Interrupt`: `why` it stopped early, if it did).

    Run as the program, Ctrl-C ends the process at once, even while a rollout is inside synchronous
    work (a scenario loading, the judge) that an event-loop signal receiver would first wait for:
    every finished rollout is on disk (its record appended, its trace written) and the rollouts in
    flight are abandoned; the same command reruns only those. Called in-process (`main(argv)`),
    the rollouts are cancelled at their next await and this returns."""
    done: list[RolloutRecord] = []
    display = display_for(
        json_rows=args.json, line=outcome_line, emit=lambda o: emit_json(outcome_record(o)), total=total, done=earlier, rich=False if args.no_progress else None
    )
    ctrl_c = Interrupt(args, display=display, last_words=lambda why: _interrupted(args, run_dir, len(earlier) + len(done), total, why=why))

    def keep(o: RolloutRecord) -> None:
        with ctrl_c.keeping():
            run_dir.append(o)
            done.append(o)

    async def rollouts(tg: anyio.abc.TaskGroup) -> None:
        with display:
            async for o in execute_all(todo, host=host, concurrency=args.concurrency):
                keep(o)
                display.add(o)

    ctrl_c.run(rollouts)
    return done, ctrl_c


def _interrupted(args: argparse.Namespace, run_dir: RunDir, finished: int, total: int, *, why: str) -> None:
    """Ctrl-C: what finished in the phase, where it is kept, and the command that resumes."""
    argv = getattr(args, "argv", None) or sys.argv[1:]
    phase = run_dir.path.name
    if not finished:  # nothing kept in this phase: its results.jsonl may not even exist
        print(
            f"\norchestra: {why} in phase {phase}: none of its {total} rollout(s) finished (earlier phases are complete); "
            f"rerun with: orchestra {shlex.join(argv)}",
            file=sys.stderr,
        )
        return
    print(
        f"\norchestra: {why} in phase {phase}: {finished} of its {total} rollout(s) finished, kept in {run_dir.results} "
        f"(earlier phases are complete); resume with: orchestra {shlex.join(argv)}",
        file=sys.stderr,
    )
