"""Result types of extraction and static checks. Every type turns into a JSON-able dict."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal

from regua.records import PlainRecord, field_dict

CheckStatus = Literal["pass", "fail", "not_applicable"]
ReportStatus = Literal["pass", "fail"]
ExtractionStatus = Literal["found", "no_svg"]

CHECK_STATUSES: frozenset[str] = frozenset({"pass", "fail", "not_applicable"})
SNIPPET_MAX = 160


def clip(text: str, limit: int = SNIPPET_MAX) -> str:
    """Shorten untrusted text for evidence: one line, at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Evidence(PlainRecord):
    """Where a problem (or a notable fact) sits: a message plus line, element path and snippet.

    ``to_dict``: the fields by name.
    """

    message: str
    line: int | None = None
    path: str | None = None
    snippet: str | None = None


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The outcome of one static check on one document."""

    id: str
    version: str
    status: CheckStatus
    evidence: tuple[Evidence, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        evidence = [e.to_dict() for e in self.evidence]
        return {**field_dict(self, "id", "version", "status"), "evidence": evidence}


@dataclass(frozen=True, slots=True)
class CandidateInfo(PlainRecord):
    """One place in a raw reply that could hold the SVG document (``to_dict``: the fields)."""

    method: str
    start: int
    end: int
    line: int
    complete: bool
    has_svg: bool


@dataclass(frozen=True, slots=True)
class Extraction:
    """What the extraction procedure took out of a raw reply, and how it chose."""

    status: ExtractionStatus
    svg_text: str | None
    method: str | None
    candidates: int
    chosen_index: int | None
    policy: str
    procedure_id: str
    procedure_version: str
    encoding: str = "utf-8"
    bom: bool = False
    raw_length: int = 0
    candidate_info: tuple[CandidateInfo, ...] = field(default=())
    notes: tuple[str, ...] = ()

    def to_dict(self, include_text: bool = False) -> dict[str, Any]:
        """Plain JSON-able form of the extraction.

        The SVG text itself is included only when ``include_text`` (it is untrusted content and
        is stored as its own artifact), otherwise its sha256 and length.
        """
        out = field_dict(self, "status", "method", "candidates", "chosen_index", "policy")
        out |= field_dict(self, "procedure_id", "procedure_version", "encoding", "bom")
        out |= {
            "raw_length": self.raw_length,
            "candidate_info": [c.to_dict() for c in self.candidate_info],
            "notes": list(self.notes),
            "svg_sha256": None,
            "svg_length": None,
        }
        if self.svg_text is not None:
            out["svg_sha256"] = hashlib.sha256(self.svg_text.encode("utf-8", "replace")).hexdigest()
            out["svg_length"] = len(self.svg_text)
        if include_text:
            out["svg_text"] = self.svg_text
        return out


@dataclass(frozen=True, slots=True)
class CheckReport:
    """Extraction (when the input was a raw reply) plus every static check's result."""

    task: str
    checker_version: str
    extraction: Extraction | None
    status: ReportStatus
    results: tuple[CheckResult, ...]

    @property
    def failed(self) -> tuple[str, ...]:
        """Ids of the failed checks (``no_svg`` when extraction found nothing)."""
        ids = tuple(r.id for r in self.results if r.status == "fail")
        if self.extraction is not None and self.extraction.status == "no_svg":
            return ("no_svg", *ids)
        return ids

    def result(self, check_id: str) -> CheckResult | None:
        """The result of one check, or None when that check did not run."""
        for r in self.results:
            if r.id == check_id:
                return r
        return None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form (what the service stores and judges receive)."""
        return {
            "task": self.task,
            "checker": {"id": "regua-static-checks", "version": self.checker_version},
            "extraction": None if self.extraction is None else self.extraction.to_dict(),
            "status": self.status,
            "failed": list(self.failed),
            "checks": [r.to_dict() for r in self.results],
        }
