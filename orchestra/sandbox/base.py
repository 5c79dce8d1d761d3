"""The sandbox interface: start, execute a cell, stop — with limits and a narrow tool-call channel.

In the spirit of inspect_ai's `SandboxEnvironment`: one small abstract class, backends registered
by plugins (the `register_sandboxes` hook; built-ins: `wasm`, `bwrap`). A sandbox is one
persistent Python interpreter for one agent: variables live across cells; a cell that kills the
interpreter (fuel, memory, time, a protocol breach) ends with `CellResult.crashed` set and the
next cell starts a fresh interpreter (with an empty scratch directory).

A cell runs as a conversation the caller drives, so every tool call the code makes can go through
orchestra's normal tool path in program order:

    sandbox.begin(code, name="<step 3>", now=session.now)
    event = sandbox.next_event()
    while isinstance(event, ToolRequest):
        sandbox.reply(event, outcome_ok, value_or_error, now=session.now)
        event = sandbox.next_event()
    result: CellResult = event

The channel is narrow on purpose: the guest can only ask for a call by name with JSON arguments;
the host decides (`orchestra.sandbox.protocol.CallGate`) whether it is one of the agent's own
tools with arguments its schema accepts, and caps every message's size.

The channel is also *strictly turn-based* (`GuestChannel`): the guest may write one message, then
it is the host's turn until the host writes back, and the guest does not run meanwhile (wasm: its
thread waits inside the write; bwrap: the process is stopped). The guest shares its process with
the model's code, so no secret could authenticate its messages against code that defeats the
guard; instead nothing the guest writes can buy it anything: every limit (fuel per cell, the cell's
wall-clock budget, memory, processes) is enforced by the host or the kernel on its own count, a
message written before the host's last one was read is a breach that kills the interpreter, and
the host never holds more than one message (`message_bytes`) of it. See docs/sandbox.md.

Writing a backend (the whole surface; see `Sandbox` for an example):

* `launch(scratch, channel)`: start the interpreter running `GUEST_SOURCE`; feed every line it
  writes on its stdout to `channel.deliver(line)` (in order, one at a time, from any thread) and
  report its end once with `channel.exited(reason)`;
* `write(data)`: bytes for the guest's stdin (raise `TimeoutError` if the guest does not take them);
* `terminate()`: kill it, idempotent; afterwards nothing of it runs and its memory is freed;
* optional: `pause()` / `resume()` (stop the guest while it is the host's turn),
  `unread_input()` (bytes written to the guest it has not read yet: breach detection) and
  `buffered_bytes()` (how much `write` can take while the guest is held).
"""

from __future__ import annotations

import array
import fcntl
import json
import os
import queue
import select
import shutil
import tempfile
import termios
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from orchestra.errors import OrchestraError
from orchestra.sandbox import protocol
from orchestra.types import ToolSpec

#: The interpreter loop every backend runs (`orchestra.sandbox.guest`), as source text.
GUEST_SOURCE = (Path(__file__).with_name("guest.py")).read_text(encoding="utf-8")
#: Tool-call arguments nested deeper than this are refused before any check (they only come from
#: hostile code; schema validation recurses once per level).
MAX_ARGUMENT_DEPTH = 64
#: How long the host waits for a backend's own exit report once a write to the guest failed.
_EXIT_REPORT_GRACE_S = 5.0
_F_GETPIPE_SZ = 1032


class SandboxError(OrchestraError):
    """A sandbox backend cannot start here (missing runtime, no user namespaces, ...)."""


