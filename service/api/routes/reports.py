"""``/v1/reports``: reports over HTTP (JSON, HTML page, CSS, CSV of the summary).

Admins see every run; a submitter sees a report of its own runs only; reviewers get 403
(reports name models, which reviewers must never see).

The HTML page has no script and no inline style: it links ``/v1/reports/report.css``. A CSP of
``default-src 'none'; style-src 'self'; img-src 'self'`` is enough for it.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from regua.errors import InputError
from service.access.tokens import Principal
from service.api.deps import Caller, Ctx
from service.api.headers import REPORT_HEADERS
from service.context import ServiceContext
from service.reports.build import ReportConfig
from service.reports.db import generate_report
from service.reports.exports import csv_text, summary_rows
from service.reports.html import render_html, stylesheet
from service.reports.slices import parse_by

router = APIRouter(prefix="/v1/reports", tags=["reports"])

GroupBy = Literal["model", "provider", "model_provider"]


def _scope(caller: Principal) -> int | None:
    """Whose runs the caller may see: all (admin) or its own (submitter); 403 otherwise."""
    caller.require("submitter")
    return None if caller.is_admin else caller.token_id


def _config(
    group_by: str, seed: int, resamples: int, weights: str, ids: bool, by: str = "family"
) -> ReportConfig:
    if weights not in ("equal", "runs"):
        raise InputError(f"weights must be 'equal' or 'runs', got {weights!r}")
    parse_by(by)
    return ReportConfig(
        by=by,
        seed=seed,
        resamples=resamples,
        group_by=group_by,
        family_weights=weights,
        include_run_ids=ids,
    )


def _report(
    ctx: ServiceContext, caller: Principal, task: list[str], model: list[str], cfg: ReportConfig
) -> dict[str, Any]:
    with ctx.db.read() as session:
        report, _ = generate_report(session, task, cfg, models=model, submitted_by=_scope(caller))
    return report


TaskQ = Query(default=[], description="ID@VERSION (one version) or ID (all versions); repeatable")
ModelQ = Query(default=[], description="only these model labels; repeatable")
SeedQ = Query(default=20261129, description="bootstrap seed (recorded in the report)")
ResamplesQ = Query(default=1000, ge=0, le=10000)
WeightsQ = Query(default="equal", description="family weighting: equal or runs")
ByQ = Query(
    default="family",
    description="the weighted section: family (each family equal) or dimension:NAME (a slice)",
)


class ReportDocument(BaseModel):
    """A report (``docs/contracts.md``, section *reports*).

    It holds counts, pending ranges, intervals, paired tests, ranking, repeats, cost and
    latency, the judge view and provenance.
    """

    model_config = ConfigDict(extra="allow")

    schema_: str = Field(alias="schema")


@router.get("", response_model=ReportDocument, response_model_by_alias=True)
def get_report(
    ctx: Ctx,
    caller: Caller,
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
    cfg = _config(group_by, seed, resamples, weights, include_ids, by)
    return ReportDocument.model_validate(_report(ctx, caller, task, model, cfg))


@router.get("/html", response_class=HTMLResponse)
def get_report_html(
    ctx: Ctx,
    caller: Caller,
    task: list[str] = TaskQ,
    group_by: GroupBy = Query(default="model"),
    model: list[str] = ModelQ,
    seed: int = SeedQ,
    resamples: int = ResamplesQ,
    weights: str = WeightsQ,
    by: str = ByQ,
) -> HTMLResponse:
    """The report page (server-side SVG charts, no script), served with a strict CSP."""
    cfg = _config(group_by, seed, resamples, weights, False, by)
    page = render_html(_report(ctx, caller, task, model, cfg), css_href="/v1/reports/report.css")
    return HTMLResponse(page, headers=REPORT_HEADERS)


@router.get("/summary.csv", response_class=Response, responses={200: {"content": {"text/csv": {}}}})
def get_report_csv(
    ctx: Ctx,
    caller: Caller,
    task: list[str] = TaskQ,
    group_by: GroupBy = Query(default="model"),
    model: list[str] = ModelQ,
    seed: int = SeedQ,
    resamples: int = ResamplesQ,
    weights: str = WeightsQ,
) -> Response:
    """The summary table (one line per task version and group) as CSV."""
    cfg = _config(group_by, seed, resamples, weights, False)
    text = csv_text(*summary_rows(_report(ctx, caller, task, model, cfg)))
    return Response(text, media_type="text/csv; charset=utf-8")


@router.get("/report.css", response_class=Response, responses={200: {"content": {"text/css": {}}}})
def get_stylesheet() -> Response:
    """The report page's stylesheet (public: it holds no data)."""
    return Response(stylesheet(), media_type="text/css; charset=utf-8")
