"""The suite of registered checks, built-ins loaded, and the functions that run it.

Importing this module imports :mod:`checks.builtin`, which registers every built-in check through
:func:`checks.registry.register_check` exactly like a plugin would. Running the suite never
raises: a check that raises or returns something malformed is reported as ``fail`` with the
error as evidence (fail closed; the document is untrusted).
"""

from __future__ import annotations

from checks import builtin, render_cost  # noqa: F401  (importing them registers the built-ins)
from checks.extract import extract_svg
from checks.parse import parse_document
from checks.registry import Check, checks_in_registry
from checks.types import (
    CHECK_STATUSES,
    CheckReport,
    CheckResult,
    Evidence,
    Extraction,
    ReportStatus,
)
from tasks import TaskSpec

CHECKER_VERSION = "2"
RESOURCE_LIMIT_CHECKS = frozenset({"size", "render-cost"})
"""Checks of the task's resource limits: work that fails one is never rendered (it already
fails by that declared rule, and rendering it would only spend the sandbox on a bomb)."""


def registered_checks() -> tuple[Check, ...]:
    """Every registered check, built-ins first, in registration order."""
    return checks_in_registry()


def _raised(check: Check, exc: Exception) -> CheckResult:
    msg = f"check raised {type(exc).__name__}: {exc}; failing closed"
    return CheckResult(_id_of(check), _version_of(check), "fail", (Evidence(msg[:300]),))


def _valid(check: Check, result: object) -> CheckResult:
    if not isinstance(result, CheckResult) or result.status not in CHECK_STATUSES:
        msg = f"check returned an invalid result {result!r:.120}; failing closed"
        return CheckResult(_id_of(check), _version_of(check), "fail", (Evidence(msg),))
    return result


def _id_of(check: Check) -> str:
    return str(getattr(check, "id", "?"))


def _version_of(check: Check) -> str:
    return str(getattr(check, "version", "?"))


def run_checks(
    svg_text: str | bytes,
    task: TaskSpec,
    *,
    checks: tuple[Check, ...] | None = None,
    extraction: Extraction | None = None,
) -> CheckReport:
    """Run every registered check (or ``checks``) on one SVG document. Never raises."""
    suite = registered_checks() if checks is None else checks
    try:
        doc = parse_document(svg_text)
    except Exception as exc:  # parse_document already catches; this is the last line of defence
        ev = Evidence(f"document could not be prepared: {type(exc).__name__}: {exc}"[:300])
        results: tuple[CheckResult, ...] = (CheckResult("parse", "1", "fail", (ev,)),)
        return CheckReport(task.ref, CHECKER_VERSION, extraction, "fail", results)
    if doc.root is None:
        suite = tuple(c for c in suite if not c.needs_tree)
    out: list[CheckResult] = []
    failed = False
    for check in suite:
        try:
            result = check.run(doc, task)
        except Exception as exc:
            result = _raised(check, exc)
        if type(result) is not CheckResult or result.status not in CHECK_STATUSES:
            result = _valid(check, result)
        failed = failed or result.status == "fail"
        out.append(result)
    status: ReportStatus = "fail" if failed else "pass"
    return CheckReport(task.ref, CHECKER_VERSION, extraction, status, tuple(out))


def check_reply(raw: str | bytes, task: TaskSpec) -> CheckReport:
    """Extract the SVG from a raw reply and run the checks on it. ``no_svg`` fails the report."""
    extraction = extract_svg(raw)
    if extraction.status != "found" or extraction.svg_text is None:
        return CheckReport(task.ref, CHECKER_VERSION, extraction, "fail", ())
    return run_checks(extraction.svg_text, task, extraction=extraction)
