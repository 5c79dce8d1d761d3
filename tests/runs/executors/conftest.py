"""Fixtures of the executor tests: the corpus subset and `local`'s records on it (the reference)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support.executor_batches import SUBSET, line, oracle_team_batch, run_batch


@pytest.fixture(scope="session")
def subset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("subset")
    for path in SUBSET:
        shutil.copy(path, folder / path.name)
    return folder


@pytest.fixture(scope="session")
def subset_reference(subset: Path) -> list[str]:
    """`local`'s records of the oracle team on the subset, as sorted results lines."""
    return sorted(line(r) for r in run_batch(oracle_team_batch([str(subset)])))
