"""The interpreter loop that runs *inside* a sandbox (both backends): never imported by the host.

The host starts the sandbox's Python with this file's text as `-c` and talks to it over two
JSON-lines channels: the host writes to the guest's stdin, the guest answers on its stdout. The
model's own `print` output never reaches those channels: `sys.stdout` / `sys.stderr` are replaced
by capped in-memory buffers while a cell runs.

    host -> guest   {"op": "init", "tools": [...], "seed": int, "now": float, "output_limit": int, "pin_time": bool, "guard": bool}
                    {"op": "exec", "code": str, "name": "<step 3>", "now": float}
                    {"op": "reply", "id": int, "ok": bool, "value": <encoded>, "error": str, "now": float}
    guest -> host   {"op": "ready"}
                    {"op": "call", "id": int, "tool": str, "args": {...}}
                    {"op": "done", "output": str, "error": str | null, "dropped": int, "final": bool}

Everything here is a *guard*, not the security boundary: it refuses the obvious escapes (imports
of `os`, `subprocess`, `socket`, `ctypes`, `importlib`, `gc`, ...; dunder, private and
frame attributes; `open()` on file descriptors) with a clear error so the model learns at once.
Code that gets past it still meets the backend — WebAssembly's capabilities, or bubblewrap's
namespaces and resource limits — which is what keeps the host safe. Standard library only; runs
on CPython 3.11 (bubblewrap, the host's interpreter) and 3.12 (the WASI build).
"""

from __future__ import annotations

import ast
import builtins
import datetime as _datetime
import inspect
import io
import json
import linecache
import random
import sys
import time
import traceback
from typing import Any, SupportsIndex

#: Modules the model's own code may not import (what they offer is what the sandbox takes away).
BLOCKED_MODULES = frozenset(
    """os posix nt sys subprocess _posixsubprocess socket _socket ssl select selectors asyncio ctypes _ctypes cffi
    importlib imp zipimport pkgutil runpy gc inspect builtins multiprocessing threading _thread concurrent signal
    resource pty tty termios fcntl mmap shutil tempfile pathlib glob code codeop pdb faulthandler tracemalloc
    sysconfig site marshal pickle shelve dbm sqlite3 _io io""".split()
)
#: Attribute names besides dunders and `_private` ones that lead to frames, code or globals.
BLOCKED_ATTRIBUTES = frozenset(
    """f_back f_globals f_locals f_builtins f_code tb_frame tb_next gi_frame gi_code gi_yieldfrom cr_frame cr_code
    cr_await ag_frame ag_code co_code co_consts mro""".split()
)
#: Dunders the model's code may use (defining and calling the ordinary protocol methods).
ALLOWED_DUNDERS = frozenset(
    """__init__ __name__ __doc__ __str__ __repr__ __len__ __iter__ __next__ __enter__ __exit__ __eq__ __ne__ __lt__
    __le__ __gt__ __ge__ __hash__ __contains__ __getitem__ __setitem__ __add__ __call__ __bool__""".split()
)
ALLOWED_PRIVATE = frozenset({"_asdict", "_replace", "_fields", "_make"})
BLOCKED_NAMES = frozenset({"__import__", "__builtins__", "__loader__", "__spec__", "__build_class__"})


def _no_sleep(seconds: float | SupportsIndex = 0.0) -> None:
    """`time.sleep` in a cell: refused at once, the same on every backend. Sleeping would block on
    the machine's clock (wall-clock limits, machine-dependent outcomes) while the scenario's
    simulated clock stands still."""
    raise RuntimeError(
        f"time.sleep({seconds!r}) is not available here: time is the scenario's simulated clock, which a cell does not "
        "move by waiting. To let simulated time pass, call the wait_for_notification tool (where you have it) and end the step."
    )


class ToolError(Exception):
    """A tool call that failed (the host's message says why)."""


class SandboxPolicyError(Exception):
    """Something the sandbox does not allow."""


class _FinalAnswer(BaseException):
    """`final_answer` was called: the cell ends there (the agent's work is done)."""


