"""Which blob store holds the artifacts: a registry of URL schemes and ``open_blob_store``.

``REGUA_ARTIFACTS_URL`` picks the store by its scheme: a folder path or ``file://PATH`` is the
local folder (the default, ``REGUA_ARTIFACT_DIR`` or ``data/artifacts``), ``s3://BUCKET/PREFIX``
an S3-compatible store (``service/storage/s3_blobs.py``). Built-in schemes register themselves
on import exactly as a plugin would: ``register_blob_scheme("name", opener)``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from regua.errors import ConfigurationError
from regua.registry import Registry, UnknownPluginError
from regua.settings import Settings
from service.storage.blobs import BlobStore, LocalBlobStore

BlobStoreOpener = Callable[[str, Settings], BlobStore]
"""Builds a store from the artifacts URL and the settings (and checks that it answers)."""

SCHEMES: Registry[BlobStoreOpener] = Registry(
    "scheme",
    builtins=("service.storage.s3_blobs",),
    entry_point_group="regua.blob_stores",
)
"""Blob store openers by URL scheme; the built-in modules register themselves on import."""
register_blob_scheme = SCHEMES.register
"""``register_blob_scheme(scheme, opener, *, replace=False)``: plugins and built-ins alike."""
blob_schemes = SCHEMES.names
"""The registered URL schemes, sorted."""


def artifacts_url(settings: Settings) -> str:
    """The artifacts URL in force: ``REGUA_ARTIFACTS_URL``, else the local artifact folder."""
    return settings.artifacts_url or str(settings.resolved_artifact_dir())


def open_blob_store(settings: Settings) -> BlobStore:
    """The blob store named by the settings, checked to answer.

    Raises:
        ConfigurationError: an unknown scheme, or a store that cannot be reached (the message
            says what to check).
    """
    url = artifacts_url(settings)
    scheme = urlsplit(url).scheme.lower()
    if len(scheme) < 2:  # no scheme, or a Windows drive letter: a folder path
        scheme = "file"
    try:
        opener = SCHEMES.get(scheme)
    except UnknownPluginError as exc:
        raise ConfigurationError(
            f"REGUA_ARTIFACTS_URL={url!r}: {exc} (a folder path means file://)"
        ) from None
    return opener(url, settings)


def open_local(url: str, _settings: Settings) -> BlobStore:
    """The local folder of ``url`` (a path or ``file://PATH``)."""
    parts = urlsplit(url)
    if parts.scheme.lower() == "file":
        if parts.netloc not in ("", "localhost"):
            raise ConfigurationError(
                f"REGUA_ARTIFACTS_URL={url!r}: a file:// URL names a local folder "
                "(file:///path/to/artifacts), not a host"
            )
        return LocalBlobStore(Path(unquote(parts.path)))
    return LocalBlobStore(Path(url))


register_blob_scheme("file", open_local)
