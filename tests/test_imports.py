"""Importing orchestra is cheap and touches neither the network nor the user's environment."""

from __future__ import annotations

import os
import subprocess
import sys

from support.helpers import REPO


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
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "None", "False"]


#: A child-process prelude that makes the dev-only dependencies unimportable (as on a machine
#: that installed only the runtime lock): a meta-path finder local to that process.
BLOCK_DEV_ONLY = """
import importlib.abc, sys
BLOCKED = ("faker", "llama_cpp", "orchestra_dev")
class _Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
        return None
sys.meta_path.insert(0, _Blocker())
"""


def test_orchestra_and_replay_work_without_faker_or_llama_cpp():
    code = BLOCK_DEV_ONLY + (
        "import orchestra, orchestra.rollout, orchestra.cli, orchestra.agent, orchestra.are.loading\n"
        "from orchestra.cli import main\n"
        f"code = main(['replay', {str(REPO / 'scenarios' / 'search' / 'validation' / 'starter_search_lookup.json')!r}])\n"
        "print('dev-only imported:', sorted(m for m in sys.modules if m.split('.')[0] in BLOCKED), 'exit', code)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # not the tests' devtools path either
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "starter_search_lookup" in proc.stdout and "PASS" in proc.stdout
    assert proc.stdout.strip().endswith("dev-only imported: [] exit 0")


def test_the_runtime_package_holds_no_dev_only_code():
    package = REPO / "orchestra"
    assert not (package / "corpus").exists() and not (package / "local_llm.py").exists()
    import re

    dev_import = re.compile(r"^\s*(from|import) (faker|llama_cpp|orchestra_dev)\b", re.M)
    offenders = [str(p.relative_to(REPO)) for p in package.rglob("*.py") if dev_import.search(p.read_text())]
    assert offenders == []


def test_ares_only_door_is_orchestra_are():
    """Every `import are` / `from are` of the runtime code is inside orchestra/are/."""
    import re

    pattern = re.compile(r"^\s*(from are[\s.]|import are[\s.])", re.M)
    outside = [
        str(p.relative_to(REPO))
        for folder in ("orchestra", "plugins", "scaffolds")
        for p in (REPO / folder).rglob("*.py")
        if pattern.search(p.read_text()) and (REPO / "orchestra" / "are") not in p.parents
    ]
    assert outside == []


def test_uuid4_is_the_stdlib_one_outside_a_rollouts_calls_into_are(scenario_path, judge_pool):
    import uuid

    from orchestra.are.ids import uuid_shim_installed
    from orchestra.session import Session

    stdlib = uuid.uuid4
    with Session.open(scenario_path("starter_search_lookup"), judge_pool=judge_pool) as s:
        assert not uuid_shim_installed() and uuid.uuid4 is stdlib  # between calls into ARE
        s.call_tool("SystemApp__wait_for_notification", {"timeout": 5})
        assert uuid.uuid4 is stdlib
        s.finish()
    assert uuid.uuid4 is stdlib
