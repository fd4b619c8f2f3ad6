"""A small SVG path-data reader that turns ``d`` into sampled outline points.

Supports every path command (M L H V C S Q T A Z, absolute and relative), compact arc flags
(``a10 10 0 011 1``) and implicit command repetition. Curves and arcs are sampled, so the
bounding box of the points is close to the true geometric box even for arc-drawn wheels.
Malformed data stops the reading at the first bad token (as browsers do).
"""

from __future__ import annotations

import itertools
import math
import re

Point = tuple[float, float]

_TOKEN = re.compile(r"\s*,?\s*([MmLlHhVvCcSsQqTtAaZz]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
_FLAG = re.compile(r"\s*,?\s*([01])")
_ARITY = {"M": 2, "L": 2, "H": 1, "V": 1, "C": 6, "S": 4, "Q": 4, "T": 2, "A": 7, "Z": 0}
_STEPS = 8


class _Reader:
    def __init__(self, d: str) -> None:
        self.d = d
        self.pos = 0

    def command(self) -> str | None:
        match = _TOKEN.match(self.d, self.pos)
        if match is None or not match.group(1).isalpha():
            return None
        self.pos = match.end()
        return match.group(1)

    def peek_number(self) -> bool:
        match = _TOKEN.match(self.d, self.pos)
        return match is not None and not match.group(1).isalpha()

    def number(self) -> float | None:
        match = _TOKEN.match(self.d, self.pos)
        if match is None or match.group(1).isalpha():
            return None
        self.pos = match.end()
        return float(match.group(1))

    def flag(self) -> float | None:
        match = _FLAG.match(self.d, self.pos)
        if match is None:
            return None
        self.pos = match.end()
        return float(match.group(1))

    def args(self, cmd: str) -> list[float] | None:
        out: list[float] = []
        for i in range(_ARITY[cmd.upper()]):
            value = self.flag() if cmd.upper() == "A" and i in (3, 4) else self.number()
            if value is None:
                return None
            out.append(value)
        return out


def _bezier(points: list[Point], t: float) -> Point:
    pts = points
    while len(pts) > 1:
        pts = [
            (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t) for a, b in itertools.pairwise(pts)
        ]
    return pts[0]


def _sample_curve(points: list[Point]) -> list[Point]:
    return [_bezier(points, k / _STEPS) for k in range(1, _STEPS + 1)]


def arc_points(
    p0: Point, rx: float, ry: float, phi_deg: float, large: bool, sweep: bool, p1: Point
) -> list[Point]:
    """Sampled points of an SVG elliptical arc from ``p0`` to ``p1`` (endpoint included)."""
    rx, ry = abs(rx), abs(ry)
    if rx == 0 or ry == 0 or p0 == p1:
        return [p1]
    phi = math.radians(phi_deg)
    cos_p, sin_p = math.cos(phi), math.sin(phi)
    dx, dy = (p0[0] - p1[0]) / 2, (p0[1] - p1[1]) / 2
    x1p, y1p = cos_p * dx + sin_p * dy, -sin_p * dx + cos_p * dy
    lam = (x1p / rx) ** 2 + (y1p / ry) ** 2
    if lam > 1:
        rx, ry = rx * math.sqrt(lam), ry * math.sqrt(lam)
    num = rx * rx * ry * ry - rx * rx * y1p * y1p - ry * ry * x1p * x1p
    den = rx * rx * y1p * y1p + ry * ry * x1p * x1p
    coef = math.sqrt(max(0.0, num / den)) if den else 0.0
    if large == sweep:
        coef = -coef
    cxp, cyp = coef * rx * y1p / ry, -coef * ry * x1p / rx
    cx = cos_p * cxp - sin_p * cyp + (p0[0] + p1[0]) / 2
    cy = sin_p * cxp + cos_p * cyp + (p0[1] + p1[1]) / 2
    t1 = math.atan2((y1p - cyp) / ry, (x1p - cxp) / rx)
    t2 = math.atan2((-y1p - cyp) / ry, (-x1p - cxp) / rx)
    delta = t2 - t1
    if sweep and delta < 0:
        delta += 2 * math.pi
    elif not sweep and delta > 0:
        delta -= 2 * math.pi
    steps = max(4, int(abs(delta) / (math.pi / 16)))
    out: list[Point] = []
    for k in range(1, steps + 1):
        t = t1 + delta * k / steps
        ex, ey = rx * math.cos(t), ry * math.sin(t)
        out.append((cx + cos_p * ex - sin_p * ey, cy + sin_p * ex + cos_p * ey))
    return out


def _reflect(cur: Point, ctrl: Point) -> Point:
    """The reflection of control point ``ctrl`` about ``cur`` (the implicit first control)."""
    return (2 * cur[0] - ctrl[0], 2 * cur[1] - ctrl[1])


def _draw(
    up: str,
    rel: bool,
    args: list[float],
    cur: Point,
    last: tuple[Point | None, str],
    pts: list[Point],
) -> tuple[Point, Point | None]:
    """Append the points of one drawing segment (not M or Z) that starts at ``cur``.

    ``up`` is the upper-cased command, ``last`` the previous segment's control point and
    command. Returns the segment's end point and its last control point (None for lines).
    """
    last_ctrl, last_cmd = last
    ox, oy = cur if rel else (0.0, 0.0)
    ctrl: Point | None = None
    if up == "L" or (up == "T" and (last_cmd not in ("Q", "T") or last_ctrl is None)):
        cur = (ox + args[0], oy + args[1])
        pts.append(cur)
    elif up == "H":
        cur = (ox + args[0] if rel else args[0], cur[1])
        pts.append(cur)
    elif up == "V":
        cur = (cur[0], oy + args[0] if rel else args[0])
        pts.append(cur)
    elif up == "T":
        ctrl = _reflect(cur, last_ctrl if last_ctrl is not None else cur)
        end = (ox + args[0], oy + args[1])
        pts += _sample_curve([cur, ctrl, end])
        cur = end
    elif up == "Q":
        ctrl = (ox + args[0], oy + args[1])
        end = (ox + args[2], oy + args[3])
        pts += _sample_curve([cur, ctrl, end])
        cur = end
    elif up in ("C", "S"):
        if up == "C":
            c1 = (ox + args[0], oy + args[1])
            rest = args[2:]
        else:
            smooth = last_cmd in ("C", "S")
            c1 = _reflect(cur, last_ctrl) if smooth and last_ctrl is not None else cur
            rest = args
        ctrl = (ox + rest[0], oy + rest[1])
        end = (ox + rest[2], oy + rest[3])
        pts += _sample_curve([cur, c1, ctrl, end])
        cur = end
    elif up == "A":
        end = (ox + args[5], oy + args[6])
        pts += arc_points(cur, args[0], args[1], args[2], bool(args[3]), bool(args[4]), end)
        cur = end
    return cur, ctrl


def path_points(d: str) -> list[Point]:
    """Outline points of a path (sampled curves and arcs) in the path's own coordinates."""
    reader = _Reader(d)
    pts: list[Point] = []
    cur: Point = (0.0, 0.0)
    start: Point = (0.0, 0.0)
    last_ctrl: Point | None = None
    last_cmd = ""
    cmd = reader.command()
    while cmd is not None:
        rel = cmd.islower()
        up = cmd.upper()
        if up == "Z":
            cur, last_ctrl, last_cmd = start, None, "Z"
            pts.append(cur)
            cmd = reader.command() if not reader.peek_number() else None
            continue
        args = reader.args(cmd)
        if args is None:
            break
        ctrl: Point | None = None
        if up == "M":
            ox, oy = cur if rel else (0.0, 0.0)
            cur = start = (ox + args[0], oy + args[1])
            pts.append(cur)
        else:
            cur, ctrl = _draw(up, rel, args, cur, (last_ctrl, last_cmd), pts)
        last_ctrl, last_cmd = ctrl, up
        cmd = {"M": "L", "m": "l"}.get(cmd, cmd) if reader.peek_number() else reader.command()
    return pts
