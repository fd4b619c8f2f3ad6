"""Measurements on part masks with OpenCV and Shapely. Pure: bytes in, numbers out.

Masks are 8-bit greyscale PNGs; a pixel belongs to the part when its value reaches the
threshold. Regions become Shapely geometries whose pixels are unit squares (contours buffered
by half a pixel), so two regions that share an edge are at distance 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

import cv2
import numpy as np
from numpy.typing import NDArray
from shapely import make_valid
from shapely.geometry import LineString, Point, Polygon
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

Mask = NDArray[np.bool_]


try:  # libspng: the same pixels as OpenCV's decoder, several times faster
    import pyspng
except ImportError:  # pragma: no cover - optional speed-up
    pyspng = None

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# chunks that may precede the image data without changing the decoded sample values
_INERT_CHUNKS = frozenset({b"IHDR", b"pHYs", b"tEXt", b"zTXt", b"iTXt", b"tIME"})


def _is_plain_grey_png(png: bytes) -> bool:
    """Whether ``png`` is an 8-bit greyscale PNG with no transparency, gamma or colour chunk.

    That (colour type 0) is what the renderer writes for every mask, and where every decoder
    yields the stored bytes.
    """
    if len(png) < 33 or png[:8] != _PNG_SIGNATURE or png[12:16] != b"IHDR":
        return False
    if png[24] != 8 or png[25] != 0:
        return False
    pos = 8
    while pos + 8 <= len(png):
        kind = png[pos + 4 : pos + 8]
        if kind == b"IDAT":
            return True
        if kind not in _INERT_CHUNKS:
            return False
        pos += 12 + int.from_bytes(png[pos : pos + 4], "big")
    return False


def decode_grey(png: bytes) -> NDArray[np.uint8]:
    """Decode an image into an 8-bit greyscale array (``cv2.IMREAD_GRAYSCALE`` semantics).

    A plain 8-bit greyscale PNG goes through libspng (``pyspng``) when it is installed: the
    stored bytes, identical to OpenCV's result, about 4x faster. Anything else, or any libspng
    complaint, goes through ``cv2.imdecode(..., IMREAD_GRAYSCALE)``.
    """
    if pyspng is not None and _is_plain_grey_png(png):
        try:
            fast = np.asarray(pyspng.load(png))
        except Exception:  # let OpenCV decide what a broken PNG is
            fast = None
        if fast is not None and fast.ndim == 2 and fast.dtype == np.uint8:
            return fast
    img = cv2.imdecode(np.frombuffer(png, dtype=np.uint8), cv2.IMREAD_GRAYSCALE)
    if img is None:
        raise ValueError("mask is not a decodable PNG")
    return np.asarray(img, dtype=np.uint8)


def decode_mask(png: bytes, threshold: int = 128) -> Mask:
    """Decode a greyscale PNG into a boolean array (True = part pixel)."""
    result: Mask = decode_grey(png) >= threshold
    return result


def decode_region(png: bytes, threshold: int = 128) -> Region:
    """Decode a greyscale PNG straight into a :class:`Region` cropped to the part's pixels."""
    img = decode_grey(png)
    crop, origin = _crop(img, threshold)
    return Region(crop, origin=origin, shape=(int(img.shape[0]), int(img.shape[1])))


def _crop(img: NDArray[Any], threshold: int) -> tuple[Mask, tuple[int, int]]:
    """The pixels ``>= threshold`` inside their bounding box, and the box's (x, y) origin."""
    rows = np.flatnonzero(img.max(axis=1) >= threshold) if img.size else np.empty(0, np.intp)
    if not len(rows):
        return np.zeros((0, 0), dtype=np.bool_), (0, 0)
    band = img[int(rows[0]) : int(rows[-1]) + 1]
    cols = np.flatnonzero(band.max(axis=0) >= threshold)
    crop: Mask = np.ascontiguousarray(band[:, int(cols[0]) : int(cols[-1]) + 1] >= threshold)
    return crop, (int(cols[0]), int(rows[0]))


