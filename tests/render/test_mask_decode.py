"""The fast mask decode (colour codes, one owner lookup, bits read on codes) and the encoder's
band keys give exactly what the reference implementation gives, on synthetic screenshots that
hold palette colours, white, colours next to palette colours and overlapping alone bits."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from render.maskpng import mask_png, pillow_png
from render.masks import MaskCapture, MaskEncoder, capture_masks, decode_codes, palette

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
                assert np.array_equal(fast[part][kind], mask), (part, kind)
        assert fast["outer"]["visible"].any() and fast["a"]["alone"].any()


def test_colour_codes_of_every_png_kind() -> None:
    rgb = _visible_shot(np.random.default_rng(3))
    wide = rgb.astype(np.uint32)
    want = wide[..., 0] | wide[..., 1] << 8 | wide[..., 2] << 16
    rgba = np.dstack([rgb, np.full(SHAPE, 255, dtype=np.uint8)])
    for png in (_png(rgb), _png(rgba, "RGBA")):
        assert np.array_equal(decode_codes(png), want)
    grey = np.random.default_rng(4).integers(0, 256, SHAPE, dtype=np.uint8)
    assert np.array_equal(decode_codes(_png(grey, "L")), grey.astype(np.uint32) * 0x010101)


def test_equal_bits_in_other_rows_are_other_masks() -> None:
    encoder = MaskEncoder(SHAPE)
    high = np.zeros(SHAPE, dtype=bool)
    high[5:9, 10:20] = True
    low = np.roll(high, 30, axis=0)  # the same band of bits, thirty rows lower
    first, second = encoder.encode(high), encoder.encode(low)
    assert first[0] == pillow_png(high) and second[0] == pillow_png(low)
    assert first[0] != second[0] and first[2] == second[2] == 40
    assert encoder.encode(high.copy()) == first and (encoder.encoded, encoder.reused) == (2, 1)
    empty = encoder.encode(np.zeros(SHAPE, dtype=bool))
    assert empty[0] == pillow_png(np.zeros(SHAPE, dtype=bool)) and empty[2] == 0


def test_a_known_band_gives_the_same_png() -> None:
    mask = np.zeros(SHAPE, dtype=bool)
    mask[12:31, 3:77] = np.random.default_rng(5).random((19, 74)) < 0.6
    rows = np.flatnonzero(mask.any(axis=1))
    assert mask_png(mask, (int(rows[0]), int(rows[-1]) + 1)) == pillow_png(mask)
