"""``POST /v1/calibrations`` with an uploaded label set (``labels.csv`` and its drawings), over a
real HTTP server, rendering in the real sandbox: the same format as ``regua calibrate --set DIR``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.service.calibration import label_folder
from tests.service.conftest import Api

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]


def _upload(folder: Path) -> dict[str, Any]:
    files = {p.name: p.read_text() for p in sorted(folder.glob("*.svg"))}
    return {
        "name": "uploaded-lf",
        "labels_csv": (folder / "labels.csv").read_text(),
        "files": files,
    }


def test_an_uploaded_label_set_is_calibrated_stored_and_gated(api: Api, tmp_path: Path) -> None:
    folder = label_folder.make(tmp_path / "lf", n_drawings=6)
    body = {
        "judge": "geometry@1",
        "upload": _upload(folder.path),
        "split": "all",
        "repeats": 1,
        "n_boot": 200,
        "wait": True,
    }
    res = api.client.post("/v1/calibrations", json=body, headers=api.h("admin"), timeout=600)
    assert res.status_code == 201, res.text
    view = res.json()
    assert view["set_id"] == "uploaded-lf"
    run = view["run"]
    assert run["label_provenance"] == "human"
    assert [d["item_id"] for d in run["disputed"]] == [
        i for i in folder.disputed if i in folder.items
    ]
    assert run["human"]["n_items"] == len(folder.items)
    decisions = {d["criterion"]: d for d in view["decisions"]}
    assert set(decisions) <= set(label_folder.GEOMETRY) and decisions
    for d in decisions.values():
        assert d["status"] in ("trusted", "not_trusted", "inconclusive")
        assert d["passed"] == (d["status"] == "trusted")
    gate = api.client.get("/v1/gate", headers=api.h("admin"))
    assert gate.status_code == 200
    stored = {
        g["criterion"]: g["status"]
        for g in gate.json()["decisions"]
        if g["set_id"] == "uploaded-lf"
    }
    assert stored == {c: d["status"] for c, d in decisions.items()}


def test_a_bad_upload_is_refused_at_once(api: Api, tmp_path: Path) -> None:
    folder = label_folder.make(tmp_path / "lf", n_drawings=2)
    upload = _upload(folder.path)
    files = dict(upload["files"])
    files.pop(sorted(files)[0])
    body = {"judge": "geometry@1", "upload": {**upload, "files": files}, "split": "all"}
    res = api.client.post("/v1/calibrations", json=body, headers=api.h("admin"))
    assert res.status_code == 422, res.text
    assert "which is not in the folder" in res.text
    bad = {"judge": "geometry@1", "upload": {**upload, "labels_csv": "file,status\n"}}
    res = api.client.post("/v1/calibrations", json=bad, headers=api.h("admin"))
    assert res.status_code == 422 and "lacks columns" in res.text
    res = api.client.post("/v1/calibrations", json=body, headers=api.h("reviewer"))
    assert res.status_code == 403


def test_a_one_item_upload_whose_file_is_not_svg_is_refused_and_stores_nothing(api: Api) -> None:
    """The issue's own example: one label on R2 of a file that is not an SVG was accepted (201)
    and replaced the trusted decisions the bundled set earned."""
    body = {
        "judge": "geometry@1",
        "upload": {
            "labels_csv": "file,criterion,status,annotator\na.svg,R2,pass,al\n",
            "files": {"a.svg": "not svg"},
        },
        "split": "all",
        "wait": True,
    }
    res = api.client.post("/v1/calibrations", json=body, headers=api.h("admin"))
    assert res.status_code == 422, res.text
    assert res.json()["detail"] == (
        "1 of 1 labelled file(s) refused, nothing was stored: a.svg: not an SVG document "
        "(no <svg> element found)"
    )
    listed = api.client.get("/v1/calibrations", headers=api.h("admin")).json()
    assert listed["calibrations"] == []
    assert api.client.get("/v1/gate", headers=api.h("admin")).json()["decisions"] == []
    two = {
        "a.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>",
        "b.txt": "One: <svg><rect/></svg> and another: <svg><circle/></svg>.",
    }
    csv_text = "file,criterion,status,annotator\na.svg,R2,pass,al\nb.txt,R2,fail,al\n"
    body["upload"] = {"labels_csv": csv_text, "files": two}
    res = api.client.post("/v1/calibrations", json=body, headers=api.h("admin"))
    assert res.status_code == 422, res.text
    assert "1 of 2 labelled file(s) refused" in res.json()["detail"]
    assert "b.txt: 2 candidate SVG documents in one file" in res.json()["detail"]
    csv_text = "file,criterion,status,annotator\na.svg,R2,pass,al\na.svg,Z9,fail,al\n"
    body["upload"] = {"labels_csv": csv_text, "files": {"a.svg": two["a.svg"]}}
    res = api.client.post("/v1/calibrations", json=body, headers=api.h("admin"))
    assert res.status_code == 422, res.text
    assert (
        "labels.csv line 3: pelican-bicycle-structured@1 (family pelican-bicycle) has no "
        in (res.json()["detail"])
    )
