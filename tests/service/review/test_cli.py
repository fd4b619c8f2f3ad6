"""``regua review``'s terminal loop against the real API (in-process app)."""

from __future__ import annotations

from pathlib import Path

from regua.settings import Settings
from service.access.tokens import create_token
from service.cli.review_cmd import ReviewSession, loop
from service.context import ServiceContext
from service.server.app import create_app
from tests.helpers.review_runs import SECRET_MODEL, add_run
from tests.helpers.server import http_client


def test_terminal_loop_shows_question_and_frame_paths_and_labels(tmp_path: Path) -> None:
    ctx = ServiceContext.open(Settings(data_dir=tmp_path, review_audit_rate=0.0))
    db, blobs = ctx.db, ctx.blobs
    token, _ = create_token(db, "reviewer", "terminal")
    add_run(db, blobs, "r1", {"R1": "uncertain", "R2": "uncertain"}, outcome="pending")
    answers = iter(["x", "s", "f", "foot floats", "u", "", "q"])
    shown: list[str] = []
    with http_client(create_app(ctx), Authorization=f"Bearer {token}") as http:
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
