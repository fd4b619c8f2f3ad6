"""Pools in the task format: the canary field keeps old hashes, derived canaries, bank files."""

from __future__ import annotations

import pytest

from regua.errors import TaskError
from tasks import TaskSpec, bundled_registry
from tasks.bank import check_banks, load_bank_text, shared_anchors
from tasks.model import Pool
from tasks.registry import BUNDLED_HASHES


def _reserved(**extra: object) -> TaskSpec:
    doc = bundled_registry().get("pelican-bicycle-static@1").to_wire()
    return TaskSpec.model_validate({**doc, "pool": "reserved", **extra})


def test_bundled_hashes_unchanged_by_the_pool_fields() -> None:
    reg = bundled_registry()
    assert {s.ref: s.content_hash() for s in reg.all()} == BUNDLED_HASHES
    assert all("canary" not in s.canonical_json() for s in reg.all())
    assert {p.value for p in Pool} == {"core", "rotating", "reserved"}


def test_derived_canary_is_stable_and_per_version() -> None:
    a, b = _reserved(), _reserved()
    assert a.canary_text() == b.canary_text() and a.canary_text().startswith("regua canary GUID ")
    other = _reserved(version=2)
    assert other.canary_text() != a.canary_text()
    assert a.canary_text() not in a.prompt


def test_explicit_canary_is_used_and_hashed() -> None:
    own = _reserved(canary="my-own-canary-string-0001")
    assert own.canary_text() == "my-own-canary-string-0001"
    assert own.content_hash() != _reserved().content_hash()
    with pytest.raises(ValueError, match="at least 16"):
        _reserved(canary="short")


BANK_1 = "id: pb\nversion: 1\nitems: [a@1, b@1, c@1]\n"
BANK_2 = "id: pb\nversion: 2\nitems: [a@1, b@1, d@1]\nanchors: [a@1, b@1]\n"


def test_bank_versions_share_anchors() -> None:
    one, two = load_bank_text(BANK_1), load_bank_text(BANK_2)
    assert check_banks([two, one]) == []
    assert shared_anchors(one, two) == ("a@1", "b@1")


def test_bank_problems_are_named() -> None:
    one = load_bank_text(BANK_1)
    lost = load_bank_text("id: pb\nversion: 2\nitems: [d@1, e@1]\nanchors: [d@1]\n")
    stray = load_bank_text("id: pb\nversion: 3\nitems: [d@1]\nanchors: [z@1]\n")
    none = load_bank_text("id: pb\nversion: 4\nitems: [d@1]\n")
    problems = check_banks([one, lost, stray, none])
    assert "pb v2: anchors missing from v1: ['d@1']" in problems
    assert "pb v3: anchors not among its items: ['z@1']" in problems
    assert "pb v4: declares no anchors with v3" in problems
    with pytest.raises(TaskError, match="not a valid bank file"):
        load_bank_text("id: pb\nversion: 0\nitems: []\n", "bank.yaml")
