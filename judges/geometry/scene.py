"""Shared pieces of the geometry judge: thresholds, bands, findings and one scene per time."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from judges.geometry.measure import Mask, Measured, Region
from judges.inputs import MaskImage
from judges.model import JudgeProfile, VerdictStatus
from tasks.geometry import ReferenceLength

WHEELS = ReferenceLength(parts=("wheel-front", "wheel-rear"), name="wheel diameter")
"""The reference length of the pelican tasks (and the default of a scene built without one)."""


class MaskDecodeError(ValueError):
    """A mask is not a decodable greyscale PNG (a machinery problem, not a verdict)."""


_ORDER = {VerdictStatus.PASS: 0, VerdictStatus.UNCERTAIN: 1, VerdictStatus.FAIL: 2}


@dataclass(frozen=True)
class Thresholds:
    """Band edges and limits of the geometry judge (all taken from the profile)."""

    visible_min_fraction: float
    visible_min_pixels: int
    contact_pass_max: float
    contact_uncertain_max: float
    seat_sink_max: float
    wheel_pass_min: float
    wheel_uncertain_min: float
    pedal_max_extent: float
    join_pass_max: float
    join_uncertain_max: float
    rotation_pass: tuple[float, float]
    rotation_uncertain: tuple[float, float]
    mask_threshold: int

    @classmethod
    def from_profile(cls, profile: JudgeProfile) -> Thresholds:
        """Read every value from the profile (a missing value is a configuration error)."""
        p = profile.param
        rp, ru = p("rotation_pass_band"), p("rotation_uncertain_band")
        return cls(
            visible_min_fraction=float(p("visible_min_fraction")),
            visible_min_pixels=int(p("visible_min_pixels")),
            contact_pass_max=float(p("contact_pass_max")),
            contact_uncertain_max=float(p("contact_uncertain_max")),
            seat_sink_max=float(p("seat_sink_max")),
            wheel_pass_min=float(p("wheel_round_pass_min")),
            wheel_uncertain_min=float(p("wheel_round_uncertain_min")),
            pedal_max_extent=float(p("pedal_max_extent")),
            join_pass_max=float(p("join_pass_max")),
            join_uncertain_max=float(p("join_uncertain_max")),
            rotation_pass=(float(rp[0]), float(rp[1])),
            rotation_uncertain=(float(ru[0]), float(ru[1])),
            mask_threshold=int(p("mask_threshold", 128)),
        )


def band(value: float, pass_max: float, uncertain_max: float) -> VerdictStatus:
    """``pass`` up to ``pass_max``, ``uncertain`` up to ``uncertain_max``, ``fail`` beyond."""
    if value <= pass_max:
        return VerdictStatus.PASS
    if value <= uncertain_max:
        return VerdictStatus.UNCERTAIN
    return VerdictStatus.FAIL


@dataclass(frozen=True)
class Finding:
    """A measured result before it becomes a verdict."""

    status: VerdictStatus
    artifact_ref: str | None
    description: str
    details: dict[str, Any] = field(default_factory=dict)
    time_s: float | None = None

    def at(self, time_s: float | None) -> Finding:
        """The same finding, located at a time."""
        return dataclasses.replace(self, time_s=time_s)


def worst(findings: Sequence[Finding]) -> Finding:
    """The most severe finding (fail > uncertain > pass); the first one on ties."""
    return max(findings, key=lambda f: _ORDER.get(f.status, 1))


RegionSource = Callable[[MaskImage, int], Measured]
"""Gives the region of one mask image at one threshold (decoding it now or on demand).

