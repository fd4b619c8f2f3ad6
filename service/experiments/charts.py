"""SVG charts of the experiment report (no script, no style attributes; values also as text).

The outcome bars are the reports' own (:func:`service.reports.charts.outcome_bars`); this adds
the paired difference with its bootstrap interval and the latency percentiles per arm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from service.reports.charts import (
    INK,
    MUTED,
    PASS_FILL,
    esc,
    outcome_bars,
    svg_document,
    svg_text,
)
from service.reports.stats import pass_range

LABEL_W, PLOT_W = 170, 380


def arm_bars(arms: Sequence[Mapping[str, Any]], ident: str) -> Markup:
    """Outcome bars per arm (pending as the range of the pass rate; incomplete counted apart)."""
    groups = []
    for a in arms:
        c = a["counts"]
        rng = pass_range(c["pass"], c["fail"], c["pending"])
        groups.append(
            {
                "model": a["arm"],
                "counts": c,
                "pass_range": {
                    "lower": rng.lower or 0.0,
                    "upper": rng.upper or 0.0,
                    "text": a["pass_range"],
                    "label": "range from pending results, not a confidence interval",
                },
            }
        )
    return outcome_bars(groups, ident)


def difference_chart(comparisons: Sequence[Mapping[str, Any]], ident: str) -> Markup:
    """Each pair's difference of pass rates (A - B) on a -100 … +100 % axis, with its interval."""
    row_h, top = 36, 20
    height = top + row_h * len(comparisons) + 30
    width = LABEL_W + PLOT_W + 220

    def sx(v: float) -> float:
        return LABEL_W + PLOT_W * (v + 1.0) / 2.0

    body = []
    for tick in (-1.0, -0.5, 0.0, 0.5, 1.0):
        x = sx(tick)
        body.append(
            f'<line x1="{x:.1f}" y1="{top - 8}" x2="{x:.1f}" y2="{height - 24}" stroke="#d0d0d0"/>'
        )
        body.append(svg_text(x, height - 8, f"{tick * 100:+.0f} %", "middle", 11))
    desc = []
    for i, cmp in enumerate(comparisons):
        y = top + i * row_h + 10
        d = cmp["difference"]
        body.append(svg_text(LABEL_W - 8, y + 5, f"{cmp['a']} - {cmp['b']}"))
        if d["point"] is None:
            body.append(svg_text(LABEL_W + 4, y + 5, "no paired cases", "start", 11))
            continue
        if d["low"] is not None and d["high"] is not None:
            body.append(
                f'<line x1="{sx(d["low"]):.1f}" y1="{y}" x2="{sx(d["high"]):.1f}" y2="{y}" '
                f'stroke="{INK}" stroke-width="2"><title>95 % bootstrap interval '
                f"{d['low'] * 100:+.1f} % to {d['high'] * 100:+.1f} %</title></line>"
            )
        body.append(f'<circle cx="{sx(d["point"]):.1f}" cy="{y}" r="5" fill="{PASS_FILL}"/>')
        text = f"{d['point'] * 100:+.1f} %  p = {cmp['mcnemar_p']:.4g}"
        body.append(svg_text(LABEL_W + PLOT_W + 10, y + 4, text, "start", 11))
        desc.append(f"{cmp['a']} minus {cmp['b']}: {text}")
    title = "Difference of pass rates per pair of arms, with the 95 % bootstrap interval"
    return svg_document(width, height, title, "; ".join(desc) or "no pairs", body, ident)


def latency_chart(arms: Sequence[Mapping[str, Any]], ident: str) -> Markup:
    """p50 and p95 latency per arm (nearest rank, timeouts included) as two bars."""
    row_h, top = 34, 12
    values = [a["latency"][k] or 0.0 for a in arms for k in ("p50_ms", "p95_ms")]
    peak = max([*values, 1.0])
    height, width = top + row_h * len(arms) + 12, LABEL_W + PLOT_W + 320
    body, desc = [], []
    for i, a in enumerate(arms):
        y = top + i * row_h
        lat = a["latency"]
        body.append(svg_text(LABEL_W - 8, y + 14, a["arm"]))
        for j, (key, fill) in enumerate((("p50_ms", PASS_FILL), ("p95_ms", MUTED))):
            v = lat[key]
            w = PLOT_W * (v or 0.0) / peak
            body.append(
                f'<rect x="{LABEL_W}" y="{y + j * 11}" width="{w:.1f}" height="10" fill="{fill}">'
                f"<title>{esc(a['arm'])} {key[:3]}: {v} ms</title></rect>"
            )
        p50, p95 = (
            f"{v:.1f} ms" if v is not None else "n/a" for v in (lat["p50_ms"], lat["p95_ms"])
        )
        text = f"p50 {p50} · p95 {p95} · {lat['timeouts']} timeouts"
        body.append(svg_text(LABEL_W + PLOT_W + 10, y + 14, text, "start", 11))
        desc.append(f"{a['arm']}: {text}")
    title = "Generation latency per arm (nearest rank, timeouts kept in)"
    return svg_document(width, height, title, "; ".join(desc) or "no arms", body, ident)
