"""The bundle file: a compressed tar of a manifest, table rows and artifact bytes.

Layout::

    manifest.json            format, versions, task versions, row counts, every file's sha256
    tables/<table>.jsonl     one JSON row a line
    artifacts/<sha256>       the bytes of every artifact the rows reference

The compression follows the file name: ``.tar.gz``/``.tgz`` (gzip), ``.tar.xz`` (xz) or
``.tar``. (zstandard is not among regua's dependencies, so ``.tar.zst`` is refused.) Reading
verifies every file against the manifest and every artifact against its name before anything is
returned: a bundle that does not verify is refused whole.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from regua.errors import ArtifactIntegrityError, InputError

FORMAT = "regua-bundle"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
MODES: dict[str, Literal["w:gz", "w:xz", "w"]] = {
    ".tar.gz": "w:gz",
    ".tgz": "w:gz",
    ".tar.xz": "w:xz",
    ".tar": "w",
}


@dataclass
class Contents:
    """What a bundle holds: its manifest, rows by table and artifact bytes by sha256."""

    manifest: dict[str, Any]
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    artifacts: dict[str, bytes] = field(default_factory=dict)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def mode_for(path: Path | str) -> Literal["w:gz", "w:xz", "w"]:
    """The tar mode of a bundle's file name (refusing names it cannot write)."""
    name = str(path).lower()
    for suffix, mode in MODES.items():
        if name.endswith(suffix):
            return mode
    raise InputError(
        f"bundle file names end with {', '.join(MODES)} (zstandard is not installed, "
        "so .tar.zst cannot be written)"
    )


def jsonl(rows: Iterable[Mapping[str, Any]]) -> bytes:
    """Rows as JSON lines (sorted keys, so equal rows give equal bytes)."""
    return b"".join(json.dumps(r, sort_keys=True).encode() + b"\n" for r in rows)


def pack(
    meta: Mapping[str, Any],
    tables: Mapping[str, list[dict[str, Any]]],
    artifacts: Mapping[str, bytes],
    mode: Literal["w:gz", "w:xz", "w"] = "w:gz",
) -> bytes:
    """The bundle's bytes: ``meta`` completed with every file's sha256 and size."""
    files: dict[str, bytes] = {f"tables/{name}.jsonl": jsonl(rows) for name, rows in tables.items()}
    files |= {f"artifacts/{sha}": data for sha, data in sorted(artifacts.items())}
    manifest = {
        **meta,
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "rows": {name: len(rows) for name, rows in tables.items()},
        "files": {name: {"sha256": _sha(d), "size": len(d)} for name, d in files.items()},
    }
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode=mode) as tar:
        for name, data in [(MANIFEST, json.dumps(manifest, indent=2).encode()), *files.items()]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _members(data: bytes) -> dict[str, bytes]:
    """Every regular file of the tar (any compression), by name; links and devices refused."""
    found: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            for member in tar:
                if not member.isfile():
                    raise ArtifactIntegrityError(f"bundle member {member.name!r} is not a file")
                handle = tar.extractfile(member)
                assert handle is not None
                found[member.name] = handle.read()
    except tarfile.TarError as exc:
        raise InputError(f"not a bundle: {exc}") from exc
    return found


def unpack(data: bytes) -> Contents:
    """Read and verify a bundle: every file listed with its sha256, nothing unlisted."""
    files = _members(data)
    if MANIFEST not in files:
        raise InputError("not a bundle: no manifest.json")
    manifest = json.loads(files.pop(MANIFEST))
    if manifest.get("format") != FORMAT or manifest.get("format_version") != FORMAT_VERSION:
        raise InputError(f"not a {FORMAT} version {FORMAT_VERSION} file")
    listed: dict[str, Any] = manifest.get("files") or {}
    if set(listed) != set(files):
        extra = sorted(set(files) ^ set(listed))[:5]
        raise ArtifactIntegrityError(f"bundle files and manifest differ: {extra}")
    for name, data_ in files.items():
        if _sha(data_) != listed[name]["sha256"]:
            raise ArtifactIntegrityError(f"bundle file {name} does not match its sha256")
    out = Contents(manifest)
    for name, data_ in files.items():
        if name.startswith("artifacts/"):
            sha = name.removeprefix("artifacts/")
            if _sha(data_) != sha:
                raise ArtifactIntegrityError(f"artifact {sha} does not match its address")
            out.artifacts[sha] = data_
        elif name.startswith("tables/") and name.endswith(".jsonl"):
            rows = [json.loads(line) for line in data_.splitlines() if line.strip()]
            out.tables[name.removeprefix("tables/").removesuffix(".jsonl")] = rows
    return out
