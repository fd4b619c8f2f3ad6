"""No existence oracle on the pages: another submitter's run or artifact looks unknown (404)."""

from __future__ import annotations

from sqlalchemy import select

from service.storage import Artifact
from tests.helpers.web import Site, web_login


def _raw_sha(site: Site, run_id: str) -> str:
    with site.ctx.db.read() as s:
        sha = s.scalar(
            select(Artifact.sha256).where(Artifact.run_id == run_id, Artifact.kind == "raw")
        )
    assert sha is not None
    return sha


def test_another_submitters_run_page_answers_like_an_unknown_run(site: Site) -> None:
    alice, bob = site.client(), site.client()
    web_login(alice, site.tokens["alice"])
    web_login(bob, site.tokens["bob"])
    assert alice.get("/runs/runpending").status_code == 200  # alice submitted it
    theirs = bob.get("/runs/runpending")
    unknown = bob.get("/runs/runnever")
    assert theirs.status_code == unknown.status_code == 404
    assert theirs.text.replace("runpending", "X") == unknown.text.replace("runnever", "X")
    assert "zz-secret-model" not in theirs.text


def test_another_submitters_artifact_answers_like_an_unknown_one(site: Site) -> None:
    alice, bob = site.client(), site.client()
    web_login(alice, site.tokens["alice"])
    web_login(bob, site.tokens["bob"])
    sha = _raw_sha(site, "runpending")
    assert alice.get(f"/ui/artifacts/{sha}").status_code == 200
    theirs = bob.get(f"/ui/artifacts/{sha}")
    unknown = bob.get(f"/ui/artifacts/{'0' * 64}")
    assert theirs.status_code == unknown.status_code == 404
    assert theirs.json()["error"] == unknown.json()["error"]
    api_theirs = site.client("bob").get(f"/v1/artifacts/{sha}")
    assert api_theirs.status_code == 404
