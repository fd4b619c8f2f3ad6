"""A report as the API answers it (``GET /v1/reports``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ReportDocument(BaseModel):
    """A report (``docs/contracts.md``, section *reports*).

    It holds counts, pending ranges, intervals, paired tests, ranking, repeats, cost and
    latency, the judge view and provenance.
    """

    model_config = ConfigDict(extra="allow")

    schema_: str = Field(alias="schema")