def _attribute_problem(name: str) -> str | None:
    if name.startswith("__") and name.endswith("__"):
        return None if name in ALLOWED_DUNDERS else f"access to the dunder attribute {name!r} is not allowed in this sandbox"
    if name.startswith("_") and name not in ALLOWED_PRIVATE:
        return f"access to the private attribute {name!r} is not allowed in this sandbox"
    if name in BLOCKED_ATTRIBUTES:
        return f"access to the attribute {name!r} (frames, code objects) is not allowed in this sandbox"
    return None


def check_source(source: str, filename: str) -> None:
    """Refuse code that names what the sandbox forbids (raises SyntaxError or SandboxPolicyError)."""
    tree = ast.parse(source, filename, "exec")
    for node in ast.walk(tree):
        problem = None
        if isinstance(node, ast.Attribute):
            problem = _attribute_problem(node.attr)
        elif isinstance(node, ast.Name) and node.id in BLOCKED_NAMES:
            problem = f"the name {node.id!r} is not allowed in this sandbox"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                problem = problem or _import_problem(alias.name)
        elif isinstance(node, ast.ImportFrom):
            problem = _import_problem(node.module or "") if node.level == 0 else "relative imports are not allowed in this sandbox"
            for alias in node.names:
                problem = problem or (_attribute_problem(alias.name) if alias.name != "*" else None)
        if problem is not None:
            raise SandboxPolicyError(f"line {getattr(node, 'lineno', '?')}: {problem}")


def _import_problem(name: str) -> str | None:
    root = name.split(".")[0]
    if root in BLOCKED_MODULES or root.startswith("_"):
        return f"import of {name!r} is not allowed in this sandbox (no processes, sockets, native code or interpreter internals)"
    return None


class _Capture(io.TextIOBase):
    """What `print` writes during a cell: the first `limit` characters are kept, the rest counted."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        room = self.limit - self.size
        if room > 0:
            self.parts.append(text[:room])
            self.size += min(len(text), room)
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def getvalue(self) -> str:
        return "".join(self.parts)


class Record:
    """A tool's structured output (an ARE dataclass): attribute and item access to its fields;
    printed exactly as the host prints the object."""

    __slots__ = ("_kind", "_text", "_fields")

    def __init__(self, kind: str, text: str, fields: dict[str, Any]) -> None:
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_text", text)
        object.__setattr__(self, "_fields", fields)

    def __getattr__(self, name: str) -> Any:
        fields = object.__getattribute__(self, "_fields")
        if name in fields:
            return fields[name]
        raise AttributeError(f"{object.__getattribute__(self, '_kind')} has no field {name!r}; its fields: {', '.join(fields)}")

    def __getitem__(self, name: str) -> Any:
        return object.__getattribute__(self, "_fields")[name]

    def __contains__(self, name: object) -> bool:
        return name in object.__getattribute__(self, "_fields")

    def __iter__(self) -> Any:
        return iter(object.__getattribute__(self, "_fields"))

    def keys(self) -> Any:
        return object.__getattribute__(self, "_fields").keys()

    def items(self) -> Any:
        return object.__getattribute__(self, "_fields").items()

    def get(self, name: str, default: Any = None) -> Any:
        return object.__getattribute__(self, "_fields").get(name, default)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Record):
            return bool(object.__getattribute__(self, "_fields") == object.__getattribute__(other, "_fields"))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return str(object.__getattribute__(self, "_text"))


def decode(value: Any) -> Any:
    """The host's encoding of a tool output back into Python values (see `orchestra.sandbox.protocol`)."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if "$record" in value:
            return Record(value["$record"], value["$text"], {k: decode(v) for k, v in value["fields"].items()})
        if "$tuple" in value:
            return tuple(decode(v) for v in value["$tuple"])
        if "$dict" in value:
            return {decode(k): decode(v) for k, v in value["$dict"]}
        if "$text" in value:  # an object the host could only print
            return value["$text"]
        return {k: decode(v) for k, v in value.items()}
    return value


def _encode_argument(value: Any) -> Any:
    if isinstance(value, Record):
        return dict(object.__getattribute__(value, "_fields"))
    if isinstance(value, (tuple, set, frozenset)):
        return list(value)
    raise TypeError(f"a tool argument of type {type(value).__name__} cannot be sent; use str, int, float, bool, None, list or dict")


