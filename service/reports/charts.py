"""Server-side SVG charts for the HTML report: no script, no ``style`` attributes (strict CSP).

All presentation is done with SVG presentation attributes (``fill``, ``stroke``, ``font-size``…),
which a ``style-src`` policy does not block. Every chart has a ``<title>`` and ``<desc>``, every
mark a ``<title>`` with its numbers, and every value is also printed as text (colour is never the
only carrier). Labels (model names) are untrusted and always escaped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

from service.reports.stats import format_pct

PASS_FILL = "#2166ac"
FAIL_FILL = "#d6604d"
PENDING_FILL = "#f6c141"
INCOMPLETE_FILL = "#9e9e9e"
INK = "#1a1a1a"
MUTED = "#5f5f5f"
FONT = 'font-family="DejaVu Sans, Verdana, sans-serif"'
LABEL_W = 170


def esc(value: object) -> str:
    """``value`` as text escaped for SVG markup."""
    return str(escape(str(value)))


def svg_document(
    width: int, height: int, title: str, desc: str, body: list[str], ident: str
) -> Markup:
    """An accessible SVG chart: ``body`` inside a document with a title and a description."""
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-labelledby="{ident}-t {ident}-d" {FONT}>'
        f'<title id="{ident}-t">{esc(title)}</title><desc id="{ident}-d">{esc(desc)}</desc>'
    )
    return Markup(head + "".join(body) + "</svg>")


def svg_text(x: float, y: float, text: str, anchor: str = "end", size: int = 12) -> str:
    """One escaped SVG text element in the charts' ink."""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" '
        f'fill="{INK}">{esc(text)}</text>'
    )


