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
each pixel's part read from one code -> part table (16 MiB, built once per process), then one
bit a part (the alone shot's colour codes already are); the OR of each row and column gives
every part's tight box (:class:`BoxMask`), its pixels are read in that box alone, and every
distinct mask is PNG-encoded once per job from its box (:func:`render.maskpng.box_png`; a part
that does not move costs a lookup). The fast path leaves the mask styles in place; the next
``frame`` call of ``instrument.js`` restores the document before it seeks.
"""

from __future__ import annotations

import functools
import hashlib
import io
import struct
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pyspng
from numpy.typing import NDArray
from PIL import Image

from render.maskpng import box_png, pillow_png

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
    png = pillow_png(mask)  # Pillow at compress_level=1
    return png, hashlib.sha256(png).hexdigest(), int(mask.sum())


Mask = TypeVar("Mask")


def mask_entries(
    masks: dict[str, dict[str, Mask]],
    time_s: float,
    ms: int,
    encode: Callable[[Mask], tuple[bytes, str, int]],
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


@dataclass(frozen=True, eq=False)
class BoxMask:
    """A mask of frame ``shape`` held as the tight box around its pixels.

    ``pixels`` covers rows ``top:`` and columns ``left:``; its first and last rows and columns
    each hold a pixel, so one mask has one box. No pixel: an empty box at ``0, 0``.
    """

    shape: tuple[int, int]
    top: int = 0
    left: int = 0
    pixels: NDArray[np.bool_] = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))

    def full(self) -> NDArray[np.bool_]:
        """The mask as a frame-size array."""
        mask = np.zeros(self.shape, dtype=bool)
        height, width = self.pixels.shape
        mask[self.top : self.top + height, self.left : self.left + width] = self.pixels
        return mask

    def key(self) -> bytes:
        """Bytes naming the mask exactly (its box and its packed bits)."""
        head = struct.pack("<IIII", self.top, self.left, *self.pixels.shape)
        return head + np.packbits(self.pixels).tobytes()

    def union(self, other: BoxMask) -> BoxMask:
        """The pixels of both (the union of two tight boxes is tight)."""
        if not (other.pixels.size and self.pixels.size):
            return other if self.pixels.size == 0 else self
        top, left = min(self.top, other.top), min(self.left, other.left)
        bottom = max(self.top + self.pixels.shape[0], other.top + other.pixels.shape[0])
        right = max(self.left + self.pixels.shape[1], other.left + other.pixels.shape[1])
        pixels = np.zeros((bottom - top, right - left), dtype=bool)
        for box in (self, other):
            rows, cols = box.pixels.shape
            y, x = box.top - top, box.left - left
            pixels[y : y + rows, x : x + cols] |= box.pixels
        return BoxMask(self.shape, top, left, pixels)


class _Bits:
    """Part bits a pixel (frame rows ``top:``), OR-ed along each row and each column.

    A part's box then comes from two short scans, and its pixels from that box alone.
    """

    def __init__(self, shape: tuple[int, int], top: int, bits: NDArray[np.unsignedinteger[Any]]):
        self.shape, self.top, self.bits = shape, top, bits
        self.rows = np.bitwise_or.reduce(bits, axis=1)
        self.cols = np.bitwise_or.reduce(bits, axis=0)

    def mask(self, wanted: int) -> BoxMask:
        """The pixels holding any bit of ``wanted``."""
        rows = np.flatnonzero(self.rows & self.bits.dtype.type(wanted))
        if not rows.size:
            return BoxMask(self.shape)
        cols = np.flatnonzero(self.cols & self.bits.dtype.type(wanted))
        r0, r1, c0, c1 = int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1
        box = self.bits[r0:r1, c0:c1] & self.bits.dtype.type(wanted)
        return BoxMask(self.shape, self.top + r0, c0, box != 0)


_ONE_HOT_PARTS = 64  # parts a visible capture reads as one bit each (more: one scan a part)


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
        # part number -> its bit, in the narrowest type that holds them all; _NONE -> 0
        count = min(len(parts), _ONE_HOT_PARTS)
        self._one_hot = np.zeros(256, dtype=np.min_scalar_type((1 << count) - 1))
        self._one_hot[:count] = [1 << i for i in range(count)]
        self.encoder = MaskEncoder(shape)

    def capture(self, evaluate: Evaluate, shoot: Shoot) -> dict[str, dict[str, BoxMask]]:
        """Both passes on the current (seeked) document: ``{part: {"visible", "alone"}}``."""
        empty = BoxMask(self.shape)
        info = evaluate({"op": "mask_apply", "parts": self.parts, "paint": self.visible_spec})
        present: dict[str, list[str]] = dict(info.get("present") or {})
        result = {p: {"visible": empty, "alone": empty} for p in self.parts}
        if not present:
            return result
        members = {p: [q for q in present if q == p or p in present[q]] for p in present}
        codes = decode_codes(shoot())
        top, bottom = _band(codes != _RGB_BITS)  # rows holding anything but white
        owner: NDArray[np.uint8] = np.take(self._owner_of, codes[top:bottom])
        number = {p: i for i, p in enumerate(self.parts)}
        if len(self.parts) <= _ONE_HOT_PARTS:
            bits = _Bits(self.shape, top, np.take(self._one_hot, owner))
        for part, group in members.items():
            if len(self.parts) <= _ONE_HOT_PARTS:
                visible = bits.mask(sum(1 << number[q] for q in group))
            else:
                wanted = np.zeros(256, dtype=np.uint8)
                wanted[[number[q] for q in group]] = 1
                visible = _Bits(self.shape, top, np.take(wanted, owner)).mask(1)
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
        result: dict[str, dict[str, BoxMask]],
    ) -> None:
        """One additive shot: each part of ``group`` in its own bit; unions per part."""
        paints = {p: "none" for p in present}
        paints.update({p: _bit_colour(i) for i, p in enumerate(group)})
        spec = {"root": "none", "background": "rgb(0, 0, 0)", "additive": True, "parts": paints}
        evaluate({"op": "mask_paint", "spec": spec})
        codes = decode_codes(shoot())
        top, bottom = _band(codes != 0)  # rows where any part painted
        shot = _Bits(self.shape, top, codes[top:bottom])
        for part in present:
            bits = 0  # the part's bit and its descendant parts' bits, as colour codes
            for i, q in enumerate(group):
                if q == part or part in present[q]:
                    bits |= _code_of(_bit_rgb(i))
            if bits:
                result[part]["alone"] = result[part]["alone"].union(shot.mask(bits))


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

    def encode(self, mask: BoxMask) -> tuple[bytes, str, int]:
        """``(png, sha256, pixels)`` of a mask (from the cache when it was seen before)."""
        key = mask.key()  # the box and its bits name the mask: no pass over its empty rows
        known = self._cache.get(key)
        if known is not None:
            self.reused += 1
            return known
        png = box_png(self.shape, mask.top, mask.left, mask.pixels)
        entry = (png, hashlib.sha256(png).hexdigest(), int(np.count_nonzero(mask.pixels)))
        self._cache[key] = entry
        self.encoded += 1
        return entry

    def entries(
        self, masks: dict[str, dict[str, BoxMask]], time_s: float, ms: int
    ) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
        """Contract entries and PNG files for one frame time (the same as :func:`encode_masks`)."""
        return mask_entries(masks, time_s, ms, self.encode)
