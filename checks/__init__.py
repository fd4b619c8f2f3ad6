r"""Extraction of the SVG from a raw model reply, and static checks on untrusted SVG.

Pure functions: no I/O, no network, no rendering. See ``docs/contracts.md`` (checks section).

>>> from tasks import bundled_registry
>>> task = bundled_registry().get("pelican-bicycle-static@1")
>>> report = check_reply("```svg\n<svg xmlns='http://www.w3.org/2000/svg'/>\n```", task)
>>> report.status
'fail'
"""

from checks.extract import POLICY, PROCEDURE_ID, PROCEDURE_VERSION, extract_svg
from checks.parse import Document, parse_document
from checks.registry import Check, register_check, unregister_check
from checks.suite import (
    CHECKER_VERSION,
    RESOURCE_LIMIT_CHECKS,
    check_reply,
    registered_checks,
    run_checks,
)
from checks.types import (
    CHECK_STATUSES,
    CandidateInfo,
    CheckReport,
    CheckResult,
    CheckStatus,
    Evidence,
    Extraction,
)

__all__ = [
    "CHECKER_VERSION",
    "CHECK_STATUSES",
    "POLICY",
    "PROCEDURE_ID",
    "PROCEDURE_VERSION",
    "RESOURCE_LIMIT_CHECKS",
    "CandidateInfo",
    "Check",
    "CheckReport",
    "CheckResult",
    "CheckStatus",
    "Document",
    "Evidence",
    "Extraction",
    "check_reply",
    "extract_svg",
    "parse_document",
    "register_check",
    "registered_checks",
    "run_checks",
    "unregister_check",
]
