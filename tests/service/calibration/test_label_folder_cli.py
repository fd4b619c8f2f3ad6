"""``regua calibrate --set DIR`` on a folder of drawings with a ``labels.csv`` by two annotators.

The folder is generated (:mod:`tests.service.calibration.label_folder`): alice and bob agree
except on four items. What the user sees: the kappa between them, the four items listed as kept
out of the gate, the labels called people's; a judge that passes everything is refused on every
criterion and the stored gate gives it no vote. Real sandboxed rendering, real database.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judges.calibration.gate import GateDecision
from judges.calibration.metrics import cohen_kappa
from judges.calibration.runner import CalibrationRun
from service.cli import app
from service.evaluation.gate import GateTable, gate_table
from service.storage import Database
from tests.service.calibration import label_folder, pass_all
from tests.service.calibration.pass_all_llm import pass_everything_model
from tests.service.conftest import Calibrated

pytestmark = [pytest.mark.heavy, pytest.mark.browser, pytest.mark.sandbox]
ENV = {"REGUA_RENDER_WORKERS": "2", "COLUMNS": "200"}


@dataclass(frozen=True)
class Calibrations:
    """The generated folder, the data folder, and the two commands' output and runs."""

    folder: label_folder.LabelFolder
    data_dir: Path
    geometry: tuple[str, CalibrationRun]
    lax: tuple[str, CalibrationRun]
    lax_vision: tuple[str, CalibrationRun]


def _calibrate(
    judge: str, folder: Path, data: Path, out: Path, env: dict[str, str] | None = None
) -> tuple[str, CalibrationRun]:
    args = ["calibrate", "--judge", judge, "--set", str(folder), "--split", "all"]
    result = CliRunner().invoke(
        app,
        [*args, "--repeats", "1", "--data-dir", str(data), "--out", str(out)],
        env={**ENV, **(env or {})},
    )
    assert result.exit_code == 0, result.output
    return result.output, CalibrationRun.from_dict(json.loads(out.read_text()))


@pytest.fixture(scope="module")
def calibrations(tmp_path_factory: pytest.TempPathFactory) -> Calibrations:
    """Geometry, then the pass-everything judge, on one generated folder (renders kept)."""
    from tests.helpers.server import require_real_rendering

    require_real_rendering()
    root = tmp_path_factory.mktemp("labelled")
    folder = label_folder.make(root / "drawings")
    data = root / "data"
    profile = pass_all.register()
    geometry = _calibrate("geometry@1", folder.path, data, root / "geometry.json")
    lax = _calibrate(profile.id, folder.path, data, root / "lax.json")
    with pass_everything_model() as model:
        env = {"REGUA_JUDGE_BASE_URL": model.url + "/v1", "REGUA_JUDGE_MODEL": "lax-test"}
        vision = _calibrate("vision-llm-openai@1", folder.path, data, root / "vision.json", env)
        assert model.model.asked, "the vision judge never asked the model"
    return Calibrations(folder, data, geometry, lax, vision)


def _expected_kappa(folder: Path) -> float:
    rows = (folder / "labels.csv").read_text().splitlines()[1:]
    by: dict[str, dict[str, str]] = {}
    for line in rows:
        file, criterion, status, annotator, _time = line.split(",")
        by.setdefault(f"{file}:{criterion}", {})[annotator] = status
    keys = sorted(by)
    value = cohen_kappa([by[k]["alice"] for k in keys], [by[k]["bob"] for k in keys])
    assert value is not None
    return value


def test_annotator_kappa_is_printed_and_disagreements_are_listed_and_kept_out(
    calibrations: Calibrations,
) -> None:
    output, run = calibrations.geometry
    folder = calibrations.folder
    n = len(folder.items)
    assert "labels: given by people (annotators)" in output
    assert f"agreement between annotators (n={n} items)" in output
    assert f"kappa {_expected_kappa(folder.path):.3f}" in output
    assert f"alice vs bob (n={n})" in output
    assert f"annotators disagree on {len(folder.disputed)} items (kept out of the gate):" in output
    for item in folder.disputed:
        assert item in output
    assert tuple(d["item_id"] for d in run.disputed) == folder.disputed
    assert all(set(d["labels"]) == {"alice", "bob"} for d in run.disputed)
    assert run.metrics.n_disputed == len(folder.disputed)
    assert run.label_provenance == "human"
    scored = sum(sum(sum(row) for row in m.confusion) for m in run.per_criterion.values())
    assert scored == run.metrics.n_scored <= n - len(folder.disputed)


def _stored(data: Path, profile_id: str) -> dict[str, GateDecision]:
    db = Database(f"sqlite:///{data / 'regua.sqlite3'}")
    try:
        with db.read() as s:
            table = gate_table(s)
    finally:
        db.dispose()
    return {k[1]: v for k, v in table.latest.items() if k[0] == profile_id}


def test_every_criterion_gets_a_three_way_status(calibrations: Calibrations) -> None:
    output, run = calibrations.geometry
    stored = _stored(calibrations.data_dir, "geometry@1")
    assert {c: (d.status, d.needs) for c, d in stored.items()} == {
        d.criterion: (d.status, d.needs) for d in run.decisions
    }
    assert {d.criterion for d in run.decisions} == set(label_folder.GEOMETRY)
    for d in run.decisions:
        assert d.status in ("trusted", "not_trusted", "inconclusive")
        assert d.passed == (d.status == "trusted")
        word = {"trusted": "TRUSTED", "not_trusted": "NOT TRUSTED"}.get(d.status, "INCONCLUSIVE")
        assert f"gate {d.criterion}: {word} — " in output
        if d.status == "inconclusive":
            assert d.needs and all(n.label in ("pass", "fail") for n in d.needs)
            assert any(
                re.search(r"about \d+ more items? labelled '(pass|fail)'", r) for r in d.reasons
            )


def test_a_vision_model_that_passes_everything_is_refused(calibrations: Calibrations) -> None:
    output, run = calibrations.lax_vision
    assert "vision-llm-openai+lax-test@1" in output
    assert {d.criterion for d in run.decisions} == set(label_folder.GEOMETRY)
    assert all(d.status == "not_trusted" and not d.passed for d in run.decisions), [
        (d.criterion, d.status, d.reasons) for d in run.decisions
    ]
    assert "TRUSTED —" not in output.replace("NOT TRUSTED —", "")


def test_a_judge_that_passes_everything_is_refused_and_gets_no_vote(
    calibrations: Calibrations,
) -> None:
    output, run = calibrations.lax
    assert run.decisions and all(d.status == "not_trusted" for d in run.decisions), [
        (d.criterion, d.status, d.reasons) for d in run.decisions
    ]
    for d in run.decisions:
        assert f"gate {d.criterion}: NOT TRUSTED — " in output
        assert any(r.startswith("missed-critical-error rate 1.000") for r in d.reasons)
    profile = pass_all.register()
    stored = _stored(calibrations.data_dir, profile.id)
    assert set(stored) == set(label_folder.GEOMETRY)
    assert all(v.status == "not_trusted" and not v.passed for v in stored.values())
    table = GateTable({(profile.id, c, v.task_family): v for c, v in stored.items()})
    assert not any(table(profile, c, v.task_family) for c, v in stored.items())


def test_bundled_labels_are_called_project_written_never_human(
    geometry_calibrated: Calibrated,
) -> None:
    output = geometry_calibrated.output
    assert "project-written labels" in output
    assert "agreement between label passes" in output
    assert "human" not in output.lower()
