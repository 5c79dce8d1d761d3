"""Every example of docs/plugins.md, as a user would use it: its files written from the page, built
as a package of its own, installed beside orchestra, discovered through its entry point (`orchestra
plugins` names its distribution) and run to a verdict with the page's own command.

A block whose first line is `# file: PACKAGE/PATH` is a file of PACKAGE; a `bash` block whose
first line is `# run: PACKAGE` is the command that shows the package at work.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "plugins.md"
BIN = Path(sys.executable).parent
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)


def examples() -> dict[str, tuple[dict[str, str], list[str]]]:
    """PACKAGE -> (its files by path, its commands), in the page's order."""
    out: dict[str, tuple[dict[str, str], list[str]]] = {}
    for _, body in FENCE.findall(PAGE.read_text(encoding="utf-8")):
        first, _, rest = body.partition("\n")
        if m := re.fullmatch(r"# file: ([\w.-]+)/(.+)", first.strip()):
            out.setdefault(m.group(1), ({}, []))[0][m.group(2)] = rest
        elif m := re.fullmatch(r"# run: ([\w.-]+)", first.strip()):
            out.setdefault(m.group(1), ({}, []))[1].extend(line for line in rest.splitlines() if line.strip())
    return out


EXAMPLES = examples()


def test_the_page_has_an_example_of_each_kind_of_extension() -> None:
    hooks = {hook for files, _ in EXAMPLES.values() for text in files.values() for hook in re.findall(r"def (register_\w+)\(", text)}
    assert {"register_scaffolds", "register_judges", "register_models", "register_executors", "register_sandboxes"} <= hooks
    assert all(files and commands for files, commands in EXAMPLES.values()), "each example has its files and a command"


@pytest.mark.parametrize("package", sorted(EXAMPLES))
def test_the_example_installs_is_discovered_and_runs_to_a_verdict(package: str, tmp_path: Path) -> None:
    files, commands = EXAMPLES[package]
    source = tmp_path / package
    for name, text in files.items():
        path = source / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    uv = shutil.which("uv", path=str(BIN)) or "uv"
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    subprocess.run([uv, "build", "--wheel", "-q", "-o", str(wheels), str(source)], check=True, capture_output=True, text=True)
    [wheel] = wheels.glob("*.whl")
    subprocess.run([uv, "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)], check=True, capture_output=True, text=True)
    env = {k: v for k, v in os.environ.items() if k != "ORCHESTRA_PLUGINS"}  # every entry point: found by its group alone
    env["PYTHONPATH"] = str(site)

    listed = subprocess.run([str(BIN / "orchestra"), "plugins"], env=env, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert f"{package} 0.1.0" in listed.stdout, listed.stdout

    for command in commands:
        argv = shlex.split(command)
        while "=" in argv[0]:  # `VAR=value orchestra ...`
            name, _, value = argv.pop(0).partition("=")
            env[name] = value
        assert argv[0] == "orchestra"
        done = subprocess.run([str(BIN / "orchestra"), *argv[1:]], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        verdicts = re.findall(r"\s(PASS|FAIL|ERROR)\s", done.stdout)
        assert verdicts and "ERROR" not in verdicts, f"{command}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr, done.stderr
