"""The typed, versioned task format. Tasks are data (YAML); this module is their schema."""

from __future__ import annotations

import hashlib
import json
import uuid
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tasks.geometry import GeometrySpec
from tasks.grading import Rubric, check_rubric, parse_scale


class Pool(StrEnum):
    """Which item pool a task belongs to; pools are reported separately."""

    CORE = "core"
    ROTATING = "rotating"
    RESERVED = "reserved"


class Mode(StrEnum):
    """Whether the artifact is a still image or an animation observed over time."""

    STATIC = "static"
    ANIMATED = "animated"


class CriterionKind(StrEnum):
    """Necessary conditions decide; optional ones only describe."""

    NECESSARY = "necessary"
    OPTIONAL = "optional"


class Frozen(BaseModel):
    """Base for every spec model: immutable and strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class AllowedFeatures(Frozen):
    """Which potentially dangerous SVG features the task allows."""

    scripts: bool = False
    external_resources: bool = False
    foreign_object: bool = False
    raster_images: bool = False
    animation: bool = False


DEFAULT_MAX_FILTER_COST = 100_000_000
"""Default ``max_filter_cost``: 100 M primitive-pixels (about 200 full-viewport filter passes on
an 800x600 frame); a drop shadow on a dozen shapes costs a few million."""

DEFAULT_MAX_LAYER_PIXELS = 150_000_000
"""Default ``max_layer_pixels``: 150 M pixels written to offscreen surfaces (about 300
full-viewport layers on an 800x600 frame; see ``checks.paint_cost``). The costliest file of the
real corpora (model outputs, the resvg, W3C and WPT suites) estimates 23 M."""

DEFAULT_MAX_SELECTOR_STEPS = 10_000_000
"""Default ``max_selector_steps``: 10 M selector-matching steps (see ``checks.css_cost``). The
costliest style sheet of the real corpora estimates under 20 k."""

DEFAULT_RENDER_CPU_S = 20.0
"""Default ``max_render_cpu_s``: CPU seconds the sandbox's whole process tree may spend on one
render (every frame and mask of the plan). The bundled animated sample needs about a tenth of it."""

HASH_OMITS_DEFAULT: dict[str, dict[str, object]] = {
    "output": {
        "max_filter_cost": DEFAULT_MAX_FILTER_COST,
        "max_layer_pixels": DEFAULT_MAX_LAYER_PIXELS,
        "max_selector_steps": DEFAULT_MAX_SELECTOR_STEPS,
        "max_render_cpu_s": DEFAULT_RENDER_CPU_S,
    },
}
"""Limits added to the format after specs were frozen: omitted from the canonical JSON while they
hold their default, so every spec written before them keeps its content hash."""

TOP_HASH_OMITS_DEFAULT: dict[str, object] = {"template": None, "dimensions": {}}
"""Top-level fields added after specs were frozen (task authoring): omitted from the
canonical JSON while they hold their default, so bundled specs keep their content hashes."""
TOP_LEVEL_OMITS_DEFAULT: dict[str, object] = {"canary": None}
"""Top-level fields added after specs were frozen, omitted from the canonical JSON at default."""

CANARY_NAMESPACE = uuid.UUID("5b0c6f8e-8e3a-4d55-9a43-0f1d2c3b4a59")
"""Namespace of derived canaries (``uuid5`` of ``REF:CONTENT_HASH``), fixed for good."""
HASH_OMITS_NONE: tuple[str, ...] = ("geometry", "rubric")
CRITERION_OMITS_DEFAULT: dict[str, object] = {"states": [], "scale": None, "anchors": {}}
"""Optional top-level blocks added after specs were frozen: omitted from the canonical JSON while
unset, so every spec written before them keeps its content hash."""


class OutputConstraints(Frozen):
    """Delivery rules the static checks enforce."""

    standalone_svg: bool = True
    required_viewbox: str | None = None
    max_bytes: int = Field(default=200_000, gt=0)
    max_elements: int = Field(default=5_000, gt=0)
    max_depth: int = Field(default=64, gt=0)
    max_attribute_length: int = Field(default=20_000, gt=0)
    max_path_data_length: int = Field(default=50_000, gt=0)
    allowed: AllowedFeatures = AllowedFeatures()
    required_ids: tuple[str, ...] = ()
    max_filter_cost: int = Field(default=DEFAULT_MAX_FILTER_COST, gt=0)
    """Static estimate of filter work the render may cost: filter primitives x filtered pixels.

    Summed over every element a filter applies to (see ``checks.render_cost``); a drawing over it
    fails the ``render-cost`` check and is not rendered. Added after the first released specs:
    left at its default it takes no part in the content hash (:data:`HASH_OMITS_DEFAULT`).
    """
    max_layer_pixels: int = Field(default=DEFAULT_MAX_LAYER_PIXELS, gt=0)
    """Static estimate of the offscreen surfaces the render may fill, in pixels.

    Masks, clip paths, filters (grown by their kernels), group opacity and pattern tiles, followed
    through every reference (see ``checks.paint_cost``); a drawing over it fails the
    ``render-cost`` check and is not rendered. Hash-neutral at its default.
    """
    max_selector_steps: int = Field(default=DEFAULT_MAX_SELECTOR_STEPS, gt=0)
    """Static estimate of the selector matching a drawing's ``<style>`` sheets ask for.

    Selectors x elements, ``:has()`` and combinators weighted (see ``checks.css_cost``); a drawing
    over it fails the ``render-cost`` check and is not rendered. Hash-neutral at its default.
    """
    max_render_cpu_s: float = Field(default=DEFAULT_RENDER_CPU_S, gt=0, le=600)
    """The render budget: CPU seconds of the sandbox's process tree for the whole render.

    Measured as CPU time, never wall time, so the verdict does not depend on how busy the machine
    is; a render over it fails by the declared rule *exceeds the render budget*. Added after the
    first released specs: left at its default it takes no part in the content hash.
    """


class RenderProfile(Frozen):
    """How the sandbox renders: viewport, device scale, background, fonts, locale."""

    id: str
    viewport_width: int = Field(default=800, gt=0, le=4096)
    viewport_height: int = Field(default=600, gt=0, le=4096)
    device_scale_factor: float = Field(default=1.0, gt=0, le=4)
    background: str = "#ffffff"
    font_set: str = "dejavu"
    timezone: str = "UTC"
    locale: str = "en-US"


class AnimationPlan(Frozen):
    """When frames are taken for an animated task; fixed before any run."""

    loop_s: float = Field(gt=0)
    observe_s: float = Field(gt=0)
    sample_hz: float = Field(gt=0)
    boundary_offsets_s: tuple[float, ...] = ()

    def timestamps(self) -> tuple[float, ...]:
        """Every timestamp (seconds) to capture, sorted, de-duplicated to the millisecond."""
        step = 1.0 / self.sample_hz
        count = round(self.observe_s * self.sample_hz)
        times = {round(i * step, 3) for i in range(count + 1) if i * step <= self.observe_s + 1e-9}
        loops = round(self.observe_s / self.loop_s)
        for k in range(loops + 1):
            for off in self.boundary_offsets_s:
                t = round(k * self.loop_s + off, 3)
                if 0.0 <= t <= self.observe_s:
                    times.add(t)
        return tuple(sorted(times))


class Criterion(Frozen):
    """One row of the acceptance table."""

    id: str = Field(pattern=r"^[A-Z][A-Z0-9]*$")
    kind: CriterionKind
    question: str
    not_applicable_when: str | None = None
    applicable: bool = True
    """False when the task itself makes the criterion not applicable.

    For example animation on a static task; such a criterion is always reported
    ``not_applicable`` and costs nothing.
    """
    states: tuple[str, ...] = ()
    """Phrases of the prompt that state this criterion (checked by ``regua tasks check``).

    Added after the first released specs: left empty it takes no part in the content hash.
    """
    scale: str | None = None
    """``0..5``: a graded criterion, answered with a level of this ordinal scale (see
    :mod:`tasks.grading`); None: a pass/fail criterion. Left unset it takes no part in the hash."""
    anchors: dict[int, str] = Field(default_factory=dict)
    """The written meaning of every level of the scale (level → anchor text)."""

    @model_validator(mode="after")
    def _graded(self) -> Criterion:
        if self.scale is None:
            if self.anchors:
                raise ValueError(f"criterion {self.id}: anchors need a scale (e.g. scale: 0..5)")
            return self
        low, high = parse_scale(self.scale)
        missing = [lv for lv in range(low, high + 1) if not str(self.anchors.get(lv, "")).strip()]
        extra = sorted(lv for lv in self.anchors if not low <= lv <= high)
        if missing or extra:
            raise ValueError(
                f"criterion {self.id}: scale {self.scale} needs a written anchor for every level; "
                + (f"missing {missing}" if missing else f"levels {extra} are off the scale")
            )
        return self

    @property
    def graded(self) -> bool:
        """Whether the criterion is answered with a level rather than pass/fail."""
        return self.scale is not None

    def levels(self) -> tuple[int, int]:
        """``(bottom, top)`` of a graded criterion's scale (ValueError when it has none)."""
        if self.scale is None:
            raise ValueError(f"criterion {self.id} is not graded")
        return parse_scale(self.scale)


