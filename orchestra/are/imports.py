"""Importing ARE without its import-time side effects (litellm's network cost-map fetch, `load_dotenv()`)."""

from __future__ import annotations

import os
import threading

from orchestra.litellm_setup import dotenv_disabled

_import_lock = threading.Lock()
_imported = False


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
