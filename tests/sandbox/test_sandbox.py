"""The sandbox interface on both backends: cells, tool calls, persistence, limits, restarts."""

from __future__ import annotations

import json
import subprocess
import sys

from orchestra.host import Host
from orchestra.sandbox import CellResult, Sandbox, SandboxConfig, SandboxLimits, ToolRequest
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
NOW = 1_728_975_600.0


def make(backend: str, **limits: object) -> Sandbox:
    factory = Host.create(entry_points=False).sandbox(backend)
    sandbox: Sandbox = factory({"Calc__add": ADD}, seed=7, config=SandboxConfig(backend=backend, limits=SandboxLimits(**limits)))
    return sandbox


def run(sandbox: Sandbox, code: str, *, now: float = NOW, step: int = 1) -> tuple[CellResult, list[ToolRequest]]:
    """Run a cell, answering each allowed call with a + b (the host's side of the channel)."""
    sandbox.begin(code, name=f"<step {step}>", now=now)
    calls = []
    event = sandbox.next_event()
    while isinstance(event, ToolRequest):
        calls.append(event)
        if event.problem is not None:
            sandbox.reply(event, ok=False, error=event.problem, now=now)
        else:
            sandbox.reply(event, ok=True, value=event.arguments["a"] + event.arguments.get("b", 1), now=now + 2)
        event = sandbox.next_event()
    return event, calls


def test_a_cell_prints_calls_tools_and_keeps_its_variables(backend):
    with make(backend) as sb:
        result, calls = run(sb, "x = Calc__add(2, b=5)\nprint('x =', x)")
        assert (result.output, result.error, result.crashed) == ("x = 7\n", None, None)
        assert [(c.tool, c.arguments) for c in calls] == [("Calc__add", {"a": 2, "b": 5})]
        result, _ = run(sb, "print(x * 2, Calc__add(a=x))", step=2)
        assert result.output == "14 8\n"


def test_tools_have_their_real_signature_and_docstring(backend):
    with make(backend) as sb:
        result, _ = run(sb, "print(Calc__add.__doc__.splitlines()[0])\nCalc__add(1, c=2)")
        assert result.output == "Add two integers.\n"
        assert "Calc__add(a: 'int', b: 'int' = 1) -> 'int': got an unexpected keyword argument 'c'" in result.error


def test_the_host_refuses_arguments_the_schema_rejects(backend):
    with make(backend) as sb:
        result, calls = run(sb, "Calc__add('seven')")
        assert calls[0].problem == "invalid arguments for Calc__add (a): 'seven' is not of type 'integer'"
        assert "ToolError: invalid arguments for Calc__add" in result.error


def test_a_traceback_shows_the_models_code_only(backend):
    with make(backend) as sb:
        run(sb, "def half(n):\n    return n / 0\n")
        result, _ = run(sb, "print('before')\nhalf(3)", step=2)
        assert result.output == "before\n"
        assert result.error == (
            "Traceback (most recent call last):\n"
            '  File "<step 2>", line 2, in <module>\n    half(3)\n'
            '  File "<step 1>", line 2, in half\n    return n / 0\n           ~~^~~\n'
            "ZeroDivisionError: division by zero"
        )
        assert "guest" not in result.error and "orchestra" not in result.error


def test_time_is_the_sessions_and_random_is_seeded(backend):
    code = "import time, datetime, random\nprint(int(time.time()), datetime.datetime.now().year, random.random())"
    outputs = []
    for _ in range(2):
        with make(backend) as sb:
            result, _ = run(sb, code, now=NOW + 100)
            outputs.append(result.output)
    stamp, year, rnd = outputs[0].split()
    assert int(stamp) in (int(NOW) + 100, int(NOW) + 101) and year == "2024"
    assert outputs[0] == outputs[1]  # seeded from the scenario seed, not the host's entropy


def test_print_output_is_capped(backend):
    with make(backend, output_chars=50) as sb:
        result, _ = run(sb, "print('y' * 10_000)")
        assert result.output == "y" * 50 and result.dropped == 10_001 - 50


def test_a_cell_that_kills_the_interpreter_gets_a_fresh_one(backend):
    limits = {"fuel_per_cell": 200_000_000} if backend == "wasm" else {"cell_timeout_s": 2.0}
    with make(backend, **limits) as sb:
        run(sb, "kept = 1")
        result, _ = run(sb, "while True:\n    pass", step=2)
        assert result.crashed is not None
        assert ("compute budget" in result.crashed) if backend == "wasm" else ("wall-clock" in result.crashed)
        result, _ = run(sb, "print('alive'); print(kept)", step=3)
        assert result.output == "alive\n" and "NameError" in result.error
        assert sb.starts == 2


def test_stop_removes_the_scratch_directory(backend):
    sb = make(backend)
    run(sb, "open('notes.txt', 'w').write('hi')\nprint(open('notes.txt').read())")
    scratch = sb.scratch
    assert scratch is not None and scratch.exists()
    sb.stop()
    assert not scratch.exists() and not sb.running
    sb.stop()  # idempotent


FUEL_SCRIPT = """
import json
from tests_sandbox_helper import run_fuel
print(json.dumps(run_fuel()))
"""


def test_wasm_fuel_is_identical_across_processes(tmp_path):
    """The same code burns the same fuel in every process (PYTHONHASHSEED pinned, host-answered
    clock and entropy), so charging it to the simulated clock is deterministic."""
    helper = tmp_path / "tests_sandbox_helper.py"
    helper.write_text(
        "from orchestra.sandbox.wasm import WasmSandbox\n"
        "def run_fuel():\n"
        "    sb = WasmSandbox({}, seed=1)\n"
        "    fuels = []\n"
        "    for i, code in enumerate(['d = {str(n): n for n in range(3000)}', 'print(sorted(d)[:3], hash(\"abc\"))', 'import random; print(random.random())']):\n"
        "        sb.begin(code, name=f'<step {i}>', now=1000.0 + i)\n"
        "        ev = sb.next_event()\n"
        "        fuels.append([ev.fuel, ev.output])\n"
        "    sb.stop()\n"
        "    return fuels\n"
    )
    runs = [subprocess.run([sys.executable, "-c", FUEL_SCRIPT], cwd=tmp_path, capture_output=True, text=True, check=True).stdout for _ in range(2)]
    first = json.loads(runs[0])
    assert first == json.loads(runs[1])
    assert all(fuel > 0 for fuel, _ in first)


def test_time_sleep_is_refused_at_once_and_the_interpreter_lives_on(backend):
    with make(backend) as sb:
        run(sb, "x = 41")
        result, _ = run(sb, "import time\ntime.sleep(60)", step=2)
        assert result.error is not None and "RuntimeError: time.sleep(60) is not available here" in result.error
        assert "wait_for_notification" in result.error and "guest" not in result.error  # the model's frames only
        again, _ = run(sb, "print(x + 1)", step=3)
        assert again.output.strip() == "42"  # no restart: the variables are still there
