"""``field_dict``, ``fields_of`` and ``FromRecord.of``: fields copied by name, overrides win,
nothing defaulted unseen, nested values neither converted nor copied."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from pydantic import ValidationError

from regua.records import FromRecord, field_dict, fields_of


@dataclass
class _Row:
    id: int
    name: str
    note: str | None
    extra: str = "unused"


class _View(FromRecord):
    id: int
    name: str
    note: str | None = None
    label: str = "default"


def test_field_dict_copies_the_named_attributes_in_order() -> None:
    got = field_dict(_Row(1, "a", None), "name", "id")
    assert got == {"name": "a", "id": 1}
    assert list(got) == ["name", "id"]
    assert field_dict(_Row(1, "a", None)) == {}
    with pytest.raises(AttributeError):
        field_dict(_Row(1, "a", None), "missing")


def test_of_reads_every_field_not_given_and_given_values_win() -> None:
    view = _View.of(_Row(3, "b", "n"), label="x", name="given")
    assert view == _View(id=3, name="given", note="n", label="x")


def test_of_never_falls_back_to_a_default_for_a_missing_attribute() -> None:
    with pytest.raises(AttributeError, match="label"):
        _View.of(_Row(3, "b", "n"))


def test_of_validates_like_the_constructor() -> None:
    with pytest.raises(ValidationError):
        _View.of(_Row(3, "b", "n"), id="not a number", label="x")


@dataclass(frozen=True)
class _Inner:
    tags: list[str]


@dataclass(frozen=True)
class _Outer:
    name: str
    inner: _Inner
    level: int | None = None


def test_fields_of_gives_every_field_in_order_and_leaves_nested_values_as_they_are() -> None:
    inner = _Inner(["a"])
    got = fields_of(_Outer("x", inner))
    assert list(got) == ["name", "inner", "level"]
    assert got == {"name": "x", "inner": inner, "level": None}
    assert got["inner"] is inner  # dataclasses.asdict would have made it a new dict
