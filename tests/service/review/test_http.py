"""The review API and pages on a live server, including the blinding sweep."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from regua.settings import Settings
from service.access.tokens import create_token
from service.context import ServiceContext
from service.review.blinding import forbidden_keys_in
from service.server.app import create_app
from tests.helpers.review_runs import SECRET_MODEL, SECRET_PROVIDER, add_run
from tests.helpers.server import http_client
from tests.helpers.web import csrf_in, web_login


@pytest.fixture()
def env(tmp_path: Path) -> Iterator[tuple[httpx.Client, dict[str, str]]]:
    """An app over a seeded database: one pending run, one passed run; audit rate 1."""
    settings = Settings(data_dir=tmp_path, review_audit_rate=1.0)
    ctx = ServiceContext.open(settings)
    db, blobs = ctx.db, ctx.blobs
    tokens = {role: create_token(db, role, f"{role}-1")[0] for role in ("reviewer", "admin")}
    tokens["reviewer2"] = create_token(db, "reviewer", "reviewer-2")[0]
    tokens["submitter"] = create_token(db, "submitter", "sub")[0]
    add_run(db, blobs, "runpending", {"R1": "uncertain"}, outcome="pending")
    add_run(db, blobs, "runpassed", {}, outcome="pass")
    with http_client(create_app(ctx)) as client:
        yield client, tokens


def bearer(token: str) -> dict[str, str]:
    """Authorization header."""
    return {"Authorization": f"Bearer {token}"}


def test_api_next_label_and_list(env: tuple[httpx.Client, dict[str, str]]) -> None:
    client, tokens = env
    r = client.get("/v1/reviews/next", headers=bearer(tokens["reviewer"]))
    assert r.status_code == 200
    body = r.json()
    assert forbidden_keys_in(body) == []  # no model/provider/run id/ranking field at all
    item = body["item"]
    assert item["choices"] == ["pass", "fail", "uncertain", "not_applicable"]
    assert body["progress"]["left"] >= 2
    r = client.post(
        f"/v1/reviews/{item['item_id']}",
        json={"status": "fail", "note": "x"},
        headers=bearer(tokens["reviewer"]),
    )
    assert r.status_code == 200, r.text
    again = client.post(
        f"/v1/reviews/{item['item_id']}",
        json={"status": "pass"},
        headers=bearer(tokens["reviewer"]),
    )
    assert again.status_code == 409
    bad = client.post(
        f"/v1/reviews/{item['item_id']}",
        json={"status": "maybe"},
        headers=bearer(tokens["reviewer2"]),
    )
    assert bad.status_code == 422 and "status" in bad.json()["detail"]
    listing = client.get("/v1/reviews?status=open", headers=bearer(tokens["reviewer"])).json()
    assert all(i["state"] == "open" for i in listing["items"])
    assert forbidden_keys_in(listing) == []
    assert "agreement" not in listing
    admin = client.get("/v1/reviews", headers=bearer(tokens["admin"])).json()
    assert "agreement" in admin and "audits" in admin
    page = client.get("/v1/reviews?limit=2&offset=1", headers=bearer(tokens["admin"])).json()
    assert [i["item_id"] for i in page["items"]] == [i["item_id"] for i in admin["items"][1:3]]


def test_roles(env: tuple[httpx.Client, dict[str, str]]) -> None:
    client, tokens = env
    assert client.get("/v1/reviews/next").status_code == 401
    assert client.get("/v1/reviews/next", headers=bearer(tokens["submitter"])).status_code == 403
    web_login(client, tokens["reviewer"])
    assert client.get("/runs/runpending", follow_redirects=False).status_code == 403
    assert client.get("/report").status_code == 403


def test_pages_send_csp_and_never_the_svg(env: tuple[httpx.Client, dict[str, str]]) -> None:
    client, tokens = env
    web_login(client, tokens["admin"])
    for path in ("/review", "/runs", "/runs/runpending", "/report"):
        r = client.get(path)
        assert r.status_code == 200, path
        csp = r.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert "<script>" not in r.text and " style=" not in r.text
        assert not re.search(r"<img[^>]+\.svg", r.text)
    run = client.get("/runs/runpending").text
    assert "&lt;svg/&gt;" in run  # the raw reply, escaped
    assert SECRET_MODEL in run  # admins see the model on the run page
    report = client.get("/report").text
    assert "between" in report and "not a confidence interval" in report
    assert 'href="/report/full"' in report
    link = re.search(r'href="(/runs\?task=[^"]*criterion=R1&amp;status=uncertain)"', report)
    assert link is not None
    runs = client.get(link.group(1).replace("&amp;", "&")).text
    assert "runpending" in runs and "runpassed" not in runs
    full = client.get("/report/full")
    assert full.status_code == 200 and "content-security-policy" in full.headers


def test_review_form_rejects_bad_time_and_unknown_items(
    env: tuple[httpx.Client, dict[str, str]],
) -> None:
    client, tokens = env
    csrf = web_login(client, tokens["reviewer"])
    item = client.get("/v1/reviews/next", headers=bearer(tokens["reviewer"])).json()["item"]
    url = f"/review/{item['item_id']}"
    bad = client.post(url, data={"status": "pass", "time_s": "-3", "csrf": csrf})
    assert bad.status_code == 422 and "frame time" in bad.text
    nope = client.post("/review/it_nope", data={"status": "pass", "csrf": csrf})
    assert nope.status_code == 404
    ok = client.post(url, data={"status": "pass", "csrf": csrf}, follow_redirects=False)
    assert ok.status_code == 303 and ok.headers["location"].startswith("/review?saved=")
    again = client.post(url, data={"status": "fail", "csrf": csrf})
    assert again.status_code == 409


def test_login_cookie_is_httponly_and_strict(env: tuple[httpx.Client, dict[str, str]]) -> None:
    client, tokens = env
    assert client.get("/review", follow_redirects=False).status_code == 303
    client.headers["Origin"] = str(client.base_url).rstrip("/")
    csrf = csrf_in(client.get("/login").text)
    bad = client.post("/login", data={"token": "nope", "next": "/review", "csrf": csrf})
    assert bad.status_code == 401
    ok = client.post(
        "/login",
        data={"token": tokens["reviewer"], "next": "/review", "csrf": csrf},
        follow_redirects=False,
    )
    assert ok.status_code == 303 and ok.headers["location"] == "/review"
    cookie = next(c for c in ok.headers.get_list("set-cookie") if c.startswith("regua_session="))
    assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
    assert tokens["reviewer"] not in cookie  # the cookie is a session id, not the token
    for evil in ("//evil.example", "/\\evil.example", "https://evil.example"):
        csrf = csrf_in(client.get("/login").text)
        r = client.post(
            "/login",
            data={"token": tokens["reviewer"], "next": evil, "csrf": csrf},
            follow_redirects=False,
        )
        assert r.headers["location"] == "/ui", evil


def test_no_response_a_reviewer_can_fetch_contains_a_model_label(
    env: tuple[httpx.Client, dict[str, str]],
) -> None:
    """Blinding: walk every page and API response a reviewer can reach (labelling as we go)."""
    client, tokens = env
    csrf = web_login(client, tokens["reviewer"])
    seen: list[str] = []

    def fetch(method: str, url: str, **kw: Any) -> str:
        r = client.request(method, url, headers=bearer(tokens["reviewer"]), **kw)
        text: str = r.content.decode("utf-8", errors="replace")
        seen.append(url)
        for secret in (SECRET_MODEL, SECRET_PROVIDER, "runpending", "runpassed"):
            assert secret not in text, f"{secret} leaked in {method} {url}"
        return text

    for _ in range(10):
        page = fetch("GET", "/review")
        for url in re.findall(r'(?:src|href)="(/[^"]+)"', page):
            fetch("GET", url)
        api = client.get("/v1/reviews/next", headers=bearer(tokens["reviewer"])).json()
        fetch("GET", "/v1/reviews/next")
        fetch("GET", "/v1/reviews")
        for state in ("open", "disputed", "resolved"):
            fetch("GET", f"/v1/reviews?status={state}")
        if api["item"] is None:
            break
        for f in api["item"]["frames"]:
            fetch("GET", f["url"])
        form = {"status": "fail", "note": "n", "csrf": csrf}
        fetch("POST", f"/review/{api['item']['item_id']}", data=form)
    assert any(u.startswith("/ui/artifacts/") for u in seen)
    assert any(u.startswith("/v1/artifacts/") for u in seen)
    assert client.get("/v1/runs/runpending", headers=bearer(tokens["reviewer"])).status_code == 403


def test_a_reviewer_never_sees_another_reviewers_label_before_labelling(
    env: tuple[httpx.Client, dict[str, str]],
) -> None:
    client, tokens = env
    listing = client.get("/v1/reviews?status=open", headers=bearer(tokens["reviewer"])).json()
    audit = next(i for i in listing["items"] if i["kind"] == "audit")
    first = client.post(
        f"/v1/reviews/{audit['item_id']}",
        json={"status": "fail", "note": "zz-note-from-A"},
        headers=bearer(tokens["reviewer"]),
    )
    assert first.json()["state"] == "open"
    web_login(client, tokens["reviewer2"])
    page = client.get(f"/review?item={audit['item_id']}").text
    assert f'data-item="{audit["item_id"]}"' in page
    assert "zz-note-from-A" not in page and "reviewer-1" not in page
    payload = client.get("/v1/reviews/next", headers=bearer(tokens["reviewer2"])).text
    assert "zz-note-from-A" not in payload
    rows = client.get("/v1/reviews", headers=bearer(tokens["reviewer2"])).json()["items"]
    row = next(i for i in rows if i["item_id"] == audit["item_id"])
    assert row["final"] is None and "fail" not in str(row)
