"""The report page's pairwise section: one ranking per task version, criterion and judge.

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
    """Per (task version, criterion, judge) with stored comparisons: its ranking and chart.

    Each judge identity is its own ranking: comparisons by different judges are never pooled.
    """
    sections = []
    for i, (task_ref, criterion, judge) in enumerate(ranking_keys(db), start=1):
        q = RankingQuery(task_ref, criterion, min_comparisons, 300, 0, judge=judge)
        doc = pairwise_ranking(db, q)
        doc["chart"] = strength_chart(doc, f"pairwise-{i}")
        sections.append(doc)
    return sections
