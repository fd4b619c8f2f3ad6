"""The task format of graded criteria and rubrics: what is refused, what the hash covers."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from regua.errors import InvalidTaskError
from tasks import TaskSpec, bundled_registry
from tasks.authoring import parse_task
from tasks.grading import Rubric, parse_formula

BASE = "lighthouse-night-graded@1"


def _doc() -> dict[str, Any]:
    return bundled_registry().get(BASE).to_wire()


def _parse(doc: dict[str, Any]) -> TaskSpec:
    return parse_task(yaml.safe_dump(doc), "graded.yaml")


def _criterion(doc: dict[str, Any], cid: str) -> dict[str, Any]:
    return next(c for c in doc["criteria"] if c["id"] == cid)


def test_the_formula_reads_like_the_worked_example() -> None:
    multiplier, terms = parse_formula("20 x (0.30 P + 0.25 I + 0.20 C + 0.10 L + 0.15 (5 - H))")
    assert multiplier == "20"
    assert [t.text() for t in terms] == ["0.30 P", "0.25 I", "0.20 C", "0.10 L", "0.15 (5 - H)"]
    assert parse_formula("0.5*P + 0.5*(5-H)")[0] == "1"
    assert parse_formula("0.7 (5 - H)")[1][0].inverted_from == 5  # one inverted term alone
    with pytest.raises(ValueError, match=re.escape("'0.3 P Q'")):
        parse_formula("20 x (0.3 P Q + 0.7 C)")


def test_the_bundled_example_declares_the_rubric() -> None:
    spec = bundled_registry().get(BASE)
    assert spec.rubric is not None
    assert spec.rubric.display() == "Q = 20 x (0.30 P + 0.25 I + 0.20 C + 0.10 L + 0.15 (5 - H))"
    assert [b.text() for b in spec.rubric.bounds()] == ["P >= 4", "I >= 4", "C >= 3", "H = 0"]
    assert [c.id for c in spec.criteria if c.graded] == ["P", "I", "C", "L", "H"]
    assert spec.criterion("H").levels() == (0, 5)
    assert spec.level_status("I", 3) == "fail" and spec.level_status("I", 4) == "pass"
    assert spec.level_status("L", 0) == "pass"  # no bound on L: the score decides


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: _criterion(d, "P")["anchors"].pop("3"),
            "needs a written anchor for every level",
        ),
        (lambda d: _criterion(d, "P").update(scale="5..0"), "top level must be above"),
        (lambda d: _criterion(d, "X1").update(anchors={0: "x"}), "anchors need a scale"),
        (lambda d: _criterion(d, "L").update(kind="optional"), "must be necessary"),
        (lambda d: d["rubric"].update(minimums={"X1": 1}), "X1 has no scale"),
        (lambda d: d["rubric"].update(minimums={"Z": 1}), "does not define"),
        (lambda d: d["rubric"].update(maximums={"H": 7}), "outside the scale 0..5"),
        (lambda d: d["rubric"].update(threshold=101), "above the highest score 100"),
        (lambda d: d["rubric"].update(formula="20 x (0.3 P + 0.7 (4 - H))"), "inverted at the top"),
        (lambda d: d["rubric"].update(formula="20 x (0.3 P +)"), "formula term"),
    ],
)
def test_a_bad_graded_task_is_refused_naming_what_is_wrong(edit: Any, message: str) -> None:
    doc = _doc()
    edit(doc)
    with pytest.raises(InvalidTaskError, match=message):
        _parse(doc)


def test_a_rubric_change_is_a_new_version_and_pass_fail_tasks_keep_their_hash() -> None:
    spec = bundled_registry().get(BASE)
    doc = _doc()
    doc["rubric"]["threshold"] = 79
    assert _parse(doc).content_hash() != spec.content_hash()
    doc = _doc()
    _criterion(doc, "P")["anchors"]["5"] = "every element, beautifully drawn"
    assert _parse(doc).content_hash() != spec.content_hash()
    for pelican in bundled_registry().all():
        if pelican.rubric is None:
            canonical = json.loads(pelican.canonical_json())
            assert "rubric" not in canonical
            assert all("scale" not in c and "anchors" not in c for c in canonical["criteria"])


def test_rubric_arithmetic_is_exact_decimal() -> None:
    rubric = Rubric(formula="3 x (0.1 A + 0.2 B)", threshold=0.9)
    # in binary floats 3 * (0.1 + 0.2) = 0.9000000000000001; the rubric keeps 0.9 exactly
    assert rubric.score({"A": 1, "B": 1}) == rubric.score({"A": 3, "B": 0})
    assert str(rubric.score({"A": 1, "B": 1})) == "9/10"
