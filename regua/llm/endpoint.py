"""One base-URL rule for every model API, and the limiter key of an endpoint.

A base URL may be given with or without its version segment: ``http://h:8000``,
``http://h:8000/``, ``http://h:8000/v1``, ``http://h:8000/v1//`` and ``HTTP://H:8000/v1/``
are one endpoint, ``http://h:8000/v1`` (:func:`api_base`), and OpenAI-compatible calls go to
``http://h:8000/v1/chat/completions``. The rule: repeated and trailing slashes are dropped,
scheme and host lower-cased, a default port dropped; a base whose last path segment is a
version (``v1``, ``v2``, ``v1beta``) is used as it is, any other gets ``/v1``; a URL given
with the API's own endpoint path (``…/chat/completions``) names its base exactly (the way to
reach a server whose path has no version segment).
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urlsplit, urlunsplit

DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com/v1",
}
"""Each hosted API's own base URL (used when a call names none)."""
ENDPOINT_PATHS = {"openai": "/chat/completions", "anthropic": "/messages"}
_VERSION = re.compile(r"v\d+[a-z0-9]*")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _clean(base_url: str) -> tuple[str, str, str, str]:
    """(scheme, host[:port], path without trailing slashes, query) of a base URL."""
    parts = urlsplit(base_url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    if parts.port is not None and parts.port != _DEFAULT_PORTS.get(scheme):
        host = f"{host}:{parts.port}"
    userinfo, at, _ = parts.netloc.rpartition("@")
    if at:  # credentials in the URL are kept for the request (and redacted from every text)
        host = f"{userinfo}@{host}"
    path = re.sub(r"/{2,}", "/", parts.path).rstrip("/")
    return scheme, host, path, parts.query


@lru_cache(maxsize=1024)
def api_base(api: str, base_url: str | None) -> str:
    """The normalised base URL of ``api`` at ``base_url`` (the API's default when None)."""
    url = base_url or DEFAULT_BASE_URLS.get(api)
    if not url:
        raise ValueError(f"the {api} API has no default base URL; give one")
    scheme, host, path, query = _clean(url)
    suffix = ENDPOINT_PATHS.get(api, "")
    if suffix and path.endswith(suffix):
        path = path[: -len(suffix)].rstrip("/")
    elif not _VERSION.fullmatch(path.rsplit("/", 1)[-1]):
        path = f"{path}/v1"
    return urlunsplit((scheme, host, path, query, ""))


@lru_cache(maxsize=1024)
def endpoint_url(api: str, base_url: str | None, path: str | None = None) -> str:
    """The request URL of ``api`` (its endpoint ``path``, default the API's own) at a base."""
    base = api_base(api, base_url)
    suffix = ENDPOINT_PATHS.get(api, "") if path is None else path
    scheme, host, base_path, query = _clean(base)
    return urlunsplit((scheme, host, base_path + suffix, query, ""))


def same_endpoint(api: str, a: str | None, b: str | None) -> bool:
    """Whether two base URLs of ``api`` reach the same endpoint."""
    return api_base(api, a) == api_base(api, b)


@lru_cache(maxsize=1024)
def limit_key(api: str, base_url: str | None) -> str:
    """The limiter key of an endpoint: one per (API, normalised base URL)."""
    if base_url is None and api not in DEFAULT_BASE_URLS:
        return api  # an API without URL (the bundled mock)
    return f"{api} {api_base(api, base_url)}"