class SandboxLimits(BaseModel):
    """Resource limits of one sandboxed interpreter; each backend enforces those it can (docs/sandbox.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory_mb: int = Field(512, gt=0, description="memory cap (wasm: linear memory; bwrap: RLIMIT_AS)")
    fuel_per_cell: int = Field(20_000_000_000, gt=0, description="wasm: WebAssembly fuel one cell may burn (an infinite loop ends there)")
    cell_timeout_s: float = Field(
        30.0, gt=0, description="wall-clock time the guest may run in one cell, summed over its turns (bwrap: the interpreter is killed; wasm: a safety net)"
    )
    cpu_seconds: int = Field(120, gt=0, description="bwrap: RLIMIT_CPU of the interpreter")
    processes: int = Field(
        16, gt=0, description="bwrap: tasks (processes and threads) the interpreter may run at once: a pids cgroup where available, and RLIMIT_NPROC"
    )
    file_mb: int = Field(64, gt=0, description="bwrap: RLIMIT_FSIZE; both: the scratch directory's size")
    output_chars: int = Field(100_000, gt=0, description="print output (and error text) kept per cell (the rest is counted and dropped)")
    message_bytes: int = Field(1 << 20, gt=0, description="largest guest -> host message (a tool call's arguments)")
    reply_bytes: int = Field(16 << 20, gt=0, description="largest host -> guest reply (a tool's output)")


class SandboxConfig(BaseModel):
    """Which backend, its limits and its own options; `fuel_per_second` turns wasm fuel into simulated seconds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: str = Field("wasm", description="registered sandbox backend: wasm (default) | bwrap")
    limits: SandboxLimits = Field(default_factory=SandboxLimits)
    fuel_per_second: float = Field(5e9, gt=0, description="wasm: fuel units per simulated second (about what wasmtime burns per second on one 2024 x86 core)")
    options: dict[str, Any] = Field(default_factory=dict, description="the backend's own options (its `Options` model; bwrap: `allow_exec`, ...)")


class BackendOptions(BaseModel):
    """A backend's own options (`SandboxConfig.options`), validated when the sandbox is made.

    A backend declares its model as `Options`; an unknown key or a bad value is a `SandboxError`
    naming the backend:

        class FirejailOptions(BackendOptions):
            profile: str = Field("default", description="firejail profile")

        class FirejailSandbox(Sandbox):
            Options = FirejailOptions
            ...  # self.options.profile
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass
class ToolRequest:
    """The guest's code called a tool; answer with `Sandbox.reply` before the next `next_event`."""

    id: int
    tool: str
    arguments: dict[str, Any]
    #: Compute since the previous event (wasm fuel; 0 where the backend cannot count it).
    fuel: int = 0
    #: Why the host refuses this call before anything reaches a tool (not one of the agent's
    #: tools, arguments its schema rejects); None when it may run.
    problem: str | None = None


@dataclass
class CellResult:
    output: str
    error: str | None
    #: Characters of print output dropped past `SandboxLimits.output_chars`.
    dropped: int = 0
    #: The code called `final_answer` (the cell stopped there).
    final: bool = False
    #: Compute since the previous event (wasm fuel).
    fuel: int = 0
    #: The interpreter died (fuel, memory, timeout, protocol breach): why. Its variables are lost.
    crashed: str | None = None


SandboxEvent = ToolRequest | CellResult


@dataclass
class _Exited:
    reason: str
    fuel: int = 0


