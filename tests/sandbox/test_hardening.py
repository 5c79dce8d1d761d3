"""The adversarial review's findings, each one an attack on both backends (where it applies), with
the host's memory, CPU seconds, threads and processes measured before and after (`HostProbe`) and
asserted bounded.

Most attacks reach `os` through the guard's known hole (`import posixpath; posixpath.os`) with the
guard on, or run with the guard off: the guard is not the boundary, so every layer below it has to
hold on its own (docs/sandbox.md).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from orchestra.host import Host
from orchestra.sandbox import CellResult, Sandbox, SandboxConfig, SandboxLimits, ToolRequest
from orchestra.types import ToolArg, ToolSpec
from support.sandboxes import BACKENDS, HostProbe, require_backend, usage

ADD = ToolSpec(
    name="Calc__add",
    app_name="Calc",
    app_class="Calc",
    method="add",
    description="Add two integers.",
    args=(ToolArg("a", int, "int", "first", True), ToolArg("b", int, "int", "second", False, 1)),
    return_type="int",
    writes=False,
)
NOW = 1_728_975_600.0  # 2024-10-15 07:00 UTC, the scenarios' date
#: Small limits, so each attack ends in seconds: a cell may run 4 s, or burn 4e8 fuel on wasm.
LIMITS: dict[str, Any] = {"cell_timeout_s": 4.0, "fuel_per_cell": 400_000_000, "cpu_seconds": 30}
#: The guard's known hole: `os`, with the guard on.
BYPASS = "import posixpath\nos = posixpath.os\n"


def make(backend: str, *, guard: bool = True, options: dict[str, Any] | None = None, **limits: Any) -> Sandbox:
    require_backend(backend)
    factory = Host.create(entry_points=False).sandbox(backend)
    config = SandboxConfig(backend=backend, limits=SandboxLimits(**{**LIMITS, **limits}), **({"options": options} if options else {}))
    sandbox: Sandbox = factory({"Calc__add": ADD}, seed=3, config=config, guard=guard)
    return sandbox


def run(sandbox: Sandbox, code: str, *, step: int = 1) -> CellResult:
    """One cell; allowed calls are answered with a + b, refused ones with the host's reason."""
    sandbox.begin(code, name=f"<step {step}>", now=NOW)
    event = sandbox.next_event()
    while isinstance(event, ToolRequest):
        if event.problem is not None:
            sandbox.reply(event, ok=False, error=event.problem, now=NOW)
        else:
            sandbox.reply(event, ok=True, value=event.arguments["a"] + event.arguments.get("b", 1), now=NOW)
        event = sandbox.next_event()
    return event


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    """Load each backend's runtime once (wasmtime's library, the compiled interpreter), so the host's
    memory before an attack already holds what every sandbox shares."""
    for backend in BACKENDS:
        try:
            with make(backend) as sb:
                run(sb, "x = 1")
        except pytest.skip.Exception:
            pass


# ---------------------------------------------------------------- 1. bwrap: seccomp, uid, tasks, execve

#: x86-64 machine code, run through ctypes from an executable mmap: a 32-bit syscall (`int 0x80`,
#: rbx saved around it) and an x32-ABI one; the 32-bit fork's child pauses forever (it would count).
SHELLCODE = {
    "fork32": "53 b8 02 00 00 00 cd 80 85 c0 75 09 b8 22 00 00 00 0f 05 eb f7 5b c3",
    "unshare32_newuser": "53 b8 36 01 00 00 bb 00 00 00 10 cd 80 5b c3",
    "ptrace32": "53 b8 1a 00 00 00 bb 10 00 00 00 cd 80 5b c3",
    "getpid32": "53 b8 14 00 00 00 cd 80 5b c3",
    "x32_getpid": "b8 27 00 00 40 0f 05 c3",
}
RUN_SHELLCODE = """
import ctypes, mmap
code = bytes.fromhex({hex!r})
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
call = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
results = [call() for _ in range({times})]
print('returned', results)
"""


@pytest.mark.parametrize("name", sorted(SHELLCODE))
def test_a_foreign_architecture_syscall_kills_the_guest(name):
    """Before: the filter let every non-x86-64 syscall through (a 32-bit fork made 24 children past
    the 'no fork' rule, a 32-bit unshare(CLONE_NEWUSER) returned 0). Now the first one kills."""
    probe = HostProbe()
    with make("bwrap", guard=False) as sb:
        result = run(sb, RUN_SHELLCODE.format(hex=SHELLCODE[name].replace(" ", ""), times=30 if name == "fork32" else 1))
        assert result.crashed is not None and "forbids (seccomp" in result.crashed, (result.output, result.crashed)
        assert "returned" not in result.output
        assert run(sb, "print('fresh')", step=2).output == "fresh\n"
    probe.assert_bounded()