def _contour_geometry(contour: Any) -> BaseGeometry:
    pts = np.asarray(contour, dtype=np.float64).reshape(-1, 2)
    if len(pts) >= 3:
        return Polygon(pts)
    if len(pts) == 2:
        return LineString(pts)
    return Point(pts[0])


def mask_geometry(mask: Mask, offset: tuple[int, int] = (0, 0)) -> BaseGeometry:
    """The region of a mask as a Shapely geometry (holes kept), in pixel units.

    ``offset`` is added to every coordinate (the origin of a cropped mask).
    """
    img = mask.view(np.uint8) if mask.dtype == np.bool_ else (mask != 0).view(np.uint8)
    contours, hierarchy = cv2.findContours(
        img, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE, offset=offset
    )
    if hierarchy is None or not contours:
        return Polygon()
    shells: list[BaseGeometry] = []
    tree = hierarchy[0]
    for i, contour in enumerate(contours):
        if tree[i][3] != -1:
            continue
        shell = make_valid(_contour_geometry(contour)).buffer(0.5)
        child = tree[i][2]
        holes: list[BaseGeometry] = []
        while child != -1:
            hole = contours[child]
            if len(hole) >= 3:
                holes.append(make_valid(_contour_geometry(hole)).buffer(-0.5))
            child = tree[child][0]
        if holes:
            shell = shell.difference(unary_union(holes))
        shells.append(shell)
    return unary_union(shells)


@dataclass(frozen=True)
class Ellipse:
    """A fitted ellipse: centre (x, y) and the two full axis lengths (major >= minor)."""

    cx: float
    cy: float
    major: float
    minor: float

    @property
    def roundness(self) -> float:
        """Ratio of the minor to the major axis (1.0 = circle)."""
        return self.minor / self.major if self.major > 0 else 0.0

    @property
    def diameter(self) -> float:
        """Mean of the two axes."""
        return (self.major + self.minor) / 2.0


