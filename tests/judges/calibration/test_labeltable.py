"""Calibration sets from plain ``labels.csv`` tables (issue 13 item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judges.calibration.labeltable import (
    LabelRow,
    is_label_folder,
    label_table_csv,
    parse_label_table,
    read_label_folder,
    set_from_label_table,
)
from judges.calibration.runner import SplitName, run_calibration
from judges.calibration.sets import CalibrationItem
from regua.errors import CalibrationError
from tasks import TaskSpec

TABLE = """file,criterion,status,annotator,time,evidence
a.svg,R1,pass,alice,2026-12-01T10:00:00Z,"wheel, on the ground"
a.svg,R1,fail,bob,2026-12-01T11:00:00Z,
a.svg,B1,pass,alice,,
b.svg,R1,FAIL,alice,,
b.svg,R1,fail,bob,,
"""
FILES = {"a.svg": b"<svg id='a'/>", "b.svg": b"<svg id='b'/>", "unused.svg": b"<svg/>"}


def test_items_labels_disputes_and_split(task: TaskSpec) -> None:
    folder = set_from_label_table(TABLE, FILES, task, set_id="mine")
    s = folder.calibration_set
    assert [i.item_id for i in s.items] == ["a.svg:B1", "a.svg:R1", "b.svg:R1"]
    assert {i.group for i in s.items} == {"a.svg", "b.svg"}
    assert all(i.task_ref == task.ref and i.criterion_kind == "necessary" for i in s.items)
    assert s.reference("a.svg:R1").state == "disputed"
    assert s.reference("b.svg:R1").status == "fail"  # statuses read case-insensitively
    assert s.reference("a.svg:B1").state == "single"
    assert s.labels_for("a.svg:R1")[0].evidence == "wheel, on the ground"
    assert s.label_provenance == "human"
    assert s.split is not None and set(s.split.held_out) | set(s.split.tuning) == {
        i.item_id for i in s.items
    }
    assert set(folder.files) == {"a.svg", "b.svg"}


def test_bad_tables_say_what_is_wrong(task: TaskSpec) -> None:
    with pytest.raises(CalibrationError, match=r"lacks columns \['annotator'\]"):
        parse_label_table("file,criterion,status\na.svg,R1,pass\n")
    with pytest.raises(CalibrationError, match="line 2: empty status"):
        parse_label_table("file,criterion,status,annotator\na.svg,R1,,alice\n")
    with pytest.raises(CalibrationError, match=r"'missing\.svg', which is not in the folder"):
        set_from_label_table(
            "file,criterion,status,annotator\nmissing.svg,R1,pass,a\n", FILES, task, set_id="x"
        )
    with pytest.raises(CalibrationError, match="has no criterion 'Z9'"):
        set_from_label_table(
            "file,criterion,status,annotator\na.svg,Z9,pass,a\n", FILES, task, set_id="x"
        )
    with pytest.raises(CalibrationError, match="status must be one of"):
        set_from_label_table(
            "file,criterion,status,annotator\na.svg,R1,great,a\n", FILES, task, set_id="x"
        )


def test_folder_round_trip_and_no_escape(task: TaskSpec, tmp_path: Path) -> None:
    rows = [LabelRow("a.svg", "R1", "pass", "alice"), LabelRow("a.svg", "R1", "pass", "bob")]
    (tmp_path / "a.svg").write_bytes(FILES["a.svg"])
    (tmp_path / "labels.csv").write_text(label_table_csv(rows))
    assert is_label_folder(tmp_path)
    folder = read_label_folder(tmp_path, task)
    assert folder.calibration_set.reference("a.svg:R1").state == "consensus"
    assert folder.calibration_set.split is None  # one drawing: only --split all
    (tmp_path / "labels.csv").write_text("file,criterion,status,annotator\n../x.svg,R1,pass,a\n")
    (tmp_path.parent / "x.svg").write_bytes(b"<svg/>")
    with pytest.raises(CalibrationError, match="not in"):
        read_label_folder(tmp_path, task)


def test_a_label_folder_calibrates_on_each_split(task: TaskSpec) -> None:
    table = "file,criterion,status,annotator\n" + "".join(
        f"d{k}.svg,R2,{'fail' if k % 3 == 0 else 'pass'},alice\n" for k in range(12)
    )
    files = {f"d{k}.svg": f"<svg id='{k}'/>".encode() for k in range(12)}
    s = set_from_label_table(table, files, task, set_id="split").calibration_set
    asked: dict[str, set[str]] = {}
    splits: tuple[SplitName, ...] = ("held_out", "tuning", "all")
    for split in splits:
        seen: set[str] = set()

        def fn(item: CalibrationItem, _r: int, seen: set[str] = seen) -> str:
            seen.add(item.item_id)
            return s.reference(item.item_id).status or "pass"

        run_calibration("g", "g@1", s, fn, split=split, repeats=1, n_boot=100)
        asked[split] = seen
    assert s.split is not None
    assert asked["held_out"] == set(s.split.held_out)
    assert asked["tuning"] == set(s.split.tuning)
    assert asked["all"] == asked["held_out"] | asked["tuning"] == {i.item_id for i in s.items}
