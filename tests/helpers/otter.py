"""A task family written from scratch for the tests of issue 22: an otter in a kayak.

Not the pelican and not the birds sample: its own family (``animals-in-vehicles``), its own
render profile (400x300) and three necessary visual criteria besides F1 (O1 the otter, K1 the
kayak with its paddle, R1 the otter sitting inside it), every one stated in the prompt. The
drawings are plain shapes (cheap to render); each kind comes in four colourings so that every
file renders to different frames.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path

import yaml

REF = "otter-kayak-static@1"
FAMILY = "animals-in-vehicles"
PANEL = "animals-in-vehicles-vision@1"
VISUAL = ("O1", "K1", "R1")

PROMPT = """Generate an SVG of an otter riding in a kayak.
The drawing must show:
- a recognisable otter, shown whole;
- a kayak seen from the side, with a paddle;
- the otter sitting inside the kayak (not beside it, not floating above it).
Reply with one self-contained SVG document with viewBox="0 0 400 300". Do not use scripts,
foreignObject, embedded bitmaps or animation.
"""


def task_doc(prompt: str = PROMPT) -> dict[str, object]:
    """The task spec as a document (what ``regua tasks add`` reads)."""
    return {
        "id": "otter-kayak-static",
        "version": 1,
        "family": FAMILY,
        "pool": "core",
        "mode": "static",
        "title": "An otter riding in a kayak (static)",
        "prompt": prompt,
        "output": {
            "standalone_svg": True,
            "required_viewbox": "0 0 400 300",
            "max_bytes": 100000,
            "allowed": {
                "scripts": False,
                "external_resources": False,
                "foreign_object": False,
                "raster_images": False,
                "animation": False,
            },
        },
        "render": {"id": "svg-400x300-dpr1@1", "viewport_width": 400, "viewport_height": 300},
        "criteria": [
            {
                "id": "F1",
                "kind": "necessary",
                "question": 'Is the reply one self-contained SVG document with viewBox "0 0 400 '
                '300", within the resource limits, with no script, foreignObject, embedded bitmap '
                "or animation?",
            },
            {
                "id": "O1",
                "kind": "necessary",
                "question": "Is there a recognisable otter, shown whole?",
            },
            {
                "id": "K1",
                "kind": "necessary",
                "question": "Is there a kayak seen from the side, with a paddle?",
            },
            {
                "id": "R1",
                "kind": "necessary",
                "question": "Is the otter sitting inside the kayak (not beside it, not above it)?",
            },
            {
                "id": "Q1",
                "kind": "optional",
                "question": "How good are colour and line? (descriptive only)",
            },
        ],
    }


def write_task(path: Path, prompt: str = PROMPT) -> Path:
    """Write the task file (YAML) and return its path."""
    path.write_text(yaml.safe_dump(task_doc(prompt), sort_keys=False), encoding="utf-8")
    return path


PANEL_YAML = f"""panels:
  - id: {PANEL}
    family: {FAMILY}
    description: The static rules on F1, the vision judge of the settings on the rest.
    assignments:
      "*": [static@1, vision-llm-openai@1]
      F1: [static@1]
"""

COLOURS = (
    ("#8b5a2b", "#d35400"),
    ("#6e4b2a", "#1f618d"),
    ("#5d4037", "#27ae60"),
    ("#7b4f2c", "#c0392b"),
)
WATER = ("#d6eaf8", "#d1f2eb", "#fdebd0", "#ebdef0")


def _otter(fur: str, x: int = 200, y: int = 150) -> str:
    return (
        f'<g id="otter"><ellipse cx="{x}" cy="{y}" rx="28" ry="40" fill="{fur}"/>'
        f'<circle cx="{x}" cy="{y - 50}" r="20" fill="{fur}"/>'
        f'<circle cx="{x + 8}" cy="{y - 55}" r="3" fill="#000"/></g>'
    )


def _kayak(hull: str) -> str:
    return (
        f'<g id="kayak"><path d="M60 190 Q200 250 340 190 Z" fill="{hull}"/>'
        '<line x1="120" y1="120" x2="290" y2="230" stroke="#333" stroke-width="6"/></g>'
    )


def svg(body: str, water: str) -> str:
    """A whole drawing around ``body``."""
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 300" width="400" height="300">'
        f'<rect width="400" height="300" fill="{water}"/>{body}</svg>'
    )


def drawings() -> dict[str, tuple[str, dict[str, str]]]:
    """file → (SVG text, criterion → the true status): four of each kind."""
    out: dict[str, tuple[str, dict[str, str]]] = {}
    for i, ((fur, hull), water) in enumerate(zip(COLOURS, WATER, strict=True)):
        out[f"good-{i}.svg"] = (
            svg(_kayak(hull) + _otter(fur), water),
            {"O1": "pass", "K1": "pass", "R1": "pass"},
        )
        out[f"no-otter-{i}.svg"] = (
            svg(_kayak(hull), water),
            {"O1": "fail", "K1": "pass", "R1": "fail"},
        )
        out[f"no-kayak-{i}.svg"] = (
            svg(_otter(fur), water),
            {"O1": "pass", "K1": "fail", "R1": "fail"},
        )
    return out


def write_label_folder(path: Path, files: Mapping[str, tuple[str, Mapping[str, str]]]) -> Path:
    """A folder of drawings with a plain ``labels.csv`` (one annotator)."""
    path.mkdir(parents=True, exist_ok=True)
    with open(path / "labels.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["file", "criterion", "status", "annotator"])
        for name, (text, labels) in files.items():
            (path / name).write_text(text, encoding="utf-8")
            writer.writerows([name, c, s, "ana"] for c, s in labels.items())
    return path
