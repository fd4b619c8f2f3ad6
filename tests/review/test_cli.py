"""``regua review``'s terminal loop against the real API (in-process app)."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from regua.settings import Settings
from service.api.app import create_app
from service.auth import create_token
from service.cli.review_cmd import ReviewSession, loop
from service.context import ServiceContext
from tasks import bundled_registry
from tests.review.factory import SECRET_MODEL, add_run, open_db


def test_terminal_loop_shows_question_and_frame_paths_and_labels(tmp_path: Path) -> None:
    db, blobs = open_db(tmp_path)
    ctx = ServiceContext(
        Settings(data_dir=tmp_path, review_audit_rate=0.0), db, blobs, bundled_registry()
    )
    token, _ = create_token(db, "reviewer", "terminal")
    add_run(db, blobs, "r1", {"R1": "uncertain", "R2": "uncertain"}, outcome="pending")
    answers = iter(["x", "s", "f", "foot floats", "u", "", "q"])
    shown: list[str] = []
    with TestClient(create_app(ctx), headers={"Authorization": f"Bearer {token}"}) as http:
        session = ReviewSession(http, tmp_path / "frames")
        given = loop(session, lambda _q: next(answers), shown.append)
    text = "\n".join(shown)
    assert given == 2
    assert "Does each foot touch its own pedal" in text or "seated on the saddle" in text
    paths = [Path(p) for p in text.split() if p.endswith(".png")]
    assert paths and all(p.is_file() and p.read_bytes()[:4] == b"\x89PNG" for p in paths)
    assert "saved: item is resolved (outcome re-computed)" in text
    assert "Nothing left" in text
    assert SECRET_MODEL not in text