def test_the_guest_runs_as_an_unprivileged_uid():
    """Before: uid 0 in the sandbox, mapped to host root (`0 0 1`), so RLIMIT_NPROC never bound."""
    code = "import os\nprint(os.getuid(), os.getgid())\nprint(open('/proc/self/uid_map').read())\nprint(open('/proc/self/status').read())"
    with make("bwrap", guard=False) as sb:
        result = run(sb, code)
    lines = result.output.splitlines()
    assert lines[0] == "1000 1000"
    mapping = {int(inside): int(outside) for inside, outside, _ in (line.split() for line in lines[1:] if len(line.split()) == 3 and line.split()[0].isdigit())}
    assert mapping[1000] != 0  # the guest's uid is not host root
    status = dict(line.split(":\t", 1) for line in lines if ":\t" in line)
    assert status["CapEff"].strip() == "0000000000000000" and status["CapPrm"].strip() == "0000000000000000"
    assert status["NoNewPrivs"].strip() == "1"


TASKS = """
import threading
threading.stack_size(1 << 16)
gate = threading.Event()
started = 0
for _ in range(200):
    try:
        threading.Thread(target=gate.wait, daemon=True).start()
    except RuntimeError:
        break
    started += 1
gate.set()
print('started', started)
"""


@pytest.mark.parametrize("cgroup", [True, False], ids=["pids-cgroup", "rlimit-only"])
def test_tasks_are_capped_by_the_kernel(cgroup):
    """Threads are the one way to make tasks the seccomp filter leaves open; the cap holds with a
    pids cgroup, and without one (RLIMIT_NPROC, which binds the unprivileged uid). Before: 199."""
    probe = HostProbe()
    with make("bwrap", guard=False, options={"pids_cgroup": cgroup}, processes=8) as sb:
        result = run(sb, TASKS)
        assert result.error is None, result.error
        started = int(result.output.split()[-1])
        assert 0 < started <= 8, result.output
    probe.assert_bounded()


@pytest.mark.parametrize("allow", [False, True], ids=["refused", "allowed"])
def test_execve_of_host_binaries_is_refused_unless_allowed(allow):
    code = BYPASS + "try:\n    os.execv('/usr/bin/true', ['true'])\nexcept OSError as exc:\n    print('refused', exc.errno)"
    with make("bwrap", options={"allow_exec": allow}) as sb:
        result = run(sb, code)
        if allow:  # the interpreter became `true`, which exited
            assert result.crashed == "the interpreter exited (status 0)"
        else:
            assert (result.output, result.crashed) == ("refused 1\n", None)


# ---------------------------------------------------------------- 2. host memory: the channel is bounded

