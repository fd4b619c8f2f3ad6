"""``field_dict`` and ``FromRecord.of``: fields copied by name, overrides win, nothing defaulted
unseen."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from pydantic import ValidationError

from regua.records import FromRecord, field_dict


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
