"""PNG encoding of part masks: the very bytes Pillow writes, without filtering empty rows.

A mask is an 8-bit greyscale PNG (0 or 255), written by Pillow at ``compress_level=1``: each row
gets the PNG filter of least "distance from zero" among none, up, sub and Paeth (in that order,
a later filter only when strictly better), then one zlib stream at level 1. A mask is mostly
empty, and an empty row always takes filter "none" with all-zero bytes, so only the rows and
columns of the mask's tight box need a filter choice: :func:`box_png` computes it there (for
0/255 pixels every filter's bytes are 0, 1 or 255 and its distance is a count of differences),
from the box alone (no full-size array), leaves the rest zero and compresses the same byte
stream Pillow would; the compression of the empty rows above the mask is done once per row
count and copied (zlib's output does not depend on how its input is split between calls).
:func:`mask_png` does the same for a full-size mask. The output is checked
against Pillow once per process (:func:`fast_path_matches`); if the two ever differ (another
zlib inside Pillow, say), every mask is encoded by Pillow. A stream longer than one IDAT chunk
of Pillow's (64 KiB) is also left to Pillow.
"""

from __future__ import annotations

import functools
import io
import struct
import zlib

import numpy as np
from numpy.typing import NDArray
from PIL import Image

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_IDAT_MAX = 65536  # Pillow's encoder buffer: a longer stream is split into several chunks


def pillow_png(mask: NDArray[np.bool_]) -> bytes:
    """The mask as Pillow writes it (the reference encoding)."""
    buffer = io.BytesIO()
    Image.fromarray(mask.astype(np.uint8) * 255, mode="L").save(buffer, "PNG", compress_level=1)
    return buffer.getvalue()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _filtered_box(pixels: NDArray[np.bool_], left: int, width: int) -> NDArray[np.uint8]:
    """The scanlines of the rows a mask's box covers, as Pillow filters them.

    ``pixels``: the mask's tight box (its first and last rows and columns hold a pixel) at
    column ``left`` of a ``width``-pixel row. Each scanline is the filter byte and the filtered
    row; every row above and below the box is all zero (filter "none", no pixel).
    """
    height, cols = pixels.shape
    right = min(width, left + cols + 1)  # sub and Paeth see one column past the box
    # the box and that column, with the zero row above it and the zero column left of it
    window = np.zeros((height + 1, right - left + 1), dtype=bool)
    window[1:, 1 : 1 + cols] = pixels
    cur, up = window[1:, 1:], window[:-1, 1:]
    before, upleft = window[1:, :-1], window[:-1, :-1]
    # Paeth's predictor on 0/255 pixels: the pixel above where left == upper-left != above
    paeth = np.where((before == upleft) & (up != upleft), up, before)
    diffs = np.empty((4, *cur.shape), dtype=bool)  # none, up, sub, Paeth: byte != 0
    diffs[0] = cur
    for i, other in ((1, up), (2, before), (3, paeth)):
        np.not_equal(cur, other, out=diffs[i])
    # the first filter of least distance (a later one only when strictly better)
    index = np.argmin(np.count_nonzero(diffs, axis=2), axis=0)
    picked = diffs[index, np.arange(height)]
    raw = np.zeros((height, width + 1), dtype=np.uint8)
    # a differing byte is 255 where the pixel is set (255 - 0) and 1 where it is not (0 - 255)
    np.multiply(picked, np.where(cur, np.uint8(255), np.uint8(1)), out=raw[:, 1 + left : 1 + right])
    raw[:, 0] = _FILTER_TYPE[index]
    return raw


def _box(mask: NDArray[np.bool_]) -> tuple[int, int, NDArray[np.bool_]]:
    """``(top, left, pixels)``: the tight box around a mask's pixels (empty: ``0, 0``, 0 x 0)."""
    rows = np.flatnonzero(mask.any(axis=1))
    if not rows.size:
        return 0, 0, np.zeros((0, 0), dtype=bool)
    band = mask[rows[0] : rows[-1] + 1]
    cols = np.flatnonzero(band.any(axis=0))
    return int(rows[0]), int(cols[0]), band[:, cols[0] : cols[-1] + 1]


