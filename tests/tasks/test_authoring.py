"""Users' task files and templates: located errors, export/import round trip, frozen hashes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from regua.errors import InvalidTaskError
from tasks import bundled_registry
from tasks.authoring import parse_task
from tasks.registry import BUNDLED_HASHES
from tasks.variants import expand_template

BASE = "pelican-bicycle-static@1"


def _doc() -> dict[str, Any]:
    return bundled_registry().get(BASE).to_wire()


def test_bundled_hashes_do_not_change_with_the_new_fields() -> None:
    for spec in bundled_registry().all():
        assert spec.content_hash() == BUNDLED_HASHES[spec.ref]
        assert "dimensions" not in spec.canonical_json() and "template" not in spec.canonical_json()
    spec = bundled_registry().get(BASE)
    varied = spec.model_copy(update={"dimensions": {"vehicle": "bicycle"}})
    assert varied.content_hash() != spec.content_hash()
    assert spec.model_copy(update={"template": "t"}).content_hash() != spec.content_hash()


def test_export_import_round_trip_json_and_yaml() -> None:
    spec = bundled_registry().get(BASE)
    from_json = parse_task(json.dumps(spec.to_wire()), "x.json")
    from_yaml = parse_task(yaml.safe_dump(spec.to_wire()), "x.yaml")
    assert from_json == spec == from_yaml
    assert from_json.content_hash() == BUNDLED_HASHES[BASE]


def test_yaml_syntax_error_names_line_and_column() -> None:
    text = "id: a\nversion: 1\nprompt: [unclosed\nfamily: f\n"
    with pytest.raises(InvalidTaskError) as err:
        parse_task(text, "mine.yaml")
    assert "mine.yaml: not valid YAML/JSON at line" in str(err.value)
    assert "column" in str(err.value)


def test_bad_field_is_named_with_its_line() -> None:
    doc = _doc()
    doc["criteria"][1]["kind"] = "mandatory"
    doc["version"] = 0
    text = yaml.safe_dump(doc, sort_keys=False)
    kind_line = next(i + 1 for i, line in enumerate(text.splitlines()) if "kind: mandatory" in line)
    version_line = next(
        i + 1 for i, line in enumerate(text.splitlines()) if line.startswith("version:")
    )
    with pytest.raises(InvalidTaskError) as err:
        parse_task(text, "mine.yaml")
    message = str(err.value)
    assert f"criteria.1.kind (line {kind_line}):" in message
    assert f"version (line {version_line}): Input should be greater than or equal to 1" in message


def test_not_a_mapping_is_refused() -> None:
    with pytest.raises(InvalidTaskError, match="holds one mapping"):
        parse_task("- a\n- b\n", "list.yaml")


def _template(**over: object) -> str:
    spec = _doc() | {"id": "{subject}-on-{vehicle}", "family": "birds-on-vehicles"}
    spec["prompt"] = "Draw an SVG of a {subject} riding a {vehicle}."
    doc = {
        "template": "birds-on-vehicles",
        "dimensions": {"subject": ["heron", "stork"], "vehicle": ["bicycle", "scooter"]},
        "spec": spec,
    } | over
    return yaml.safe_dump(doc, sort_keys=False)


def test_template_expands_every_combination_with_dimensions_recorded() -> None:
    specs = expand_template(_template(), "t.yaml")
    assert [s.ref for s in specs] == [
        "heron-on-bicycle@1",
        "heron-on-scooter@1",
        "stork-on-bicycle@1",
        "stork-on-scooter@1",
    ]
    assert specs[1].dimensions == {"subject": "heron", "vehicle": "scooter"}
    assert specs[1].prompt == "Draw an SVG of a heron riding a scooter."
    assert {s.template for s in specs} == {"birds-on-vehicles"}
    assert {s.family for s in specs} == {"birds-on-vehicles"}
    assert len({s.content_hash() for s in specs}) == 4
    # a variant exported and imported again is the same frozen version
    assert parse_task(json.dumps(specs[2].to_wire())).content_hash() == specs[2].content_hash()


def test_template_declared_list_of_variants() -> None:
    chosen = [{"subject": "stork", "vehicle": "bicycle"}]
    specs = expand_template(_template(variants=chosen), "t.yaml")
    assert [s.ref for s in specs] == ["stork-on-bicycle@1"]
    bad = [{"subject": "stork", "vehicle": "tram"}]
    with pytest.raises(InvalidTaskError, match=r"variants.0.vehicle: 'tram' is not one of"):
        expand_template(_template(variants=bad), "t.yaml")


def test_template_errors_name_what_to_fix() -> None:
    doc = yaml.safe_load(_template())
    doc["spec"]["title"] = "A {colour} bird"
    with pytest.raises(InvalidTaskError, match=r"spec.title: \{colour\} is not a declared"):
        expand_template(yaml.safe_dump(doc), "t.yaml")
    doc = yaml.safe_load(_template())
    doc["spec"]["id"] = "{subject}-bird"
    with pytest.raises(InvalidTaskError, match="are both heron-bird@1; put the dimensions"):
        expand_template(yaml.safe_dump(doc), "t.yaml")
    doc = yaml.safe_load(_template())
    doc["spec"]["mode"] = "sculpted"
    with pytest.raises(InvalidTaskError, match=r"\[subject=heron, vehicle=bicycle\]: invalid"):
        expand_template(yaml.safe_dump(doc), "t.yaml")


def test_sample_template_expands() -> None:
    path = Path(__file__).resolve().parents[2] / "samples/tasks/birds-on-vehicles.yaml"
    specs = expand_template(path.read_text(), str(path))
    assert len(specs) == 4 and {s.family for s in specs} == {"birds-on-vehicles"}
    stork = next(s for s in specs if s.ref == "stork-scooter-static@1")
    assert stork.criterion("R1").question.startswith("Is the stork riding the scooter")
    assert stork.dimensions == {"subject": "stork", "vehicle": "scooter"}


def test_json_with_tabs_reads_and_json_errors_name_line_and_column() -> None:
    spec = bundled_registry().get(BASE)
    text = json.dumps(spec.to_wire(), indent="\t")
    assert parse_task(text, "tabs.json") == spec
    broken = text.replace('"version": 1,', '"version": 1', 1)
    line = next(i + 1 for i, row in enumerate(broken.splitlines()) if '"family"' in row)
    with pytest.raises(InvalidTaskError, match=rf"tabs.json: not valid JSON at line {line}, "):
        parse_task(broken, "tabs.json")
    doc = spec.to_wire() | {"pool": "secret"}
    text = json.dumps(doc, indent=2)
    pool_line = next(i + 1 for i, row in enumerate(text.splitlines()) if '"pool"' in row)
    with pytest.raises(InvalidTaskError, match=rf"pool \(line {pool_line}\): Input should be"):
        parse_task(text, "mine.json")
