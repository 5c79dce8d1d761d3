"""The session API of `orchestra serve`, sync and async (docs/serve.md lists the routes).

Every method returns the server's JSON as a dict; an HTTP error is a `ServeError` carrying the
status and the server's one-line message (it names what and where).
"""

from __future__ import annotations

from typing import Any

import httpx

DEFAULT_TIMEOUT = httpx.Timeout(120.0, connect=10.0)


class ServeError(RuntimeError):
    """An error answer of `orchestra serve`: `status` (HTTP) and the server's message."""

    def __init__(self, status: int, message: str, route: str) -> None:
        super().__init__(f"{route}: HTTP {status}: {message}")
        self.status = status
        self.message = message
        self.route = route


def _result(response: httpx.Response, route: str) -> dict[str, Any]:
    if response.status_code >= 400:
        try:
            message = str(response.json().get("error") or response.text)
        except ValueError:
            message = response.text[:500]
        raise ServeError(response.status_code, message, route)
    data: dict[str, Any] = response.json()
    return data


def _headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


class OrchestraClient:
    """`OrchestraClient("http://127.0.0.1:8765")`: sessions of `orchestra serve`, synchronously."""

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout: httpx.Timeout | float = DEFAULT_TIMEOUT) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(base_url=self.base_url, headers=_headers(api_key), timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> OrchestraClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _post(self, route: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return _result(self._http.post(route, json=body or {}), f"POST {route}")

    def _get(self, route: str, **params: Any) -> dict[str, Any]:
        return _result(self._http.get(route, params={k: v for k, v in params.items() if v is not None}), f"GET {route}")

    def health(self) -> dict[str, Any]:
        return self._get("/health")

    def tasks(self, source: str = "bundled") -> list[dict[str, Any]]:
        tasks: list[dict[str, Any]] = self._get("/tasks", source=source)["tasks"]
        return tasks

    def create_session(self, scenario: str, **fields: Any) -> dict[str, Any]:
        """A new session on `scenario` (fields: mode, model, endpoint, seed, scaffold, max_turns, noise, judge)."""
        return self._post("/sessions", {"scenario": scenario, **fields})

    def group(self, scenario: str, n: int, **fields: Any) -> list[dict[str, Any]]:
        """`n` sessions of one scenario started from one loaded state (a GRPO group)."""
        sessions: list[dict[str, Any]] = self._post("/sessions/group", {"scenario": scenario, "n": n, **fields})["sessions"]
        return sessions

    def step(self, session_id: str, completion: dict[str, Any]) -> dict[str, Any]:
        return self._post(f"/sessions/{session_id}/step", {"completion": completion})

    def state(self, session_id: str) -> dict[str, Any]:
        return self._get(f"/sessions/{session_id}")

    def finish(self, session_id: str) -> dict[str, Any]:
        return self._post(f"/sessions/{session_id}/finish")

    def delete(self, session_id: str) -> None:
        _result(self._http.delete(f"/sessions/{session_id}"), f"DELETE /sessions/{session_id}")

    def complete(self, session_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """The session's model proxy: an OpenAI chat completion for `body`."""
        return self._post(f"/sessions/{session_id}/v1/chat/completions", body)


class AsyncOrchestraClient:
    """The same as `OrchestraClient`, for asyncio / anyio code (trainers' rollout loops)."""

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout: httpx.Timeout | float = DEFAULT_TIMEOUT) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=_headers(api_key), timeout=timeout)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncOrchestraClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _post(self, route: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return _result(await self._http.post(route, json=body or {}), f"POST {route}")

    async def _get(self, route: str, **params: Any) -> dict[str, Any]:
        return _result(await self._http.get(route, params={k: v for k, v in params.items() if v is not None}), f"GET {route}")

    async def health(self) -> dict[str, Any]:
        return await self._get("/health")

    async def tasks(self, source: str = "bundled") -> list[dict[str, Any]]:
        tasks: list[dict[str, Any]] = (await self._get("/tasks", source=source))["tasks"]
        return tasks

    async def create_session(self, scenario: str, **fields: Any) -> dict[str, Any]:
        return await self._post("/sessions", {"scenario": scenario, **fields})

    async def group(self, scenario: str, n: int, **fields: Any) -> list[dict[str, Any]]:
        sessions: list[dict[str, Any]] = (await self._post("/sessions/group", {"scenario": scenario, "n": n, **fields}))["sessions"]
        return sessions

    async def step(self, session_id: str, completion: dict[str, Any]) -> dict[str, Any]:
        return await self._post(f"/sessions/{session_id}/step", {"completion": completion})

    async def state(self, session_id: str) -> dict[str, Any]:
        return await self._get(f"/sessions/{session_id}")

    async def finish(self, session_id: str) -> dict[str, Any]:
        return await self._post(f"/sessions/{session_id}/finish")

    async def delete(self, session_id: str) -> None:
        _result(await self._http.delete(f"/sessions/{session_id}"), f"DELETE /sessions/{session_id}")

    async def complete(self, session_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self._post(f"/sessions/{session_id}/v1/chat/completions", body)
