"""Thin clients for `orchestra serve`: Gaia2 scenarios as server sessions, reached over HTTP.

Installable alone (httpx + pydantic), so a trainer's venv — verifiers 0.4, TRL, transformers 5 —
never meets ARE's pins: orchestra runs in its own venv behind `orchestra serve`.
"""

from orchestra_client.client import AsyncOrchestraClient, OrchestraClient, ServeError

__all__ = ["AsyncOrchestraClient", "OrchestraClient", "ServeError"]
