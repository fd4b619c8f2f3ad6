"""Reports and statistics that keep uncertainty visible.

Two layers: pure statistics over plain :class:`ReportRow` records (no database), and outputs
(JSON dict, CSV files, an HTML page with server-side SVG charts). The service adapter
(:mod:`service.reports.db`), the HTTP router (:mod:`service.api.routes.reports`) and the CLI
(``regua report``) sit on top.
"""

from service.reports.build import SCHEMA, build_report
from service.reports.config import ReportConfig
from service.reports.rows import JudgeVote, ReportRow

__all__ = ["SCHEMA", "JudgeVote", "ReportConfig", "ReportRow", "build_report"]
