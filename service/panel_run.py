"""Running a judge panel on one stored evaluation input: the step the pipeline's evaluator and
re-scoring share (frames and masks in, verdicts, failures, criterion outcomes and outcome out).

The run's stored measurement memo (if any) seeds the judges' memo; when judging measured
something new, the grown memo comes back in ``EvalOutput.measurements`` to be stored."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import judges
from regua.settings import Settings
from service.components import EvalInput, EvalOutput


def run_panel(
    inp: EvalInput,
    panel: judges.JudgePanel,
    eligibility: Any,
    settings: Settings | None,
    human: Sequence[judges.Verdict] = (),
) -> EvalOutput:
    """``judges.evaluate`` on ``inp`` with ``panel``; an incomplete render becomes the
    evaluation's incomplete cause, and raw judge replies travel as bytes for storage."""
    frames = [judges.FrameImage(f.time_s, f.png, f.artifact_ref) for f in inp.frames]
    masks = [
        judges.MaskImage(m.time_s, m.part, judges.mask_kind(m.kind), m.png, m.artifact_ref)
        for m in inp.masks
    ]
    memo = judges.MeasurementMemo.from_doc(inp.measurements)
    cause = None
    if inp.render_status == "incomplete":
        cause = f"render_incomplete: {inp.render_cause or 'unknown'}"
    result = judges.evaluate(
        inp.task,
        frames,
        masks,
        inp.checks or {},
        inp.render,
        panel,
        eligibility,
        human_verdicts=tuple(human),
        incomplete_cause=cause,
        settings=settings,
        measurements=memo,
    )
    verdicts: list[dict[str, Any]] = []
    for v in result.verdicts:
        d = v.to_dict()
        raw = d.pop("raw_reply", None)
        d["evidence"] = [d["evidence"]]
        d["raw"] = raw.encode("utf-8") if raw else None
        verdicts.append(d)
    return EvalOutput(
        outcome=result.outcome.to_dict(),
        criteria=[c.to_dict() for c in result.criteria],
        verdicts=verdicts,
        failures=[f.to_dict() for f in result.failures],
        panel=dict(result.panel),
        measurements=memo.to_doc() if memo.added else None,
    )
