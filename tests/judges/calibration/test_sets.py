"""Calibration sets: reference labels, adjudication, split, CSV/JSONL round trips."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judges.calibration.setio import (
    items_from_csv,
    items_to_csv,
    labels_from_csv,
    labels_from_jsonl,
    labels_to_csv,
    labels_to_jsonl,
    read_set,
    set_from_jsonl,
    set_to_jsonl,
    write_set,
)
from judges.calibration.sets import STATUSES, CalibrationItem, CalibrationSet, Label, make_split
from regua.errors import CalibrationError

T = "pelican-bicycle-structured@1"


def _item(n: int, group: str = "g0", **kw: Any) -> CalibrationItem:
    return CalibrationItem(f"i{n}", f"{n:064x}", "R2", T, group=group, **kw)


def _set(labels: list[Label], n: int = 4) -> CalibrationSet:
    return CalibrationSet("s@1", T, tuple(_item(i, f"g{i % 2}") for i in range(n)), tuple(labels))


def test_reference_rules() -> None:
    s = _set(
        [
            Label("i0", "ann", "pass", "2026-01-01T00:00:00Z"),
            Label("i1", "ann", "fail", "t1"),
            Label("i1", "bob", "fail", "t2"),
            Label("i2", "ann", "fail", "t1"),
            Label("i2", "bob", "pass", "t2"),
            Label("i3", "ann", "fail", "t1"),
            Label("i3", "bob", "uncertain", "t2"),
            Label("i3", "adj", "fail", "t3", "rubric says visible", "adjudicator"),
        ]
    )
    assert (s.reference("i0").status, s.reference("i0").state) == ("pass", "single")
    assert (s.reference("i1").status, s.reference("i1").state) == ("fail", "consensus")
    assert (s.reference("i2").status, s.reference("i2").state) == (None, "disputed")
    assert (s.reference("i3").status, s.reference("i3").state) == ("fail", "adjudicated")
    assert s.annotator_labels("i3") == {"ann": "fail", "bob": "uncertain"}


def test_later_label_by_the_same_annotator_wins() -> None:
    s = _set([Label("i0", "ann", "fail", "t1"), Label("i0", "ann", "pass", "t2")])
    assert s.reference("i0").status == "pass"
    assert s.reference("i1").state == "unlabelled"


def test_invalid_records_are_refused() -> None:
    with pytest.raises(CalibrationError, match="status"):
        Label("i0", "ann", "ok", "t")
    with pytest.raises(CalibrationError, match="unknown item"):
        _set([Label("nope", "ann", "pass", "t")])
    with pytest.raises(CalibrationError, match="duplicate"):
        CalibrationSet("s", T, (_item(1), _item(1)))
    with pytest.raises(CalibrationError, match="relation"):
        _item(1, relation="sideways")


def test_split_is_seeded_by_group_and_stored() -> None:
    items = [_item(i, f"g{i % 5}") for i in range(40)]
    a = make_split(items, seed=3)
    assert a == make_split(list(reversed(items)), seed=3)
    assert a != make_split(items, seed=4) or a != make_split(items, seed=5)
    held_groups = {i.group for i in items if i.item_id in a.held_out}
    tune_groups = {i.group for i in items if i.item_id in a.tuning}
    assert held_groups and tune_groups and not held_groups & tune_groups
    s = CalibrationSet("s", T, tuple(items)).with_split(a)
    assert {i.item_id for i in s.part("held_out")} == set(a.held_out)
    by_item = make_split(items, seed=3, held_out_fraction=0.25, unit="item")
    assert len(by_item.held_out) == 10
    with pytest.raises(CalibrationError, match="no stored split"):
        CalibrationSet("s", T, tuple(items)).part("held_out")
    with pytest.raises(CalibrationError, match="partition"):
        CalibrationSet("s", T, tuple(items[:-1]), split=a)


labels_st = st.builds(
    Label,
    item_id=st.sampled_from(["i0", "i1", "i2"]),
    annotator=st.text(min_size=1, max_size=12).filter(lambda s: s.strip() == s and s != ""),
    status=st.sampled_from(STATUSES),
    time=st.text(max_size=25),
    evidence=st.text(max_size=60),
    role=st.sampled_from(["annotator", "adjudicator"]),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(labels_st, max_size=8))
def test_label_round_trips_csv_and_jsonl(labels: list[Label]) -> None:
    assert labels_from_jsonl(labels_to_jsonl(labels)) == tuple(labels)
    assert labels_from_csv(labels_to_csv(labels)) == tuple(labels)


def test_items_and_sets_round_trip(tmp_path: Path) -> None:
    items = (
        _item(0, style_tags=("style:a", "b, with comma")),
        _item(1, relation="must_change", base_item_id="i0", perturbation="lift-body@1"),
        CalibrationItem(
            "i2", "ab" * 32, "P1", T, "optional", "x/y.svg", ('q"uote', "cr\rlf\r\n"), None
        ),
    )
    assert items_from_csv(items_to_csv(items)) == items
    s = CalibrationSet(
        "s@1", T, items, (Label("i1", "ann", "fail", "t", 'said "no",\nclearly'),), description="d"
    ).with_split(make_split(items, seed=1, unit="item"))
    assert set_from_jsonl(set_to_jsonl(s)) == s
    assert read_set(write_set(s, tmp_path / "s.jsonl")[0]) == s
    write_set(s, tmp_path / "csv")
    assert read_set(tmp_path / "csv") == s
    assert s.content_hash() == read_set(tmp_path / "csv").content_hash()
    assert CalibrationSet.from_dict(s.to_dict()) == s


def test_spreadsheet_labels_import_without_role() -> None:
    text = "item_id,annotator,status,time,evidence\ni0,ana,fail,2026-11-29,foot floats\n"
    (label,) = labels_from_csv(text)
    assert (label.role, label.status, label.evidence) == ("annotator", "fail", "foot floats")
    with pytest.raises(CalibrationError, match="lacks columns"):
        labels_from_csv("item_id,status\ni0,pass\n")
    with pytest.raises(CalibrationError, match="unknown record"):
        set_from_jsonl('{"type": "bogus"}\n')
