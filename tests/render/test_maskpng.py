"""The mask PNG encoder writes Pillow's bytes (the reference encoding), only faster."""

from __future__ import annotations

import numpy as np
import pytest

from render.maskpng import _fast_png, fast_path_matches, mask_png, pillow_png


def _shapes() -> list[np.ndarray]:
    rng = np.random.default_rng(2028)
    masks = [np.zeros((600, 800), dtype=bool), np.ones((5, 7), dtype=bool)]
    for _ in range(300):
        height, width = (int(v) for v in rng.integers(1, 70, size=2))
        mask = rng.random((height, width)) < rng.random()
        if rng.random() < 0.5:  # a few filled rectangles, the usual mask
            mask[:] = False
            for _ in range(int(rng.integers(1, 4))):
                y, x = (int(v) for v in rng.integers(0, (height, width)))
                h, w = (int(v) for v in rng.integers(1, 30, size=2))
                mask[y : y + h, x : x + w] = rng.random() < 0.8
        masks.append(mask)
    ring = np.zeros((600, 800), dtype=bool)
    yy, xx = np.mgrid[:600, :800]
    ring[(np.hypot(yy - 300, xx - 400) < 120) & (np.hypot(yy - 300, xx - 400) > 90)] = True
    masks.append(ring)
    return masks


def test_fast_encoder_matches_pillow_byte_for_byte() -> None:
    assert fast_path_matches()
    for mask in _shapes():
        fast = _fast_png(mask)
        assert fast is not None
        assert fast == pillow_png(mask), mask.shape


def test_a_stream_over_one_idat_chunk_is_left_to_pillow() -> None:
    noise = np.random.default_rng(7).random((600, 800)) < 0.5  # incompressible: > 64 KiB
    assert _fast_png(noise) is None
    assert mask_png(noise) == pillow_png(noise)


@pytest.mark.parametrize("shape", [(1, 1), (1, 9), (9, 1)])
def test_single_row_and_column_masks(shape: tuple[int, int]) -> None:
    for value in (False, True):
        mask = np.full(shape, value)
        assert mask_png(mask) == pillow_png(mask)
