"""The report page's pairwise section: one Bradley-Terry ranking per task version and criterion.

Admins only (it names models). Each ranking is drawn with the report's strength chart (Elo
scale, bootstrap interval bars, technical ties marked;
:func:`service.reports.charts.strength_chart`) and listed in a table with the preliminary marks.
"""

from __future__ import annotations

from typing import Any

from service.pairwise.ranking import RankingQuery, pairwise_ranking
from service.pairwise.store import ranking_keys
from service.reports.charts import strength_chart
from service.storage import Database


def pairwise_sections(db: Database, min_comparisons: int) -> list[dict[str, Any]]:
    """Per (task version, criterion) with stored comparisons: its ranking and chart."""
    sections = []
    for i, (task_ref, criterion) in enumerate(ranking_keys(db), start=1):
        doc = pairwise_ranking(db, RankingQuery(task_ref, criterion, min_comparisons, 300, 0))
        doc["chart"] = strength_chart(doc, f"pairwise-{i}")
        sections.append(doc)
    return sections
