"""Pairwise storage on SQLite and PostgreSQL: migration ``0620_pairwise``, the writer, the ranking
and the calibration against imported preferences (no rendering: the runs are bare rows)."""

from __future__ import annotations

import json
from pathlib import Path

from alembic import command

from checks import extract_svg
from judges.pairwise import PairAnswer, PairFailure, PairOutcome, combine
from judges.pairwise.model import Label
from regua.hashing import sha256_hex
from service.pairwise.importer import import_preferences
from service.pairwise.ranking import RankingQuery, pairwise_ranking
from service.pairwise.store import PairSide, comparison_rows, record_comparison
from service.pipeline.submit import ensure_task_row
from service.storage import Artifact, Database, Run
from service.storage.blobs import LocalBlobStore
from service.storage.engine import migrations_config
from tasks import bundled_registry

TASK = bundled_registry().get("pelican-bicycle-structured@1")
SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 9 9"><rect width="{}" height="1"/></svg>'
)


def _answer(label: Label) -> PairAnswer:
    return PairAnswer(label, "because", json.dumps({"winner": label}))


def _outcome(first: PairAnswer | PairFailure, second: PairAnswer | PairFailure) -> PairOutcome:
    result, biased = combine(first, second)
    return PairOutcome("pairwise-test@1", first, second, result, biased)


def _seed(db: Database, folder: Path) -> dict[str, str]:
    """Three bare runs (m1, m2, m3) and their drawings as files; model -> drawing sha256."""
    folder.mkdir()
    shas = {}
    for i, model in enumerate(("m1", "m2", "m3"), start=1):
        (folder / f"{model}.svg").write_text(SVG.format(i))
        found = extract_svg(SVG.format(i)).svg_text
        assert found is not None
        shas[model] = sha256_hex(found.encode())  # as the check stage would store it
    with db.write() as s:
        task_pk = ensure_task_row(s, TASK).id
        for model in shas:
            s.add(Run(id=f"run-{model}", task_ref=TASK.ref, task_pk=task_pk, model_label=model))
    return shas


def test_comparisons_and_preferences_are_stored_and_ranked(
    database_url: str, tmp_path: Path
) -> None:
    db = Database(database_url)
    blobs = LocalBlobStore(tmp_path / "artifacts")
    folder = tmp_path / "drawings"
    try:
        shas = _seed(db, folder)
        sides = {m: PairSide(f"run-{m}", m, sha) for m, sha in shas.items()}
        plan: list[tuple[str, str, PairAnswer | PairFailure, PairAnswer | PairFailure]] = [
            ("m1", "m2", _answer("X"), _answer("Y")),  # m1 wins in both orders
            ("m1", "m3", _answer("X"), _answer("Y")),
            ("m2", "m3", _answer("X"), _answer("X")),  # flips with the order
            ("m2", "m3", PairFailure("timeout", "slow"), _answer("Y")),
        ]
        with db.write() as s:
            for a, b, one, two in plan:
                record_comparison(
                    s, blobs, (TASK.ref, "B1"), (sides[a], sides[b]), _outcome(one, two)
                )
        rows = comparison_rows(db, TASK.ref, "B1")
        assert [(r.result, r.position_biased, r.failure_cause) for r in rows] == [
            ("a", False, None),
            ("a", False, None),
            ("tie", True, None),
            (None, False, "timeout"),
        ]
        with db.read() as s:
            reply = s.get(Artifact, rows[3].first_reply_id)
            assert reply is not None and reply.kind == "pairwise_reply"
            assert json.loads(blobs.get(reply.sha256))["failure"] == "timeout"
        csv = folder / "prefs.csv"
        csv.write_text(
            "left,right,winner,annotator\nm2.svg,m1.svg,right,ann\nm3.svg,m2.svg,tie,ann\n"
        )
        assert import_preferences(db, blobs, csv, task_ref=TASK.ref, criterion="B1").stored == 2
        doc = pairwise_ranking(db, RankingQuery(TASK.ref, "B1", min_comparisons=2, resamples=100))
        assert [(m["model"], m["comparisons"], m["preliminary"]) for m in doc["models"]] == [
            ("m1", 2, False),
            ("m2", 2, False),
            ("m3", 2, False),
        ]
        assert doc["calibration"] == {
            "preferences": 2,
            "judged": 2,  # m1 > m2 agrees; m2 = m3 meets the biased tie (agrees) and a failure
            "failures": 1,
            "missing": 0,
            "agreements": 2,
            "agreement_rate": 1.0,
            "pairs": 3,
            "position_biased": 1,
            "position_bias_rate": 1 / 3,
        }
        other = pairwise_ranking(db, RankingQuery(TASK.ref, "C1"))
        assert other["models"] == [] and other["comparisons"] == 0
    finally:
        db.dispose()


def test_migration_0620_creates_and_drops_the_pairwise_tables(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'm.sqlite3'}")
    tables = {"pairwise_comparisons", "pairwise_preferences"}
    try:
        assert set(db.table_names()) >= tables
        cfg = migrations_config(db.engine)
        with db.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0510_gate_status")
        assert not tables & set(db.table_names())
        assert "gate_decisions" in db.table_names()
    finally:
        db.dispose()