class GuestChannel:
    """One interpreter's side of the host's channel, made by `Sandbox.start` and handed to
    `Sandbox.launch`; the backend feeds it what the guest writes and tells it when the guest ends.

    Turns: the guest speaks first (`ready`); each `deliver` ends the guest's turn and returns only
    when the host has written back (or the channel closed), so a backend that calls it from the
    guest's own thread (wasm) holds the guest still, and one that reads a pipe (bwrap) reads the
    next line only in the guest's next turn (and stops the process meanwhile: `Sandbox.pause`).
    Everything the guest writes beyond that waits in the backend's pipe, never in host memory.
    A line that is too long, not a JSON object, or written before the guest read the host's last
    message is a breach: the interpreter is killed (`CellResult.crashed` says why).

    A reader thread in a backend, for example:

        def _pump(self, proc: subprocess.Popen[bytes], channel: GuestChannel) -> None:
            while line := proc.stdout.readline(channel.max_line + 1):
                if not line.endswith(b"\\n") or channel.deliver(line[:-1]) is None:
                    break  # too long, a breach, or the sandbox stopped
            channel.exited(f"the interpreter exited (status {proc.wait()})")
    """

    def __init__(self, sandbox: Sandbox) -> None:
        self._sandbox = sandbox
        #: The longest line `deliver` accepts (`SandboxLimits.message_bytes`).
        self.max_line = sandbox.limits.message_bytes
        self._inbox: queue.Queue[dict[str, Any] | _Exited] = queue.Queue()
        self._cond = threading.Condition()
        self._guest_turn = True
        self._closed = False

    @property
    def closed(self) -> bool:
        """The host ended this interpreter (or replaced it): stop feeding the channel."""
        return self._closed

    def deliver(self, line: bytes, *, fuel: int = 0) -> str | None:
        """One line the guest wrote on its stdout (without the newline); `fuel`: compute since the
        previous line. Blocks until it is the guest's turn again; returns the message's `op`, or
        None when the line was refused (a breach: the host kills the guest) or the channel closed."""
        with self._cond:
            if self._closed:
                return None
            message, problem = self._check(line, fuel)
            self._guest_turn = False
            self._sandbox.pause()  # under the lock: the host cannot resume the guest before this
            self._inbox.put(message if message is not None and problem is None else _Exited(problem or "refused", fuel))
            self._cond.wait_for(lambda: self._guest_turn or self._closed)
            if self._closed or problem is not None or message is None:
                return None
            op = message.get("op")
            return op if isinstance(op, str) else None

    def exited(self, reason: str, *, fuel: int = 0) -> None:
        """The guest ended (crashed, killed, exited): why, in words the model can act on."""
        with self._cond:
            if not self._closed:
                self._inbox.put(_Exited(reason, fuel))

    def _check(self, line: bytes, fuel: int) -> tuple[dict[str, Any] | None, str | None]:
        if len(line) > self.max_line:
            return None, f"the code sent a message of {len(line)} bytes on the tool channel (limit {self.max_line})"
        if not self._guest_turn:
            return None, "the code wrote on the tool channel out of turn"
        unread = self._sandbox.unread_input()
        if unread:
            return None, (
                f"the code wrote on the tool channel before the interpreter read the host's last message ({unread} bytes unread): the channel was out of step"
            )
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply to parse
            return None, "the code wrote something that is not a message on the tool channel"
        if not isinstance(message, dict):
            return None, "the code wrote something that is not a message on the tool channel"
        message["_fuel"] = fuel
        return message, None

    # ---- the host's side (Sandbox)
    def _give_turn(self) -> None:
        with self._cond:
            if self._closed:
                return
            self._guest_turn = True
            self._sandbox.resume()
            self._cond.notify_all()

    def _close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        while True:  # free what the guest sent (at most a message and an exit report)
            try:
                self._inbox.get_nowait()
            except queue.Empty:
                break

    def _get(self, timeout: float) -> dict[str, Any] | _Exited | None:
        try:
            return self._inbox.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return None


