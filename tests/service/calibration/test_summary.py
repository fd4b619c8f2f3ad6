"""What ``regua calibrate`` prints, on runs computed without rendering (a plain verdict function).

Printed intervals are rounded outwards, so they always show containing their point value; the
bundled kind of labels (``project``) is never called human; one annotator gives no agreement.
"""

from __future__ import annotations

import re
from dataclasses import replace

from judges.calibration.runner import run_calibration
from judges.calibration.sets import CalibrationItem, CalibrationSet, Label
from service.cli.calibrate_summary import summary_lines

T = "pelican-bicycle-structured@1"
INTERVAL = re.compile(r"(\d\.\d{3}) \[(\d\.\d{2}), (\d\.\d{2})\]")


def _set(second_annotator: bool) -> CalibrationSet:
    statuses = ["pass"] * 400 + ["fail"] * 20 + ["uncertain"]
    items = [CalibrationItem(f"i{k}", f"{k:064x}", "R2", T) for k in range(len(statuses))]
    labels = [Label(i.item_id, "ann", s, "t") for i, s in zip(items, statuses, strict=True)]
    if second_annotator:
        labels += [Label(i.item_id, "bee", "pass", "t") for i in items[:5]]
        labels += [Label(items[400].item_id, "bee", "pass", "t")]  # disagrees with a fail
    return CalibrationSet("s@1", T, tuple(items), tuple(labels))


def _lines(cal_set: CalibrationSet) -> list[str]:
    answers = {i.item_id: cal_set.reference(i.item_id).status or "pass" for i in cal_set.items}
    answers["i0"] = "uncertain"

    def fn(item: CalibrationItem, _r: int) -> str:
        return answers[item.item_id]

    run = run_calibration("g", "g@1", cal_set, fn, split="all", repeats=1, n_boot=300)
    return summary_lines(run)


def test_printed_intervals_contain_their_points() -> None:
    text = "\n".join(_lines(_set(True)))
    found = INTERVAL.findall(text)
    assert len(found) > 8
    for point, lo, hi in found:
        assert float(lo) <= float(point) <= float(hi), (point, lo, hi)
    assert "F1 per class: pass 0.999 [0.99, 1.00]" in text  # not "[1.00, 1.00]"


def test_people_and_project_labels_are_worded_apart() -> None:
    people = "\n".join(_lines(_set(True)))
    assert "labels: given by people (annotators)" in people
    assert "agreement between annotators (n=6 items)" in people
    assert "annotators disagree on 1 item (kept out of the gate):" in people
    assert "i400  ann=fail bee=pass" in people
    project = "\n".join(_lines(replace(_set(True), label_provenance="project")))
    assert "project-written labels" in project and "human" not in project.lower()
    assert "label passes disagree on 1 item" in project
    alone = "\n".join(_lines(_set(False)))
    assert "agreement between annotators: n/a (no item has two annotators)" in alone