FLOOD = BYPASS + (
    'line = (\'{"op":"done","output":"\' + \'x\' * 1_000_000 + \'","error":null,"dropped":0,"final":false}\\n\').encode()\n'
    "for i in range(1500):\n    os.write(1, line)\n"
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_flood_on_the_channel_stays_in_the_guest(backend):
    """Before: 1500 lines of 1 MB took the host from 193 MB to 1485 MB (wasm) and 1946 MB (bwrap),
    and bwrap's stayed after close. Now the host holds one message at a time and caps the output."""
    probe = HostProbe()
    with make(backend) as sb:
        first = run(sb, FLOOD)
        assert first.output == "x" * 100_000 and first.dropped == 900_000  # a forged `done`: capped by the host
        time.sleep(1.0)  # what an unbounded reader would have queued meanwhile
        outputs, crashes = [], []
        for step in range(2, 9):  # wasm reads stdin ahead of the guest: it sees the breach a few messages late
            result = run(sb, "print('mine')", step=step)
            if result.crashed is not None:
                crashes.append(result.crashed)
                continue
            if result.output == "mine\n":
                break
            outputs.append(result.output)
        # bwrap: the next line is a breach (written before the guest read the host's message, or
        # run into the rest of a line the stop cut short); wasm: after at most a few stale cells
        assert crashes and "on the tool channel" in crashes[0], crashes
        assert len(outputs) <= (0 if backend == "bwrap" else 4) and all(o == "x" * 100_000 for o in outputs)
        assert result.output == "mine\n"
    probe.assert_bounded(peak_mb=250)


# ---------------------------------------------------------------- 3. a forged `done` frees nothing

FORGED_DONE = BYPASS + ('os.write(1, b\'{"op":"done","output":"forged\\\\n","error":null,"dropped":0,"final":false}\\n\')\nn = 0\nwhile True:\n    n += 1\n')


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_forged_done_buys_no_compute(backend):
    """Before: the host took a forged `done` as the cell's end, stopped the cell timeout and (wasm)
    refilled the fuel, and the guest burned a host core until close (29.9 s CPU per 30 s). Now the
    guest is held while it is the host's turn, the next cell ends at its own limit, and the one
    after runs the agent's code."""
    probe = HostProbe()
    with make(backend, fuel_per_cell=20_000_000_000) as sb:  # the default budget: seconds of compute
        forged = run(sb, FORGED_DONE)
        assert forged.output == "forged\n"  # one message of the code's own making; it buys nothing more
        idle = HostProbe()
        time.sleep(2.0)
        burned = usage().cpu_s - idle.before.cpu_s  # not `settle`: its gc.collect() of the worker's heap would count
        assert burned < 0.5, f"the guest ran {burned:.1f} CPU s between cells"
        started = time.monotonic()
        stalled = run(sb, "print('mine')", step=2)
        assert stalled.crashed is not None and time.monotonic() - started < LIMITS["cell_timeout_s"] + 5
        assert "wall-clock" in stalled.crashed or (backend == "wasm" and "compute budget" in stalled.crashed), stalled.crashed
        assert run(sb, "print('mine')", step=3).output == "mine\n"
    probe.assert_bounded(cpu_s=LIMITS["cell_timeout_s"] + 4)


# ---------------------------------------------------------------- 4. blocking host calls are stopped and freed


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_long_select_neither_blocks_nor_keeps_memory(backend):
    """Before (wasm): `select.select([], [], [], 100000)` slept in wasmtime, out of fuel's and the
    epoch's reach: 40-45 s a cell, and the thread and its linear memory stayed after stop. Now a
    clock wait ends at once on wasm (waiting passes no simulated time); bwrap's ends at the cell's
    budget; either way stop() frees everything."""
    probe = HostProbe()
    sb = make(backend, guard=False, fuel_per_cell=20_000_000_000, cell_timeout_s=15.0)
    sb.start(NOW)
    started = time.monotonic()
    result = run(sb, "blob = bytearray(300 << 20)\nblob[::4096] = b'x' * len(blob[::4096])\nimport select\nselect.select([], [], [], 100000)\nprint('woke')")
    elapsed = time.monotonic() - started
    if backend == "wasm":
        assert result.output == "woke\n" and elapsed < 10  # (before: the cell's whole 15 s, then 10 s more to stop)
    else:
        assert result.crashed is not None and "wall-clock" in result.crashed and elapsed < 15 + 5
    sb.stop()
    probe.assert_bounded(peak_mb=450, kept_mb=60)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_guest_waiting_on_its_stdin_is_stopped_and_freed(backend):
    probe = HostProbe()
    sb = make(backend, guard=False, fuel_per_cell=20_000_000_000)
    sb.start(NOW)
    started = time.monotonic()
    result = run(sb, "blob = bytearray(300 << 20)\nblob[::4096] = b'x' * len(blob[::4096])\nimport select\nselect.select([0], [], [])\nprint('woke')")
    assert result.crashed is not None and "wall-clock" in result.crashed
    assert time.monotonic() - started < LIMITS["cell_timeout_s"] + 5
    sb.stop()
    probe.assert_bounded(peak_mb=450, kept_mb=60)


# ---------------------------------------------------------------- 5. clocks, scratch quota, nested JSON, crash reasons, the guard's hole

CLOCKS = """
import time, datetime
print(time.time(), time.time_ns())
print(time.ctime(), '|', time.asctime(), '|', time.strftime('%Y-%m-%d %H:%M:%S'))
print(tuple(time.localtime())[:6], tuple(time.gmtime())[:6])
print(time.monotonic(), time.perf_counter(), time.process_time(), time.monotonic_ns())
print(datetime.datetime.now(), datetime.datetime.utcnow(), datetime.date.today())
"""
#: bwrap pins the times `os.stat` reports too; on wasm they come from the host's file system (docs/sandbox.md).
FILE_TIMES = (
    "import os\nopen('stamp.txt', 'w').write('x')\nst = os.stat('stamp.txt')\nprint(st.st_mtime, st.st_ctime, st.st_atime_ns, os.path.getmtime('stamp.txt'))\n"
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_clock_reads_the_simulated_time(backend):
    """Before (bwrap): localtime, ctime, monotonic and file times read the machine's clock, so a
    program printing the time changed the event log every run."""
    code = CLOCKS + (FILE_TIMES if backend == "bwrap" else "")
    outputs = []
    for _ in range(2):
        with make(backend, guard=False) as sb:
            result = run(sb, code)
            assert result.error is None, result.error
            outputs.append(result.output)
    assert outputs[0] == outputs[1]
    assert "Tue Oct 15 07:00:00 2024" in outputs[0] and "2024-10-15 07:00:00" in outputs[0]
    if backend == "bwrap":
        assert outputs[0].splitlines()[-1].startswith("1728975600.0 1728975600.0 1728975600000000000 1728975600.0")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_scratch_over_its_quota_is_emptied_and_the_interpreter_restarts(backend):
    """Before (wasm): the over-quota folder stayed, so every later cell failed with 'the interpreter
    did not start' while the message said it was restarted. bwrap's tmpfs refuses the write."""
    probe = HostProbe()
    write = "open('big.bin', 'wb').write(b'x' * (3 << 20))\nwhile True:\n    pass"
    with make(backend, file_mb=2, fuel_per_cell=20_000_000_000) as sb:
        result = run(sb, write)
        if backend == "wasm":
            assert result.crashed is not None and "more than 2 MiB to its scratch directory" in result.crashed
        else:
            assert result.error is not None and "[Errno 27] File too large" in result.error
            run(sb, "while True:\n    pass", step=2)  # a restart: bwrap's scratch is a fresh tmpfs
        again = run(sb, "print(open('big.bin', 'rb').read(1))", step=3)
        assert again.crashed is None and "No such file or directory: 'big.bin'" in (again.error or ""), again
        assert sb.starts == 2
    probe.assert_bounded()


@pytest.mark.parametrize("backend", BACKENDS)
def test_deeply_nested_json_on_the_channel_is_a_clear_breach(backend, monkeypatch):
    """Before (bwrap): json.loads' RecursionError killed the host's reader thread (a traceback), then
    the cell stalled until its timeout. Now the line is refused at once and the host stays whole."""
    failures: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", failures.append)
    probe = HostProbe()
    with make(backend, cell_timeout_s=15.0) as sb:
        sb.start(NOW)
        started = time.monotonic()
        result = run(sb, BYPASS + "os.write(1, b'[' * 200_000 + b']' * 200_000 + b'\\n')\nprint('after')")
        assert result.crashed is not None and "not a message" in result.crashed, result
        assert time.monotonic() - started < 10  # (before, bwrap: the cell's whole 15 s)
        assert run(sb, "print('fresh')", step=2).output == "fresh\n"
    assert failures == []
    probe.assert_bounded()


@pytest.mark.parametrize(
    "code,reason",
    [
        ("import os\nos.kill(os.getpid(), 9)", "killed by SIGKILL (not by the host"),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)", "killed by SIGSEGV"),
        ("import os\nos._exit(3)", "the interpreter exited (status 3)"),
        ("n = 0\nwhile True:\n    n += 1", "used more than its 1 CPU seconds"),
    ],
    ids=["sigkill", "sigsegv", "exit", "cpu"],
)
def test_a_crash_says_what_happened(code, reason):
    """Before: 'the interpreter was killed (CPU limit or memory)' for any SIGKILL, and the CPU limit
    itself was a bare SIGKILL (soft = hard)."""
    with make("bwrap", guard=False, cpu_seconds=1, cell_timeout_s=10) as sb:
        result = run(sb, code)
        assert result.crashed is not None and reason in result.crashed, result.crashed


def test_the_guest_cannot_signal_the_sandbox_init():
    with make("bwrap", guard=False) as sb:
        result = run(sb, "import os\ntry:\n    os.kill(1, 9)\nexcept OSError as exc:\n    print('refused', exc.errno)")
        assert (result.output, result.crashed) == ("refused 1\n", None)


GUARD_HOLE = (
    BYPASS
    + """
for name, attempt in [
    ("fork", lambda: os.fork()),
    ("execv", lambda: os.execv("/usr/bin/true", ["true"])),
    ("spawn", lambda: os.posix_spawn("/usr/bin/true", ["true"], {})),
    ("system", lambda: os.system("touch /scratch/pwned")),
    ("chroot", lambda: os.chroot("/")),
]:
    try:
        print(name, "ran", attempt())
    except Exception as exc:
        print(name, "refused", type(exc).__name__)
print("pwned" if os.path.exists("/scratch/pwned") else "clean")
"""
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_guards_hole_meets_the_layers_below(backend):
    """`import posixpath; posixpath.os` gets past the guard (documented: not the boundary); every
    process- and file-system-level escape it opens still fails on the backend alone."""
    probe = HostProbe()
    with make(backend) as sb:
        result = run(sb, GUARD_HOLE)
        assert result.crashed is None, result.crashed
        lines = dict(line.split(" ", 1) for line in result.output.splitlines() if " " in line)
        for name in ("fork", "execv", "spawn", "chroot"):
            assert lines[name].startswith("refused"), result.output
        assert lines["system"].startswith("refused") or lines["system"] != "ran 0", result.output
        assert result.output.splitlines()[-1] == "clean"
    probe.assert_bounded()
