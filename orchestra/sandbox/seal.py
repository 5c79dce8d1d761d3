"""The bwrap guest's first steps, run inside the sandbox before the interpreter loop (`guest.py`).

Never imported by the host: `orchestra.sandbox.bwrap` runs this file's text, then the guest's,
in the sandbox's Python, with a JSON configuration as `sys.argv[1]`. It seals the process before
any of the model's code exists, with what the kernel then enforces on its own — so each layer
holds even when the guest's guard is defeated:

1. **an unprivileged uid**: a sandbox started by a root host begins as its user namespace's root
   (mapped to host root) with only CAP_SETUID/CAP_SETGID, and drops here to `uid`/`gid` (mapped
   to an unprivileged host uid): no capabilities left, `RLIMIT_NPROC` applies from now on;
2. **a task cap**: `RLIMIT_NPROC` (counted per user namespace, so per sandbox), under the pids
   cgroup the host adds where it can;
3. **no execve**: a second seccomp filter refuses `execve`/`execveat` (EPERM) unless the backend
   allows it, and kills on any other architecture's syscalls, like the first;
4. **the simulated clock** for Python's clocks (`time.localtime`, `ctime`, `strftime`,
   `monotonic`, `perf_counter`, `process_time`, `clock_gettime`, ... and the times `os.stat`
   reports): they read `time.time()`, which the guest's `init` pins to the session's clock.

This file runs on the host's CPython (3.11); it is not part of the WebAssembly guest, whose
interpreter loop (and so its fuel) stays exactly `guest.py`.
"""

import ctypes
import json
import os
import resource
import sys
import time

_PR_SET_DUMPABLE = 4
_PR_SET_SECCOMP = 22
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_MODE_FILTER = 2


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _prctl(libc: ctypes.CDLL, option: int, arg: int) -> None:
    if libc.prctl(option, arg, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl({option}) failed: {os.strerror(errno)}")


def drop_privileges(uid: int, gid: int, libc: ctypes.CDLL) -> None:
    """From namespace root to `uid`/`gid` for good (capabilities go with uid 0)."""
    if os.getuid() != 0:
        return
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if 0 in os.getresuid() or 0 in os.getresgid():
        raise SystemExit("orchestra seal: could not leave uid 0")
    _prctl(libc, _PR_SET_DUMPABLE, 1)  # the guest reads its own /proc/self, as on a non-root host


def install_filter(program: bytes, libc: ctypes.CDLL) -> None:
    """Add a seccomp filter (classic BPF, 8 bytes an instruction); it can never be removed."""
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.addressof(buffer))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"seccomp: {os.strerror(errno)}")


def pin_clocks() -> None:
    """Every clock Python offers reads `time.time()` (the session's, once the guest's init pinned it)."""
    real_localtime, real_gmtime, real_ctime, real_asctime, real_strftime = time.localtime, time.gmtime, time.ctime, time.asctime, time.strftime

    def now() -> float:
        return time.time()

    def now_ns() -> int:
        return int(time.time() * 1e9)

    time.localtime = lambda secs=None: real_localtime(now() if secs is None else secs)
    time.gmtime = lambda secs=None: real_gmtime(now() if secs is None else secs)
    time.ctime = lambda secs=None: real_ctime(now() if secs is None else secs)
    time.asctime = lambda t=None: real_asctime(time.localtime() if t is None else t)
    time.strftime = lambda format, t=None: real_strftime(format, time.localtime() if t is None else t)
    for name in ("monotonic", "perf_counter", "process_time", "thread_time"):
        setattr(time, name, now)
        setattr(time, f"{name}_ns", now_ns)
    time.clock_gettime = lambda clock: now()
    time.clock_gettime_ns = lambda clock: now_ns()
    for name in ("stat", "lstat", "fstat"):
        setattr(os, name, _pinned_stat(getattr(os, name), now))


def _pinned_stat(real: object, now: object) -> object:
    extra_fields = ("st_blksize", "st_blocks", "st_rdev")

    def stat(*args: object, **kwargs: object) -> os.stat_result:
        st = real(*args, **kwargs)  # type: ignore[operator]
        t = now()  # type: ignore[operator]
        ns = int(t * 1e9)
        extra = {f: getattr(st, f) for f in extra_fields if hasattr(st, f)}
        times = {"st_atime": t, "st_mtime": t, "st_ctime": t, "st_atime_ns": ns, "st_mtime_ns": ns, "st_ctime_ns": ns}
        return os.stat_result((*tuple(st)[:7], int(t), int(t), int(t)), {**times, **extra})

    stat.__name__ = getattr(real, "__name__", "stat")
    stat.__doc__ = getattr(real, "__doc__", None)
    return stat


def seal(config: dict) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    drop_privileges(int(config["uid"]), int(config["gid"]), libc)
    nproc = int(config["nproc"])
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    if config.get("exec_filter"):
        install_filter(bytes.fromhex(config["exec_filter"]), libc)
    if config.get("pin_clocks"):
        pin_clocks()


def main() -> None:
    try:
        seal(json.loads(sys.argv.pop(1)))
    except BaseException as exc:  # say why on stderr (the host keeps its tail) and never start the guest
        sys.stderr.write(f"orchestra seal failed: {type(exc).__name__}: {exc}\n")
        sys.stderr.flush()
        os._exit(1)


if __name__ == "__main__":
    main()
