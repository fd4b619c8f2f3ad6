"""The registry of generation providers: the built-ins register like plugins.

``openai`` (OpenAI-compatible chat API), ``anthropic`` (messages API) and ``mock`` (bundled
replies) are registered here; a plugin adds its own with :func:`register_provider`.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from regua.errors import GenerationSetupError
from service.generation import anthropic_api, mock_api, openai_api
from service.generation.provider import Provider
from service.generation.request import GenerationParams

ProviderFactory = Callable[[], Provider]
_REGISTRY: dict[str, ProviderFactory] = {}


def register_provider(api: str, factory: ProviderFactory) -> None:
    """Make ``api`` available to ``--api`` (a plugin registers its own here)."""
    _REGISTRY[api] = factory


def provider_for(api: str) -> Provider:
    """The provider registered as ``api``; an unknown one names the known ones."""
    factory = _REGISTRY.get(api)
    if factory is None:
        known = ", ".join(sorted(_REGISTRY))
        raise GenerationSetupError(f"unknown generation API {api!r}; known: {known}")
    return factory()


def known_apis() -> list[str]:
    """The registered APIs, sorted."""
    return sorted(_REGISTRY)


def api_key(params: GenerationParams) -> str | None:
    """The key from the environment variable the parameters name (None when none is named).

    A named variable that is not set is refused with its name, before any call is made.
    """
    if params.api_key_env is None:
        return None
    value = os.environ.get(params.api_key_env)
    if not value:
        raise GenerationSetupError(
            f"the API key variable {params.api_key_env} is not set in the service's environment; "
            f"set {params.api_key_env} where `regua serve` runs, or drop --api-key-env"
        )
    return value


register_provider("openai", openai_api.OpenAIChat)
register_provider("anthropic", anthropic_api.AnthropicMessages)
register_provider("mock", mock_api.MockProvider)
