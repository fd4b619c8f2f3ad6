"""Issue 16 part 4: geometry declared by the task, as data; frozen pelican hashes unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from regua.errors import TaskError
from tasks import bundled_registry, load_task_file, load_task_text
from tasks.declared import declared_geometry, family_geometry
from tasks.geometry import RelationKind
from tasks.registry import BUNDLED_HASHES, bundled_spec_texts

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tasks"
FLAMINGO = FIXTURES / "flamingo-unicycle-structured-1.yaml"


def flamingo_doc() -> dict[str, object]:
    doc = yaml.safe_load(FLAMINGO.read_text())
    assert isinstance(doc, dict)
    return doc


def test_bundled_content_hashes_are_unchanged() -> None:
    for name, text in bundled_spec_texts():
        spec = load_task_text(text, name)
        assert spec.content_hash() == BUNDLED_HASHES[spec.ref], name
        doc = json.loads(spec.canonical_json())
        assert "geometry" not in doc  # an unset block takes no part in the hash
        if spec.family == "pelican-bicycle":  # released before `states`: none declared
            assert all("states" not in row for row in doc["criteria"])


def test_structured_pelicans_take_the_family_declaration() -> None:
    family = family_geometry("pelican-bicycle")
    assert family is not None and family.reference_length.name == "wheel diameter"
    by_ref = {s.ref: declared_geometry(s) for s in bundled_registry().all()}
    with_geometry = sorted(ref for ref, geo in by_ref.items() if geo is not None)
    assert with_geometry == [
        "pelican-bicycle-animated@1",
        "pelican-bicycle-animated@2",
        "pelican-bicycle-structured@1",
        "pelican-bicycle-structured@2",
    ]
    assert all(geo is family for geo in by_ref.values() if geo is not None)
    assert family_geometry("../specs/pelican-bicycle-open-1") is None  # no path escapes


def test_flamingo_declares_its_own_geometry() -> None:
    task = load_task_file(FLAMINGO)
    geo = declared_geometry(task)
    assert geo is task.geometry and geo is not None
    assert geo.reference_length.parts == ("wheel",)
    kinds = {r.criterion: r.kind for r in geo.relations}
    assert kinds == {
        "B1": RelationKind.PRESENT,
        "B2": RelationKind.JOINED,
        "R1": RelationKind.SEATED,
        "R2": RelationKind.CONTACT,
    }
    without = task.model_copy(update={"geometry": None})
    assert without.content_hash() != task.content_hash()  # the declaration is frozen content


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["geometry"]["relations"][3]["pairs"][0].update(b="pedal-middle"),
            "relation R2 names undeclared parts ['pedal-middle']",
        ),
        (
            lambda d: d["output"]["required_ids"].remove("seat"),
            "required geometry parts ['seat'] not in required_ids",
        ),
        (
            lambda d: d["geometry"]["relations"][2].update(criterion="R9"),
            "geometry relations for unknown criteria ['R9']",
        ),
        (
            lambda d: d["geometry"]["relations"][3].update(pairs=[]),
            "R2: a contact relation needs pairs",
        ),
        (
            lambda d: d["geometry"]["reference_length"].update(measure="volume"),
            "reference_length.measure",
        ),
    ],
)
def test_a_bad_declaration_is_refused_with_its_reason(edit: object, message: str) -> None:
    doc = flamingo_doc()
    assert callable(edit)
    edit(doc)
    with pytest.raises(TaskError) as err:
        load_task_text(yaml.safe_dump(doc), "flamingo.yaml")
    assert "flamingo.yaml: invalid task spec" in str(err.value)
    assert message in str(err.value)
