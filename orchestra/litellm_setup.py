"""litellm, imported and configured in one place: the import, and the custom providers.

* `import_litellm()`: litellm without its import-time side effects (the network fetch of its model
  cost map, python-dotenv loading a stray `.env`). Importing this module does not import litellm:
  the commands that never call a model (`orchestra --help`, `plugins`, `teams list`, `scenarios`)
  never pay its seconds of import.
* `register_providers({provider: handler})`: the one place `litellm.custom_provider_map` is
  written — by the model call for the host's providers (`orchestra.models.complete`), by the
  scripted judge, by the parity policy. Idempotent; other providers are kept.
* `dotenv_disabled()`: python-dotenv's `load_dotenv` made a no-op for the duration of an import
  (litellm's here, ARE's in `orchestra.are.imports`).

Standard library only at import time, and nothing of orchestra: `orchestra.are` imports it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Mapping
from typing import Any

_lock = threading.RLock()


@contextlib.contextmanager
def dotenv_disabled() -> Iterator[None]:
    """Make `dotenv.load_dotenv` a no-op while a module (ARE, litellm) imports.

    ARE and litellm call `load_dotenv()` at import time; python-dotenv then walks up from the
    package's install folder (inside a project's `.venv`, that reaches the project root) and
    silently loads any `.env` into `os.environ`. Scoped to the import and restored afterwards;
    opt back in with `ORCHESTRA_LOAD_DOTENV=1`.
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


def import_litellm() -> Any:
    """Import litellm without its network cost-map fetch and without it loading a stray `.env`."""
    with _lock:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        with dotenv_disabled():
            import litellm
            import litellm._process_defaults  # noqa: F401  (its import runs load_dotenv in DEV mode)
        litellm.suppress_debug_info = True
        return litellm


def register_providers(providers: Mapping[str, Any]) -> None:
    """Make litellm route `"<provider>/<model>"` to each provider's handler.

    A handler is a `litellm.CustomLLM`, or a callable without arguments that returns one (called
    here, so a plugin can register a provider without importing litellm; it should return the
    same handler each time). Idempotent and cheap when nothing changes (every model call makes
    it); a provider already mapped to another handler is remapped; other providers are kept.
    """
    if not providers:
        return
    litellm = import_litellm()
    with _lock:
        handlers = {p: h if isinstance(h, litellm.CustomLLM) or not callable(h) else h() for p, h in providers.items()}
        current = list(litellm.custom_provider_map or [])
        mapped = {e.get("provider"): e.get("custom_handler") for e in current}
        if all(p in mapped and mapped[p] is h for p, h in handlers.items()):
            return
        kept = [e for e in current if e.get("provider") not in handlers]
        litellm.custom_provider_map = kept + [{"provider": p, "custom_handler": h} for p, h in handlers.items()]
        from litellm.utils import custom_llm_setup

        custom_llm_setup()  # litellm's provider list (also run by litellm at each call)
