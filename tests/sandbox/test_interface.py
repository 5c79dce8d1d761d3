"""The public backend interface: a backend written against it alone (the example in docs/sandbox.md)
runs cells, tool calls and restarts; the built-in backends use nothing else; options are checked."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from orchestra.hookspecs import hookimpl
from orchestra.host import Host
from orchestra.sandbox import GUEST_SOURCE, CellResult, GuestChannel, Sandbox, SandboxConfig, SandboxError, ToolRequest, write_all
from orchestra.sandbox.bwrap import BwrapSandbox
from orchestra.sandbox.wasm import WasmSandbox
from orchestra.types import ToolArg, ToolSpec

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


class LocalSandbox(Sandbox):
    """docs/sandbox.md's example: the guest as a plain child process, no isolation at all."""

    name = "local"

    def launch(self, scratch: Path, channel: GuestChannel) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", GUEST_SOURCE], cwd=scratch, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        threading.Thread(target=self._pump, args=(self.proc, channel), daemon=True).start()

    def _pump(self, proc: subprocess.Popen[bytes], channel: GuestChannel) -> None:
        assert proc.stdout is not None
        while line := proc.stdout.readline(channel.max_line + 1):
            if not line.endswith(b"\n") or channel.deliver(line[:-1]) is None:
                break
        channel.exited(f"the interpreter exited (status {proc.wait()})")

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        write_all(self.proc.stdin.fileno(), data, timeout=self.limits.cell_timeout_s)

    def terminate(self) -> None:
        self.proc.kill()
        self.proc.wait()


class LocalPlugin:
    @hookimpl
    def register_sandboxes(self, register: Any) -> None:
        register("local", LocalSandbox)


def run(sandbox: Sandbox, code: str, step: int = 1) -> tuple[CellResult, list[ToolRequest]]:
    sandbox.begin(code, name=f"<step {step}>", now=1000.0)
    calls, event = [], sandbox.next_event()
    while isinstance(event, ToolRequest):
        calls.append(event)
        sandbox.reply(event, ok=True, value=event.arguments["a"] + event.arguments.get("b", 1), now=1000.0)
        event = sandbox.next_event()
    return event, calls


def test_a_backend_written_against_the_public_interface_runs_cells_calls_and_restarts():
    factory = Host.create([LocalPlugin()], entry_points=False).sandbox("local")
    with factory({"Calc__add": ADD}, seed=1, config=SandboxConfig(backend="local")) as sb:
        result, calls = run(sb, "x = Calc__add(2, b=5)\nprint('x =', x)")
        assert (result.output, result.error, result.crashed) == ("x = 7\n", None, None)
        assert [(c.tool, c.arguments) for c in calls] == [("Calc__add", {"a": 2, "b": 5})]
        assert run(sb, "print(x * 2)", step=2)[0].output == "14\n"
        crashed, _ = run(sb, "import posixpath\nposixpath.os.abort()", step=3)
        assert crashed.crashed == "the interpreter exited (status -6)"
        again, _ = run(sb, "print('fresh')", step=4)
        assert again.output == "fresh\n" and sb.starts == 2


@pytest.mark.parametrize("backend", [WasmSandbox, BwrapSandbox])
def test_the_built_in_backends_override_no_private_method(backend):
    """wasm and bwrap are written against the public surface only (launch, write, terminate and the
    optional pause, resume, unread_input, buffered_bytes)."""
    base = {name for name in dir(Sandbox) if name.startswith("_") and not name.endswith("__") and name != "_abc_impl"}
    assert sorted(name for name in vars(backend) if name in base) == []
    public = {"launch", "write", "terminate", "pause", "resume", "unread_input", "buffered_bytes", "name", "counts_compute", "Options"}
    assert {name for name in vars(backend) if name in dir(Sandbox) and not name.startswith("_")} <= public


def test_backend_options_are_checked_with_a_clear_error():
    with pytest.raises(
        SandboxError,
        match=r"bwrap sandbox: invalid option allow_exek \(extra inputs are not permitted\); its options: allow_exec, host_gid, host_uid, pids_cgroup",
    ):
        BwrapSandbox({}, config=SandboxConfig(backend="bwrap", options={"allow_exek": True}))
    with pytest.raises(SandboxError, match=r"wasm sandbox: invalid option allow_exec \(extra inputs are not permitted\); its options: none"):
        WasmSandbox({}, config=SandboxConfig(options={"allow_exec": True}))
    assert BwrapSandbox({}, config=SandboxConfig(backend="bwrap", options={"allow_exec": True})).options.allow_exec
