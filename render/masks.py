"""Part masks: which pixels each declared part id paints, visible and alone.

Visible pass: every paintable element keeps its geometry, clipping, masking, ``display`` and
``visibility`` but paints a flat colour — its nearest part's colour (inherited through the CSS
custom property ``--regua-paint``, so ``<use>`` clones follow the ``use`` element), white for
everything outside any part (still occluding), anti-aliasing off (``shape-rendering:
crispEdges``). Opacity > 0 becomes 1 and 0 stays 0; filters are dropped. A container part's
visible mask is the union of its own colour and its descendant parts' colours.

Alone passes: everything outside the parts paints nothing; each part paints one bit of the
24-bit colour and is composited as an isolated group added to what lies below it
(``mix-blend-mode: plus-lighter``), so overlapping parts OR their bits and 24 parts fit in one
screenshot. Other elements inside a part blend with ``lighten`` (channel-wise max); parts are
given bits in depth order, so a descendant part always holds a higher bit than its ancestors and
a container's own later elements cannot erase it. A container's alone mask is the union of its
own bit and its descendant parts' bits. (Limit: the same part drawn twice over itself, e.g. by
two ``<use>`` of one part, adds its bit twice and corrupts that pixel.)

Masks are 8-bit greyscale PNGs (255 = part pixel) at the frame size.

Two implementations of the same passes: :func:`capture_masks` + :func:`encode_masks` (the
reference, kept to prove the fast path equal) and :class:`MaskCapture` (the fast path every job
uses): the two captures decoded with libspng as RGBA and read as one 24-bit colour code a pixel,
each pixel's part read from one code -> part table (16 MiB, built once per process) instead
of a code comparison per part, only the rows where some part painted read, a container's union
taken on the codes with one bit mask, and every distinct mask encoded once per job (a part that
does not move, or a frame seen before, costs a dictionary lookup keyed by the mask's band of
rows instead of a PNG encode). The fast path leaves
the mask styles in place; the next ``frame`` call of ``instrument.js`` restores the document
before it seeks.
"""

from __future__ import annotations

import functools
import hashlib
import io
import struct
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyspng
from numpy.typing import NDArray
from PIL import Image

from render.maskpng import mask_png

LEVELS = (0, 60, 120, 180, 240)
WHITE = (255, 255, 255)
BITS_PER_SHOT = 24


def palette(count: int) -> list[tuple[int, int, int]]:
    """``count`` distinct flat colours, none of them white (white means "no part")."""
    colours = [(r, g, b) for r in LEVELS for g in LEVELS for b in LEVELS]
    colours = [c for c in colours if c != (240, 240, 240)]
    colours.sort(key=lambda c: (-(max(c) - min(c)), c))  # saturated first: easier to eyeball
    if count > len(colours):
        raise ValueError(f"at most {len(colours)} parts can be masked, got {count}")
    return colours[:count]


def _css(colour: tuple[int, int, int]) -> str:
    return f"rgb({colour[0]}, {colour[1]}, {colour[2]})"


def _rgb(png: bytes) -> NDArray[np.uint8]:
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8)


def _png(mask: NDArray[np.bool_]) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(mask.astype(np.uint8) * 255, mode="L").save(buffer, "PNG", compress_level=1)
    return buffer.getvalue()


def _code(rgb: NDArray[np.uint8]) -> NDArray[np.int32]:
    as_int = rgb.astype(np.int32)
    return (as_int[..., 0] << 16) | (as_int[..., 1] << 8) | as_int[..., 2]


Evaluate = Callable[[dict[str, Any]], Any]
Shoot = Callable[[], bytes]


def _bit_rgb(bit: int) -> tuple[int, int, int]:
    value = 1 << bit
    return (value >> 16) & 255, (value >> 8) & 255, value & 255


def _bit_colour(bit: int) -> str:
    return _css(_bit_rgb(bit))


