"""The HTML report: a Jinja2 template shipped in this package, charts as inline SVG.

The page carries no script and no ``style`` attribute; its look comes from ``report.css``
(:func:`stylesheet`), linked by URL, so it works under a strict Content-Security-Policy such as
``default-src 'none'; style-src 'self'; img-src 'self'`` (see docs/contracts.md, reports).
"""

from __future__ import annotations

from collections import OrderedDict
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from service.reports import charts
from service.reports.stats import format_pct

CSS_NAME = "report.css"


def _pct(value: float | None) -> str:
    return format_pct(value)


def _interval(value: list[float] | None) -> str:
    if not value:
        return "n/a"
    return f"{format_pct(value[0])} to {format_pct(value[1])}"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f} ms"


def _usd(value: float | None) -> str:
    return "not available" if value is None else f"${value:,.4f}"


def _p(value: float) -> str:
    return "< 0.0001" if value < 0.0001 else f"{value:.4f}"


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("service.reports", "templates"),
        autoescape=select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pct=_pct, interval=_interval, ms=_ms, usd=_usd, pvalue=_p)
    return env


_ENV = _environment()


def stylesheet() -> str:
    """The CSS the page links to (serve it, or write it next to the HTML file)."""
    return (resources.files("service.reports") / "static" / CSS_NAME).read_text(encoding="utf-8")


def render_html(report: dict[str, Any], css_href: str = CSS_NAME) -> str:
    """Render the report dict as one HTML page (charts inline, styles from ``css_href``)."""
    by_task: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
    for n, tv in enumerate(report["task_versions"]):
        ident = f"tv{n}"
        tv_view = dict(tv)
        tv_view["ident"] = ident
        tv_view["bars"] = charts.outcome_bars(tv["groups"], f"{ident}-bars")
        tv_view["heatmap"] = (
            charts.criterion_heatmap(tv["groups"], tv["criteria"], f"{ident}-heat")
            if tv["criteria"]
            else None
        )
        tv_view["strengths"] = charts.strength_chart(tv["bradley_terry"], f"{ident}-bt")
        tv_view["has_repeats"] = any(g["repeats"] for g in tv["groups"])
        by_task.setdefault(f"{tv['pool']} · {tv['task_id']}", []).append(tv_view)
    aggregates = [
        dict(agg) | {"bt_chart": charts.strength_chart(agg["bradley_terry"], f"pool{n}-bt")}
        for n, agg in enumerate(report["aggregates"])
    ]
    template = _ENV.get_template("report.html.j2")
    return template.render(report=report, by_task=by_task, aggregates=aggregates, css_href=css_href)
