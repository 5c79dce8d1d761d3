"""`orchestra show DIR/NAME`: one rollout of a run folder as a readable transcript.

Read from the record's trajectory (docs/trajectories.md): each run's task, each step's
notifications, thought, model output, tool calls with their simulated time and observation or
error, a delegation's sub-agent steps nested under the call that started it; then the event log
with the agent that made each event, and the verdict with the judge's rationale.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from orchestra.are.noise import ENV_EXPANSION_PREFIX
from orchestra.cli._output import noise_text, one_line
from orchestra.errors import OrchestraError
from orchestra.record import RolloutRecord
from orchestra.trajectory import AgentTrajectory, Step, ToolCallEntry, Trajectory

#: Characters of an observation, an output or a message shown (`--full`: everything).
WIDTH = 400


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("show", help="one rollout of a run folder as a transcript (DIR/NAME, NAME as in DIR/rollouts/)")
    p.add_argument("rollout", metavar="DIR/NAME", help="a run folder and a rollout's name (e.g. out/starter_time_deadline.run1), or its .json file")
    p.add_argument("--full", action="store_true", help=f"print texts whole (default: cut at {WIDTH} characters) and every model output")
    p.add_argument("--prompts", action="store_true", help="also print each step's new prompt messages (what the model was sent, beyond the previous prompt)")
    p.add_argument("--json", action="store_true", help="print the record as JSON (trajectory included)")
    p.set_defaults(func=run)


def locate(text: str) -> Path:
    path = Path(text)
    candidates = [path, path.parent / "rollouts" / f"{path.name}.json", path.parent / "rollouts" / path.name, path.with_suffix(".json")]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    folder = path.parent / "rollouts"
    names = sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []
    hint = f"; rollouts in {folder}: {', '.join(names[:8])}" + (" ..." if len(names) > 8 else "") if names else ""
    if path.is_dir():
        inside = sorted(p.stem for p in (path / "rollouts").glob("*.json")) if (path / "rollouts").is_dir() else []
        if inside:
            hint = f"; {text} is a run folder: give one of its rollouts, DIR/NAME: {', '.join(inside[:8])}" + (" ..." if len(inside) > 8 else "")
    phases = sorted(q.parent.parent for q in path.parent.glob(f"*/rollouts/{path.name}.json"))  # `orchestra gaia2`'s folder: one run folder per phase
    if phases and not hint:
        hint = f"; {path.parent} is a folder of run folders (`orchestra gaia2` keeps one per phase): " + ", ".join(str(q / path.name) for q in phases)
    raise OrchestraError(f"{text}: no such rollout{hint}")


def _cut(text: str, width: int | None) -> str:
    return text if width is None or len(text) <= width else text[: width - 3] + "..."


def _short(value: Any, width: int | None = 100) -> str:
    """A value on one line (newlines shown as `⏎`), cut at `width` characters."""
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return _cut(text.replace("\r\n", "\n").replace("\n", " ⏎ "), width)


def _block(text: str, indent: str, width: int | None) -> list[str]:
    """A multi-line text, indented, cut at `width` characters (None: whole)."""
    body = _cut(text.strip(), width)
    return [indent + line for line in body.splitlines()] or [indent]


def header(o: RolloutRecord) -> list[str]:
    lines = [f"{o.scenario_id}  run {o.sample_index}  {o.policy}" + (f"  [{o.perturbation}]" if o.perturbation else ""), f"status: {o.status}"]
    if o.error:
        lines.append(f"error: {one_line(o.error)}")
    if o.not_applicable:
        lines.append(f"not applicable: {o.not_applicable}")
    r = o.result
    if r is not None:
        lines.append(
            (f"reward {o.reward:.2f}  " if o.reward is not None else "no reward (ERROR)  ")
            + f"sim {r.sim_seconds:.1f}s  steps {r.steps}  model calls {r.model_calls}  tool calls {r.n_tool_calls}  "
            f"tokens {r.prompt_tokens}+{r.completion_tokens}  cost ${r.cost_usd:.4f}  stop {r.stop_reason}  judge {r.judge}"
        )
    elif o.trajectory is not None and o.trajectory.stop_reason:
        lines.append(f"stop {o.trajectory.stop_reason}")
    if r is not None and r.noise is not None:  # which noise ran, and the calls it failed (the judge's log never shows them)
        n = r.noise
        lines.append(f"{noise_text(n)} of {n.env_events_scheduled} scheduled  renamed={n.renamed_tools}")
        lines += [f"  {f.sim_seconds:8.1f}  FAILED {f.tool} (noise: {f.agent}'s call #{f.call_index})" for f in n.failed_calls]
    lines += ["", "agents:" if o.agents else "agents: none (the rollout ended before any agent ran)"]
    for a in o.agents:
        failed = f"  model errors {a.model_errors}" if a.model_errors else ""
        lines.append(
            f"  {a.name:<16} {a.role:<4} {a.model:<28} steps {a.steps:<3} calls {a.model_calls:<3} tools {a.tool_calls:<3} "
            f"sim {a.sim_seconds:7.1f}s  stop {a.stop_reason}{failed}"
        )
    return lines


def transcript(o: RolloutRecord, *, full: bool = False, prompts: bool = False) -> str:
    """The whole rollout as text (see the module doc)."""
    lines = header(o)
    r = o.result
    trajectory = o.trajectory
    if trajectory is not None and trajectory.agents:
        lines += ["", "transcript (simulated seconds since the scenario started):"]
        lines += _Transcript(trajectory, full=full, prompts=prompts).render()
    elif trajectory is None and o.status == "ERROR" and not o.agents:
        lines += ["", "(no trajectory: the rollout ended in ERROR before any agent ran)"]
    elif trajectory is None and o.policy != "oracle":
        lines += ["", "(no trajectory in this record: records in results.jsonl leave it out; show reads DIR/rollouts/NAME.json)"]
    delegations = r.delegations if r is not None else (o.partial.delegations if o.partial is not None else [])
    if delegations:
        lines += ["", "delegations:"]
        lines += [
            f"  {d.caller} -> {d.callee} ({d.tool}) at {d.start:.1f}s for {d.duration:.1f}s: {_short(d.task, 70)} => "
            f"{'ok' if d.ok else 'FAILED'}: {_short(d.answer or d.error or '', 60)}"
            for d in delegations
        ]
    events = r.event_log if r is not None else (o.partial.event_log if o.partial is not None else [])
    who = trajectory.event_agents if trajectory is not None and len(trajectory.event_agents) == len(events) else [None] * len(events)
    if events:
        lines += ["", "event log (as the judge keys the tools; who made each agent event):"]
    checks = 0
    for e, agent in zip(events, who, strict=True):
        if e.get("type") == "CONDITION" and not full:  # ARE re-runs each condition check every tick
            checks += 1
            continue
        outcome = (
            f"  !! {_short(e.get('exception'), 80)}" if e.get("exception") else (f"  -> {_short(e.get('return'), 60)}" if e.get("return") is not None else "")
        )
        by = f"{agent:<10}" if agent else f"{'':<10}"
        mark = "  [noise: injected event]" if str(e.get("id", "")).startswith(ENV_EXPANSION_PREFIX) else ""
        lines.append(f"  {e.get('t', 0):8.1f}  {e.get('type', ''):<6} {by} {e.get('tool')}({_short(e.get('args') or {}, 90)}){outcome}{mark}")
    if checks:
        lines.append(f"  ({checks} condition check(s) left out: ARE polls each condition event until it holds; --full shows them)")
    if r is not None and o.reward is None:  # an ERROR the judge looked at anyway: its view, never a verdict
        lines += ["", f"verdict: none (ERROR); the {r.judge} judge's view of what ran before the error, {r.turns_completed}/{r.nb_turns} turns:"]
    elif r is not None:
        lines += ["", f"verdict: {'PASS' if r.success else 'FAIL'}  reward {r.reward:.2f}  ({r.judge} judge, {r.turns_completed}/{r.nb_turns} turns)"]
        for turn in r.turns:
            if turn.rationale and len(r.turns) > 1:
                lines.append(f"  turn {turn.turn}: {'ok' if turn.success else 'rejected'}")
        if r.rationale:
            lines += ["judge rationale:", *("  " + line for line in r.rationale.strip().splitlines())]
    return "\n".join(lines)


class _Transcript:
    def __init__(self, trajectory: Trajectory, *, full: bool, prompts: bool) -> None:
        self.t = trajectory
        self.width: int | None = None if full else WIDTH
        self.full = full
        self.prompts = prompts
        self.shown: set[str] = set()
        self.out: list[str] = []

    def render(self) -> list[str]:
        main = [a for a in self.t.agents if a.parent is None] or self.t.agents[:1]
        for agent in main:
            self.agent(agent, "  ")
        for agent in self.t.agents:  # a sub-agent no call was linked to (should not happen): still shown
            if agent.name not in self.shown:
                self.agent(agent, "  ")
        if self.t.stop_reason:
            self.out.append(f"  stop: {self.t.stop_reason}")
        return self.out

    def agent(self, a: AgentTrajectory, indent: str) -> None:
        self.shown.add(a.name)
        what = f"{a.role} agent" if a.app is None else f"app-agent for {a.app}"
        self.out.append(f"{indent}[{a.name}] {what}, {a.scaffold} on {a.model}" + (f", started by {a.parent}" if a.parent else ""))
        runs = {r.run: r for r in a.runs}
        started: set[int] = set()
        for step in a.steps:
            if step.run not in started and step.run in runs:
                started.add(step.run)
                run = runs[step.run]
                if a.role == "main":
                    self.out.append(f"{indent}  run {run.run} at {run.t:.1f}s, " + ("the user wrote:" if run.task else "started by environment notifications"))
                else:
                    self.out.append(f"{indent}  task at {run.t:.1f}s:")
                if run.task:
                    self.out += _block(run.task, indent + "    ", self.width)
            self.step(a, step, indent + "  ")
        ended = f"{indent}  => stop {a.stop_reason}" if a.stop_reason else ""
        if a.error:
            ended += f"  error: {one_line(a.error)}"
        if ended:
            self.out.append(ended)

    def step(self, a: AgentTrajectory, s: Step, indent: str) -> None:
        if s.auto is not None:
            self.out.append(f"{indent}auto at {s.t_start:.1f}s ({s.auto})")
        else:
            self.out.append(f"{indent}step {s.index} at {s.t_start:.1f}s (output at {s.t_model:.1f}s, done {s.t_end:.1f}s)")
        inner = indent + "  "
        for note in s.notifications:
            self.out.append(f"{inner}notification:")
            self.out += _block(note, inner + "  ", self.width)
        if self.prompts and s.prompt is not None:
            p = s.prompt
            base = f"request {p.id}: request {p.base}'s first {p.prefix} message(s), then" if p.base is not None else f"request {p.id}:"
            self.out.append(f"{inner}{base} {len(p.messages)} new message(s)" + (f"  {json.dumps(p.options, sort_keys=True)}" if p.options else ""))
            for m in p.messages:
                content = m.get("content")
                self.out.append(f"{inner}  <{m.get('role')}>")
                self.out += _block(content if isinstance(content, str) else json.dumps(content, default=str), inner + "    ", self.width)
        for i, output in enumerate(s.outputs):
            last = i + 1 == len(s.outputs)
            tokens = f"{output.prompt_tokens}+{output.completion_tokens} tokens" if not output.forced else "forced by the scaffold, not the model"
            if output.rejected is not None:
                self.out.append(f"{inner}output REJECTED ({tokens}), asked again:")
                self.out += _block(output.text or "(empty)", inner + "  ", self.width)
                self.out += _block(f"why: {output.rejected}", inner + "  ", self.width)
                continue
            plain = not s.tool_calls and s.thought is None
            if self.full or plain or s.format_error is not None or not last:
                self.out.append(f"{inner}output ({tokens}):")
                self.out += _block(output.text or "(no text)", inner + "  ", self.width)
                for raw in output.tool_calls:
                    self.out.append(f"{inner}  tool call {raw.name}({_short(raw.arguments, self.width)})")
            else:
                self.out.append(f"{inner}output: {tokens}")
        if s.thought:
            self.out.append(f"{inner}thought:")
            self.out += _block(s.thought, inner + "  ", self.width)
        for call in s.tool_calls:
            self.call(call, inner)
        if s.format_error is not None:
            self.out.append(f"{inner}FORMAT ERROR:")
            self.out += _block(s.format_error, inner + "  ", self.width)
        if s.model_error is not None:
            self.out.append(f"{inner}MODEL ERROR:")
            self.out += _block(s.model_error, inner + "  ", self.width)

    def call(self, call: ToolCallEntry, indent: str) -> None:
        logged = f"  [logged as {call.event_name}]" if call.event_name is not None and call.event_name != call.name else ""
        self.out.append(f"{indent}call {call.name}({_short(call.arguments, self.width)}) at {call.t:.1f}s{logged}")
        if call.delegate is not None:
            child = self.t.agent(call.delegate)
            if child is not None and child.name not in self.shown:
                self.agent(child, indent + "  | ")
        if call.ok:
            self.out.append(f"{indent}  -> ok:")
            self.out += _block(call.observation or "", indent + "     ", self.width)
        else:
            label = {"unknown_tool": "UNKNOWN TOOL", "bad_arguments": "BAD ARGUMENTS", "refused": "REFUSED"}.get(call.problem or "", "ERROR")
            self.out.append(f"{indent}  -> {label}:")
            self.out += _block(call.error or "", indent + "     ", self.width)


def run(args: argparse.Namespace) -> int:
    path = locate(args.rollout)
    try:
        record = RolloutRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise OrchestraError(f"{path}: not a rollout record ({str(exc).splitlines()[0]})") from None
    if args.json:
        sys.stdout.write(json.dumps(record.model_dump(mode="json"), indent=1, default=str) + "\n")
        return 0
    print(transcript(record, full=args.full, prompts=args.prompts))
    return 0
