"""A drawing of labelled rectangles that carries every required part id of the structured task.

Each part is a plain rectangle with its name written beside it: the wheels are square outlines
centred on the axles (corners rounded by 4 px, so their hull fits an ellipse), the frame bar runs
through both axles, the body rests on the saddle, each foot stands on its own pedal and a wing
lies on the handlebar. The part masks measure every relation as met; nothing in it looks like a
pelican or a bicycle.
"""

from __future__ import annotations

PARTS = {
    # id: (x, y, width, height, fill or None for an outline)
    "wheel-rear": (160, 340, 180, 180, None),
    "wheel-front": (460, 340, 180, 180, None),
    "saddle": (330, 290, 60, 12, "#222222"),
    "handlebar": (510, 258, 60, 12, "#555555"),
    "crank": (355, 435, 70, 10, "#777777"),
    "pedal-left": (345, 445, 24, 10, "#444444"),
    "pedal-right": (411, 445, 24, 10, "#444444"),
    "body": (320, 200, 120, 90, "#dddddd"),
    "wing-left": (430, 246, 90, 14, "#bbbbbb"),
    "wing-right": (290, 226, 30, 14, "#bbbbbb"),
    "foot-left": (350, 290, 10, 155, "#f39c12"),
    "foot-right": (415, 290, 10, 155, "#f39c12"),
}
FRAME = ((250, 425, 300, 10), (355, 302, 10, 128), (515, 270, 10, 160))
BICYCLE = ("wheel-rear", "wheel-front", "saddle", "handlebar", "crank", "pedal-left", "pedal-right")
PELICAN = ("body", "wing-left", "wing-right", "foot-left", "foot-right")


def _rect(part: str) -> str:
    x, y, w, h, fill = PARTS[part]
    paint = f'fill="{fill}"' if fill else 'fill="none" stroke="#333333" stroke-width="8"'
    label = f'<text x="{x}" y="{y - 4}" font-size="11">{part}</text>'
    return f'<rect id="{part}" x="{x}" y="{y}" width="{w}" height="{h}" rx="4" {paint}/>{label}'


def labelled_rectangles() -> str:
    """The SVG text (static, viewBox 0 0 800 600, every required id of the structured task)."""
    frame = "".join(
        f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="#c0392b"/>' for x, y, w, h in FRAME
    )
    bike = "\n    ".join(_rect(p) for p in BICYCLE)
    bird = "\n    ".join(_rect(p) for p in PELICAN)
    root = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600" width="800" height="600">'
    return f"""{root}
  <rect width="800" height="600" fill="#ffffff"/>
  <g id="bicycle" font-family="DejaVu Sans">
    <g id="frame">{frame}</g><text x="250" y="420" font-size="11">frame</text>
    {bike}
    <text x="300" y="560" font-size="16">BICYCLE</text>
  </g>
  <g id="pelican" font-family="DejaVu Sans">
    {bird}
    <text x="330" y="190" font-size="16">PELICAN</text>
  </g>
</svg>
"""
