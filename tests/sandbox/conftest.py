"""Both sandbox backends, as a fixture: every sandbox test runs on `wasm` and on `bwrap` (the
helpers are `support.sandboxes`: a bwrap that cannot start here is a skip, under CI a failure)."""

from __future__ import annotations

import pytest

from support.sandboxes import BACKENDS, require_backend


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    require_backend(request.param)
    return str(request.param)
