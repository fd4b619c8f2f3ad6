"""``/v1/reports``: reports over HTTP (JSON, HTML page, CSS, CSV of the summary).

Admins see every run; a submitter sees a report of its own runs only; reviewers get 403
(reports name models, which reviewers must never see).

The HTML page has no script and no inline style: it links ``/v1/reports/report.css``. A CSP of
``default-src 'none'; style-src 'self'; img-src 'self'`` is enough for it.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse, Response

from regua.views.reports import ReportDocument
from service.api.deps import Ctx, Submitter
from service.api.headers import REPORT_HEADERS
from service.api.text import SEED_MAX
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


@router.get("", response_model=ReportDocument, response_model_by_alias=True)
def get_report(
    ctx: Ctx,
    caller: Submitter,
    task: list[str] = TaskQ,
    group_by: GroupBy = Query(default="model"),
    model: list[str] = ModelQ,
    seed: int = SeedQ,
    resamples: int = ResamplesQ,
    weights: str = WeightsQ,
    include_ids: bool = Query(default=False, description="list every evaluation id"),
    by: str = ByQ,
) -> ReportDocument:
    """The report as JSON.

    It holds counts, pending ranges, bootstrap intervals, paired tests, Bradley-Terry ranking,
    repeats, cost and latency, judge view and provenance.
    """
    cfg = report_config(group_by, seed, resamples, weights, include_ids, by)
    return ReportDocument.model_validate(scoped_report(ctx.db, caller, task, model, cfg))


@router.get("/html", response_class=HTMLResponse)
def get_report_html(
    ctx: Ctx,
    caller: Submitter,
    task: list[str] = TaskQ,
    group_by: GroupBy = Query(default="model"),
    model: list[str] = ModelQ,
    seed: int = SeedQ,
    resamples: int = ResamplesQ,
    weights: str = WeightsQ,
    by: str = ByQ,
) -> HTMLResponse:
    """The report page (server-side SVG charts, no script), served with a strict CSP."""
    cfg = report_config(group_by, seed, resamples, weights, False, by)
    page = report_page_html(ctx.db, caller, task, model, cfg)
    return HTMLResponse(page, headers=REPORT_HEADERS)


@router.get("/summary.csv", response_class=Response, responses={200: {"content": {"text/csv": {}}}})
def get_report_csv(
    ctx: Ctx,
    caller: Submitter,
    task: list[str] = TaskQ,
    group_by: GroupBy = Query(default="model"),
    model: list[str] = ModelQ,
    seed: int = SeedQ,
    resamples: int = ResamplesQ,
    weights: str = WeightsQ,
) -> Response:
    """The summary table (one line per task version and group) as CSV."""
    cfg = report_config(group_by, seed, resamples, weights, False)
    text = csv_text(*summary_rows(scoped_report(ctx.db, caller, task, model, cfg)))
    return Response(text, media_type="text/csv; charset=utf-8")


@router.get("/report.css", response_class=Response, responses={200: {"content": {"text/css": {}}}})
def get_stylesheet() -> Response:
    """The report page's stylesheet (public: it holds no data)."""
    return Response(stylesheet(), media_type="text/css; charset=utf-8")
