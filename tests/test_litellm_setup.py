"""The one place litellm's custom providers are registered (`orchestra.litellm_setup.register_providers`)."""

from __future__ import annotations

import pytest

from orchestra.litellm_setup import import_litellm, register_providers


@pytest.fixture
def litellm():
    litellm = import_litellm()
    saved = list(litellm.custom_provider_map or [])
    yield litellm
    litellm.custom_provider_map = saved


def _entries(litellm, provider):
    return [e["custom_handler"] for e in litellm.custom_provider_map if e["provider"] == provider]


def test_register_is_idempotent_keeps_other_providers_and_remaps_a_changed_handler(litellm):
    first, second, other = litellm.CustomLLM(), litellm.CustomLLM(), litellm.CustomLLM()
    register_providers({"probe-other": other})
    register_providers({"probe-a": first})
    register_providers({"probe-a": first})
    assert _entries(litellm, "probe-a") == [first] and _entries(litellm, "probe-other") == [other]
    assert "probe-a" in litellm.provider_list  # litellm's own list, so its router knows the prefix
    register_providers({"probe-a": second})
    assert _entries(litellm, "probe-a") == [second] and _entries(litellm, "probe-other") == [other]


def test_a_handler_factory_is_called_at_registration(litellm):
    handler = litellm.CustomLLM()
    calls = []

    def factory():
        calls.append(1)
        return handler

    register_providers({"probe-factory": factory})
    register_providers({"probe-factory": factory})
    assert _entries(litellm, "probe-factory") == [handler] and len(calls) == 2


def test_building_a_host_registers_nothing_with_litellm(litellm):
    from orchestra.host import Host

    litellm.custom_provider_map = [e for e in litellm.custom_provider_map if e["provider"] != "orchestra"]
    host = Host.create()
    assert "orchestra" in host.models and not _entries(litellm, "orchestra")
    register_providers(host.models)  # what the first model call does (`orchestra.models.complete`)
    (handler,) = _entries(litellm, "orchestra")
    assert isinstance(handler, litellm.CustomLLM)
