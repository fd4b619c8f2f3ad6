"""Animated PNGs of a run's stored frames: the motion of an animated drawing, never its SVG.

The frames are the sandbox's PNGs at the render plan's timestamps; each is shown from its own
timestamp to the next one's (the last for the median gap), looping. Built with Pillow from the
stored bytes only, so the page never renders the untrusted SVG.
"""

from __future__ import annotations

import io
import itertools
import re
import statistics
import threading
from collections import OrderedDict
from collections.abc import Sequence

from PIL import Image
from sqlalchemy import select
from sqlalchemy.orm import Session

from regua.errors import InputError
from service.access.artifacts import readable_media_type
from service.access.tokens import Principal
from service.review.views import frame_time
from service.storage import Artifact
from service.storage.blobs import BlobStore

MAX_FRAMES = 60
SHA = re.compile(r"^[0-9a-f]{64}$")
_CACHE: OrderedDict[tuple[tuple[str, ...], tuple[float, ...]], bytes] = OrderedDict()
_LOCK = threading.Lock()
MIN_MS = 20
"""Browsers show shorter frames for 100 ms; 20 ms is the shortest they honour."""


def parse_frames(value: str) -> list[str]:
    """The sha256 list of ``frames=a.b.c`` (dot-separated, 1 to :data:`MAX_FRAMES`)."""
    shas = [s for s in value.split(".") if s]
    if not shas or len(shas) > MAX_FRAMES or not all(SHA.match(s) for s in shas):
        raise InputError(f"frames must be 1 to {MAX_FRAMES} sha256 values joined by dots")
    return shas


def durations_ms(times: Sequence[float]) -> list[int]:
    """How long each frame shows: until the next timestamp; the last for the median gap."""
    gaps = [max(MIN_MS, round((b - a) * 1000)) for a, b in itertools.pairwise(times)]
    last = int(statistics.median(gaps)) if gaps else 1000
    return [*gaps, last]


def animated_png(frames: Sequence[bytes], durations: Sequence[int]) -> bytes:
    """An animated PNG (looping) of these PNG frames, each for its duration in ms."""
    images = [Image.open(io.BytesIO(data)).convert("RGBA") for data in frames]
    size = images[0].size
    images = [im if im.size == size else im.resize(size) for im in images]
    out = io.BytesIO()
    images[0].save(
        out,
        "PNG",
        save_all=True,
        append_images=images[1:],
        duration=list(durations),
        loop=0,
        disposal=1,
    )
    return out.getvalue()


def frame_times(session: Session, shas: Sequence[str]) -> list[float]:
    """Each frame's timestamp, from its stored artifact row (0 when it has none)."""
    rows = session.scalars(
        select(Artifact).where(Artifact.sha256.in_(list(shas)), Artifact.kind == "frame")
    )
    found = {a.sha256: frame_time(a) for a in rows}
    return [found.get(s, 0.0) for s in shas]


def readable_motion(
    session: Session, blobs: BlobStore, principal: Principal, shas: Sequence[str]
) -> bytes:
    """The animated PNG of these frames when ``principal`` may read every one (else 404)."""
    for sha in shas:
        readable_media_type(session, principal, sha)
    times = frame_times(session, shas)
    key = (tuple(shas), tuple(times))
    with _LOCK:
        found = _CACHE.get(key)
    if found is None:  # content-addressed input: safe to keep
        found = animated_png([blobs.get(s) for s in shas], durations_ms(times))
        with _LOCK:
            _CACHE[key] = found
            while len(_CACHE) > 32:
                _CACHE.popitem(last=False)
    return found