class Guest:
    def __init__(self, stdin: Any, stdout: Any) -> None:
        self._in = stdin
        self._out = stdout
        self._next_id = 0
        self.namespace: dict[str, Any] = {"__name__": "__main__", "__doc__": None}
        self.now = 0.0
        self.output_limit = 100_000
        self.tool_names: list[str] = []
        self.guard = True

    # ---- the channel
    def send(self, message: dict[str, Any]) -> None:
        self._out.write((json.dumps(message, default=_encode_argument) + "\n").encode())
        self._out.flush()

    def receive(self) -> dict[str, Any]:
        line = self._in.readline()
        if not line:
            raise SystemExit(0)
        message: dict[str, Any] = json.loads(line)
        if "now" in message:
            self.now = float(message["now"])
        return message

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        self._next_id += 1
        call_id = self._next_id
        try:
            self.send({"op": "call", "id": call_id, "tool": tool, "args": arguments})
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{tool}: {exc}") from None
        while True:
            reply = self.receive()
            if reply.get("op") == "reply" and reply.get("id") == call_id:
                break  # replies to messages the guest did not send (forged on the channel) are dropped
        if not reply["ok"]:
            raise ToolError(reply["error"])
        return decode(reply["value"])

    # ---- set-up
    def init(self, message: dict[str, Any]) -> None:
        self.output_limit = int(message.get("output_limit", self.output_limit))
        random.seed(int(message.get("seed", 0)))
        time.sleep = _no_sleep  # simulated time never passes by waiting inside a cell (either backend)
        if message.get("pin_time"):
            self._pin_time()
        for spec in message["tools"]:
            fn = self._tool_function(spec)
            self.namespace[spec["name"]] = fn
            self.tool_names.append(spec["name"])
        self.guard = bool(message.get("guard", True))
        if self.guard:
            self._guard_builtins()

    def _tool_function(self, spec: dict[str, Any]) -> Any:
        params = []
        for arg in spec["args"]:
            default = inspect.Parameter.empty if arg["required"] else arg.get("default")
            params.append(inspect.Parameter(arg["name"], inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=arg["type"]))
        signature = inspect.Signature(params, return_annotation=spec["returns"])
        name = spec["name"]
        final = name == "final_answer"
        guest = self

        def tool(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise TypeError(f"{name}{signature}: {exc}") from None
            result = guest.call(name, dict(bound.arguments))
            if final:
                raise _FinalAnswer()
            return result

        tool.__name__ = tool.__qualname__ = name
        tool.__doc__ = spec["doc"]
        tool.__signature__ = signature  # type: ignore[attr-defined]
        tool.__module__ = "tools"
        return tool

    def _pin_time(self) -> None:
        """bubblewrap: the host clock is the machine's, so Python's time functions read the
        session's instead (the WebAssembly backend answers WASI's clock itself)."""
        guest = self
        time.time = lambda: guest.now
        time.time_ns = lambda: int(guest.now * 1e9)

        class SimDatetime(_datetime.datetime):
            @classmethod
            def now(cls, tz: Any = None) -> Any:
                return cls.fromtimestamp(guest.now, tz)

            @classmethod
            def utcnow(cls) -> Any:
                return cls.fromtimestamp(guest.now, _datetime.UTC).replace(tzinfo=None)

            @classmethod
            def today(cls) -> Any:
                return cls.fromtimestamp(guest.now)

        class SimDate(_datetime.date):
            @classmethod
            def today(cls) -> Any:
                return cls.fromtimestamp(guest.now)

        _datetime.datetime = SimDatetime  # type: ignore[misc]
        _datetime.date = SimDate  # type: ignore[misc]

    def _guard_builtins(self) -> None:
        real_import, real_open, real_getattr = builtins.__import__, builtins.open, builtins.getattr
        namespace = self.namespace

        def guarded_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
            if globals is None or globals is namespace:
                problem = _import_problem(name) if level == 0 else "relative imports are not allowed in this sandbox"
                if problem is not None:
                    raise ImportError(problem, name=name)
            return real_import(name, globals, locals, fromlist, level)

        def guarded_open(file: Any, *args: Any, **kwargs: Any) -> Any:
            if not isinstance(file, str):
                raise SandboxPolicyError("open() takes a path (str) in this sandbox, not a file descriptor")
            return real_open(file, *args, **kwargs)

        def guarded_getattr(obj: Any, name: str, *default: Any) -> Any:
            problem = _attribute_problem(name) if isinstance(name, str) else None
            if problem is not None:
                raise SandboxPolicyError(problem)
            return real_getattr(obj, name, *default)

        def guarded_hasattr(obj: Any, name: str) -> bool:
            try:
                guarded_getattr(obj, name)
            except AttributeError:
                return False
            return True

        def guarded_source(kind: str, real: Any) -> Any:
            def run(source: Any, *args: Any, **kwargs: Any) -> Any:
                if not isinstance(source, str):
                    raise SandboxPolicyError(f"{kind}() takes source text in this sandbox")
                check_source(source, "<string>")
                return real(source, *args, **kwargs)

            return run

        def refused(name: str) -> Any:
            def fn(*args: Any, **kwargs: Any) -> Any:
                raise SandboxPolicyError(f"{name}() is not allowed in this sandbox")

            return fn

        safe = dict(vars(builtins))
        safe.update(
            __import__=guarded_import,
            open=guarded_open,
            getattr=guarded_getattr,
            hasattr=guarded_hasattr,
            eval=guarded_source("eval", eval),
            exec=guarded_source("exec", exec),
            compile=guarded_source("compile", compile),
            vars=refused("vars"),
            breakpoint=refused("breakpoint"),
            input=refused("input"),
            setattr=_guarded_setter(setattr),
            delattr=_guarded_setter(delattr),
        )
        self.namespace["__builtins__"] = safe

    # ---- cells
    def run_cell(self, code: str, name: str) -> dict[str, Any]:
        capture = _Capture(self.output_limit)
        error: str | None = None
        final = False
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        try:
            if self.guard:
                check_source(code, name)
            exec(compile(code, name, "exec"), self.namespace)
        except _FinalAnswer:
            final = True
        except SyntaxError as exc:
            error = "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
        except SandboxPolicyError as exc:
            error = f"SandboxPolicyError: {exc}"
        except BaseException as exc:  # the model's exception, KeyboardInterrupt and SystemExit included
            error = _user_traceback(exc)
        finally:
            sys.stdout, sys.stderr = saved
        return {"op": "done", "output": capture.getvalue(), "error": error, "dropped": capture.dropped, "final": final}

    def serve(self) -> None:
        self.send({"op": "ready"})
        while True:
            message = self.receive()
            op = message.get("op")
            if op == "init":
                self.init(message)
                self.send({"op": "ready"})
            elif op == "exec":
                self.send(self.run_cell(message["code"], message.get("name", "<code>")))
            # anything else (a stale reply) is dropped


def _guarded_setter(real: Any) -> Any:
    def run(obj: Any, name: str, *args: Any) -> Any:
        problem = _attribute_problem(name) if isinstance(name, str) else None
        if problem is not None:
            raise SandboxPolicyError(problem)
        return real(obj, name, *args)

    return run


def _user_traceback(exc: BaseException) -> str:
    """The traceback trimmed to the model's own code: frames of cells only, no sandbox internals."""
    te = traceback.TracebackException.from_exception(exc, capture_locals=False)
    te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename.startswith("<step")])
    te.__cause__ = te.__context__ = None
    lines = list(te.format())
    if len(lines) == 1 or not te.stack:  # no frame of the model's code: just the exception
        lines = list(te.format_exception_only())
    return "".join(lines).rstrip()


def main() -> None:
    import os

    streams = sys.stdin, sys.stdout, sys.stderr  # kept alive: a collected wrapper closes its file
    stdin, stdout, stderr = sys.stdin.buffer, sys.stdout.buffer, sys.stderr
    # The channel stays ours: the model's code sees capture buffers, never the real streams.
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(), io.StringIO(), io.StringIO()
    sys.__stdout__ = sys.__stderr__ = sys.__stdin__ = None  # type: ignore[misc]
    if os.path.isdir("/scratch"):
        os.chdir("/scratch")
    try:
        Guest(stdin, stdout).serve()
        del streams
    except SystemExit:
        raise
    except BaseException:  # the driver itself failed: say why on the real stderr (the host keeps its tail)
        stderr.write(traceback.format_exc())
        stderr.flush()
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
