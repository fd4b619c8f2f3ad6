"""The experiment report page (and the history of its windows) as HTML with inline SVG charts."""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from service.experiments.charts import arm_bars, difference_chart, latency_chart

CSS_HREF = "/v1/reports/report.css"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f} %"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.1f} %"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} ms"


def _usd(value: float | None) -> str:
    return "not available" if value is None else f"${value:.4f}"


_ENV = Environment(
    loader=PackageLoader("service.experiments", "templates"),
    autoescape=select_autoescape(["html", "j2"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters.update(pct=_pct, signed=_signed, usd=_usd, ms=_ms)


def render_experiment_html(
    report: dict[str, Any], history: dict[str, Any] | None = None, css_href: str = CSS_HREF
) -> str:
    """The page of one experiment run, with its windows over time when ``history`` is given."""
    charts = {
        "bars": arm_bars(report["arms"], "exp-bars"),
        "difference": difference_chart(report["comparisons"], "exp-diff"),
        "latency": latency_chart(report["arms"], "exp-lat"),
    }
    template = _ENV.get_template("experiment.html.j2")
    return template.render(report=report, history=history, charts=charts, css_href=css_href)
