"""The fast mask decode (colour codes, one owner lookup, bits read on codes) and the encoder's
band keys give exactly what the reference implementation gives, on synthetic screenshots that
hold palette colours, white, colours next to palette colours and overlapping alone bits."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from PIL import Image

from render.maskpng import box_png, mask_png, pillow_png
from render.masks import (
    BoxMask,
    MaskCapture,
    MaskEncoder,
    capture_masks,
    decode_codes,
    palette,
)

PARTS = ["outer", "a", "b", "c", "d"]
PRESENT = {"outer": [], "a": ["outer"], "b": ["outer"], "c": [], "d": []}  # d: absent id
SHAPE = (60, 80)


def _png(pixels: NDArray[np.uint8], mode: str = "RGB") -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels, mode=mode).save(buffer, "PNG")
    return buffer.getvalue()


def _visible_shot(rng: np.random.Generator) -> NDArray[np.uint8]:
    colours = [*palette(len(PARTS)), (255, 255, 255), (60, 60, 61), (254, 255, 255)]
    colours += [palette(len(PARTS) + 1)[-1]]  # a palette colour no part holds
    image = np.full((*SHAPE, 3), 255, dtype=np.uint8)
    image[8:50] = np.array(colours, dtype=np.uint8)[rng.integers(0, len(colours), (42, 80))]
    return image


def _alone_shot(rng: np.random.Generator) -> NDArray[np.uint8]:
    image = np.zeros((*SHAPE, 3), dtype=np.uint8)
    bits = rng.integers(0, 1 << len(PRESENT), (30, 70))  # overlapping parts: several bits
    bits[rng.random((30, 70)) < 0.3] = 0
    image[20:50, 5:75, 0] = (bits >> 16) & 255
    image[20:50, 5:75, 1] = (bits >> 8) & 255
    image[20:50, 5:75, 2] = bits & 255
    return image


class _Document:
    """What the browser would answer: the parts present, then the recorded screenshots."""

    def __init__(self, shots: list[bytes]) -> None:
        self.shots: Iterator[bytes] = iter(shots)

    def evaluate(self, arg: dict[str, Any]) -> Any:
        if arg["op"] == "mask_apply":
            return {"present": {p: a for p, a in PRESENT.items() if p != "d"}}
        return True

    def shoot(self) -> bytes:
        return next(self.shots)


def test_fast_capture_equals_the_reference_on_synthetic_shots() -> None:
    rng = np.random.default_rng(28)
    for _ in range(20):
        shots = [_png(_visible_shot(rng)), _png(_alone_shot(rng))]
        reference = capture_masks(PARTS, _Document(shots).evaluate, _Document(shots).shoot, SHAPE)
        doc = _Document(shots)
        fast = MaskCapture(PARTS, SHAPE).capture(doc.evaluate, doc.shoot)
        assert fast.keys() == reference.keys()
        for part, kinds in reference.items():
            for kind, mask in kinds.items():
                box = fast[part][kind]
                assert np.array_equal(box.full(), mask), (part, kind)
                assert _same(box, _boxed(mask)), (part, kind)  # the box is tight
        assert fast["outer"]["visible"].pixels.any() and fast["a"]["alone"].pixels.any()


def _boxed(mask: NDArray[np.bool_]) -> BoxMask:
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if not rows.size:
        return BoxMask(mask.shape)
    pixels = mask[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
    return BoxMask(mask.shape, int(rows[0]), int(cols[0]), pixels)


def _same(a: BoxMask, b: BoxMask) -> bool:
    return a.shape == b.shape and a.key() == b.key() and a.pixels.shape == b.pixels.shape


def test_colour_codes_of_every_png_kind() -> None:
    rgb = _visible_shot(np.random.default_rng(3))
    wide = rgb.astype(np.uint32)
    want = wide[..., 0] | wide[..., 1] << 8 | wide[..., 2] << 16
    rgba = np.dstack([rgb, np.full(SHAPE, 255, dtype=np.uint8)])
    for png in (_png(rgb), _png(rgba, "RGBA")):
        assert np.array_equal(decode_codes(png), want)
    grey = np.random.default_rng(4).integers(0, 256, SHAPE, dtype=np.uint8)
    assert np.array_equal(decode_codes(_png(grey, "L")), grey.astype(np.uint32) * 0x010101)


def test_equal_bits_elsewhere_are_other_masks() -> None:
    encoder = MaskEncoder(SHAPE)
    high = np.zeros(SHAPE, dtype=bool)
    high[5:9, 10:20] = True
    high[6, 12] = False
    low = np.roll(high, 30, axis=0)  # the same box of bits, thirty rows lower
    right = np.roll(high, 7, axis=1)  # ... seven columns to the right
    first, second, third = (encoder.encode(_boxed(m)) for m in (high, low, right))
    assert (first[0], second[0], third[0]) == tuple(pillow_png(m) for m in (high, low, right))
    assert len({first[0], second[0], third[0]}) == 3 and first[2] == second[2] == third[2] == 39
    again = encoder.encode(_boxed(high.copy()))
    assert again == first and (encoder.encoded, encoder.reused) == (3, 1)
    empty = encoder.encode(_boxed(np.zeros(SHAPE, dtype=bool)))
    assert empty[0] == pillow_png(np.zeros(SHAPE, dtype=bool)) and empty[2] == 0


def test_a_box_gives_the_same_png_as_its_full_mask() -> None:
    rng = np.random.default_rng(5)
    for top, left, rows, cols in [(12, 3, 19, 74), (0, 0, 60, 80), (59, 79, 1, 1), (0, 70, 5, 10)]:
        mask = np.zeros(SHAPE, dtype=bool)
        mask[top : top + rows, left : left + cols] = rng.random((rows, cols)) < 0.6
        mask[top, left] = mask[top + rows - 1, left + cols - 1] = True  # a tight box
        assert box_png(SHAPE, top, left, _boxed(mask).pixels) == pillow_png(mask)
        assert mask_png(mask) == pillow_png(mask) and _boxed(mask).full().tolist() == mask.tolist()


def test_union_of_boxes() -> None:
    a, b = np.zeros(SHAPE, dtype=bool), np.zeros(SHAPE, dtype=bool)
    a[3:9, 40:50] = True
    b[20:22, 5:7] = True
    for x, y in [(a, b), (b, a), (a, np.zeros(SHAPE, dtype=bool)), (a, a)]:
        assert _same(_boxed(x).union(_boxed(y)), _boxed(x | y))


@pytest.mark.parametrize("count", [20, 40, 70])
def test_many_parts_several_alone_shots(count: int) -> None:
    """Up to 70 parts: one bit a part in 32 or 64 bits or one scan a part; several alone shots."""
    parts = [f"p{i}" for i in range(count)]
    present = {p: ([] if i % 10 == 0 else [parts[i - i % 10]]) for i, p in enumerate(parts)}
    rng = np.random.default_rng(70)
    colours = np.array([*palette(count), (255, 255, 255)], dtype=np.uint8)
    visible = colours[rng.integers(0, count + 1, SHAPE)]
    shots = [_png(visible)]
    for _ in range(3):
        bits = rng.integers(0, 1 << 24, SHAPE) * (rng.random(SHAPE) < 0.2)
        shots.append(_png(np.dstack([(bits >> s) & 255 for s in (16, 8, 0)]).astype(np.uint8)))

    def evaluate(arg: dict[str, Any]) -> Any:
        return {"present": present} if arg["op"] == "mask_apply" else True

    reference = capture_masks(parts, evaluate, iter(shots).__next__, SHAPE)
    fast = MaskCapture(parts, SHAPE).capture(evaluate, iter(shots).__next__)
    for part, kinds in reference.items():
        for kind, mask in kinds.items():
            assert _same(fast[part][kind], _boxed(mask)), (part, kind)
    assert fast["p0"]["alone"].pixels.sum() > fast["p1"]["alone"].pixels.sum() > 0
