"""``regua report --gallery``: the gallery of a task version as files (no server needed).

Writes ``gallery.html`` (the page's grid, the pages' stylesheet beside it as ``regua.css``) and
``gallery/<sha256>.png`` — each run's single frame, or the animated PNG of its frames — so the
folder opens in any browser from disk and asks nothing of the network. Tiles link to their
image (there is no run page on disk). Model names are shown unless ``blind``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
from pathlib import Path

from sqlalchemy.orm import Session

from service.access.tokens import Principal
from service.storage.blobs import BlobStore
from service.web.gallery_data import OUTCOMES, Gallery, GalleryRow, Tile, build_gallery
from service.web.motion import animated_png, durations_ms, frame_times
from service.web.pages import _static_bytes, templates

LOCAL = Principal(token_id=0, name="regua report", role="admin")
"""The command line reads the database directly, as an admin would."""


def _files(tile: Tile, session: Session, blobs: BlobStore, folder: Path) -> Tile:
    """The tile with its image written under ``folder`` and addressed relatively."""
    if not tile.frames:
        return dataclasses.replace(tile, href=None)
    if len(tile.frames) == 1:
        data = blobs.get(tile.frames[0])
    else:
        durations = durations_ms(frame_times(session, tile.frames))
        data = animated_png([blobs.get(s) for s in tile.frames], durations)
    name = f"{hashlib.sha256(data).hexdigest()}.png"
    path = folder / name
    if not path.exists():
        path.write_bytes(data)
    rel = f"{folder.name}/{name}"
    return dataclasses.replace(tile, image=rel, href=rel)


def write_gallery(
    session: Session,
    blobs: BlobStore,
    task: str,
    out: Path,
    *,
    blind: bool = False,
    key: bytes | None = None,
) -> Path:
    """Write the gallery of ``task`` into ``out``; returns the HTML file's path.

    ``blind`` labels the columns ``model 1``… in an order keyed by ``key`` (default: a fresh
    random key, so the order says nothing and differs on every call).
    """
    who = dataclasses.replace(LOCAL, role="reviewer") if blind else LOCAL
    gallery = build_gallery(session, who, task, key or secrets.token_bytes(32))
    folder = out / "gallery"
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        GalleryRow(row.label, [_files(t, session, blobs, folder) if t else None for t in row.tiles])
        for row in gallery.rows
    ]
    shown: Gallery = dataclasses.replace(gallery, rows=rows)
    html = templates.get_template("gallery_file.html").render(gallery=shown, outcomes=OUTCOMES)
    (out / "regua.css").write_bytes(_static_bytes("regua.css"))
    path = out / "gallery.html"
    path.write_text(html, encoding="utf-8")
    return path
