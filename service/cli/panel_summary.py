"""What ``regua calibrate --panel`` prints: the panel as a whole, each judge alone, adjudication."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judges.calibration.panel_agreement import PanelAgreement
from service.cli.calibrate_summary import est


def _wilson(d: Mapping[str, Any]) -> str:
    lo, hi = d.get("wilson_low"), d.get("wilson_high")
    return "" if lo is None or hi is None else f" Wilson [{lo:.2f}, {hi:.2f}]"


def _numbers(m: Mapping[str, Any]) -> str:
    return (
        f"macro-F1 {est(m['macro_f1'])}  kappa {est(m['kappa'])}  "
        f"missed critical {est(m['missed_critical'])}  uncertain {est(m['uncertain_rate'])}"
    )


def panel_lines(report: PanelAgreement) -> list[str]:
    """The lines of the panel calibration report (every rate with its interval)."""
    lines = [
        f"panel {report.panel_id} hash {report.panel_hash[:12]} on {report.set_id}: "
        f"{report.items} items",
        f"the panel as a whole: {_numbers(report.panel.to_dict())}",
    ]
    for criterion, m in report.per_criterion.items():
        lines.append(f"  {criterion}: {_numbers(m.to_dict())}")
    lines.append("each judge alone, on the same items:")
    for judge, m in report.judges.items():
        lines.append(f"  {judge}: {_numbers(m.to_dict())}")
    adj = report.adjudication
    major, label = adj.with_majority.to_dict(), adj.with_label.to_dict()
    lines.append(
        f"adjudication: asked {adj.asked}, decided {adj.decided}, no majority to agree with "
        f"{adj.no_majority}"
    )
    lines.append(f"  agreed with the judges' majority {est(major)}{_wilson(major)}")
    lines.append(f"  agreed with the label {est(label)}{_wilson(label)}")
    return lines