A ``ValueError`` means the mask is not decodable; a lazy source raises
:class:`MaskDecodeError` itself when it decodes later.
"""


class Scene:
    """All masks at one time, decoded lazily."""

    def __init__(
        self,
        time_s: float,
        masks: dict[tuple[str, str], MaskImage],
        decode: RegionSource,
        threshold: int,
        reference: ReferenceLength = WHEELS,
    ) -> None:
        """Hold the masks of time ``time_s``; ``decode`` turns one into a region on demand.

        ``reference`` says which parts' size normalises distances (:attr:`scale`).
        """
        self.time_s = time_s
        self.reference = reference
        self._masks = masks
        self._decode = decode
        self._threshold = threshold
        self._regions: dict[tuple[str, str], Measured] = {}
        self._shape: tuple[int, int] | None = None

    @staticmethod
    def build_all(
        masks: Sequence[MaskImage],
        th: Thresholds,
        decode: RegionSource,
        reference: ReferenceLength = WHEELS,
    ) -> list[Scene]:
        """One scene per distinct time, sorted.

        Masks are decoded lazily, on first use, and identical PNGs (a part nothing covers has
        the same ``visible`` and ``alone`` mask; a part that does not move between times) are
        decoded once for all the scenes.
        """
        by_time: dict[float, dict[tuple[str, str], MaskImage]] = {}
        for m in masks:
            by_time.setdefault(round(m.time_s, 3), {})[(m.part, m.kind)] = m
        decoded: dict[tuple[bytes, int], Measured] = {}

        def decode_once(image: MaskImage, threshold: int) -> Measured:
            region = decoded.get((image.png, threshold))
            if region is None:
                region = decoded[(image.png, threshold)] = decode(image, threshold)
            return region

        return [
            Scene(t, ms, decode_once, th.mask_threshold, reference)
            for t, ms in sorted(by_time.items())
        ]

    def _region(self, part: str, kind: str) -> Measured:
        key = (part, kind)
        if key not in self._regions:
            image = self._masks.get(key)
            if image is None:
                empty: Mask = np.zeros(self._shape or (1, 1), dtype=np.bool_)
                self._regions[key] = Region(empty)
            else:
                try:
                    region = self._decode(image, self._threshold)
                except MaskDecodeError:
                    raise
                except ValueError as exc:
                    raise MaskDecodeError(f"{image.artifact_ref}: {exc}") from exc
                self._shape = self._shape or region.shape
                self._regions[key] = region
        return self._regions[key]

    def visible(self, part: str) -> Measured:
        """The part's visible pixels in the full drawing."""
        return self._region(part, "visible")

    def alone(self, part: str) -> Measured:
        """The part's pixels when drawn alone (falls back to visible when no alone mask)."""
        if (part, "alone") not in self._masks:
            return self.visible(part)
        return self._region(part, "alone")

    def ref(self, part: str, kind: str = "visible") -> str | None:
        """Artifact reference of a mask (None when that mask is missing)."""
        image = self._masks.get((part, kind))
        return image.artifact_ref if image else None

    @cached_property
    def scale(self) -> float | None:
        """The reference length in pixels: the mean declared measure of the drawn parts.

        ``diameter`` is the fitted ellipse's mean axis; ``height`` / ``width`` the part's box.
        None when no reference part is drawn.
        """
        sizes: list[float] = []
        for part in self.reference.parts:
            region = self.alone(part)
            if self.reference.measure == "diameter":
                if (ell := region.ellipse) is not None:
                    sizes.append(ell.diameter)
            elif (box := region.bbox) is not None:
                x0, y0, x1, y1 = box
                sizes.append(
                    float(y1 - y0 + 1 if self.reference.measure == "height" else x1 - x0 + 1)
                )
        return sum(sizes) / len(sizes) if sizes else None

    @property
    def wheel_diameter(self) -> float | None:
        """The reference length in pixels (the wheel diameter on the pelican tasks)."""
        return self.scale

    @property
    def unit(self) -> str:
        """How descriptions call the reference length (``wheel diameter``)."""
        return self.reference.name

    @property
    def info(self) -> dict[str, Any]:
        """Scale information recorded with every finding."""
        d = self.scale
        key = self.reference.name.replace(" ", "_") + "_px"
        return {key: None if d is None else round(d, 2)}


def not_visible_reason(scene: Scene, part: str, th: Thresholds) -> str | None:
    """Why a part does not count as visible (None when it is visible)."""
    alone, visible = scene.alone(part), scene.visible(part)
    if max(alone.pixels, visible.pixels) < th.visible_min_pixels:
        return f"{part} paints no pixel (absent, display:none, opacity 0 or clipped away)"
    needed = max(th.visible_min_pixels, th.visible_min_fraction * alone.pixels)
    if visible.pixels < needed:
        share = visible.pixels / alone.pixels if alone.pixels else 0.0
        return (
            f"{part} is drawn but not visible ({share:.0%} of its pixels show: covered or clipped)"
        )
    return None
