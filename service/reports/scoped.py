"""A report as one caller may see it: admins every run, a submitter its own runs, reviewers none.

Reports name models, which reviewers must never see (403). Shared by the HTTP routes, the
report pages and anything else that answers a caller with a report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from regua.errors import InputError
from service.access.tokens import Principal
from service.reports.build import ReportConfig
from service.reports.db import generate_report
from service.reports.html import render_html
from service.reports.slices import parse_by
from service.storage import Database

CSS_HREF = "/v1/reports/report.css"
"""Where the report page's stylesheet is served (public: it holds no data)."""


def report_scope(caller: Principal) -> int | None:
    """Whose runs the caller may see: all (admin) or its own (submitter); 403 otherwise."""
    caller.require("submitter")
    return None if caller.is_admin else caller.token_id


def report_config(
    group_by: str, seed: int, resamples: int, weights: str, ids: bool, by: str = "family"
) -> ReportConfig:
    """The report's configuration from a request's options (422 for a bad weighting or slice)."""
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


def scoped_report(
    db: Database,
    caller: Principal,
    task: Sequence[str],
    model: Sequence[str],
    cfg: ReportConfig,
) -> dict[str, Any]:
    """The report document over the runs ``caller`` may see (``docs/contracts.md``, reports)."""
    scope = report_scope(caller)
    with db.read() as session:
        report, _ = generate_report(
            session, list(task), cfg, models=list(model), submitted_by=scope
        )
    return report


def report_page_html(
    db: Database,
    caller: Principal,
    task: Sequence[str],
    model: Sequence[str],
    cfg: ReportConfig,
) -> str:
    """The report page (server-side SVG charts, no script) over the runs ``caller`` may see."""
    return render_html(scoped_report(db, caller, task, model, cfg), css_href=CSS_HREF)
