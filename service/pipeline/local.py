"""The pipeline without storage: check and render one reply in memory (``regua judge``).

:func:`evidence_of` runs extraction, the static checks and (optionally) the sandboxed render on
one raw reply and returns what a panel would see of it, plus notes on what happened — nothing
is stored and no model identity is involved.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import checks
import judges
from regua.errors import ReguaError
from service.pipeline.render_client import RenderClient
from tasks import TaskSpec


@dataclass
class LocalEvidence:
    """A reply's evidence, held in memory."""

    inp: judges.EvalInput
    notes: list[str] = field(default_factory=list)
    """What happened, in words (checks status, render outcome)."""


def evidence_of(raw: bytes | str, task: TaskSpec, renderer: RenderClient | None) -> LocalEvidence:
    """Check (and with a ``renderer``, render) one raw reply for ``task``."""
    report = checks.check_reply(raw, task)
    summary = judges.CheckSummary.from_doc(report.to_dict())
    notes = [f"static checks: {report.status}"]
    svg = report.extraction.svg_text if report.extraction else None
    if svg is None:
        notes.append("no SVG extracted: nothing to render")
        return LocalEvidence(judges.EvalInput(task, summary), notes)
    if renderer is None:
        notes.append("render skipped (--no-render)")
        return LocalEvidence(judges.EvalInput(task, summary), notes)
    try:
        out = renderer.render(svg, task)
    except ReguaError as exc:
        notes.append(f"the sandboxed renderer could not start: {exc}")
        return LocalEvidence(judges.EvalInput(task, summary), notes)
    if out.status == "ok":
        notes.append(f"rendered {len(out.log.frames)} frame(s), {len(out.log.masks)} mask(s)")
    else:
        notes.append(f"render {out.status}: {out.cause} {out.detail}")
    inp = judges.EvalInput(task, summary, out.log.summary(), out.frames(), out.masks())
    return LocalEvidence(inp, notes)
