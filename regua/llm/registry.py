"""The registry of model APIs: ``openai``, ``anthropic`` and ``mock`` register like plugins.

A plugin adds its own API with ``PROVIDERS.register("name", factory)`` or an entry point in the
``regua.llm_providers`` group (the factory builds a :class:`~regua.llm.provider.Provider`).
"""

from __future__ import annotations

from collections.abc import Callable

from regua.llm.anthropic_api import AnthropicMessages
from regua.llm.mock_api import MockProvider
from regua.llm.openai_api import OpenAIChat
from regua.llm.provider import Provider
from regua.registry import Registry

ProviderFactory = Callable[[], Provider]

PROVIDERS: Registry[ProviderFactory] = Registry(
    "model API", entry_point_group="regua.llm_providers"
)
PROVIDERS.register("openai", OpenAIChat)
PROVIDERS.register("anthropic", AnthropicMessages)
PROVIDERS.register("mock", MockProvider)


def provider_for(api: str) -> Provider:
    """The provider registered as ``api`` (:class:`~regua.registry.UnknownPluginError`)."""
    return PROVIDERS.get(api)()
