"""Every check result is stored and shown with its evidence (issue 14, item 11).

The old check stage read ``report["results"]`` while the report names that list ``checks``, so
nothing but "extract: pass" reached the run. Through the real service (HTTP API, executor,
checker, sandboxed render, judges), a script-carrying SVG now shows each check's result, with
line, element path and snippet, in ``GET /v1/runs/{id}`` and on the run page; the rows are in
``check_results``.
"""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from sqlalchemy import select

import checks
from service.storage import CheckResultRow
from tests.helpers.httpclient import Http
from tests.helpers.web import web_login
from tests.service.conftest import Api

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]

TASK = "pelican-bicycle-structured@1"
GOOD = (Path(__file__).resolve().parents[3] / "samples/outputs/structured-good.svg").read_text()
SCRIPT = GOOD.replace("<title>", "<script>x()</script><title>")


def test_a_script_carrying_svg_shows_every_check_with_its_evidence(api: Api) -> None:
    body = {"task": TASK, "model": {"label": "m", "provider": "acme"}, "output": SCRIPT}
    posted = api.client.post("/v1/runs", json=body, headers=api.h("submitter"))
    assert posted.status_code in (200, 201, 202), posted.text
    run_id = posted.json()["run_id"]
    api.drain()
    view = api.client.get(f"/v1/runs/{run_id}", headers=api.h("submitter")).json()
    assert view["outcome"]["status"] == "fail"
    results = {r["id"]: r for r in view["checks"]["results"]}
    expected = {"extract"} | {c.id for c in checks.registered_checks()}
    assert set(results) == expected  # every check, not just "extract: pass"
    script = results["script"]
    assert script["status"] == "fail"
    assert script["evidence"] == [
        {
            "message": "<script> element",
            "line": 2,
            "path": "/svg[1]/script[1]",
            "snippet": "<script>x()",
        }
    ]
    assert results["root"]["status"] == "pass" and results["root"]["evidence"][0]["line"] == 1
    assert view["checks"]["status"] == "fail"
    with api.ctx.db.read() as s:
        rows = s.scalars(select(CheckResultRow).where(CheckResultRow.run_id == run_id)).all()
        stored = {r.check_id: (r.status, r.evidence) for r in rows}
    assert set(stored) == expected and stored["script"] == ("fail", script["evidence"])
    with Http(base_url=api.client.base_url, follow_redirects=True, timeout=30) as web:
        web_login(web, api.tokens["submitter"])  # the pages take a session from the login form
        page = web.get(f"/runs/{run_id}")
    assert page.status_code == 200
    text = html.unescape(page.text)
    for check_id in expected:
        assert f'<td class="mono">{check_id}</td>' in text
    assert "<script> element (line 2)" in text
    assert "/svg[1]/script[1]" in text and "<code><script>x()</code>" in text
