"""Lanes by cost: a cheap static estimate of a run's render work, and the lane it puts the run in.

The check stage estimates how much the render will cost from what it already has, the task and
the extracted SVG text, without rendering or parsing again:

* frames: one for a static task, and for an animated task one per timestamp when the drawing
  declares animation (SMIL elements, CSS ``@keyframes``, ``animation`` or ``transition``); a
  drawing without any is captured once (its every timestamp is the same state);
* captures per frame: the frame itself plus the two mask passes when the task wants part masks;
* weight per frame: each filter primitive, ``<mask>`` and ``<pattern>`` adds
  :data:`EFFECT_WEIGHT` of a capture (the rasterising work they ask for on every frame).

``units = frames x (captures per frame + effects)``, in captures of one static frame. A run of
:data:`HEAVY_UNITS` or more goes to the ``heavy`` lane, anything else (and every run not yet
checked) to the ``cheap`` lane. The scheduler gives each lane its own capacity (see
:mod:`service.pipeline.fair` and :mod:`service.pipeline.pgqueue`), so cheap work never waits
behind expensive work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from tasks import TaskSpec

Lane = Literal["cheap", "heavy"]
CHEAP: Lane = "cheap"
HEAVY: Lane = "heavy"
LANES: tuple[Lane, ...] = (CHEAP, HEAVY)

HEAVY_UNITS = 20.0
"""From this many units (captures of one static frame) on, a run is rendered in the heavy lane."""
EFFECT_WEIGHT = 0.5
"""What one filter primitive, mask or pattern adds to a frame's cost, in captures."""
MAX_EFFECTS = 10_000
"""Effects counted at most (the estimate only has to say *heavy*, not how heavy)."""
MASK_PASSES = 2

_ANIMATION = re.compile(
    r"<(?:[\w-]+:)?(?:animate\w*|set)\b|@keyframes|\banimation(?:-name)?\s*[:=]|\btransition\s*[:=]",
    re.IGNORECASE,
)
_EFFECT = re.compile(r"<(?:[\w-]+:)?(?:fe[A-Z]\w*|mask|pattern)\b")


@dataclass(frozen=True)
class CostEstimate:
    """The estimated render work of one run and the lane it goes to."""

    frames: int
    captures_per_frame: int
    effects: int
    units: float
    lane: Lane

    def describe(self) -> str:
        """One line for logs and the run's check record."""
        return (
            f"{self.lane} lane: {self.units:g} units = {self.frames} frame(s) x "
            f"({self.captures_per_frame} capture(s) + {self.effects} effect(s) x {EFFECT_WEIGHT:g})"
        )


def lane_of(units: float, heavy_units: float = HEAVY_UNITS) -> Lane:
    """The lane of a run of ``units`` estimated units."""
    return HEAVY if units >= heavy_units else CHEAP


def declares_animation(svg_text: str) -> bool:
    """Whether the text declares any animation (SMIL, CSS keyframes, animation, transition)."""
    return _ANIMATION.search(svg_text) is not None


def estimate(task: TaskSpec, svg_text: str | None, *, will_render: bool = True) -> CostEstimate:
    """The render cost of ``svg_text`` on ``task`` (nothing to render: zero units, cheap)."""
    if svg_text is None or not will_render:
        return CostEstimate(0, 0, 0, 0.0, CHEAP)
    animated = task.animation is not None and declares_animation(svg_text)
    frames = len(task.timestamps()) if animated else 1
    captures = 1 + (MASK_PASSES if task.output.required_ids else 0)
    effects = min(MAX_EFFECTS, sum(1 for _ in _EFFECT.finditer(svg_text)))
    units = frames * (captures + effects * EFFECT_WEIGHT)
    return CostEstimate(frames, captures, effects, units, lane_of(units))
