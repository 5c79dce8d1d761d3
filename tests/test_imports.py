"""Importing orchestra is cheap and touches neither the network nor the user's environment."""

from __future__ import annotations

import os
import subprocess
import sys

from helpers import REPO


def _python(code: str, **env: str) -> str:
    full_env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    full_env.update(env)
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env=full_env, capture_output=True, text=True, timeout=300, check=True).stdout


def test_import_orchestra_imports_neither_are_nor_litellm():
    out = _python("import sys, orchestra, orchestra.session, orchestra.cli; print(sorted(m for m in ('are', 'litellm') if m in sys.modules))")
    assert out.strip() == "[]"


def test_a_rollout_reads_no_dotenv_and_needs_no_network(tmp_path):
    (tmp_path / ".env").write_text("ORCHESTRA_DOTENV_PROBE=leaked\n")
    code = (
        "import socket\n"
        "def no_net(*a, **k): raise SystemExit('network access attempted')\n"
        "socket.socket.connect = no_net\n"
        "socket.create_connection = no_net\n"
        "import os, sys\n"
        "from orchestra.session import Session\n"
        f"with Session.open({str(REPO / 'scenarios' / 'search' / 'validation' / 'starter_search_lookup.json')!r}) as s:\n"
        "    s.finish()\n"
        "print(os.environ.get('LITELLM_LOCAL_MODEL_COST_MAP'), os.environ.get('ORCHESTRA_DOTENV_PROBE'), 'litellm' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "None", "False"]
