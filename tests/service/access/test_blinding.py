"""Blinding keyed by the installation secret; no self-review; admin labels marked unblinded;
the queue listing in an order unrelated to creation."""

from __future__ import annotations

import stat
from pathlib import Path

from sqlalchemy import func, select, update

from service.access.secret import installation_secret, load_or_create_secret
from service.review.blinding import blinding_key, opaque_item_id, opaque_run_label
from service.storage import ReviewItem, ReviewRow, Run
from tests.helpers.review_runs import add_run
from tests.helpers.web import Site, web_login

OLD_DEFAULT_SEED = 20261129
"""The seed the source used to key the blinding (and the reports' bootstrap seed)."""


def _labels(site: Site) -> int:
    with site.ctx.db.read() as s:
        return int(s.scalar(select(func.count(ReviewRow.id))) or 0)


def _items(site: Site) -> dict[str, ReviewItem]:
    site.client("admin").get("/v1/reviews")  # syncs the queue
    with site.ctx.db.read() as s:
        return {i.id: i for i in s.scalars(select(ReviewItem))}


def test_labels_and_item_ids_are_keyed_by_the_per_installation_secret(site: Site) -> None:
    """Knowing run ids and the source code does not map queue items to runs (and so to models)."""
    path = site.ctx.settings.resolved_secret_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    secret = installation_secret(site.ctx.settings)
    key = blinding_key(secret)
    assert key != OLD_DEFAULT_SEED
    items = _items(site)
    assert items, "the seeded runs raise queue items"
    public = {
        opaque_item_id(OLD_DEFAULT_SEED, i.run_id, i.criterion, i.kind) for i in items.values()
    }
    assert not public & set(items)
    assert all(opaque_item_id(key, i.run_id, i.criterion, i.kind) == i.id for i in items.values())
    shown = site.client("reviewer").get("/v1/reviews").json()["items"]
    works = {line["work"] for line in shown}
    run_ids = {i.run_id for i in items.values()}
    assert works == {opaque_run_label(key, r) for r in run_ids}
    assert not works & {opaque_run_label(OLD_DEFAULT_SEED, r) for r in run_ids}


def test_each_installation_makes_its_own_secret(tmp_path: Path) -> None:
    first = load_or_create_secret(tmp_path / "a" / "secret")
    second = load_or_create_secret(tmp_path / "b" / "secret")
    assert first != second and len(first) == 32
    assert load_or_create_secret(tmp_path / "a" / "secret") == first  # kept, never rewritten
    assert blinding_key(first) != blinding_key(second)


def test_nobody_reviews_items_of_a_run_their_token_submitted(site: Site) -> None:
    """An admin submitted ``runpending``: its items are never offered to that admin, and a label
    posted anyway (API or page) is refused with nothing stored; another reviewer may label it."""
    with site.ctx.db.write() as s:
        s.execute(update(Run).where(Run.id == "runpending").values(submitted_by=site.ids["admin"]))
    items = _items(site)
    own = [i for i in items.values() if i.run_id == "runpending"]
    others = [i for i in items.values() if i.run_id != "runpending"]
    assert own and others
    admin = site.client("admin")
    body = admin.get("/v1/reviews/next").json()
    assert body["progress"]["left"] == len(others)
    offered = {body["item"]["item_id"]}
    skip: list[str] = []
    for _ in range(len(items)):
        skip.append(body["item"]["item_id"])
        body = admin.get("/v1/reviews/next", params={"skip": skip}).json()
        offered.add(body["item"]["item_id"])
    assert offered == {i.id for i in others}
    r = admin.post(f"/v1/reviews/{own[0].id}", json={"status": "pass"})
    assert r.status_code == 403 and "submitted this run" in r.json()["detail"]
    browser = site.client()
    csrf = web_login(browser, site.tokens["admin"])
    page = browser.get("/review", params={"item": own[0].id})
    assert f'data-item="{own[0].id}"' not in page.text
    posted = browser.post(f"/review/{own[0].id}", data={"status": "pass", "csrf": csrf})
    assert posted.status_code == 403 and "submitted this run" in posted.text
    assert _labels(site) == 0
    ok = site.client("reviewer").post(f"/v1/reviews/{own[0].id}", json={"status": "fail"})
    assert ok.status_code == 200 and _labels(site) == 1


def test_an_admins_label_is_recorded_as_unblinded(site: Site) -> None:
    items = sorted(_items(site).values(), key=lambda i: i.id)
    first, second = items[0], items[1]
    assert site.client("admin").post(f"/v1/reviews/{first.id}", json={"status": "pass"}).is_success
    assert (
        site.client("reviewer").post(f"/v1/reviews/{second.id}", json={"status": "pass"}).is_success
    )
    with site.ctx.db.read() as s:
        rows = {r.item_id: r.unblinded for r in s.scalars(select(ReviewRow))}
    assert rows == {first.id: True, second.id: False}
    browser = site.client()
    web_login(browser, site.tokens["admin"])
    run_page = browser.get(f"/runs/{first.run_id}").text
    assert "unblinded" in run_page  # the admin sees which labels were given unblinded


def test_review_listing_is_not_in_creation_order(site: Site) -> None:
    """Items are listed by their keyed id, so the listing cannot be lined up with submissions."""
    created: list[str] = []
    for n in range(5):  # one run at a time, the queue synced in between
        add_run(site.ctx.db, site.ctx.blobs, f"later{n}", {"R1": "uncertain"}, outcome="pending")
        site.client("reviewer").get("/v1/reviews")
        with site.ctx.db.read() as s:
            rows = s.scalars(select(ReviewItem.id).where(ReviewItem.run_id == f"later{n}"))
            created += list(rows)
    listed = [i["item_id"] for i in site.client("reviewer").get("/v1/reviews").json()["items"]]
    assert set(created) <= set(listed)
    assert listed == sorted(listed)  # by keyed id: unrelated to when a run was submitted
    paged = site.client("reviewer").get("/v1/reviews", params={"limit": 3, "offset": 2}).json()
    assert [i["item_id"] for i in paged["items"]] == listed[2:5]