def _short(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


BAR_W = 380
"""Width of a full bar (100 %) in the outcome chart."""


def outcome_bars(groups: Sequence[Mapping[str, Any]], ident: str) -> Markup:
    """Stacked bars per model: pass | pending | fail over pass + fail + pending runs.

    The pending segment *is* the range: its left edge is the lower bound of the pass rate, its
    right edge the upper bound; a bracket above it carries the range text. Incomplete runs are
    outside the rate and printed as a count at the end of the bar.
    """
    row_h, top = 40, 34
    width, height = LABEL_W + BAR_W + 200, top + row_h * len(groups) + 30
    body = [
        f'<defs><pattern id="{ident}-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{PENDING_FILL}"/>'
        f'<line x1="0" y1="0" x2="0" y2="6" stroke="{INK}" stroke-width="1.2" '
        f'stroke-opacity="0.45"/></pattern></defs>'
    ]
    body += _percent_axis(top, height)
    body += _outcome_legend(ident)
    for i, grp in enumerate(groups):
        body += _outcome_row(grp, top + i * row_h + 10, ident)
    desc = "; ".join(
        f"{g['model']}: {g['counts']['pass']} pass, {g['counts']['fail']} fail, "
        f"{g['counts']['pending']} pending, {g['counts']['incomplete']} incomplete, "
        f"pass rate {g['pass_range']['text']}"
        for g in groups
    )
    title = "Outcomes per model (pending shown as the range of the pass rate)"
    return svg_document(width, height, title, desc, body, ident)


def _percent_axis(top: int, height: int) -> list[str]:
    """Grid lines and labels at 0, 25, 50, 75 and 100 % of the bar width."""
    marks: list[str] = []
    for tick in (0, 25, 50, 75, 100):
        x = LABEL_W + BAR_W * tick / 100
        marks.append(
            f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{height - 26}" stroke="#d0d0d0"/>'
        )
        marks.append(svg_text(x, height - 10, f"{tick} %", "middle", 11))
    return marks


def _outcome_legend(ident: str) -> list[str]:
    """The colour key above the bars (pass, pending as the range, fail, incomplete)."""
    legend = [
        ("pass", PASS_FILL),
        ("pending = range of the pass rate", f"url(#{ident}-hatch)"),
        ("fail", FAIL_FILL),
        ("incomplete", INCOMPLETE_FILL),
    ]
    marks: list[str] = []
    lx = LABEL_W
    for name, fill in legend:
        marks.append(f'<rect x="{lx}" y="6" width="12" height="12" fill="{fill}" stroke="{INK}"/>')
        marks.append(svg_text(lx + 16, 16, name, "start", 11))
        lx += 24 + 7 * len(name)
    return marks


def _outcome_row(grp: Mapping[str, Any], y: int, ident: str) -> list[str]:
    """One model's bar at height ``y``: label, segments, range bracket, rate and incompletes."""
    x0 = LABEL_W
    c = grp["counts"]
    total = c["pass"] + c["fail"] + c["pending"]
    marks = [svg_text(x0 - 8, y + 15, _short(str(grp["model"])))]
    if total == 0:
        marks.append(svg_text(x0 + 4, y + 15, "no runs with a result", "start", 11))
        return marks
    x = float(x0)
    for key, fill in (
        ("pass", PASS_FILL),
        ("pending", f"url(#{ident}-hatch)"),
        ("fail", FAIL_FILL),
    ):
        w = BAR_W * c[key] / total
        if w > 0:
            marks.append(
                f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="20" fill="{fill}" '
                f'stroke="#ffffff" stroke-width="0.5"><title>{esc(grp["model"])}: {c[key]} '
                f"{key} of {total}</title></rect>"
            )
        x += w
    marks += _range_marks(grp["pass_range"], y)
    if c["incomplete"]:
        marks.append(
            f'<rect x="{x0 + BAR_W + 8}" y="{y + 15}" width="8" height="8" '
            f'fill="{INCOMPLETE_FILL}"/>'
        )
        marks.append(
            svg_text(
                x0 + BAR_W + 20, y + 23, f"{c['incomplete']} incomplete (excluded)", "start", 10
            )
        )
    return marks


def _range_marks(rng: Mapping[str, Any], y: int) -> list[str]:
    """The bracket over the pending segment and the pass-rate range printed after the bar."""
    x0 = LABEL_W
    marks: list[str] = []
    lo, hi = x0 + BAR_W * rng["lower"], x0 + BAR_W * rng["upper"]
    if hi > lo:
        marks.append(
            f'<path d="M{lo:.1f},{y - 2} v-5 H{hi:.1f} v5" fill="none" stroke="{INK}" '
            f'stroke-width="1.5"><title>pass rate {esc(rng["text"])} ({esc(rng["label"])})'
            "</title></path>"
        )
    lo_pct, hi_pct = round(rng["lower"] * 100), round(rng["upper"] * 100)
    note = f"{lo_pct} %" if lo_pct == hi_pct else f"{lo_pct}\u2013{hi_pct} %"
    marks.append(svg_text(x0 + BAR_W + 8, y + 11, note, "start", 12))
    return marks


def _blend(share: float) -> str:
    """White → pass blue, by share in [0, 1]."""
    share = min(max(share, 0.0), 1.0)
    base = (0x21, 0x66, 0xAC)
    rgb = [round(255 + (c - 255) * share) for c in base]
    return "#" + "".join(f"{v:02x}" for v in rgb)


def criterion_heatmap(
    groups: Sequence[Mapping[str, Any]], criteria: Sequence[str], ident: str
) -> Markup:
    """Models by criteria; colour = share passed (uncertain counted as not passed), text = range."""
    cell_w, cell_h, top = 64, 30, 30
    width = LABEL_W + cell_w * max(len(criteria), 1) + 20
    height = top + cell_h * len(groups) + 40
    body: list[str] = []
    for j, cid in enumerate(criteria):
        body.append(svg_text(LABEL_W + j * cell_w + cell_w / 2, top - 10, cid, "middle", 12))
    for i, grp in enumerate(groups):
        y = top + i * cell_h
        body.append(svg_text(LABEL_W - 8, y + cell_h / 2 + 4, _short(str(grp["model"]))))
        by_id = {c["criterion"]: c for c in grp["criteria"]}
        for j, cid in enumerate(criteria):
            x = LABEL_W + j * cell_w
            cell = by_id.get(cid)
            if cell is None or cell["lower"] is None:
                fill, text, tip = "#f3f3f3", "\u2013", "no applicable runs"
            else:
                fill = _blend(cell["lower"])
                lo, hi = round(cell["lower"] * 100), round(cell["upper"] * 100)
                text = f"{lo}" if lo == hi else f"{lo}\u2013{hi}"
                tip = (
                    f"{cell['pass']} pass, {cell['fail']} fail, {cell['uncertain']} uncertain, "
                    f"{cell['not_applicable']} not applicable, {cell['missing']} missing"
                )
            ink = "#ffffff" if cell is not None and (cell["lower"] or 0) > 0.65 else INK
            body.append(
                f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" '
                f'fill="{fill}" stroke="#c8c8c8">'
                f"<title>{esc(grp['model'])} · {esc(cid)}: {esc(tip)}</title></rect>"
                f'<text x="{x + cell_w / 2 - 1:.1f}" y="{y + cell_h / 2 + 4:.1f}" font-size="11" '
                f'text-anchor="middle" fill="{ink}">{esc(text)}</text>'
            )
    body.append(
        svg_text(
            LABEL_W,
            height - 12,
            "cell = % passed (range: uncertain as fail to as pass)",
            "start",
            11,
        )
    )
    title = "Per-criterion pass share per model"
    desc = f"{len(groups)} models by {len(criteria)} criteria; darker = more passes"
    return svg_document(width, height, title, desc, body, ident)


def strength_chart(bt: Mapping[str, Any], ident: str) -> Markup | None:
    """Bradley-Terry strengths on the Elo scale with bootstrap intervals; ties marked."""
    rows = bt.get("models") or []
    if not rows:
        return None
    values = [r["elo"] for r in rows]
    for r in rows:
        if r["elo_interval"]:
            values.extend(r["elo_interval"])
    lo_v, hi_v = min(values), max(values)
    step = 50 if hi_v - lo_v <= 400 else 100
    lo_v, hi_v = math.floor(lo_v / step) * step, math.ceil(hi_v / step) * step
    span = max(hi_v - lo_v, 1)
    plot_w, row_h, top = 380, 26, 20
    width, height = LABEL_W + plot_w + 150, top + row_h * len(rows) + 36

    def sx(v: float) -> float:
        return float(LABEL_W + plot_w * (v - lo_v) / span)

    body: list[str] = []
    tick = lo_v
    while tick <= hi_v:
        x = sx(tick)
        body.append(
            f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{height - 28}" stroke="#e0e0e0"/>'
        )
        body.append(svg_text(x, height - 12, str(tick), "middle", 11))
        tick += step
    for i, r in enumerate(rows):
        y = top + i * row_h + 8
        body.append(svg_text(LABEL_W - 8, y + 4, f"{r['rank']}. {_short(str(r['model']))}"))
        if r["elo_interval"]:
            a, b = (sx(v) for v in r["elo_interval"])
            body.append(
                f'<line x1="{a:.1f}" y1="{y}" x2="{b:.1f}" y2="{y}" stroke="{PASS_FILL}" '
                f'stroke-width="3"><title>95 % bootstrap interval {r["elo_interval"][0]:.0f}\u2013'
                f"{r['elo_interval'][1]:.0f}</title></line>"
            )
        body.append(
            f'<circle cx="{sx(r["elo"]):.1f}" cy="{y}" r="5" fill="{INK}">'
            f"<title>{esc(r['model'])}: {r['elo']:.0f} (wins {r['wins']}, losses {r['losses']})"
            "</title></circle>"
        )
        text = f"{r['elo']:.0f}" + (" · technical tie" if r["technical_tie"] else "")
        body.append(svg_text(LABEL_W + plot_w + 8, y + 4, text, "start", 11))
    title = "Bradley-Terry strengths, Elo scale (robustness view)"
    desc = "; ".join(
        f"{r['rank']}. {r['model']} {r['elo']:.0f}"
        + (" (technical tie)" if r["technical_tie"] else "")
        for r in rows
    )
    return svg_document(width, height, title, desc, body, ident)


__all__ = ["criterion_heatmap", "format_pct", "outcome_bars", "strength_chart"]
