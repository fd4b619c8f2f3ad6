"""Memo-backed mask regions for the geometry judge (see :mod:`judges.measure_memo`).

A :class:`MemoRegion` answers every measurement the rules read from a
:class:`~judges.measure_memo.MeasurementMemo` first; on a miss it decodes its PNG (once, on
demand), measures with :class:`~judges.geometry.measure.Region` and stores the value. A region
is keyed by the sha256 of its PNG bytes and the mask threshold, so the values serve any profile
that decodes masks at the same threshold. Values are stored as plain ints, floats and lists and
turned back into the exact types :class:`Region` returns.

Keys: ``<region>.<measurement>`` with ``<region>`` = ``<sha256[:32]>@<threshold>``;
``gap|<region>|<region>`` (the two keys sorted: the distance is symmetric) and
``point|<region>|<repr(x)>|<repr(y)>``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import cached_property
from typing import Any

from shapely.geometry.base import BaseGeometry

from judges.geometry import measure as gm
from judges.geometry.measure import Ellipse, Measured, Region
from judges.geometry.scene import MaskDecodeError, RegionSource
from judges.inputs import MaskImage
from judges.measure_memo import MISSING, MeasurementMemo


def region_key(png: bytes, threshold: int) -> str:
    """Memo key of the region a PNG mask gives at ``threshold``."""
    return f"{hashlib.sha256(png).hexdigest()[:32]}@{threshold}"


def _is_num(v: Any) -> bool:
    return type(v) is float or type(v) is int


def _int(v: Any) -> Any:
    return v if type(v) is int else MISSING


def _num(v: Any) -> Any:
    return float(v) if _is_num(v) else MISSING


def _opt_num(v: Any) -> Any:
    return None if v is None else _num(v)


def _nums(n: int, cast: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Reader of ``None`` or a list of ``n`` numbers, as a tuple of ``cast`` values."""

    def read(v: Any) -> Any:
        if v is None:
            return None
        if not isinstance(v, list) or len(v) != n or not all(_is_num(x) for x in v):
            return MISSING
        if cast is int and not all(type(x) is int for x in v):
            return MISSING
        return tuple(cast(x) for x in v)

    return read


def _read_ellipse(v: Any) -> Any:
    parts = _nums(4, float)(v)
    return parts if parts is None or parts is MISSING else Ellipse(*parts)


def _read_shape(v: Any) -> Any:
    return _nums(2, int)(v) if v is not None else MISSING


def _write_ellipse(e: Ellipse | None) -> Any:
    return None if e is None else [float(e.cx), float(e.cy), float(e.major), float(e.minor)]


def _write_tuple(cast: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: None if v is None else [cast(x) for x in v]


class MemoRegion:
    """A mask region whose measurements come from a memo; decoded only on a miss."""

    def __init__(
        self,
        memo: MeasurementMemo,
        image: MaskImage,
        threshold: int,
        decode: Callable[[bytes, int], Region] = gm.decode_region,
    ) -> None:
        """The region of ``image`` at ``threshold``; ``decode`` runs at most once, on demand."""
        self.memo = memo
        self.key = region_key(image.png, threshold)
        self._image = image
        self._threshold = threshold
        self._decode = decode

    @cached_property
    def region(self) -> Region:
        """The decoded region (decodes the PNG on first access)."""
        try:
            return self._decode(self._image.png, self._threshold)
        except MaskDecodeError:
            raise
        except ValueError as exc:
            raise MaskDecodeError(f"{self._image.artifact_ref}: {exc}") from exc

    def _measure(
        self,
        name: str,
        read: Callable[[Any], Any],
        write: Callable[[Any], Any],
        compute: Callable[[], Any],
    ) -> Any:
        """The memoised value of ``name``, computed and stored on a miss (or unreadable value)."""
        key = f"{self.key}.{name}"
        stored = self.memo.get(key)
        if stored is not MISSING:
            value = read(stored)
            if value is not MISSING:
                return value
        value = compute()
        self.memo.put(key, write(value))
        return value

    @cached_property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) of the full image."""
        result: tuple[int, int] = self._measure(
            "shape", _read_shape, _write_tuple(int), lambda: self.region.shape
        )
        return result

    @cached_property
    def pixels(self) -> int:
        """Number of part pixels."""
        result: int = self._measure("pixels", _int, int, lambda: self.region.pixels)
        return result

    @cached_property
    def centroid(self) -> tuple[float, float] | None:
        """Centre of mass, or None when empty."""
        result: tuple[float, float] | None = self._measure(
            "centroid", _nums(2, float), _write_tuple(float), lambda: self.region.centroid
        )
        return result

    @cached_property
    def bbox(self) -> tuple[int, int, int, int] | None:
        """(x0, y0, x1, y1) inclusive, or None when empty."""
        result: tuple[int, int, int, int] | None = self._measure(
            "bbox", _nums(4, int), _write_tuple(int), lambda: self.region.bbox
        )
        return result

    @cached_property
    def ellipse(self) -> Ellipse | None:
        """Fitted ellipse (stored as [cx, cy, major, minor]), or None."""
        result: Ellipse | None = self._measure(
            "ellipse", _read_ellipse, _write_ellipse, lambda: self.region.ellipse
        )
        return result

    @cached_property
    def extent(self) -> float:
        """Largest side of the minimum-area rectangle (0.0 when empty)."""
        result: float = self._measure("extent", _num, float, lambda: self.region.extent)
        return result

    @cached_property
    def orientation_deg(self) -> float | None:
        """Axis orientation in degrees [0, 180), or None."""
        result: float | None = self._measure(
            "orientation_deg", _opt_num, _opt_num, lambda: self.region.orientation_deg
        )
        return result

    @property
    def geometry(self) -> BaseGeometry:
        """Shapely geometry (never memoised: decodes and builds it)."""
        return self.region.geometry


def memo_source(
    memo: MeasurementMemo, decode: Callable[[bytes, int], Region] = gm.decode_region
) -> RegionSource:
    """A :data:`~judges.geometry.scene.RegionSource` giving memo-backed regions."""

    def source(image: MaskImage, threshold: int) -> Measured:
        return MemoRegion(memo, image, threshold, decode)

    return source


def gap(a: Measured, b: Measured) -> float | None:
    """:func:`judges.geometry.measure.gap`, memoised when both regions share a memo."""
    if not (isinstance(a, MemoRegion) and isinstance(b, MemoRegion) and a.memo is b.memo):
        return gm.gap(a, b)
    first, second = sorted((a.key, b.key))
    key = f"gap|{first}|{second}"
    stored = a.memo.get(key)
    value = MISSING if stored is MISSING else _opt_num(stored)
    if value is MISSING:
        value = gm.gap(a, b)
        a.memo.put(key, value)
    result: float | None = value
    return result


def point_distance(region: Measured, x: float, y: float) -> float | None:
    """:func:`judges.geometry.measure.point_distance`, memoised on a memo-backed region."""
    if not isinstance(region, MemoRegion):
        return gm.point_distance(region, x, y)
    key = f"point|{region.key}|{x!r}|{y!r}"
    stored = region.memo.get(key)
    value = MISSING if stored is MISSING else _opt_num(stored)
    if value is MISSING:
        value = gm.point_distance(region, x, y)
        region.memo.put(key, value)
    result: float | None = value
    return result
