"""``/v1/reports``: reports over HTTP (JSON, HTML page, CSS, CSV of the summary).

Admins see every run; a submitter sees a report of its own runs only; reviewers get 403
(reports name models, which reviewers must never see).

The HTML page has no script and no inline style: it links ``/v1/reports/report.css``. A CSP of
``default-src 'none'; style-src 'self'; img-src 'self'`` is enough for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import HTMLResponse, Response

from regua.views.reports import ReportDocument
from service.api.deps import Ctx, Submitter
from service.api.headers import REPORT_HEADERS
from service.api.text import SEED_MAX
from service.reports.build import ReportConfig
from service.reports.exports import csv_text, summary_rows
from service.reports.html import stylesheet
from service.reports.scoped import report_config, report_page_html, scoped_report

router = APIRouter(prefix="/v1/reports", tags=["reports"])

GroupBy = Literal["model", "provider", "model_provider"]


TaskQ = Query(default=[], description="ID@VERSION (one version) or ID (all versions); repeatable")
ModelQ = Query(default=[], description="only these model labels; repeatable")
SeedQ = Query(
    default=20261129, ge=0, le=SEED_MAX, description="bootstrap seed (recorded in the report)"
)
ResamplesQ = Query(default=1000, ge=0, le=10000)
WeightsQ = Query(default="equal", description="family weighting: equal or runs")
ByQ = Query(
    default="family",
    description="the weighted section: family (each family equal) or dimension:NAME (a slice)",
)


@dataclass(frozen=True)
class ReportAsk:
    """The query every form of the report takes: which runs, grouped how, bootstrapped how."""

    task: list[str]
    model: list[str]
    group_by: GroupBy
    seed: int
    resamples: int
    weights: str

    def config(self, include_ids: bool = False, by: str = "family") -> ReportConfig:
        """The report's configuration (422 for a bad weighting or slice)."""
        return report_config(
            self.group_by, self.seed, self.resamples, self.weights, include_ids, by
        )


def report_ask(
    task: list[str] = TaskQ,
    group_by: GroupBy = Query(default="model"),
    model: list[str] = ModelQ,
    seed: int = SeedQ,
    resamples: int = ResamplesQ,
    weights: str = WeightsQ,
) -> ReportAsk:
    """The report query of a request (a FastAPI dependency)."""
    return ReportAsk(task, model, group_by, seed, resamples, weights)


Ask = Annotated[ReportAsk, Depends(report_ask)]


@router.get("", response_model=ReportDocument, response_model_by_alias=True)
def get_report(
    ctx: Ctx,
    caller: Submitter,
    ask: Ask,
    include_ids: bool = Query(default=False, description="list every evaluation id"),
    by: str = ByQ,
) -> ReportDocument:
    """The report as JSON.

    It holds counts, pending ranges, bootstrap intervals, paired tests, Bradley-Terry ranking,
    repeats, cost and latency, judge view and provenance.
    """
    cfg = ask.config(include_ids, by)
    return ReportDocument.model_validate(scoped_report(ctx.db, caller, ask.task, ask.model, cfg))


@router.get("/html", response_class=HTMLResponse)
def get_report_html(ctx: Ctx, caller: Submitter, ask: Ask, by: str = ByQ) -> HTMLResponse:
    """The report page (server-side SVG charts, no script), served with a strict CSP."""
    page = report_page_html(ctx.db, caller, ask.task, ask.model, ask.config(by=by))
    return HTMLResponse(page, headers=REPORT_HEADERS)


@router.get("/summary.csv", response_class=Response, responses={200: {"content": {"text/csv": {}}}})
def get_report_csv(ctx: Ctx, caller: Submitter, ask: Ask) -> Response:
    """The summary table (one line per task version and group) as CSV."""
    report = scoped_report(ctx.db, caller, ask.task, ask.model, ask.config())
    text = csv_text(*summary_rows(report))
    return Response(text, media_type="text/csv; charset=utf-8")


@router.get("/report.css", response_class=Response, responses={200: {"content": {"text/css": {}}}})
def get_stylesheet() -> Response:
    """The report page's stylesheet (public: it holds no data)."""
    return Response(stylesheet(), media_type="text/css; charset=utf-8")
