"""Fast stand-ins for checks, the sandboxed renderer and judges (no Chromium needed)."""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Any

from regua.settings import Settings
from service.components import CheckOutput, Components, RenderResult
from service.static_jury import StaticJury
from tasks import TaskSpec

SVG_RE = re.compile(r"<svg\b.*?</svg>", re.S)


class FakeChecker:
    """Finds the first <svg>…</svg>; fails on <script>."""

    version = "fake-checks@1"

    def check(self, raw: bytes, task: TaskSpec) -> CheckOutput:
        """Extract and check."""
        text = raw.decode("utf-8", "replace")
        m = SVG_RE.search(text)
        svg = m.group(0) if m else None
        script = svg is not None and "<script" in svg
        results: list[dict[str, Any]] = [
            {
                "id": "no-script",
                "version": "1",
                "status": "fail" if script else "pass",
                "evidence": [],
            }
        ]
        extraction = {
            "status": "found" if svg else "no_svg",
            "method": "regex",
            "candidates": 1 if svg else 0,
            "chosen_index": 0 if svg else None,
            "procedure_id": "extract",
            "procedure_version": "fake-1",
        }
        status = "pass" if svg and not script else "fail"
        report = {"status": status, "extraction": extraction, "results": results}
        return CheckOutput(status, report, svg, extraction, parsed=svg is not None)


class FakeRenderer:
    """Pretends to render: deterministic bytes per frame/mask; can be told to fail."""

    version = "fake-render@1"

    def __init__(self, fail: bool = False, delay_s: float = 0.0) -> None:
        self.fail = fail
        self.delay_s = delay_s
        self.calls = 0
        self._lock = threading.Lock()

    def render(self, svg_text: str, task: TaskSpec) -> RenderResult:
        """Return frames (and masks for required ids)."""
        with self._lock:
            self.calls += 1
        if self.delay_s:
            threading.Event().wait(self.delay_s)
        if self.fail:
            return RenderResult(
                "incomplete", None, {}, cause="crash", detail="worker killed", attempts=3
            )
        frames: list[dict[str, Any]] = []
        masks: list[dict[str, Any]] = []
        files: dict[str, bytes] = {}
        for t in task.timestamps():
            name = f"frame-{int(t * 1000)}.png"
            data = b"PNG" + hashlib.sha256(f"{svg_text}{t}".encode()).digest()
            files[name] = data
            frames.append({"time_s": t, "name": name, "sha256": hashlib.sha256(data).hexdigest()})
            for part in task.output.required_ids[:2]:
                mname = f"mask-{int(t * 1000)}-{part}-visible.png"
                files[mname] = b"MASK" + part.encode() + name.encode()
                masks.append(
                    {"time_s": t, "part": part, "kind": "visible", "name": mname, "pixels": 10}
                )
        result = {
            "frames": frames,
            "masks": masks,
            "render_profile_id": task.render.id,
            "browser_version": "fake/1",
            "blocked_requests": [],
        }
        return RenderResult("ok", result, files, sandbox={"backend": "fake"}, elapsed_ms=1.0)

    def close(self) -> None:
        """Nothing to release."""


def fake_components(
    _settings: Settings | None = None, renderer: FakeRenderer | None = None
) -> Components:
    """Components built from the fakes."""
    return Components(FakeChecker(), renderer or FakeRenderer(), StaticJury())


def slow_components(_settings: Settings | None = None) -> Components:
    """Fakes whose render takes a while (for crash tests without Chromium)."""
    return Components(FakeChecker(), FakeRenderer(delay_s=0.3), StaticJury())
