"""Components for the browser acceptance test: real PNG frames, a jury that leaves R2 uncertain.

Used as ``regua serve --components tests.review.components:acceptance_components`` (needs the
repository root on ``PYTHONPATH``). The real checker runs; no Chromium rendering of the SVG is
involved: frames are drawn with Pillow, so the test exercises the queue and the pages, not the
sandbox (``test_real_pipeline.py`` covers the real render).
"""

from __future__ import annotations

import hashlib
import io
from typing import Any

from PIL import Image, ImageDraw

from regua.settings import Settings
from service.adapters import ChecksAdapter
from service.components import Components, EvalInput, EvalOutput, RenderResult
from tasks import CriterionKind, TaskSpec

GEOMETRY = "geometry@1"
STATIC = "static-checks@1"


def drawing(seed: str, t: float, w: int = 800, h: int = 600) -> bytes:
    """A pelican-on-a-bicycle cartoon whose colour depends on the SVG (and crank on ``t``)."""
    tone = hashlib.sha256(seed.encode()).digest()
    body = (120 + tone[0] % 100, 120 + tone[1] % 100, 200)
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img)
    for cx in (250, 550):
        d.ellipse((cx - 110, 330, cx + 110, 550), outline="#222", width=10)
    d.line((250, 440, 400, 440, 550, 440, 430, 300, 250, 440), fill="#c0392b", width=10)
    d.line((430, 300, 520, 250), fill="#555", width=8)
    d.rectangle((380, 285, 470, 300), fill="#333")
    d.ellipse((330, 150, 500, 290), fill=body, outline="#333", width=4)
    d.ellipse((470, 90, 560, 170), fill=body, outline="#333", width=4)
    d.polygon([(550, 120), (700, 150), (550, 160)], fill="#f1c40f", outline="#333")
    angle = int(t * 90) % 360
    d.pieslice((360, 400, 440, 480), angle, angle + 30, fill="#7f8c8d")
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def mask(part: str, w: int = 800, h: int = 600) -> bytes:
    """A greyscale mask with a blob where the part would be."""
    img = Image.new("L", (w, h), 0)
    d = ImageDraw.Draw(img)
    box = {"pelican": (330, 90, 700, 290), "body": (330, 150, 500, 290)}.get(part, (0, 0, 10, 10))
    d.rectangle(box, fill=255)
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


class PngRenderer:
    """Frames at the task's timestamps plus two part masks per frame."""

    version = "test-png-render@1"

    def render(self, svg_text: str, task: TaskSpec) -> RenderResult:
        """Draw frames and masks."""
        frames: list[dict[str, Any]] = []
        masks: list[dict[str, Any]] = []
        files: dict[str, bytes] = {}
        for t in task.timestamps():
            name = f"frame-{int(t * 1000)}.png"
            files[name] = drawing(svg_text, t)
            frames.append(
                {"time_s": t, "name": name, "sha256": hashlib.sha256(files[name]).hexdigest()}
            )
            for part in ("pelican", "body"):
                mname = f"mask-{int(t * 1000)}-{part}-visible.png"
                files[mname] = mask(part)
                masks.append({"time_s": t, "part": part, "kind": "visible", "name": mname})
        result = {
            "frames": frames,
            "masks": masks,
            "render_profile_id": task.render.id,
            "browser_version": "test/1",
            "blocked_requests": [],
        }
        return RenderResult("ok", result, files, sandbox={"backend": "test"}, elapsed_ms=1.0)

    def close(self) -> None:
        """Nothing to release."""


class AcceptanceJury:
    """F1 from the checks; R2 uncertain; every other necessary criterion passed by geometry."""

    panel_id = "acceptance-panel@1"

    def version_for(self, task: TaskSpec) -> str:
        """One panel for every task."""
        del task
        return self.panel_id

    def evaluate(self, inp: EvalInput) -> EvalOutput:
        """Decide every criterion."""
        criteria: list[dict[str, Any]] = []
        verdicts: list[dict[str, Any]] = []
        checks_ok = (inp.checks or {}).get("status") == "pass"
        for c in inp.task.criteria:
            row: dict[str, Any] = {"criterion": c.id, "kind": c.kind.value, "votes": []}
            if not c.applicable:
                row.update(status="not_applicable", review_required=False)
            elif c.kind is not CriterionKind.NECESSARY:
                row.update(status="uncertain", review_required=False)
            else:
                judge = STATIC if c.id == "F1" else GEOMETRY
                status = "uncertain" if c.id == "R2" else "pass"
                if c.id == "F1":
                    status = "pass" if checks_ok else "fail"
                text = {
                    "R2": "left foot contact is 3 px short; cannot tell at this scale",
                    "F1": "all static checks pass",
                }.get(c.id, f"{c.id}: parts present and joined")
                verdicts.append(
                    {
                        "criterion": c.id,
                        "status": status,
                        "judge_profile_id": judge,
                        "evidence": [{"artifact_ref": None, "time_s": 0.0, "description": text}],
                        "latency_ms": 1.0,
                    }
                )
                row["votes"] = [{"judge_profile_id": judge, "status": status, "eligible": True}]
                row.update(
                    status=status,
                    review_required=status == "uncertain",
                    review_reason="judge_uncertain" if status == "uncertain" else None,
                )
            criteria.append(row)
        necessary = [r for r in criteria if r["kind"] == "necessary"]
        if any(r["status"] == "fail" for r in necessary):
            outcome = {"status": "fail", "reasons": ["F1: fail"], "cause": None}
        elif any(r["status"] == "uncertain" for r in necessary):
            outcome = {"status": "pending", "reasons": ["R2: judge_uncertain"], "cause": None}
        else:
            outcome = {"status": "pass", "reasons": [], "cause": None}
        panel = {"id": self.panel_id, "profiles": [STATIC, GEOMETRY]}
        return EvalOutput(outcome, criteria, verdicts, [], panel)


def acceptance_components(_settings: Settings | None = None) -> Components:
    """The component set ``regua serve --components`` loads."""
    return Components(ChecksAdapter(), PngRenderer(), AcceptanceJury())
