"""The frames of one job: every timestamp seeked and captured, with its part masks.

One ``frame`` call of ``instrument.js`` per timestamp (undo the previous mask passes, seek, key the
animated state), then one capture for the frame and, when masks are wanted, the two mask passes
(:class:`render.masks.MaskCapture`).

A timestamp whose animated state key equals an earlier one's (an animation that loops inside the
observation window shows every state twice) reuses that earlier frame and its masks instead of
capturing them again: a seeked, paused, script-free document renders the same pixels for the same
state. Only documents of the swap path are keyed (no fetch vector, so no image that plays on its
own clock); the key lists every time-dependent input (``stateKey`` in ``instrument.js``), and any
value it cannot read switches reuse off for that timestamp. A reused frame's entry names the time
it was captured at (``same_as``). After the first capture one ``plan`` call seeks and keys every
later timestamp, so a timestamp whose state was captured before costs no call at all; a new state
is seeked again before its capture, and is reused later only if that seek gives the planned key.

``reference=True`` runs the mask path as it was before these optimisations (:func:`capture_masks`
and :func:`encode_masks`, no reuse): tests and ``benchmarks/render.py`` compare the two.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass, field
from typing import Any

from PIL import Image
from playwright.sync_api import Page

from regua.hashing import sha256_hex
from render.browser import BrowserSession
from render.masks import MaskCapture, capture_masks, encode_masks
from tasks import TaskSpec


def frame_ms(time_s: float) -> int:
    """The millisecond stamp used in file names."""
    return round(time_s * 1000)


def _size(png: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(png)) as image:
        return image.size[1], image.size[0]


@dataclass
class _Captured:
    """What one distinct animated state produced: its frame and masks, by kind."""

    time_s: float
    png: bytes
    sha256: str
    masks: list[dict[str, Any]] = field(default_factory=list)
    mask_files: list[bytes] = field(default_factory=list)


@dataclass
class FrameLoop:
    """Captures every timestamp of an opened document into a result and its files."""

    session: BrowserSession
    page: Page
    task: TaskSpec
    want_masks: bool
    reference: bool = False
    reuse: bool = True
    stats: dict[str, int] = field(default_factory=lambda: {"captured": 0, "reused": 0})
    _masks: MaskCapture | None = None

    def run(
        self,
        info: dict[str, Any],
        times: tuple[float, ...],
        result: dict[str, Any],
        files: dict[str, bytes],
    ) -> set[str]:
        """Capture ``times``; returns the kinds of animation seen.

        ``info`` is what opening the document reported (seeked to the first timestamp).
        """
        kinds: set[str] = set()
        seen: dict[str, _Captured] = {}
        reuse = self.reuse and not self.reference and info.get("path") == "swap"
        planned: list[dict[str, Any]] | None = None
        for index, time_s in enumerate(times):
            seek = info if index == 0 else planned[index - 1] if planned else self._seek(time_s)
            kinds.update(seek["kinds"])
            key = seek.get("key") if reuse else None
            known = seen.get(key) if isinstance(key, str) else None
            if known is None:
                if planned and index > 0:  # seeked by the plan only: seek it now
                    now = self._seek(time_s)
                    key = key if now.get("key") == key else None  # not the planned state
                known = self._capture(time_s, result, files)
                if isinstance(key, str):
                    seen[key] = known
            else:
                self._reuse(known, time_s, result, files)
            if index == 0 and reuse and len(times) > 1:
                planned = self._plan(times[1:])
        return kinds

    def _plan(self, times: tuple[float, ...]) -> list[dict[str, Any]] | None:
        """Every timestamp of ``times`` seeked and keyed in one call (None: the answer is odd)."""
        plan = self._evaluate({"op": "plan", "times": list(times)})
        if not isinstance(plan, list) or len(plan) != len(times):
            return None
        return [p if isinstance(p, dict) else {"kinds": [], "key": None} for p in plan]

    def _evaluate(self, arg: dict[str, Any]) -> Any:
        if self.reference:
            return self.session.evaluate_source(self.page, arg)
        return self.session.evaluate(self.page, arg)

    def _seek(self, time_s: float) -> dict[str, Any]:
        seek: dict[str, Any] = self._evaluate(
            {"op": "seek" if self.reference else "frame", "t": time_s}
        )
        return seek

    def _capture(self, time_s: float, result: dict[str, Any], files: dict[str, bytes]) -> _Captured:
        png = self.session.screenshot()
        ms = frame_ms(time_s)
        name = f"frame-{ms}.png"
        captured = _Captured(time_s, png, sha256_hex(png))
        files[name] = png
        result["frames"].append({"time_s": time_s, "name": name, "sha256": captured.sha256})
        self.stats["captured"] += 1
        if self.want_masks:
            entries, mask_files = self._capture_masks(png, time_s, ms)
            result["masks"].extend(entries)
            files.update(mask_files)
            captured.masks = entries
            captured.mask_files = [mask_files[e["name"]] for e in entries]
        return captured

    def _capture_masks(
        self, png: bytes, time_s: float, ms: int
    ) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
        parts = self.task.output.required_ids
        if self.reference:
            masks = capture_masks(parts, self._evaluate, self.session.screenshot, _size(png))
            return encode_masks(masks, time_s, ms)
        evaluate = functools.partial(self.session.evaluate, self.page)
        if self._masks is None:
            self._masks = MaskCapture(parts, _size(png))
        boxes = self._masks.capture(evaluate, self.session.screenshot)
        return self._masks.encoder.entries(boxes, time_s, ms)

    def _reuse(
        self, known: _Captured, time_s: float, result: dict[str, Any], files: dict[str, bytes]
    ) -> None:
        ms = frame_ms(time_s)
        name = f"frame-{ms}.png"
        files[name] = known.png
        entry = {"time_s": time_s, "name": name, "sha256": known.sha256}
        result["frames"].append({**entry, "same_as": known.time_s})
        self.stats["reused"] += 1
        for mask, data in zip(known.masks, known.mask_files, strict=True):
            mask_name = f"mask-{ms}-{mask['part']}-{mask['kind']}.png"
            files[mask_name] = data
            result["masks"].append({**mask, "time_s": time_s, "name": mask_name})
