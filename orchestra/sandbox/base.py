"""The sandbox interface: start, execute a cell, stop — with limits and a narrow tool-call channel.

In the spirit of inspect_ai's `SandboxEnvironment`: one small abstract class, backends registered
by plugins (the `register_sandboxes` hook; built-ins: `wasm`, `bwrap`). A sandbox is one
persistent Python interpreter for one agent: variables live across cells; a cell that kills the
interpreter (fuel, memory, time, a protocol breach) ends with `CellResult.crashed` set and the
next cell starts a fresh interpreter.

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
"""

from __future__ import annotations

import json
import queue
import shutil
import tempfile
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from orchestra.errors import OrchestraError
from orchestra.sandbox import protocol
from orchestra.types import ToolSpec

GUEST_SOURCE = (Path(__file__).with_name("guest.py")).read_text(encoding="utf-8")


class SandboxError(OrchestraError):
    """A sandbox backend cannot start here (missing runtime, no user namespaces, ...)."""


class SandboxLimits(BaseModel):
    """Resource limits of one sandboxed interpreter; each backend enforces those it can (README)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory_mb: int = Field(512, gt=0, description="memory cap (wasm: linear memory; bwrap: RLIMIT_AS)")
    fuel_per_cell: int = Field(20_000_000_000, gt=0, description="wasm: WebAssembly fuel one cell may burn (an infinite loop ends there)")
    cell_timeout_s: float = Field(30.0, gt=0, description="wall-clock limit of one cell (bwrap: the interpreter is killed; wasm: a safety net)")
    cpu_seconds: int = Field(120, gt=0, description="bwrap: RLIMIT_CPU of the interpreter")
    processes: int = Field(16, gt=0, description="bwrap: RLIMIT_NPROC (a fork bomb stops there)")
    file_mb: int = Field(64, gt=0, description="bwrap: RLIMIT_FSIZE; both: the scratch directory's size")
    output_chars: int = Field(100_000, gt=0, description="print output kept per cell (the rest is counted and dropped)")
    message_bytes: int = Field(1 << 20, gt=0, description="largest guest -> host message (a tool call's arguments)")
    reply_bytes: int = Field(16 << 20, gt=0, description="largest host -> guest reply (a tool's output)")


class SandboxConfig(BaseModel):
    """Which backend, and its limits; `fuel_per_second` turns wasm fuel into simulated seconds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: str = Field("wasm", description="registered sandbox backend: wasm (default) | bwrap")
    limits: SandboxLimits = Field(default_factory=SandboxLimits)
    fuel_per_second: float = Field(5e9, gt=0, description="wasm: fuel units per simulated second (about what wasmtime burns per second on one 2024 x86 core)")


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


class Sandbox(ABC):
    """One agent's interpreter. Subclasses launch the guest (`_launch`), write to it (`_write`)
    and end it (`_terminate`); they feed each line it prints on the channel to `_received`."""

    name: ClassVar[str]
    #: Whether compute is counted deterministically (wasm fuel) and charged to the simulated clock.
    counts_compute: ClassVar[bool] = False

    def __init__(self, tools: dict[str, ToolSpec], *, seed: int = 0, config: SandboxConfig | None = None, guard: bool = True) -> None:
        self.config = config or SandboxConfig()
        #: The guest's guard (import, attribute and builtin checks; `orchestra.sandbox.guest`).
        #: Off only to test that the backend alone holds.
        self.guard = guard
        self.limits = self.config.limits
        self.tools = dict(tools)
        self._gate = protocol.CallGate(self.tools)
        self.seed = seed
        self._inbox: queue.Queue[dict[str, Any] | _Exited] = queue.Queue()
        self._running = False
        self._in_cell = False
        self._pending: ToolRequest | None = None
        self._scratch: Path | None = None
        self._lock = threading.Lock()
        #: Interpreters started (1 + restarts after crashes).
        self.starts = 0

    # ------------------------------------------------------------------ backend side
    @abstractmethod
    def _launch(self, scratch: Path) -> None:
        """Start the interpreter running `GUEST_SOURCE` with `scratch` as its only writable directory."""

    @abstractmethod
    def _write(self, data: bytes) -> None:
        """Send bytes to the guest's stdin."""

    @abstractmethod
    def _terminate(self) -> None:
        """Kill the interpreter (idempotent); afterwards nothing of it runs."""

    def _received(self, line: bytes, fuel: int = 0) -> str | None:
        """One line from the guest's channel (called from a reader thread); returns its `op`."""
        if len(line) > self.limits.message_bytes:
            self._inbox.put(_Exited(f"the code sent a message of {len(line)} bytes on the tool channel (limit {self.limits.message_bytes})", fuel))
            return None
        try:
            message = json.loads(line)
            if not isinstance(message, dict):
                raise ValueError("not an object")
        except ValueError:
            self._inbox.put(_Exited("the code wrote something that is not a message on the tool channel", fuel))
            return None
        message["_fuel"] = fuel
        self._inbox.put(message)
        op = message.get("op")
        return op if isinstance(op, str) else None

    def _exited(self, reason: str, fuel: int = 0) -> None:
        self._inbox.put(_Exited(reason, fuel))

    # ------------------------------------------------------------------ caller side
    def start(self, now: float) -> None:
        """Start the interpreter (a fresh one after a crash) and install the tools. Idempotent."""
        if self._running:
            return
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix=f"orchestra-{self.name}-"))
        self._inbox = queue.Queue()
        self.starts += 1
        self._launch(self._scratch)
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
        self._send({"op": "exec", "code": code, "name": name, "now": now})

    def next_event(self) -> SandboxEvent:
        """Block until the cell calls a tool or ends."""
        if self._pending is not None:
            raise SandboxError(f"{self.name} sandbox: reply to the tool call {self._pending.tool!r} first")
        if not self._in_cell:
            raise SandboxError(f"{self.name} sandbox: no cell is running")
        message = self._get(self.limits.cell_timeout_s)
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
            request = ToolRequest(id=call_id, tool=tool, arguments=args, fuel=fuel, problem=self._gate.check(tool, args))
            self._pending = request
            return request
        if op == "done":
            self._in_cell = False
            return CellResult(
                output=str(message.get("output") or ""),
                error=message.get("error"),
                dropped=int(message.get("dropped") or 0),
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
        self._write_checked(data)

    def abort(self) -> None:
        """Stop the running cell (the environment stopped): the interpreter is restarted before the next cell."""
        if self._in_cell or self._pending is not None:
            self._crash()

    def stop(self) -> None:
        """End the interpreter and remove its scratch directory. Idempotent."""
        self._crash()
        scratch, self._scratch = self._scratch, None
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)

    @property
    def running(self) -> bool:
        return self._running

    # ------------------------------------------------------------------ helpers
    def _crash(self) -> None:
        with self._lock:
            if self._running:
                self._terminate()
            self._running = False
            self._in_cell = False
            self._pending = None

    def _send(self, message: dict[str, Any]) -> None:
        self._write_checked(protocol.dumps(message))

    def _write_checked(self, data: bytes) -> None:
        try:
            self._write(data)
        except OSError as exc:
            self._exited(f"the interpreter's channel closed ({exc})")

    def _get(self, timeout: float) -> dict[str, Any] | _Exited:
        try:
            return self._inbox.get(timeout=timeout)
        except queue.Empty:
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