class Sandbox(ABC):
    """One agent's interpreter: the caller's side (`start`, `begin`, `next_event`, `reply`,
    `abort`, `stop`) is implemented here; a backend implements `launch`, `write` and `terminate`
    (and, optionally, `pause`, `resume`, `unread_input`, `buffered_bytes`) and registers itself with a plugin.

    A backend that runs the guest as a child process with no isolation at all (a sketch for
    tests; docs/sandbox.md has it in full):

        class LocalSandbox(Sandbox):
            name = "local"

            def launch(self, scratch: Path, channel: GuestChannel) -> None:
                self.proc = subprocess.Popen([sys.executable, "-I", "-c", GUEST_SOURCE], cwd=scratch,
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                threading.Thread(target=self._pump, args=(self.proc, channel), daemon=True).start()

            def _pump(self, proc, channel):
                while line := proc.stdout.readline(channel.max_line + 1):
                    if not line.endswith(b"\\n") or channel.deliver(line[:-1]) is None:
                        break
                channel.exited(f"the interpreter exited (status {proc.wait()})")

            def write(self, data: bytes) -> None:
                write_all(self.proc.stdin.fileno(), data, timeout=self.limits.cell_timeout_s)

            def terminate(self) -> None:
                self.proc.kill()
                self.proc.wait()

        @hookimpl
        def register_sandboxes(register):
            register("local", LocalSandbox)
    """

    name: ClassVar[str]
    #: Whether compute is counted deterministically (wasm fuel) and charged to the simulated clock.
    counts_compute: ClassVar[bool] = False
    #: The backend's options model (`SandboxConfig.options`); see `BackendOptions`.
    Options: ClassVar[type[BackendOptions]] = BackendOptions

    def __init__(self, tools: dict[str, ToolSpec], *, seed: int = 0, config: SandboxConfig | None = None, guard: bool = True) -> None:
        self.config = config or SandboxConfig()
        #: The guest's guard (import, attribute and builtin checks; `orchestra.sandbox.guest`).
        #: Off only to test that the backend alone holds.
        self.guard = guard
        self.limits = self.config.limits
        try:
            self.options = self.Options(**self.config.options)
        except ValidationError as exc:
            problems = "; ".join(f"invalid option {'.'.join(map(str, e['loc']))} ({e['msg'][0].lower()}{e['msg'][1:]})" for e in exc.errors())
            known = ", ".join(sorted(self.Options.model_fields)) or "none"
            raise SandboxError(f"{self.name} sandbox: {problems}; its options: {known}") from None
        self.tools = dict(tools)
        self._gate = protocol.CallGate(self.tools)
        self.seed = seed
        self._channel: GuestChannel | None = None
        self._running = False
        self._in_cell = False
        self._pending: ToolRequest | None = None
        self._scratch: Path | None = None
        self._lock = threading.Lock()
        self._cell_left = self.limits.cell_timeout_s
        self._write_error: str | None = None
        #: The session's simulated now, as of the host's last message to the guest.
        self.host_now = 0.0
        #: Interpreters started (1 + restarts after crashes).
        self.starts = 0

    # ------------------------------------------------------------------ backend side
    @abstractmethod
    def launch(self, scratch: Path, channel: GuestChannel) -> None:
        """Start the interpreter running `GUEST_SOURCE` with `scratch` (empty) as its only writable
        directory; feed its stdout lines to `channel.deliver` and report its end to `channel.exited`.
        Raise `SandboxError` when it cannot start here."""

    @abstractmethod
    def write(self, data: bytes) -> None:
        """Send bytes to the guest's stdin. Raise `OSError` if the channel is gone, and
        `TimeoutError` if the guest does not take them within `limits.cell_timeout_s`."""

    @abstractmethod
    def terminate(self) -> None:
        """Kill the interpreter (idempotent); afterwards nothing of it runs and its memory is freed."""

    def pause(self) -> None:
        """It is the host's turn: keep the guest from running (bwrap: SIGSTOP). Default: nothing
        (a backend whose guest waits inside `deliver` needs nothing more)."""

    def resume(self) -> None:
        """It is the guest's turn again (bwrap: SIGCONT). Default: nothing."""

    def unread_input(self) -> int:
        """Bytes the host wrote that the guest has not read yet (0 when unknown): a message the guest
        writes while this is not 0 is a breach."""
        return 0

    def buffered_bytes(self) -> int:
        """How many bytes `write` can take while the guest is held (a pipe's capacity): a message up
        to this size is written before the guest's turn begins. Default 0: the turn first."""
        return 0

    # ------------------------------------------------------------------ caller side
    def start(self, now: float) -> None:
        """Start the interpreter (a fresh one after a crash) and install the tools. Idempotent."""
        if self._running:
            return
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix=f"orchestra-{self.name}-"))
        else:  # a restart: files go with the interpreter that wrote them (as on a fresh tmpfs)
            _empty_directory(self._scratch)
        channel = self._channel = GuestChannel(self)
        self._write_error = None
        self.starts += 1
        try:
            self.launch(self._scratch, channel)
        except BaseException:
            channel._close()
            raise
        self._running = True
        self._expect("ready", self.limits.cell_timeout_s + 60)
        self._send(
            {
                "op": "init",
                "tools": protocol.guest_tools(self.tools),
                "seed": self.seed,
                "now": now,
                "output_limit": self.limits.output_chars,
                "pin_time": not self.counts_compute,
                "guard": self.guard,
            }
        )
        self._expect("ready", self.limits.cell_timeout_s + 60)

    def begin(self, code: str, *, name: str, now: float) -> None:
        """Start executing `code` (state from earlier cells persists)."""
        if self._in_cell:
            raise SandboxError(f"{self.name} sandbox: a cell is already running")
        self.start(now)
        self._in_cell = True
        self._cell_left = self.limits.cell_timeout_s
        self._send({"op": "exec", "code": code, "name": name, "now": now})

    def next_event(self) -> SandboxEvent:
        """Block until the cell calls a tool or ends."""
        if self._pending is not None:
            raise SandboxError(f"{self.name} sandbox: reply to the tool call {self._pending.tool!r} first")
        if not self._in_cell:
            raise SandboxError(f"{self.name} sandbox: no cell is running")
        started = time.monotonic()
        message = self._get(self._cell_left)
        self._cell_left -= time.monotonic() - started
        if isinstance(message, _Exited):
            self._crash()
            return CellResult(output="", error=None, fuel=message.fuel, crashed=message.reason)
        fuel = int(message.pop("_fuel", 0))
        op = message.get("op")
        if op == "call":
            call_id = message.get("id")
            tool = message.get("tool")
            args = message.get("args")
            if not isinstance(call_id, int) or not isinstance(tool, str) or not isinstance(args, dict):
                self._crash()
                return CellResult(output="", error=None, fuel=fuel, crashed="the code sent a malformed tool call on the channel")
            problem = (
                self._gate.check(tool, args) if _depth(args) <= MAX_ARGUMENT_DEPTH else f"the arguments are nested deeper than {MAX_ARGUMENT_DEPTH} levels"
            )
            request = ToolRequest(id=call_id, tool=tool, arguments=args, fuel=fuel, problem=problem)
            self._pending = request
            return request
        if op == "done":
            self._in_cell = False
            output, dropped = _cap(str(message.get("output") or ""), self.limits.output_chars)
            error = message.get("error")
            if error is not None:
                error, cut = _cap(str(error), self.limits.output_chars)
                error += f"\n[{cut} more characters of the error were dropped]" if cut else ""
            return CellResult(
                output=output,
                error=error,
                dropped=dropped + _count(message.get("dropped")),
                final=bool(message.get("final")),
                fuel=fuel,
            )
        self._crash()
        return CellResult(output="", error=None, fuel=fuel, crashed=f"the code sent an unexpected message ({str(op)[:40]!r}) on the channel")

    def reply(self, request: ToolRequest, *, ok: bool, value: Any = None, error: str | None = None, now: float) -> None:
        """Answer the pending tool call: its output (`ok`) or why it failed."""
        if self._pending is None or request.id != self._pending.id:
            raise SandboxError(f"{self.name} sandbox: no pending tool call {request.tool!r}")
        self._pending = None
        message: dict[str, Any] = {"op": "reply", "id": request.id, "ok": ok, "now": now}
        if ok:
            message["value"] = protocol.encode(value)
        else:
            message["error"] = error or "failed"
        data = protocol.dumps(message)
        if len(data) > self.limits.reply_bytes:
            data = protocol.dumps(
                {
                    "op": "reply",
                    "id": request.id,
                    "ok": False,
                    "now": now,
                    "error": f"the output of {request.tool} is {len(data)} bytes, over the sandbox's limit of {self.limits.reply_bytes}",
                }
            )
        self.host_now = now
        self._transmit(data)

    def abort(self) -> None:
        """Stop the running cell (the environment stopped): the interpreter is restarted before the next cell."""
        if self._in_cell or self._pending is not None:
            self._crash()

    def stop(self) -> None:
        """End the interpreter, free what it held and remove its scratch directory. Idempotent."""
        self._crash()
        self._channel = None
        scratch, self._scratch = self._scratch, None
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)

    @property
    def running(self) -> bool:
        return self._running

    @property
    def scratch(self) -> Path | None:
        """The host directory the guest sees as `/scratch` (None once stopped)."""
        return self._scratch

    # ------------------------------------------------------------------ helpers
    def _crash(self) -> None:
        with self._lock:
            channel = self._channel
            if channel is not None:
                channel._close()  # first: a backend thread waiting in `deliver` lets go
            if self._running:
                self.terminate()
            self._running = False
            self._in_cell = False
            self._pending = None

    def _send(self, message: dict[str, Any]) -> None:
        if "now" in message:
            self.host_now = float(message["now"])
        self._transmit(protocol.dumps(message))

    def _transmit(self, data: bytes) -> None:
        """Write to the guest and give it the turn: a message the channel can hold is written
        while the guest is still held, so what the guest finds on resuming never depends on timing."""
        channel = self._channel
        if channel is None:
            return
        held = len(data) <= self.buffered_bytes()
        if not held:
            channel._give_turn()
        try:
            self.write(data)
        except TimeoutError:
            channel.exited(f"the code did not read the host's message for {self.limits.cell_timeout_s:g} s (the channel stalled)")
        except OSError as exc:  # the guest is gone: its backend reports why (`_get` waits a little for it)
            self._write_error = f"the interpreter's channel closed ({exc})"
        if held:
            channel._give_turn()

    def _get(self, timeout: float) -> dict[str, Any] | _Exited:
        channel = self._channel
        if self._write_error is not None:
            timeout = min(timeout, _EXIT_REPORT_GRACE_S)
        message = channel._get(timeout) if channel is not None else None
        if message is not None:
            return message
        if self._write_error is not None:
            return _Exited(self._write_error)
        return _Exited(f"the cell ran longer than {self.limits.cell_timeout_s:g} s of wall-clock time")

    def _expect(self, op: str, timeout: float) -> None:
        message = self._get(timeout)
        if isinstance(message, _Exited) or message.get("op") != op:
            reason = message.reason if isinstance(message, _Exited) else f"unexpected message {message.get('op')!r}"
            self._crash()
            raise SandboxError(f"{self.name} sandbox: the interpreter did not start: {reason}")

    def scratch_bytes(self) -> int:
        """Bytes in the scratch directory (both backends cap it)."""
        scratch = self._scratch
        if scratch is None:
            return 0
        total = 0
        try:
            for path in scratch.rglob("*"):
                if path.is_file() and not path.is_symlink():
                    total += path.stat().st_size
        except OSError:  # removed meanwhile (the sandbox stopped), or a file vanished
            pass
        return total

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def write_all(fd: int, data: bytes, *, timeout: float, stopped: Callable[[], bool] = lambda: False) -> None:
    """Write all of `data` to the pipe `fd` (made non-blocking here), waiting at most `timeout`
    seconds in all for the reader to make room: a guest that stops reading cannot hang the host.
    Raises `TimeoutError`, or `OSError` when the pipe is gone (or `stopped()` turned true)."""
    os.set_blocking(fd, False)
    deadline = time.monotonic() + timeout
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
            continue
        except BlockingIOError:
            pass
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"the guest did not read {len(view)} bytes in {timeout:g} s")
        if stopped():
            raise BrokenPipeError("the sandbox stopped")
        select.select([], [fd], [], min(left, 0.1))