def capture_masks(
    parts: Sequence[str], evaluate: Evaluate, shoot: Shoot, shape: tuple[int, int]
) -> dict[str, dict[str, NDArray[np.bool_]]]:
    """Run the mask passes on the current (already seeked) document.

    Returns ``{part: {"visible": mask, "alone": mask}}`` for every id in ``parts``; an id absent
    from the document gets empty masks. The document's styles are restored afterwards.
    """
    height, width = shape
    empty = np.zeros((height, width), dtype=bool)
    colours = dict(zip(parts, palette(len(parts)), strict=True))
    visible_spec = {
        "root": _css(WHITE),
        "background": _css(WHITE),
        "additive": False,
        "parts": {p: _css(c) for p, c in colours.items()},
    }
    info = evaluate({"op": "mask_apply", "parts": list(parts), "paint": visible_spec})
    present: dict[str, list[str]] = dict(info.get("present") or {})
    try:
        result: dict[str, dict[str, NDArray[np.bool_]]] = {
            p: {"visible": empty, "alone": empty} for p in parts
        }
        if not present:
            return result
        codes = _code(_rgb(shoot()))
        own = {p: codes == ((c[0] << 16) | (c[1] << 8) | c[2]) for p, c in colours.items()}
        members = {p: [q for q in present if q == p or p in present[q]] for p in present}
        for part in present:
            result[part] = {"visible": np.logical_or.reduce([own[q] for q in members[part]])}
        # Alone: every part in its own bit (24 per shot), parts added where they overlap; a
        # part's alone mask is its bit or any descendant part's bit.
        ordered = sorted(present, key=lambda p: len(present[p]))  # ancestors get lower bits
        alone_own: dict[str, NDArray[np.bool_]] = {}
        for start in range(0, len(ordered), BITS_PER_SHOT):
            group = ordered[start : start + BITS_PER_SHOT]
            paints = {p: "none" for p in present}
            paints.update({p: _bit_colour(i) for i, p in enumerate(group)})
            spec = {"root": "none", "background": "rgb(0, 0, 0)", "additive": True}
            evaluate({"op": "mask_paint", "spec": {**spec, "parts": paints}})
            codes = _code(_rgb(shoot()))
            for i, part in enumerate(group):
                alone_own[part] = (codes & (1 << i)) != 0
        for part in present:
            result[part]["alone"] = np.logical_or.reduce([alone_own[q] for q in members[part]])
        return result
    finally:
        evaluate({"op": "mask_restore"})


def encode_masks(
    masks: dict[str, dict[str, NDArray[np.bool_]]], time_s: float, ms: int
) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """Contract entries and PNG files for the masks of one frame time."""
    return mask_entries(masks, time_s, ms, _encoded)


def _encoded(mask: NDArray[np.bool_]) -> tuple[bytes, str, int]:
    png = _png(mask)
    return png, hashlib.sha256(png).hexdigest(), int(mask.sum())


def mask_entries(
    masks: dict[str, dict[str, NDArray[np.bool_]]],
    time_s: float,
    ms: int,
    encode: Callable[[NDArray[np.bool_]], tuple[bytes, str, int]],
) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """Contract entries and PNG files for one frame time, each mask ``encode``d.

    ``encode`` gives a mask's ``(png, sha256, pixels)``.
    """
    entries: list[dict[str, Any]] = []
    files: dict[str, bytes] = {}
    for part, kinds in masks.items():
        for kind in ("visible", "alone"):
            png, sha, pixels = encode(kinds[kind])
            name = f"mask-{ms}-{part}-{kind}.png"
            files[name] = png
            entry = {"time_s": time_s, "part": part, "kind": kind, "name": name}
            entries.append({**entry, "sha256": sha, "pixels": pixels})
    return entries, files


# -- the fast path ---------------------------------------------------------------------------

_NONE = 255
_RGB_BITS = np.uint32(0xFFFFFF)


def _code_of(colour: tuple[int, int, int]) -> int:
    """A colour's code in :func:`decode_codes` (red in the low byte)."""
    return colour[0] | colour[1] << 8 | colour[2] << 16


@functools.cache
def _owner_table() -> NDArray[np.uint8]:
    """Colour code -> palette index (a job's part number for its first colours); ``_NONE`` else.

    16 MiB, built once per process: one lookup a pixel instead of one a channel. A job with
    fewer parts than the palette compares only its own numbers, so the other indices own nothing.
    """
    colours = palette(len(LEVELS) ** 3 - 1)
    table = np.full(1 << 24, _NONE, dtype=np.uint8)
    for number, colour in enumerate(colours):
        table[_code_of(colour)] = number
    table.flags.writeable = False
    return table


def decode_codes(png: bytes) -> NDArray[np.uint32]:
    """A screenshot PNG as (H, W) colour codes ``R | G << 8 | B << 16`` (libspng, else Pillow).

    Decoded as RGBA and read four bytes a pixel, then the alpha byte cleared: one pass.
    """
    try:
        rgba = np.asarray(pyspng.load(png, format="RGBA"))
    except Exception:  # an unusual PNG: Pillow decides
        rgba = np.empty(0, dtype=np.uint8)
    if rgba.ndim != 3 or rgba.shape[2] != 4 or rgba.dtype != np.uint8:
        with Image.open(io.BytesIO(png)) as image:
            rgba = np.asarray(image.convert("RGB").convert("RGBA"), dtype=np.uint8)
    codes = np.ascontiguousarray(rgba).view(np.uint32)[..., 0]
    if sys.byteorder != "little":  # the bytes R, G, B, A read as one big-endian word
        codes = codes.byteswap()
    result: NDArray[np.uint32] = np.bitwise_and(codes, _RGB_BITS)
    return result