class Measured(Protocol):
    """What the geometry rules read from a part's region.

    Either a :class:`Region`, or a region whose measurements come from a
    :class:`~judges.measure_memo.MeasurementMemo`.
    """

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) of the full image."""

    @property
    def pixels(self) -> int:
        """Number of part pixels."""

    @property
    def geometry(self) -> BaseGeometry:
        """Shapely geometry of the region."""

    @property
    def centroid(self) -> tuple[float, float] | None:
        """Centre of mass, or None when empty."""

    @property
    def bbox(self) -> tuple[int, int, int, int] | None:
        """(x0, y0, x1, y1) inclusive, or None when empty."""

    @property
    def ellipse(self) -> Ellipse | None:
        """Fitted ellipse, or None."""

    @property
    def extent(self) -> float:
        """Largest side of the minimum-area rectangle (0.0 when empty)."""

    @property
    def orientation_deg(self) -> float | None:
        """Axis orientation in degrees [0, 180), or None."""


class Region:
    """A part's pixels in one mask, kept cropped to their bounding box.

    Measurements are computed lazily, in full-image pixel coordinates (identical to measuring
    the whole mask).
    """

    def __init__(
        self,
        mask: Mask,
        *,
        origin: tuple[int, int] | None = None,
        shape: tuple[int, int] | None = None,
    ) -> None:
        """Hold a part's mask, cropping a full-size one to its bounding box.

        ``Region(mask)`` crops a full-size mask; ``origin`` (x, y) and ``shape`` (rows, columns
        of the full image) say that ``mask`` is already the cropped part.
        """
        if origin is None:
            shape = (int(mask.shape[0]), int(mask.shape[1]))
            mask, origin = _crop(mask.view(np.uint8) if mask.dtype == np.bool_ else mask, 1)
        self.crop: Mask = mask
        self.origin = origin
        self.shape = shape if shape is not None else (int(mask.shape[0]), int(mask.shape[1]))

    @property
    def mask(self) -> Mask:
        """The full-size boolean mask (rebuilt from the crop)."""
        full: Mask = np.zeros(self.shape, dtype=np.bool_)
        if self.crop.size:
            (x0, y0), (h, w) = self.origin, self.crop.shape
            full[y0 : y0 + h, x0 : x0 + w] = self.crop
        return full

    @cached_property
    def pixels(self) -> int:
        """Number of part pixels."""
        return int(cv2.countNonZero(self.crop.view(np.uint8))) if self.crop.size else 0

    @cached_property
    def geometry(self) -> BaseGeometry:
        """Shapely geometry of the region."""
        return mask_geometry(self.crop, self.origin) if self.pixels else Polygon()

    @cached_property
    def points(self) -> NDArray[np.float32]:
        """Pixel coordinates (x, y) of the region."""
        ys, xs = np.nonzero(self.crop)
        x0, y0 = self.origin
        return np.stack([xs + x0, ys + y0], axis=1).astype(np.float32)

    @cached_property
    def centroid(self) -> tuple[float, float] | None:
        """Centre of mass (image moments), or None when empty."""
        if not self.pixels:
            return None
        m = cv2.moments(self.crop.view(np.uint8), binaryImage=True)
        # raw moments of a binary image are integer sums: shifting them is exact
        x0, y0 = self.origin
        m00 = m["m00"]
        return ((m["m10"] + x0 * m00) / m00, (m["m01"] + y0 * m00) / m00)

    @cached_property
    def bbox(self) -> tuple[int, int, int, int] | None:
        """(x0, y0, x1, y1) inclusive, or None when empty."""
        if not self.pixels:
            return None
        (x0, y0), (h, w) = self.origin, self.crop.shape
        return x0, y0, x0 + w - 1, y0 + h - 1

    @cached_property
    def ellipse(self) -> Ellipse | None:
        """Ellipse fitted to the convex hull of the region (spokes and rims alike)."""
        if self.pixels < 5:
            return None
        hull = cv2.convexHull(self.points)
        if len(hull) < 5:
            return None
        (cx, cy), (a, b), _ = cv2.fitEllipse(hull)
        # the hull runs through pixel centres: add one pixel to get the painted extent
        return Ellipse(float(cx), float(cy), max(a, b) + 1.0, min(a, b) + 1.0)

    @cached_property
    def extent(self) -> float:
        """Largest side of the minimum-area rectangle around the region."""
        if not self.pixels:
            return 0.0
        (_, _), (w, h), _ = cv2.minAreaRect(self.points)
        return float(max(w, h)) + 1.0

    @cached_property
    def orientation_deg(self) -> float | None:
        """Axis orientation from second moments, degrees in [0, 180), or None."""
        m = cv2.moments(self.mask.astype(np.uint8), binaryImage=True)
        if m["m00"] == 0:
            return None
        angle = 0.5 * math.degrees(math.atan2(2 * m["mu11"], m["mu20"] - m["mu02"]))
        return angle % 180.0


def gap(a: Measured, b: Measured) -> float | None:
    """Shortest distance in pixels between two regions (0 = touching or overlapping)."""
    if not a.pixels or not b.pixels:
        return None
    return float(a.geometry.distance(b.geometry))


def point_distance(region: Measured, x: float, y: float) -> float | None:
    """Distance in pixels from a point to a region (0 inside)."""
    if not region.pixels:
        return None
    return float(region.geometry.distance(Point(x, y)))


def unwrap_degrees(angles: list[float], period: float = 360.0) -> list[float]:
    """Unwrap a sequence of angles so consecutive steps stay within half a period."""
    out: list[float] = []
    for a in angles:
        if not out:
            out.append(a)
            continue
        prev = out[-1]
        step = (a - prev + period / 2.0) % period - period / 2.0
        out.append(prev + step)
    return out


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ys against xs."""
    if len(xs) < 2:
        return 0.0
    fit = np.polyfit(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float), 1)
    return float(fit[0])