_FILTER_TYPE = np.array([0, 2, 1, 4], dtype=np.uint8)  # none, up, sub, Paeth
_PREFIX_STEP = 32  # rows of zeros between two kept compressor states


class _ZeroPrefix:
    """zlib states after rows of zeros, kept every ``_PREFIX_STEP`` rows, for one row length.

    Most of a mask's rows are empty; the stream up to its first pixel row is the same for every
    mask that starts there, so its compression is done once and copied (``Compress.copy``).
    zlib's output does not depend on how its input is split between calls.
    """

    def __init__(self, row_bytes: int) -> None:
        """No state kept yet beyond the fresh compressor."""
        self.row_bytes = row_bytes
        self.zeros = bytes(row_bytes * _PREFIX_STEP)
        fresh = zlib.compressobj(1, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY)
        self.states: list[tuple[zlib._Compress, bytes]] = [(fresh, b"")]

    def start(self, rows: int) -> tuple[zlib._Compress, bytes]:
        """A compressor that has been fed ``rows`` zero rows, and what it emitted so far."""
        step = rows // _PREFIX_STEP
        while len(self.states) <= step:
            previous, emitted = self.states[-1]
            state = previous.copy()
            self.states.append((state, emitted + state.compress(self.zeros)))
        state, emitted = self.states[step]
        state = state.copy()
        rest = rows - step * _PREFIX_STEP
        if rest:
            emitted += state.compress(memoryview(self.zeros)[: rest * self.row_bytes])
        return state, emitted


@functools.lru_cache(maxsize=4)
def _zero_prefix(row_bytes: int) -> _ZeroPrefix:
    return _ZeroPrefix(row_bytes)


def mask_png(mask: NDArray[np.bool_]) -> bytes:
    """The mask's PNG, byte for byte what :func:`pillow_png` writes, in about half the time."""
    if not fast_path_matches():
        return pillow_png(mask)
    return _fast_png(mask) or pillow_png(mask)


def box_png(shape: tuple[int, int], top: int, left: int, pixels: NDArray[np.bool_]) -> bytes:
    """:func:`pillow_png`'s bytes for a ``shape`` mask, from the tight box of its pixels.

    ``pixels`` lies at ``top``, ``left`` (an empty box: no pixel); no full-size array is made.
    """
    if fast_path_matches():
        png = _box_png(shape, top, left, pixels)
        if png is not None:
            return png
    mask = np.zeros(shape, dtype=bool)
    mask[top : top + pixels.shape[0], left : left + pixels.shape[1]] = pixels
    return pillow_png(mask)


def _fast_png(mask: NDArray[np.bool_]) -> bytes | None:
    return _box_png(mask.shape, *_box(mask))


def _box_png(
    shape: tuple[int, ...], top: int, left: int, pixels: NDArray[np.bool_]
) -> bytes | None:
    height, width = shape
    row_bytes = width + 1
    prefix = _zero_prefix(row_bytes)
    compressor, data = prefix.start(top)
    if pixels.size:
        data += compressor.compress(_filtered_box(pixels, left, width).data)
    suffix = (height - top - pixels.shape[0]) * row_bytes
    while suffix > 0:
        chunk = min(suffix, len(prefix.zeros))
        data += compressor.compress(memoryview(prefix.zeros)[:chunk])
        suffix -= chunk
    data += compressor.flush()
    if len(data) >= _IDAT_MAX:
        return None
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return _SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", data) + _chunk(b"IEND", b"")


@functools.cache
def fast_path_matches() -> bool:
    """Whether this process's zlib and Pillow agree with the fast encoder (checked once)."""
    rng = np.random.default_rng(28)
    samples = [np.zeros((7, 9), dtype=bool), rng.random((40, 50)) < 0.5]
    shape = np.zeros((60, 80), dtype=bool)
    shape[10:30, 20:61] = True
    shape[15:20, 25:30] = False
    samples.append(shape)
    late = np.zeros((300, 64), dtype=bool)  # past several kept zero-row states
    late[117:140, 3:50] = True
    samples.append(late)
    return all(_fast_png(m) == pillow_png(m) for m in samples)
