"""Who may send what where: a submitter cannot point the service's keys at any server.

Without this, a submitter could name any variable of the service's environment (another
service's secret) as the API key and a base URL of their own, and receive it as a bearer token;
or make the service POST to hosts inside its network. Admins may use any base URL and variable;
a submitter only the APIs' default URLs and ``REGUA_GENERATION_BASE_URLS``, and only the
variables of ``REGUA_GENERATION_KEY_ENVS``.
"""

from __future__ import annotations

from regua.errors import PermissionDeniedError
from regua.settings import Settings
from service.generation import anthropic_api, openai_api
from service.generation.request import GenerationParams

DEFAULT_BASE_URLS = {
    "openai": openai_api.DEFAULT_BASE_URL,
    "anthropic": anthropic_api.DEFAULT_BASE_URL,
}


def _same_base(url: str, allowed: str) -> bool:
    return url.rstrip("/") == allowed.rstrip("/")


def check_allowed(settings: Settings, params: GenerationParams, *, is_admin: bool) -> None:
    """Refuse a submitter's base URL or key variable outside the service's allow-lists (403)."""
    if is_admin or params.is_mock:
        return
    if params.base_url is not None:
        allowed = [*settings.generation_base_urls, DEFAULT_BASE_URLS.get(params.api, "")]
        if not any(_same_base(params.base_url, a) for a in allowed if a):
            raise PermissionDeniedError(
                f"base URL {params.base_url} is not one a submitter may use; an admin can add "
                "it to REGUA_GENERATION_BASE_URLS, or generate with an admin token"
            )
    if params.api_key_env is not None and params.api_key_env not in settings.generation_key_envs:
        raise PermissionDeniedError(
            f"a submitter may not name {params.api_key_env} as the API key; allowed: "
            f"{', '.join(settings.generation_key_envs) or '(none)'} (REGUA_GENERATION_KEY_ENVS)"
        )
