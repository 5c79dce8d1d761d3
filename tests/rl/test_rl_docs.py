"""Every example of docs/rl.md runs: each Python block as a script, each shell block with bash, all
against a loopback server that answers as vLLM does (`BASE_URL`: token ids and logprobs), offline."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from orchestra_dev.mock_openai import MockServer

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "rl.md"
FENCE = re.compile(r"^```(python|bash)\n(.*?)^```", re.M | re.S)
BLOCKS = [(lang, body) for lang, body in FENCE.findall(PAGE.read_text(encoding="utf-8"))]


def test_the_page_has_its_examples() -> None:
    assert sum(lang == "python" for lang, _ in BLOCKS) >= 5 and any(lang == "bash" for lang, _ in BLOCKS)
    assert "..." not in "".join(body for _, body in BLOCKS), "a sketch, not an example"


@pytest.fixture(scope="module")
def server():
    with MockServer(0.0, token_ids=True) as s:
        yield s


@pytest.mark.slow
@pytest.mark.parametrize(("lang", "body"), BLOCKS, ids=[f"{lang}-{i}" for i, (lang, _) in enumerate(BLOCKS)])
def test_the_example_runs(lang: str, body: str, server: MockServer, tmp_path: Path) -> None:
    env = {**os.environ, "BASE_URL": server.base_url, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    if lang == "python":
        done = subprocess.run([sys.executable, "-c", body], cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    else:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1) if "orchestra run" in body else done.returncode == 0, f"{body}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
