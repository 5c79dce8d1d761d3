"""The judge-call cache: judge-model replies on disk, so re-judging a trajectory asks the model nothing new."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import warnings
from pathlib import Path
from typing import Any


class JudgeCallCache:
    """Judge-model replies on disk, one JSON file per (model, prompt).

    The key is a sha256 of the model string, the messages, the stop sequences (and a reply cap,
    when one is set) — not the
    endpoint or the key: the same model behind another URL is the same judge. Writes are atomic
    (temp file + rename), so concurrent rollouts may share a folder.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._warned = False

    @staticmethod
    def key(model: str, messages: list[dict[str, Any]], stop: list[str] | None = None, max_tokens: int | None = None, verbatim_bools: bool = False) -> str:
        request: dict[str, Any] = {"model": model, "messages": messages, "stop": list(stop or [])}
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        if verbatim_bools:  # the stored reply is post-processed: a verbatim one is another entry
            request["verbatim_bools"] = True
        payload = json.dumps(request, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise OSError(f"judge-call cache entry {path} is unreadable ({exc}); delete it to re-ask the judge model") from None
        return data if isinstance(data, dict) and isinstance(data.get("text"), str) else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store a reply. A folder that cannot be written (read-only, full) costs only the cache:
        the reply was already obtained, so the verdict stands and a warning says why reruns re-ask."""
        path = self._path(key)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(entry, indent=1, sort_keys=True, ensure_ascii=False))
            os.replace(tmp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            if not self._warned:
                self._warned = True
                warnings.warn(f"judge-call cache {self.folder} cannot be written ({exc}); judge replies are not cached", stacklevel=2)