class MaskCapture:
    """The visible and alone passes of one job's parts, decoded without per-part scans."""

    def __init__(self, parts: Sequence[str], shape: tuple[int, int]) -> None:
        """Prepare the paint specs and lookup tables for ``parts`` at frame ``shape``."""
        self.parts = list(parts)
        self.shape = shape
        colours = palette(len(parts))
        self.visible_spec = {
            "root": _css(WHITE),
            "background": _css(WHITE),
            "additive": False,
            "parts": {p: _css(c) for p, c in zip(parts, colours, strict=True)},
        }
        self._owner_of = _owner_table()
        self.encoder = MaskEncoder(shape)

    def capture(self, evaluate: Evaluate, shoot: Shoot) -> dict[str, dict[str, NDArray[np.bool_]]]:
        """Both passes on the current (seeked) document: ``{part: {"visible", "alone"}}``."""
        empty = np.zeros(self.shape, dtype=bool)
        info = evaluate({"op": "mask_apply", "parts": self.parts, "paint": self.visible_spec})
        present: dict[str, list[str]] = dict(info.get("present") or {})
        result = {p: {"visible": empty, "alone": empty} for p in self.parts}
        if not present:
            return result
        members = {p: [q for q in present if q == p or p in present[q]] for p in present}
        owner: NDArray[np.uint8] = np.take(self._owner_of, decode_codes(shoot()))
        top, bottom = _band(owner != _NONE)  # rows holding any palette colour
        band = owner[top:bottom]
        number = {p: i for i, p in enumerate(self.parts)}
        for part, group in members.items():
            visible = np.zeros(self.shape, dtype=bool)
            if len(group) == 1:
                np.equal(band, number[part], out=visible[top:bottom])
            else:
                wanted = np.zeros(256, dtype=bool)
                wanted[[number[q] for q in group]] = True
                np.take(wanted, band, out=visible[top:bottom])
            result[part] = {"visible": visible, "alone": empty}
        ordered = sorted(present, key=lambda p: len(present[p]))  # ancestors get lower bits
        for start in range(0, len(ordered), BITS_PER_SHOT):
            self._alone_shot(
                ordered[start : start + BITS_PER_SHOT], present, evaluate, shoot, result
            )
        return result

    def _alone_shot(
        self,
        group: list[str],
        present: dict[str, list[str]],
        evaluate: Evaluate,
        shoot: Shoot,
        result: dict[str, dict[str, NDArray[np.bool_]]],
    ) -> None:
        """One additive shot: each part of ``group`` in its own bit; unions per part."""
        paints = {p: "none" for p in present}
        paints.update({p: _bit_colour(i) for i, p in enumerate(group)})
        spec = {"root": "none", "background": "rgb(0, 0, 0)", "additive": True, "parts": paints}
        evaluate({"op": "mask_paint", "spec": spec})
        codes = decode_codes(shoot())
        top, bottom = _band(codes != 0)  # rows where any part painted
        band = codes[top:bottom]
        for part in present:
            bits = 0  # the part's bit and its descendant parts' bits, as colour codes
            for i, q in enumerate(group):
                if q == part or part in present[q]:
                    bits |= _code_of(_bit_rgb(i))
            if not bits:
                continue
            hit = np.zeros(self.shape, dtype=bool)
            np.not_equal(np.bitwise_and(band, np.uint32(bits)), 0, out=hit[top:bottom])
            previous = result[part]["alone"]
            result[part]["alone"] = hit if not previous.any() else (previous | hit)


def _band(rows_of: NDArray[np.bool_]) -> tuple[int, int]:
    """The rows ``top:bottom`` holding every True pixel (``0, 0`` when none is)."""
    found = np.flatnonzero(rows_of.any(axis=1))
    if found.size == 0:
        return 0, 0
    return int(found[0]), int(found[-1]) + 1


class MaskEncoder:
    """PNG encoding of one job's masks, each distinct mask encoded once."""

    def __init__(self, shape: tuple[int, int]) -> None:
        """An empty cache for masks of frame ``shape``."""
        self.shape = shape
        self._cache: dict[bytes, tuple[bytes, str, int]] = {}
        self.encoded = 0
        self.reused = 0

    def encode(self, mask: NDArray[np.bool_]) -> tuple[bytes, str, int]:
        """``(png, sha256, pixels)`` of a mask (from the cache when it was seen before)."""
        rows = np.flatnonzero(mask.any(axis=1))
        band = (int(rows[0]), int(rows[-1]) + 1) if rows.size else (0, 0)
        # the band and its bits name the mask: no pass over its empty rows
        key = struct.pack("<II", *band) + np.packbits(mask[band[0] : band[1]]).tobytes()
        known = self._cache.get(key)
        if known is not None:
            self.reused += 1
            return known
        png = mask_png(mask, band)
        pixels = int(np.count_nonzero(mask[band[0] : band[1]]))
        entry = (png, hashlib.sha256(png).hexdigest(), pixels)
        self._cache[key] = entry
        self.encoded += 1
        return entry

    def entries(
        self, masks: dict[str, dict[str, NDArray[np.bool_]]], time_s: float, ms: int
    ) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
        """Contract entries and PNG files for one frame time (the same as :func:`encode_masks`)."""
        return mask_entries(masks, time_s, ms, self.encode)
