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
from collections.abc import Callable, Iterator, Mapping
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


class LazyProvider:
    """A litellm provider built on first use: `register_providers({name: LazyProvider(answer)})`.

    litellm's provider map is process-wide, so a provider is one object for the process; building it
    needs litellm, which the commands that call no model never import. This holds the one handler,
    built at the first call (`provider()`): a `litellm.CustomLLM` whose `completion` and
    `acompletion` return `answer(litellm, kwargs)` (kwargs as litellm passes them: `model`,
    `messages`, `model_response`, `optional_params`, ...). `preflight(model)`, when given, is the
    handler's check before a batch (`orchestra.runs.preflight` calls it when the handler has one).
    """

    def __init__(self, answer: Callable[[Any, dict[str, Any]], Any], *, preflight: Callable[[str], None] | None = None) -> None:
        self._answer = answer
        self._preflight = preflight
        self._handler: Any = None
        self._build_lock = threading.Lock()

    def __call__(self) -> Any:
        if self._handler is None:
            litellm = import_litellm()
            with self._build_lock:
                if self._handler is None:
                    answer, check = self._answer, self._preflight

                    class Handler(litellm.CustomLLM):  # type: ignore[name-defined]  # litellm is imported lazily
                        def completion(self, *args: Any, **kwargs: Any) -> Any:
                            return answer(litellm, kwargs)

                        async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
                            return answer(litellm, kwargs)

                    if check is not None:
                        Handler.preflight = lambda self, model: check(model)
                    self._handler = Handler()
        return self._handler
