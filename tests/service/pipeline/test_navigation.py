"""A drawing that navigates its own page can never make its run incomplete.

``<foreignObject><meta http-equiv="refresh" content="0;url=about:blank"/></foreignObject>`` on the
open task used to replace the document mid-render (the execution context was destroyed: the run
was ``incomplete`` and left the pass rate). The served policy's ``sandbox`` directive now refuses
every navigation of the page (refresh, form submission, ``location``; scripts never run anyway),
the renderer records each refusal in ``render.json`` (``navigations``), and F1 fails by that
declared rule: no task allows a drawing to replace itself. Through the real service (HTTP API,
executor, checker, bubblewrap sandbox, Chromium): what the submitter reads and what is stored.
"""

from __future__ import annotations

import html
import json
from typing import Any

import pytest
from sqlalchemy import select

from service.storage import Artifact, RenderRecord
from tests.helpers.httpclient import Http
from tests.helpers.web import web_login
from tests.service.conftest import Api

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]

TASK = "pelican-bicycle-open@1"
DRAWING = '<rect width="800" height="600" fill="#3366cc"/><circle cx="400" cy="300" r="80"/>'
REFRESH = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">'
    + DRAWING
    + '<foreignObject width="10" height="10"><meta xmlns="http://www.w3.org/1999/xhtml" '
    'http-equiv="refresh" content="0;url=about:blank"/></foreignObject></svg>'
)
FORM = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">'
    + DRAWING
    + '<foreignObject width="200" height="50"><form xmlns="http://www.w3.org/1999/xhtml" '
    'action="about:blank"><input type="submit" autofocus="autofocus"/></form></foreignObject></svg>'
)
LOCATION = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">'
    + DRAWING
    + "<script>location.href = 'about:blank'; window.location.replace('about:blank')</script></svg>"
)


def _submit(api: Api, output: str) -> str:
    body = {"task": TASK, "model": {"label": "m", "provider": "acme"}, "output": output}
    posted = api.client.post("/v1/runs", json=body, headers=api.h("submitter"))
    assert posted.status_code in (200, 201, 202), posted.text
    return str(posted.json()["run_id"])


def _render_log(api: Api, run_id: str) -> dict[str, Any]:
    with api.ctx.db.read() as s:
        rec = s.scalar(select(RenderRecord).where(RenderRecord.run_id == run_id))
        assert rec is not None and rec.status == "ok", (rec.status, rec.cause) if rec else None
        art = s.get(Artifact, rec.log_artifact_id)
        assert art is not None
        doc: dict[str, Any] = json.loads(api.ctx.blobs.get(art.sha256))
    return doc


def test_a_meta_refresh_is_refused_recorded_and_fails_f1_never_incomplete(api: Api) -> None:
    run_id = _submit(api, REFRESH)
    api.drain()
    view = api.client.get(f"/v1/runs/{run_id}", headers=api.h("submitter")).json()
    assert view["outcome"]["status"] == "fail"  # not incomplete: the pass rate keeps it
    assert view["outcome"]["cause"] is None
    f1 = next(c for c in view["evaluation"]["criteria"] if c["criterion"] == "F1")
    assert f1["status"] == "fail"
    evidence = json.dumps(f1)
    assert "tried to navigate the page away (meta-refresh to about:blank)" in evidence
    stored = _render_log(api, run_id)
    assert stored["document"]["root"] == "svg"  # the drawing stayed
    (nav,) = stored["navigations"]
    assert nav["kind"] == "meta-refresh" and nav["url"] == "about:blank"
    assert "sandboxed" in nav["detail"]  # Chromium's own words for the refusal
    assert len(stored["frames"]) == 1
    render = view["render"]  # its cost, without the wait for a free worker
    assert render["status"] == "ok" and render["cpu_ms"] > 0 and render["elapsed_ms"] > 0
    assert render["queue_wait_ms"] is not None
    with Http(base_url=api.client.base_url, follow_redirects=True, timeout=30) as web:
        web_login(web, api.tokens["submitter"])
        page = html.unescape(web.get(f"/runs/{run_id}").text)
    assert "tried to navigate the page away" in page


@pytest.mark.parametrize("name", ["form", "location"])
def test_form_submission_and_location_changes_never_leave_the_drawing(api: Api, name: str) -> None:
    """Neither can run here (no script, no user to press the button): the run is judged on the
    drawing itself, and nothing navigated."""
    run_id = _submit(api, {"form": FORM, "location": LOCATION}[name])
    api.drain()
    view = api.client.get(f"/v1/runs/{run_id}", headers=api.h("submitter")).json()
    assert view["outcome"]["status"] != "incomplete", view["outcome"]
    stored = _render_log(api, run_id)
    assert stored["document"]["root"] == "svg"
    assert stored["navigations"] == [] and stored["script_executed"] is False
    assert len(stored["frames"]) == 1