class TaskSpec(Frozen):
    """A frozen task: prompt, constraints, rendering and the acceptance table."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,99}$")
    version: int = Field(ge=1, le=2**31 - 1)
    family: str = Field(min_length=1, max_length=100)
    pool: Pool
    mode: Mode
    title: str = Field(max_length=300)
    prompt: str
    output: OutputConstraints
    render: RenderProfile
    animation: AnimationPlan | None = None
    criteria: tuple[Criterion, ...]
    # --- task authoring: optional, left out of the content hash at their defaults ---
    template: str | None = None
    """The template (its id) this task version was generated from; None: written by hand."""
    dimensions: dict[str, str] = Field(default_factory=dict)
    """Dimension values of a template variant (``subject: heron``), for slicing reports."""
    # --- pools: optional, omitted from the content hash at default ---
    canary: str | None = Field(default=None, min_length=16)
    """A reserved task's canary (BIG-bench style); derived when absent (:meth:`canary_text`)."""
    # Task-declared geometry: parts, relations, reference length; see tasks.geometry.
    geometry: GeometrySpec | None = None
    rubric: Rubric | None = None
    """A weighted score over graded criteria with a threshold and bounds (tasks.grading)."""

    @model_validator(mode="after")
    def _consistent(self) -> TaskSpec:
        ids = [c.id for c in self.criteria]
        if len(ids) != len(set(ids)):
            raise ValueError(f"duplicate criterion ids in {self.ref}: {ids}")
        if self.mode is Mode.ANIMATED and self.animation is None:
            raise ValueError(f"{self.ref}: an animated task needs an animation plan")
        if self.mode is Mode.STATIC and self.animation is not None:
            raise ValueError(f"{self.ref}: a static task has no animation plan")
        if self.geometry is not None:
            self._geometry_consistent(self.geometry, set(ids))
        if self.rubric is not None:
            problems = check_rubric(
                self.rubric,
                {c.id: c.levels() if c.graded else None for c in self.criteria},
                {c.id: c.kind is CriterionKind.NECESSARY for c in self.criteria},
            )
            if problems:
                raise ValueError(f"{self.ref}: " + "; ".join(problems))
        return self

    def level_status(self, criterion_id: str, level: int) -> str:
        """``pass`` when a graded criterion's level meets the rubric's bounds on it, else ``fail``.

        No bound: any level passes (the rubric's score decides the rest).
        """
        if self.rubric is None:
            return "pass"
        held = all(b.holds(level) for b in self.rubric.bounds_of(criterion_id))
        return "pass" if held else "fail"

    def _geometry_consistent(self, geo: GeometrySpec, criteria: set[str]) -> None:
        missing = [p for p in geo.required_ids() if p not in self.output.required_ids]
        if missing:
            raise ValueError(f"{self.ref}: required geometry parts {missing} not in required_ids")
        unknown = [r.criterion for r in geo.relations if r.criterion not in criteria]
        if unknown:
            raise ValueError(f"{self.ref}: geometry relations for unknown criteria {unknown}")

    @property
    def ref(self) -> str:
        """The task reference ``ID@VERSION``."""
        return f"{self.id}@{self.version}"

    def criterion(self, criterion_id: str) -> Criterion:
        """The criterion with this id (KeyError when the task does not define it)."""
        for c in self.criteria:
            if c.id == criterion_id:
                return c
        raise KeyError(criterion_id)

    def timestamps(self) -> tuple[float, ...]:
        """Frame times in seconds: ``(0.0,)`` for a static task, the plan's times otherwise."""
        return (0.0,) if self.animation is None else self.animation.timestamps()

    def canonical_json(self) -> str:
        """A canonical JSON text of the spec; its hash freezes the version."""
        doc = self.model_dump(mode="json")
        for key, default in TOP_LEVEL_OMITS_DEFAULT.items():
            if key in doc and doc[key] == default:
                del doc[key]
        for key in HASH_OMITS_NONE:
            if doc.get(key) is None:
                doc.pop(key, None)
        for row in doc.get("criteria") or ():
            for key, default in CRITERION_OMITS_DEFAULT.items():
                if row.get(key) == default:
                    del row[key]
        for section, defaults in HASH_OMITS_DEFAULT.items():
            part = doc.get(section)
            if isinstance(part, dict):
                for key, default in defaults.items():
                    if part.get(key) == default:
                        del part[key]
        for key, default in TOP_HASH_OMITS_DEFAULT.items():
            if key in doc and doc[key] == default:
                del doc[key]
        return json.dumps(doc, sort_keys=True, separators=(",", ":"))

    def content_hash(self) -> str:
        """sha256 of the canonical JSON."""
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()

    def canary_text(self) -> str:
        """The canary string watched for in replies: the spec's own, else a derived GUID.

        Derived as ``regua canary GUID <uuid5(CANARY_NAMESPACE, "REF:CONTENT_HASH")>``: stable
        for a frozen version, different for every version, and never part of the prompt.
        """
        if self.canary:
            return self.canary
        guid = uuid.uuid5(CANARY_NAMESPACE, f"{self.ref}:{self.content_hash()}")
        return f"regua canary GUID {guid}"

    def to_wire(self) -> dict[str, Any]:
        """Plain JSON-able form (what crosses the sandbox boundary)."""
        return self.model_dump(mode="json")


def parse_ref(ref: str) -> tuple[str, int]:
    """Split ``ID@VERSION`` into its parts; raises ValueError on a malformed reference."""
    task_id, sep, version = ref.partition("@")
    if not sep or not task_id or not version.isdigit():
        raise ValueError(f"task reference must look like ID@VERSION, got {ref!r}")
    return task_id, int(version)
