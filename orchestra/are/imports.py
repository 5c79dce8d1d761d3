"""Importing ARE without its import-time side effects (litellm's network cost-map fetch, `load_dotenv()`)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - import for type checkers only
    pass

_import_lock = threading.Lock()
_imported = False


@contextlib.contextmanager
def dotenv_disabled() -> Iterator[None]:
    """Make `dotenv.load_dotenv` a no-op while ARE's modules import.

    ARE calls `load_dotenv()` at import time; python-dotenv then walks up from ARE's install folder
    (inside a project's `.venv`, that reaches the project root) and silently loads any `.env` into
    `os.environ`. Scoped to the import and restored afterwards; opt back in with
    `ORCHESTRA_LOAD_DOTENV=1`.
    """
    if os.environ.get("ORCHESTRA_LOAD_DOTENV") == "1":
        yield
        return
    import dotenv

    original = dotenv.load_dotenv
    dotenv.load_dotenv = lambda *a, **k: False
    try:
        yield
    finally:
        dotenv.load_dotenv = original


def import_are() -> None:
    """Import the ARE modules orchestra uses, once, without network or dotenv side effects."""
    global _imported
    if _imported:
        return
    with _import_lock:
        if _imported:
            return
        # litellm (imported by ARE) downloads its model cost map at import unless told not to.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        with dotenv_disabled():
            import are.simulation.config  # noqa: F401  (its import runs load_dotenv)
            import are.simulation.data_handler.importer  # noqa: F401
            import are.simulation.environment  # noqa: F401
            import are.simulation.scenarios.scenario_imported_from_json.utils  # noqa: F401
            import are.simulation.validation  # noqa: F401
        _imported = True

