"""Measurement memo: re-scoring with another geometry profile reads the measurements stored by
an earlier evaluation instead of decoding masks and building Shapely geometries again.

Work is counted by wrapping ``decode_grey`` (every PNG decode) and ``mask_geometry`` (every
Shapely build) of :mod:`judges.geometry.measure`; the code under test is not changed.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

import judges.geometry.measure as gm
from judges import (
    MEASURE_VERSION,
    CheckSummary,
    EvalInput,
    FrameImage,
    JudgeFailure,
    JudgeInput,
    JudgePanel,
    JudgeProfile,
    JudgeRegistry,
    MaskImage,
    MeasurementMemo,
    PanelResult,
    RenderSummary,
    Verdict,
    evaluate,
    get_profile,
)
from judges.builtin import GEOMETRY_THRESHOLDS, register_builtins
from judges.geometry.judge import GeometryJudge
from judges.measure_memo import MISSING
from judges.model import canonical_json
from tasks import bundled_registry
from tests.helpers import perturb as pt
from tests.helpers.maskrender import MaskRenderer
from tests.judges.geometry.test_geometry_animated import TURNING, spin
from tests.judges.geometry.test_geometry_units import scene

STRUCTURED = bundled_registry().get("pelican-bicycle-structured@1")
ANIMATED = bundled_registry().get("pelican-bicycle-animated@1")
BASE = get_profile("geometry@1")
STRICT = dataclasses.replace(
    BASE,
    id="geometry-memo-strict@1",
    thresholds={**GEOMETRY_THRESHOLDS, "contact_pass_max": 0.01, "contact_uncertain_max": 0.03},
    expected_hash=None,
    description="strict contact bands",
)
THRESHOLD_200 = dataclasses.replace(
    BASE,
    id="geometry-memo-t200@1",
    params={**BASE.params, "mask_threshold": 200},
    expected_hash=None,
    description="masks cut at 200",
)
CHECKS = CheckSummary.from_doc({"status": "pass", "checks": [], "extraction": {"status": "found"}})
RENDER = RenderSummary(status="ok", animation_detected=False)
ANIMATED_RENDER = RenderSummary(status="ok", animation_detected=True)


@dataclass
class Work:
    """PNG decodes and Shapely geometry builds seen since the last reset."""

    decodes: int = 0
    geometries: int = 0

    def reset(self) -> None:
        self.decodes = self.geometries = 0


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Work:
    counted = Work()
    decode, build = gm.decode_grey, gm.mask_geometry

    def counting_decode(png: bytes) -> Any:
        counted.decodes += 1
        return decode(png)

    def counting_geometry(mask: Any, offset: tuple[int, int] = (0, 0)) -> Any:
        counted.geometries += 1
        return build(mask, offset)

    monkeypatch.setattr(gm, "decode_grey", counting_decode)
    monkeypatch.setattr(gm, "mask_geometry", counting_geometry)
    return counted


def judge_registry(*extra: JudgeProfile) -> JudgeRegistry:
    reg = JudgeRegistry()
    register_builtins(reg)
    for profile in extra:
        reg.register_profile(profile)
    return reg


def panel(profile: JudgeProfile) -> JudgePanel:
    return JudgePanel(
        f"memo-test-{profile.id.replace('@', '-')}@1",
        "pelican-bicycle",
        {"*": ("static@1", profile.id)},
    )


def run(
    profile: JudgeProfile,
    task: Any,
    frames: Sequence[FrameImage],
    masks: Sequence[MaskImage],
    memo: MeasurementMemo | None,
    render: RenderSummary = RENDER,
) -> PanelResult:
    """``judges.evaluate`` as the service calls it, with ``profile`` beside the static rules."""
    inp = EvalInput(task, CHECKS, render, tuple(frames), tuple(masks), measurements=memo)
    return evaluate(inp, panel(profile), None, judge_registry=judge_registry(profile))


def _no_latency(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _no_latency(v) for k, v in value.items() if k != "latency_ms"}
    if isinstance(value, list):
        return [_no_latency(v) for v in value]
    return value


def snapshot(result: PanelResult) -> str:
    """Everything the evaluation decided (verdicts with evidence and details, failures, jury,
    outcome) as canonical JSON, without timings."""
    return canonical_json(_no_latency(result.to_dict()))


def geometry_verdicts(result: PanelResult, profile: JudgeProfile) -> dict[str, Verdict]:
    return {v.criterion: v for v in result.verdicts if v.judge_profile_id == profile.id}


def reloaded(memo: MeasurementMemo) -> MeasurementMemo:
    """The memo after a trip through JSON text (as it is stored with a run)."""
    return MeasurementMemo.from_doc(json.loads(json.dumps(memo.to_doc(), allow_nan=False)))


@pytest.fixture(scope="module")
def structured(masks: MaskRenderer) -> tuple[list[FrameImage], list[MaskImage]]:
    """The structured pelican with the left foot 5% of a wheel diameter above its pedal:
    R2 is uncertain under geometry@1 and fails under the strict bands."""
    svg = pt.build(pt.move_up("foot-left", 0.05))
    return masks.render(svg, STRUCTURED.output.required_ids)


@pytest.mark.browser
def test_filled_memo_rescores_without_decoding(
    structured: tuple[list[FrameImage], list[MaskImage]], work: Work
) -> None:
    frames, mk = structured
    plain = run(BASE, STRUCTURED, frames, mk, None)
    assert work.decodes > 0 and work.geometries > 0  # the counters see the real work
    work.reset()
    memo = MeasurementMemo()
    first = run(BASE, STRUCTURED, frames, mk, memo)
    assert work.decodes > 0 and memo.added == len(memo) > 0 and memo.hits == 0
    work.reset()
    again = reloaded(memo)
    second = run(BASE, STRUCTURED, frames, mk, again)
    assert (work.decodes, work.geometries) == (0, 0)
    assert again.misses == 0 and again.added == 0 and again.hits > 0
    assert snapshot(plain) == snapshot(first) == snapshot(second)
    kinds = {k.split("|")[0] if "|" in k else k.rsplit(".", 1)[1] for k in memo.to_doc()["values"]}
    assert kinds >= {"shape", "pixels", "bbox", "centroid", "ellipse", "extent", "gap", "point"}
    r2 = geometry_verdicts(second, BASE)["R2"]
    assert r2.status.value == "uncertain"
    assert 0.04 <= r2.details["gap_ratio"]["left"] <= 0.06


@pytest.mark.browser
def test_other_bands_on_a_filled_memo_need_no_decode(
    structured: tuple[list[FrameImage], list[MaskImage]], work: Work
) -> None:
    frames, mk = structured
    memo = MeasurementMemo()
    base = run(BASE, STRUCTURED, frames, mk, memo)
    strict_plain = run(STRICT, STRUCTURED, frames, mk, None)
    work.reset()
    again = reloaded(memo)
    strict = run(STRICT, STRUCTURED, frames, mk, again)
    assert (work.decodes, work.geometries) == (0, 0)
    assert again.misses == 0 and again.added == 0
    assert snapshot(strict) == snapshot(strict_plain)
    # the new bands did change the verdict: same measurement, stricter band
    assert geometry_verdicts(base, BASE)["R2"].status.value == "uncertain"
    assert geometry_verdicts(strict, STRICT)["R2"].status.value == "fail"
    base_gap = geometry_verdicts(base, BASE)["R2"].details["gap_ratio"]
    assert geometry_verdicts(strict, STRICT)["R2"].details["gap_ratio"] == base_gap


@pytest.mark.browser
def test_another_mask_threshold_misses_and_measures(
    structured: tuple[list[FrameImage], list[MaskImage]], work: Work
) -> None:
    frames, mk = structured
    memo = MeasurementMemo()
    run(BASE, STRUCTURED, frames, mk, memo)
    stored = len(memo)
    plain = run(THRESHOLD_200, STRUCTURED, frames, mk, None)
    work.reset()
    memo.hits = memo.misses = memo.added = 0
    cut = run(THRESHOLD_200, STRUCTURED, frames, mk, memo)
    assert work.decodes > 0 and work.geometries > 0
    assert memo.hits == 0 and memo.misses > 0 and memo.added == len(memo) - stored > 0
    assert snapshot(cut) == snapshot(plain)
    assert any(key.split(".")[0].endswith("@200") for key in memo.to_doc()["values"])


@pytest.mark.browser
@pytest.mark.parametrize(
    "doc",
    [
        None,
        "garbage",
        {"version": "geometry-measure/0"},
        {"version": MEASURE_VERSION, "values": [1, 2, 3]},
        {"version": MEASURE_VERSION},
    ],
)
def test_unusable_doc_loads_empty_and_verdicts_stay_right(
    structured: tuple[list[FrameImage], list[MaskImage]], doc: Any
) -> None:
    frames, mk = structured
    memo = MeasurementMemo.from_doc(doc)
    assert len(memo) == 0 and memo.to_doc() == {"version": MEASURE_VERSION, "values": {}}
    assert snapshot(run(BASE, STRUCTURED, frames, mk, memo)) == snapshot(
        run(BASE, STRUCTURED, frames, mk, None)
    )
    assert memo.added > 0


@pytest.mark.browser
def test_memo_of_another_version_is_ignored(
    structured: tuple[list[FrameImage], list[MaskImage]], work: Work
) -> None:
    frames, mk = structured
    memo = MeasurementMemo()
    run(BASE, STRUCTURED, frames, mk, memo)
    old = {**memo.to_doc(), "version": "geometry-measure/0"}
    # same keys, wrong numbers: a loader that ignored the version would give other verdicts
    old["values"] = {k: ([] if isinstance(v, list) else 0) for k, v in old["values"].items()}
    loaded = MeasurementMemo.from_doc(old)
    work.reset()
    result = run(BASE, STRUCTURED, frames, mk, loaded)
    assert len(loaded) == loaded.added > 0 and work.decodes > 0
    assert snapshot(result) == snapshot(run(BASE, STRUCTURED, frames, mk, None))


@pytest.mark.browser
def test_garbage_values_are_measured_again(
    structured: tuple[list[FrameImage], list[MaskImage]],
) -> None:
    frames, mk = structured
    memo = MeasurementMemo()
    run(BASE, STRUCTURED, frames, mk, memo)
    values = memo.to_doc()["values"]
    junk: dict[str, object] = {k: ("junk" if i % 2 else [None, "x"]) for i, k in enumerate(values)}

    junk["unrelated"] = {"nested": "dropped"}
    broken = MeasurementMemo.from_doc({"version": MEASURE_VERSION, "values": junk})
    assert "unrelated" not in broken and len(broken) == len(values)
    result = run(BASE, STRUCTURED, frames, mk, broken)
    assert snapshot(result) == snapshot(run(BASE, STRUCTURED, frames, mk, None))
    assert broken.to_doc() == memo.to_doc()  # every unreadable value was replaced


@pytest.mark.browser
def test_animated_rescore_from_memo(masks: MaskRenderer, work: Work) -> None:
    """A1/A2 (centroids over time) and the static rules on every sampled frame."""
    frames, mk = masks.render(
        pt.build(spin(TURNING, 4.0)), ANIMATED.output.required_ids, (0.0, 1.0, 2.0, 3.0)
    )
    plain = run(BASE, ANIMATED, frames, mk, None, ANIMATED_RENDER)
    memo = MeasurementMemo()
    first = run(BASE, ANIMATED, frames, mk, memo, ANIMATED_RENDER)
    work.reset()
    strict_plain = run(STRICT, ANIMATED, frames, mk, None, ANIMATED_RENDER)
    work.reset()
    again = reloaded(memo)
    second = run(BASE, ANIMATED, frames, mk, again, ANIMATED_RENDER)
    strict = run(STRICT, ANIMATED, frames, mk, again, ANIMATED_RENDER)
    assert (work.decodes, work.geometries) == (0, 0) and again.added == 0
    assert snapshot(plain) == snapshot(first) == snapshot(second)
    assert snapshot(strict) == snapshot(strict_plain)
    geo = geometry_verdicts(second, BASE)
    assert geo["A1"].status.value == "pass" and geo["A1"].details["angle_source"] == "pedals"
    assert geo["A2"].status.value == "pass" and len(geo["A2"].details["samples"]) == 4


@pytest.mark.browser
def test_crank_axis_orientation_is_memoised(masks: MaskRenderer, work: Work) -> None:
    """Without pedals A1 reads the crank's orientation from its moments."""
    _, mk = masks.render(pt.build(spin(("crank",), 4.0)), ("crank",), (0.0, 0.5, 1.0, 1.5))
    judge = GeometryJudge(BASE)
    plain = judge.judge(JudgeInput(ANIMATED, ANIMATED.criterion("A1"), (), tuple(mk)))
    memo = MeasurementMemo()
    first = GeometryJudge(BASE).judge(
        JudgeInput(ANIMATED, ANIMATED.criterion("A1"), (), tuple(mk), measurements=memo)
    )
    work.reset()
    again = reloaded(memo)
    second = GeometryJudge(STRICT).judge(
        JudgeInput(ANIMATED, ANIMATED.criterion("A1"), (), tuple(mk), measurements=again)
    )
    assert work.decodes == 0 and again.misses == 0
    assert isinstance(plain, Verdict) and isinstance(first, Verdict)
    assert isinstance(second, Verdict)
    assert plain.details["angle_source"] == "crank axis"
    assert plain.details == first.details == second.details
    assert plain.evidence == first.evidence == second.evidence
    assert any(k.endswith(".orientation_deg") for k in memo.to_doc()["values"])


