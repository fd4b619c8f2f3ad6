"""What a model is shown of its own drawing before a revision round: frames, maybe findings.

The feedback is built from the run's stored evidence only (:func:`load_eval_inputs`): the
rendered frames with their timestamps and, when asked, the static checks' findings. Never a
judge's verdict, the outcome, a criterion's status or a review: a model that revises answers
to what it can see, exactly as a person at a drawing board would, and the judges decide later.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import judges
from judges.vision.prompt import pick_frames
from regua.llm.call import Image, Message, Part, Text

REVISE_VERSION = "revise@1"
"""The revision procedure (feedback wording, frames picked): recorded on every conversation."""
MAX_FRAMES = 4
"""Frames shown per round at most (evenly spread, first and last kept)."""
MAX_FINDINGS = 20
"""Findings listed per round at most."""

INTRO = (
    "This is how your SVG rendered in a sandboxed browser ({count} frame(s) follow, each "
    "preceded by its timestamp)."
)
NOT_RENDERED = "Your reply could not be rendered, so there is no picture to show: {why}."
ASK = (
    "Look at the picture and revise your drawing so that it answers the task better. Reply "
    "with one complete, standalone SVG document."
)
FINDINGS_HEAD = "The static checks of your SVG reported:"


@dataclass(frozen=True)
class Feedback:
    """One round's feedback: the text and the frames shown (never a verdict)."""

    text: str
    frames: tuple[judges.FrameImage, ...]
    findings_shown: bool

    def message(self) -> Message:
        """The user turn: the text, then each frame after its caption."""
        parts: list[Part] = [Text(self.text)]
        for frame in self.frames:
            parts += [Text(f"Frame at t={frame.time_s:.3f} s:"), Image(frame.png, "image/png")]
        return Message("user", tuple(parts))


def _findings(checks: judges.CheckSummary | None) -> list[str]:
    """One line per check that did not pass, with its first message (or none)."""
    if checks is None:
        return []
    lines: list[str] = []
    if not checks.svg_found:
        lines.append("- extraction: no SVG document was found in the reply")
    for finding in checks.results:
        if finding.status == "pass":
            continue
        said = next((e.message for e in finding.evidence if e.message), "")
        lines.append(f"- {finding.check_id}: {finding.status}" + (f": {said}" if said else ""))
    return lines[:MAX_FINDINGS]


def _why_not_rendered(inp: judges.EvalInput) -> str:
    render = inp.render
    if inp.checks is not None and not inp.checks.svg_found:
        return "no SVG document was found in the reply"
    return render.cause or render.detail or f"the render ended {render.status}"


def build_feedback(
    inp: judges.EvalInput, *, findings: bool, max_frames: int = MAX_FRAMES
) -> Feedback:
    """The feedback on one stored run (``inp`` as judges would read it, minus their verdicts)."""
    frames = pick_frames(inp.frames, max_frames) if inp.render.status == "ok" else []
    shown = INTRO.format(count=len(frames)) if frames else ""
    paragraphs = [shown or NOT_RENDERED.format(why=_why_not_rendered(inp))]
    listed = _findings(inp.checks) if findings else []
    if findings:
        paragraphs.append("\n".join([FINDINGS_HEAD, *(listed or ["- every check passed"])]))
    paragraphs.append(ASK)
    return Feedback("\n\n".join(paragraphs), tuple(frames), findings)


def conversation_document(
    messages: Sequence[Message], reply: str | None, frames: dict[bytes, str]
) -> bytes:
    """The stored conversation: every turn sent and the reply; images by their artifact sha256.

    ``frames`` maps image bytes to the sha256 of the frame artifact they were read from (the
    bytes themselves are already stored with the earlier run).
    """
    turns: list[dict[str, Any]] = []
    for m in messages:
        parts: list[dict[str, Any]] = []
        for p in m.parts:
            if isinstance(p, Text):
                parts.append({"text": p.text})
            else:
                parts.append({"image_sha256": frames.get(p.data), "media_type": p.media_type})
        turns.append({"role": m.role, "parts": parts})
    doc = {"procedure": REVISE_VERSION, "turns": turns, "reply": reply}
    return json.dumps(doc, indent=1, ensure_ascii=False).encode("utf-8")
