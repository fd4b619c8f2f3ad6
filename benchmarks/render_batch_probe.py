"""Probe: several static drawings per capture (one page of K iframes) against one per capture.

Usage::

    .venv/bin/python benchmarks/render_batch_probe.py [--per-capture 4] [--limit N]

Outside the sandbox (one Chromium with the worker's switches, its own sandbox off), on the
swappable files of ``../shared/corpora/llm_svgs``:

- ``solo``: the worker's path (:class:`render.browser.BrowserSession`: swap into the shell, one
  DevTools capture of the 800x600 viewport per drawing);
- ``batch``: a container page of K iframes of 800x600, each holding the same SVG shell served
  with the job's CSP; each drawing is swapped into its iframe's shell (one call each), the
  800x(600K) viewport is captured once, and each drawing's frame is cropped and encoded as PNG
  in Python (Pillow, compression level 1) — Chromium's encoder cannot be asked for a crop
  without a capture of its own, and a ``clip`` capture costs a whole capture.

It prints the CPU time per drawing of each process type on both paths, and how many frames are
identical to the solo path's: as PNG bytes and as decoded pixels (RGBA).
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.proc_cpu import TreeSnapshot, cpu_by_type  # noqa: E402
from benchmarks.render import CORPUS, TASK, load_files  # noqa: E402
from render.browser import _CALL, _INSTRUMENT_FACTORY, SHELL, BrowserSession  # noqa: E402
from render.launch import BrowserConfig  # noqa: E402
from render.netlog import build_csp, swappable  # noqa: E402
from tasks import bundled_registry  # noqa: E402

ORIGIN = "https://batch.regua-render.invalid"
W, H = 800, 600
CAPTURE = {"format": "png", "optimizeForSpeed": True, "captureBeyondViewport": False}


def measure(run: Callable[[], dict[str, bytes]], count: int) -> tuple[dict[str, bytes], str]:
    """Run ``run``; its frames and the CPU ms per drawing of each process type, as text."""
    tree, own = TreeSnapshot(), time.process_time()
    frames = run()
    spent = {"python": time.process_time() - own, **cpu_by_type(tree, TreeSnapshot())}
    total = sum(spent.values())
    parts = [f"{k} {1000 * v / count:.1f}" for k, v in spent.items() if v > 0]
    return frames, f"total {1000 * total / count:.1f} ms/drawing: " + ", ".join(parts)


def solo(session: BrowserSession, files: list[tuple[str, str]], csp: str) -> dict[str, bytes]:
    """One swap and one capture per drawing, as the worker renders a static job."""
    profile = bundled_registry().get(TASK).render
    out = {}
    for name, text in files:
        session.prepare(profile, text, "image/svg+xml", csp)
        session.open_document(profile, text, "image/svg+xml", csp, 0.0, 20.0)
        out[name] = session.screenshot()
        session.finish_job()
    return out


class Batch:
    """A page of ``k`` iframes, each an SVG shell served with the job's CSP."""

    def __init__(self, session: BrowserSession, k: int, csp: str) -> None:
        """Open the container page and one instrumentation handle per iframe."""
        self.k = k
        context = session.browser.new_context(
            viewport={"width": W, "height": H * k}, java_script_enabled=False, color_scheme="light"
        )
        frames = "".join(f'<iframe src="{ORIGIN}/shell{i}.svg"></iframe>' for i in range(k))
        style = "html,body{margin:0;background:#fff}iframe{display:block;border:0;"
        container = f"<!DOCTYPE html><style>{style}width:{W}px;height:{H}px}}</style>{frames}"
        headers = {"content-type": "text/html"}
        headers["content-security-policy"] = (
            f"default-src 'none'; style-src 'unsafe-inline'; frame-src {ORIGIN}"
        )
        shell_headers = {"content-type": "image/svg+xml", "content-security-policy": csp}

        def route(route: Any, request: Any) -> None:
            if request.url == f"{ORIGIN}/":
                route.fulfill(status=200, headers=headers, body=container)
            elif request.url.startswith(f"{ORIGIN}/shell"):
                route.fulfill(status=200, headers=shell_headers, body=SHELL)
            else:
                route.abort()

        self.page = context.new_page()
        self.page.route("**/*", route)
        self.cdp = context.new_cdp_session(self.page)
        self.page.goto(f"{ORIGIN}/", wait_until="load")
        self.handles = [f.evaluate_handle(_INSTRUMENT_FACTORY) for f in self.page.frames[1:]]

    def render(self, group: list[tuple[str, str]]) -> dict[str, bytes]:
        """Swap each drawing into its iframe, capture once, crop and encode each frame."""
        texts = [text for _, text in group] + [SHELL.decode()] * (self.k - len(group))
        for handle, text in zip(self.handles, texts, strict=True):
            handle.evaluate(_CALL, json.dumps({"op": "swap", "text": text, "t": 0.0}))
        data = base64.b64decode(self.cdp.send("Page.captureScreenshot", CAPTURE)["data"])
        whole = Image.open(io.BytesIO(data))
        out = {}
        for i, (name, _) in enumerate(group):
            buffer = io.BytesIO()
            whole.crop((0, H * i, W, H * (i + 1))).save(buffer, "PNG", compress_level=1)
            out[name] = buffer.getvalue()
        return out


def pixels(png: bytes) -> bytes:
    """Decoded RGBA pixels of a PNG."""
    with Image.open(io.BytesIO(png)) as image:
        return image.convert("RGBA").tobytes()


def main() -> int:
    """Run both paths on the corpus and print their CPU per drawing and the identity counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-capture", type=int, default=4)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    files = [(n, t) for n, t in load_files(args.limit, args.corpus) if swappable(t)]
    csp = build_csp(bundled_registry().get(TASK).output.allowed)
    session = BrowserSession(BrowserConfig(chromium_no_sandbox=True))
    try:
        solo(session, files[:8], csp)  # warm-up
        reference, solo_cost = measure(lambda: solo(session, files, csp), len(files))
        batch = Batch(session, args.per_capture, csp)
        groups = [files[i : i + batch.k] for i in range(0, len(files), batch.k)]
        batch.render(groups[0])  # warm-up

        def batched() -> dict[str, bytes]:
            return {name: png for group in groups for name, png in batch.render(group).items()}

        frames, batch_cost = measure(batched, len(files))
    finally:
        session.close()
    same_bytes = sum(frames[n] == reference[n] for n, _ in files)
    same_pixels = sum(pixels(frames[n]) == pixels(reference[n]) for n, _ in files)
    print(f"{len(files)} drawings, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"  solo (one capture per drawing):  {solo_cost}")
    print(f"  batch ({batch.k} drawings per capture): {batch_cost}")
    print(f"  identical to solo: PNG bytes {same_bytes}/{len(files)}, pixels {same_pixels}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
