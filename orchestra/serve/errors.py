"""The server's errors and their HTTP answers: `{"error": "<one line>"}` with a status that says whose fault it is."""

from __future__ import annotations

from starlette.responses import JSONResponse

from orchestra.errors import OrchestraError
from orchestra.models import ModelError


class HTTPError(Exception):
    """An error answer: HTTP `status`, one line naming what and where."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class TooManySessions(OrchestraError):
    """The server holds its cap of open sessions (HTTP 429)."""


class UnknownSession(OrchestraError):
    """No open session has this id (HTTP 404)."""


def error_response(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def http_status(exc: BaseException) -> tuple[int, str]:
    """The status and line of an error raised while serving a request: 400 the body, 404 the id,
    409 the episode's state, 429 the cap, 502 the upstream model, 500 a bug of the server."""
    if isinstance(exc, HTTPError):
        return exc.status, exc.message
    if isinstance(exc, UnknownSession):
        return 404, str(exc)
    if isinstance(exc, TooManySessions):
        return 429, str(exc)
    if isinstance(exc, ModelError):
        return 502, f"the session's model failed: {exc}"
    if isinstance(exc, OrchestraError | TypeError | ValueError):
        return 400, str(exc)
    return 500, f"internal error: {type(exc).__name__}: {exc}"
