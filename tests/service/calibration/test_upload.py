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
