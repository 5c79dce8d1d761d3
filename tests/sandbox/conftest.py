"""Both sandbox backends, as a fixture: every sandbox test runs on `wasm` and on `bwrap`.

The bwrap cases are skipped only where its start-up probe fails (no user namespaces here), and
the skip says why; under CI (`CI=true`) that is a failure instead, so a runner that silently lost
bubblewrap is noticed."""

from __future__ import annotations

import os

import pytest

BACKENDS = ["wasm", "bwrap"]


def require_backend(name: str) -> None:
    if name != "bwrap":
        return
    from orchestra.sandbox.bwrap import probe

    problem = probe()
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"bwrap cannot run on this CI machine: {problem}")
        pytest.skip(f"bwrap cannot run here (its start-up probe failed: {problem})")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    require_backend(request.param)
    return str(request.param)