def pipe_capacity(fd: int) -> int:
    """The capacity of the pipe `fd` (F_GETPIPE_SZ; 4096, POSIX's least, where it cannot be read)."""
    try:
        return int(fcntl.fcntl(fd, _F_GETPIPE_SZ))
    except OSError:
        return 4096


def unread_bytes(fd: int) -> int:
    """Bytes waiting in the pipe `fd` (FIONREAD; either end of it)."""
    count = array.array("i", [0])
    try:
        fcntl.ioctl(fd, termios.FIONREAD, count, True)
    except (OSError, ValueError):
        return 0
    return int(count[0])


def _empty_directory(folder: Path) -> None:
    for entry in list(folder.iterdir()) if folder.is_dir() else []:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            try:
                entry.unlink()
            except OSError:
                pass


def _cap(text: str, limit: int) -> tuple[str, int]:
    """`text` cut to `limit` characters, and how many were cut (a forged `done` is not capped by the guest)."""
    return (text, 0) if len(text) <= limit else (text[:limit], len(text) - limit)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _depth(value: Any) -> int:
    """How deeply lists and dicts nest in `value` (iterative: any depth is safe to measure)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level)
            if level <= MAX_ARGUMENT_DEPTH:
                stack.extend((child, level + 1) for child in item)
    return deepest
