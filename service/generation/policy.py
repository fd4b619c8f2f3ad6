"""Who may send what where: the service's keys go only to the endpoints they are bound to.

Without this, a submitter could name any variable of the service's environment (another
service's secret) as the API key and a base URL of their own, and receive it as a bearer token;
or make the service POST to hosts inside its network; or send one provider's key to another.

- A key variable of ``REGUA_GENERATION_KEY_ENVS`` is bound to endpoints (``VAR=API[@URL]``,
  :mod:`regua.llm.keys`): its key goes to those and nowhere else, whoever asks.
- A submitter may use only the APIs' default URLs, ``REGUA_GENERATION_BASE_URLS`` and the
  endpoints of the key variable they name, and only bound key variables. Any refusal is the
  same 403, which says nothing about which variables the service has or has set.
- Admins may also name any other variable (its key is sent where they say).
"""

from __future__ import annotations

import os

from regua.errors import GenerationSetupError, PermissionDeniedError
from regua.llm.endpoint import DEFAULT_BASE_URLS, same_endpoint
from regua.llm.keys import KeyBinding, bound_vars, may_send, parse_bindings
from regua.settings import Settings
from service.generation.request import GenerationParams


def _bindings(settings: Settings) -> tuple[KeyBinding, ...]:
    return parse_bindings(settings.generation_key_envs)


def _where(params: GenerationParams) -> str:
    return f"{params.api} at {params.base_url or DEFAULT_BASE_URLS.get(params.api, '(default)')}"


def _key_refused(params: GenerationParams) -> PermissionDeniedError:
    return PermissionDeniedError(
        f"no key {params.api_key_env} may be sent to {_where(params)}; an admin binds key "
        "variables to endpoints in REGUA_GENERATION_KEY_ENVS (VAR=API@BASE_URL)"
    )


def _url_allowed(settings: Settings, params: GenerationParams) -> bool:
    if params.base_url is None:
        return True
    allowed: list[str | None] = [*settings.generation_base_urls]
    if params.api in DEFAULT_BASE_URLS:
        allowed.append(None)  # the API's own URL
    allowed += [
        b.base_url
        for b in _bindings(settings)
        if b.var == params.api_key_env and b.api == params.api
    ]
    return any(same_endpoint(params.api, params.base_url, a) for a in allowed)


def check_allowed(settings: Settings, params: GenerationParams, *, is_admin: bool) -> None:
    """Refuse (403) a base URL or key variable this caller may not use at this endpoint.

    A submitter naming a bound variable that is not set is refused the same way (the 403 never
    tells which variables exist); an admin gets :func:`api_key`'s 422 naming it.
    """
    if params.is_mock:
        return
    var = params.api_key_env
    bindings = _bindings(settings)
    if var is not None and var in bound_vars(bindings):
        if not may_send(bindings, var, params.api, params.base_url):
            raise _key_refused(params)
    elif var is not None and not is_admin:
        raise _key_refused(params)
    if is_admin:
        return
    if not _url_allowed(settings, params):
        raise PermissionDeniedError(
            f"base URL {params.base_url} is not one a submitter may use; an admin can add "
            "it to REGUA_GENERATION_BASE_URLS, or generate with an admin token"
        )
    if var is not None and not os.environ.get(var):
        raise _key_refused(params)


def api_key(params: GenerationParams) -> str | None:
    """The key from the environment variable the parameters name (None when none is named).

    A named variable that is not set is refused with its name (422; admins only reach this
    with such a variable, :func:`check_allowed` refuses a submitter first), before any call.
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