def test_synthetic_masks_with_and_without_memo(work: Work) -> None:
    """No browser: OpenCV-drawn masks, every static criterion, memo round trip."""
    mk = scene(5)
    plain = run(BASE, STRUCTURED, (), mk, None)
    memo = MeasurementMemo()
    first = run(BASE, STRUCTURED, (), mk, memo)
    work.reset()
    again = reloaded(memo)
    second = run(STRICT, STRUCTURED, (), mk, again)
    assert (work.decodes, work.geometries) == (0, 0)
    assert snapshot(plain) == snapshot(first)
    assert snapshot(second) == snapshot(run(STRICT, STRUCTURED, (), mk, None))
    gaps = [k for k in memo.to_doc()["values"] if k.startswith("gap|")]
    assert gaps and all(k.split("|")[1] <= k.split("|")[2] for k in gaps)


def test_bad_mask_is_still_a_bad_mask_failure() -> None:
    mk = tuple(
        m if m.part != "foot-left" else dataclasses.replace(m, png=b"not a png") for m in scene(0)
    )
    inp = JudgeInput(STRUCTURED, STRUCTURED.criterion("R2"), (), mk)
    plain = GeometryJudge(BASE).judge(inp)
    memo = GeometryJudge(BASE).judge(dataclasses.replace(inp, measurements=MeasurementMemo()))
    assert isinstance(plain, JudgeFailure) and isinstance(memo, JudgeFailure)
    assert (plain.cause, plain.detail) == (memo.cause, memo.detail)
    assert plain.cause == "bad_mask" and "mask-0-foot-left-" in plain.detail


def test_memo_distinguishes_missing_from_stored_none() -> None:
    memo = MeasurementMemo()
    assert memo.get("a") is MISSING and not MISSING
    assert memo.put("a", None) and memo.get("a") is None
    assert memo.put("b", (1, 2.5)) and memo.get("b") == [1, 2.5]
    assert not memo.put("c", float("nan")) and "c" not in memo
    with pytest.raises(TypeError):
        memo.put("d", object())
    assert (memo.hits, memo.misses, memo.added) == (2, 1, 2)
    memo.put("a", None)
    assert memo.added == 2  # the same value again is nothing new to store
    x = 0.1 + 0.2
    memo.put("x", x)
    back = MeasurementMemo.from_doc(json.loads(json.dumps(memo.to_doc())))
    assert back.get("x") == x and back.get("a") is None and back.added == 0


def test_judge_input_equality_ignores_the_memo() -> None:
    mk = scene(0)
    a = JudgeInput(STRUCTURED, STRUCTURED.criterion("R2"), (), mk)
    b = JudgeInput(STRUCTURED, STRUCTURED.criterion("R2"), (), mk, measurements=MeasurementMemo())
    assert a == b and a.measurements is None
