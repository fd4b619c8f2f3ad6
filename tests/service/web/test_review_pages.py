"""Acceptance: the review pages in Debian Chromium against a real ``regua serve`` subprocess.

The server runs the real pipeline (sandboxed Chromium frames and masks, the default panel,
geometry not calibrated: every recognition and relation criterion is left for people) with an
audit rate of 1, so every automatic pass (the static rules' F1) is in the audit sample.
Screenshots go to ``<tmp>/out/screenshots`` or ``$REGUA_SCREENSHOT_DIR``
(the path is printed).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image, ImageStat

from tests.conftest import REPO_ROOT
from tests.helpers.browser import patient
from tests.helpers.httpclient import Http
from tests.helpers.page_browser import launch_chromium
from tests.helpers.server import Served, require_real_rendering

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium (/usr/bin/chromium) absent"),
]
sync_api = pytest.importorskip("playwright.sync_api")

SECRETS = ("zz-secret-model-QX7", "zz-secret-model-B2", "zz-secret-anim-M3", "zz-prov-77")
STRUCTURED = "pelican-bicycle-structured@1"
ANIMATED = "pelican-bicycle-animated@1"


@dataclass
class Server:
    """The running service and the tokens the tests use."""

    url: str
    tokens: dict[str, str]
    runs: dict[str, str] = field(default_factory=dict)
    out: Path = Path()

    def api(self, who: str) -> httpx.Client:
        """An HTTP client with ``who``'s bearer token."""
        headers = {"Authorization": f"Bearer {self.tokens[who]}"}
        return Http(base_url=self.url, headers=headers, timeout=30)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``regua serve`` as a subprocess, three runs submitted and finished, tokens created."""
    require_real_rendering()
    tmp = tmp_path_factory.mktemp("review-accept")
    data = tmp / "data"
    data.mkdir()
    # a generous job budget: these tests are about the pages, and a loaded machine must not turn
    # the animated render into an `incomplete` run; one render worker: a second one only adds
    # its start-up (Chromium and the timing self-test) for three renders
    served = Served(data, REGUA_REVIEW_AUDIT_RATE="1.0", REGUA_JOB_TIMEOUT_S="180")
    try:
        shots = os.environ.get("REGUA_SCREENSHOT_DIR")  # keep them somewhere stable if asked
        admin = (data / "admin-token").read_text().strip()
        srv = Server(
            served.url, {"admin": admin}, out=Path(shots) if shots else tmp / "out" / "screenshots"
        )
        with srv.api("admin") as c:
            for name in ("rita", "rui", "ada", "sub"):
                role = "submitter" if name == "sub" else "reviewer"
                r = c.post("/v1/tokens", json={"role": role, "name": name})
                srv.tokens[name] = r.json()["token"]
        _submit_three(srv)
        yield srv
    finally:
        served.stop()


def _submit_three(srv: Server) -> None:
    """Two structured pelicans and an animated one, as the submitter; waits until done."""
    samples = REPO_ROOT / "samples" / "outputs"
    with srv.api("sub") as c:
        for key, task, model, sample in (
            ("a", STRUCTURED, SECRETS[0], "structured-good.svg"),
            ("b", STRUCTURED, SECRETS[1], "structured-good-2.svg"),
            ("c", ANIMATED, SECRETS[2], "animated-pedalling.svg"),
        ):
            body = {"task": task, "model": {"label": model, "provider": SECRETS[3]}}
            svg = (samples / sample).read_text()
            r = c.post("/v1/runs", json={**body, "output": f"Here it is:\n{svg}"})
            assert r.status_code == 202, r.text
            srv.runs[key] = r.json()["run_id"]
        deadline = time.monotonic() + 300
        for rid in srv.runs.values():  # a long poll: answered as soon as the run is done
            while c.get(f"/v1/runs/{rid}", params={"wait_s": 10}).json()["status"] != "done":
                assert time.monotonic() < deadline, "runs did not finish"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian Chromium driven by Playwright."""
    with sync_api.sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


class Session:
    """A logged-in browser context that keeps every text response it received."""

    def __init__(
        self, browser: Any, server: Server, who: str, width: int = 1280, *, bodies: bool = False
    ) -> None:
        self.context = patient(browser.new_context(viewport={"width": width, "height": 800}))
        self.page = self.context.new_page()
        self.bodies: list[tuple[str, bytes]] = []
        self.errors: list[str] = []
        if bodies:  # fetching every body back from the browser costs; one test reads them
            self.page.on("response", self._keep)
        self.page.on("console", self._console)
        self.page.goto(server.url + "/review")
        assert "/login" in self.page.url
        self.page.fill("#token", server.tokens[who])
        self.page.press("#token", "Enter")
        self.page.wait_for_load_state()

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.errors.append(str(message.text))

    def _keep(self, response: Any) -> None:
        try:
            self.bodies.append((response.url, response.body()))
        except Exception:  # redirects have no body
            self.bodies.append((response.url, b""))

    def form(self) -> dict[str, str]:
        """The review form's data attributes (item, criterion, kind, mode)."""
        f = self.page.locator("#review-form")
        return {
            k: f.get_attribute(f"data-{k}") or "" for k in ("item", "criterion", "kind", "mode")
        }

    def label(self, key: str, note: str = "") -> dict[str, str]:
        """Label the shown item with the keyboard only; returns what was labelled."""
        shown = self.form()
        self.page.evaluate("document.activeElement && document.activeElement.blur()")
        assert self.page.locator("#submit-review").is_disabled()  # nothing preselected
        assert self.page.locator("input[name=status]:checked").count() == 0
        self.page.keyboard.press(key)
        if note:
            self.page.keyboard.press("e")
            self.page.keyboard.type(note)
            with self.page.expect_navigation():
                self.page.keyboard.press("Control+Enter")
        else:
            with self.page.expect_navigation():
                self.page.keyboard.press("Enter")
        return shown


def run_of(server: Server) -> dict[str, dict[str, Any]]:
    """Every run's record (admin view) by our key."""
    with server.api("admin") as c:
        return {k: c.get(f"/v1/runs/{rid}").json() for k, rid in server.runs.items()}


def test_keyboard_labels_and_an_audit_overturns_a_pass(server: Server, browser: Any) -> None:
    before = {k: r["outcome"]["status"] for k, r in run_of(server).items()}
    assert set(before.values()) == {"pending"}
    rita = Session(browser, server, "rita")
    labelled: list[dict[str, str]] = []
    overturned: dict[str, str] | None = None
    while len(labelled) < 3:  # three items in the order the queue shows them
        shown = rita.form()
        if shown["kind"] == "audit" and overturned is None:
            overturned = rita.label("f", "pouch missing: the beak is a plain triangle")
            labelled.append(overturned)
        else:
            labelled.append(rita.label("p"))
        assert "Saved." in rita.page.inner_text("main")
    if overturned is None:  # no audit came up yet: open one from the list, as a reviewer can
        with server.api("rita") as c:
            items = c.get("/v1/reviews", params={"status": "open"}).json()["items"]
        audit = next(i for i in items if i["kind"] == "audit" and i["task"] == STRUCTURED)
        rita.page.goto(f"{server.url}/review?item={audit['item_id']}")
        overturned = rita.label("f", "pouch missing: the beak is a plain triangle")
        labelled.append(overturned)
    assert rita.page.locator("progress").get_attribute("value") == str(len(labelled))
    assert not rita.errors, rita.errors
    # the second independent review of the audit item (2 are needed) agrees: the pass falls
    with server.api("rui") as c:
        r = c.post(f"/v1/reviews/{overturned['item']}", json={"status": "fail", "note": "agree"})
        assert r.json()["state"] == "resolved" and r.json()["outcome_recomputed"]
    after = run_of(server)
    failed = [k for k, r in after.items() if r["outcome"]["status"] == "fail"]
    assert len(failed) == 1
    record = after[failed[0]]
    kinds = [e["kind"] for e in record["evaluations"]]
    assert kinds[0] == "initial" and "review" in kinds
    # the run page shows the new outcome and still the earlier evaluation
    admin = Session(browser, server, "admin")
    admin.page.goto(f"{server.url}/runs/{server.runs[failed[0]]}")
    history = admin.page.locator("table").filter(has_text="Supersedes")
    rows = history.locator("tbody tr")
    assert rows.count() == len(kinds) >= 2
    assert "initial" in rows.last.inner_text() and "pending" in rows.last.inner_text()
    assert "fail" in rows.first.inner_text() and "(current)" in rows.first.inner_text()
    assert "human@1" in admin.page.inner_text("main")
    assert "pouch missing" in admin.page.inner_text("main")
    with admin.page.expect_navigation():
        rows.last.locator("a").click()  # the initial evaluation, kept as it was
    main = admin.page.inner_text("main")
    assert "earlier evaluation" in main and "superseded" in main
    assert "human@1" not in main
    outcome = admin.page.locator("dl.kv .badge").first.inner_text()
    assert outcome == "pending"
    # the submitter sees the labels and notes, under pseudonyms
    sub = Session(browser, server, "sub")
    sub.page.goto(f"{server.url}/runs/{server.runs[failed[0]]}")
    text = sub.page.inner_text("main")
    assert "pouch missing" in text and "reviewer-" in text
    assert "rita" not in text and "rui" not in text
    for s in (rita, admin, sub):
        s.context.close()


def test_disagreement_is_disputed_and_adjudication_resolves(server: Server, browser: Any) -> None:
    with server.api("rita") as c:
        items = c.get("/v1/reviews", params={"status": "open"}).json()["items"]
    target = next(i for i in items if i["kind"] == "audit" and i["reviews"] == 0)
    with server.api("rita") as c:
        assert (
            c.post(f"/v1/reviews/{target['item_id']}", json={"status": "pass"}).status_code == 200
        )
    with server.api("rui") as c:
        r = c.post(f"/v1/reviews/{target['item_id']}", json={"status": "fail"})
        assert r.json()["state"] == "disputed"
        disputed = c.get("/v1/reviews", params={"status": "disputed"}).json()["items"]
        assert target["item_id"] in [i["item_id"] for i in disputed]
    ada = Session(browser, server, "ada")
    shown = ada.form()
    assert shown["item"] == target["item_id"]  # disputes come first, to someone new
    assert "adjudication" in ada.page.inner_text("main")
    assert "rita" not in ada.page.inner_text("main") and "rui" not in ada.page.inner_text("main")
    ada.label("p")
    with server.api("admin") as c:
        listing = c.get("/v1/reviews", params={"status": "resolved"}).json()
    resolved = {i["item_id"]: i for i in listing["items"]}
    assert resolved[target["item_id"]]["final"] == "pass"
    pair = next(
        p for p in listing["agreement"] if {p["reviewer_a"], p["reviewer_b"]} == {"rita", "rui"}
    )
    assert pair["items"] >= 1
    ada.context.close()


def test_animated_item_has_a_time_scrubber_and_masks(server: Server, browser: Any) -> None:
    with server.api("ada") as c:
        items = c.get("/v1/reviews", params={"status": "open"}).json()["items"]
    anim = next(i for i in items if i["task"] == ANIMATED)
    ada = Session(browser, server, "ada")
    ada.page.goto(f"{server.url}/review?item={anim['item_id']}")
    assert ada.form()["mode"] == "animated"
    first = ada.page.locator("#frame-img").get_attribute("src")
    ada.page.evaluate("document.activeElement && document.activeElement.blur()")
    ada.page.keyboard.press("ArrowRight")
    ada.page.keyboard.press("ArrowRight")
    assert ada.page.locator("#frame-img").get_attribute("src") != first
    third = ada.page.locator("#frame-list li").nth(2).get_attribute("data-time")
    assert ada.page.locator("#time_s").input_value() == third
    assert ada.page.locator("#scrub").input_value() == "2"
    assert ada.page.locator(".masks:not(.hidden)").count() == 0
    ada.page.keyboard.press("m")
    assert ada.page.locator(".masks:not(.hidden) img").count() >= 2  # visible and alone
    # poll from Python: an in-page wait_for_function would need eval, which the page's CSP forbids
    check = (
        "() => Array.from(document.querySelectorAll('#frame-img, .masks:not(.hidden) img'))"
        ".every(i => i.complete && i.naturalWidth > 0)"
    )
    deadline = time.monotonic() + 10
    while not ada.page.evaluate(check):
        assert time.monotonic() < deadline, "frame or masks did not load"
        ada.page.wait_for_timeout(100)
    assert ada.page.locator("#mask-overlay.hidden").count() == 1
    ada.page.locator(".masks:not(.hidden) .mask-pick").first.click()
    assert ada.page.locator("#mask-overlay.hidden").count() == 0
    assert "/ui/artifacts/" in (ada.page.locator("#mask-overlay").get_attribute("src") or "")
    ada.context.close()


def test_screenshots_of_the_three_pages(server: Server, browser: Any) -> None:
    out = server.out
    out.mkdir(parents=True, exist_ok=True)
    shots: dict[str, Path] = {}
    rita = Session(browser, server, "rita")
    rita.page.goto(server.url + "/review")
    shots["review"] = out / "review-1280x800.png"
    rita.page.screenshot(path=str(shots["review"]))
    narrow = Session(browser, server, "rui", width=420)
    shots["review-narrow"] = out / "review-420x800.png"
    narrow.page.screenshot(path=str(shots["review-narrow"]), full_page=True)
    assert narrow.page.evaluate("document.documentElement.scrollWidth") <= 420
    admin = Session(browser, server, "admin")
    failed = next((k for k, r in run_of(server).items() if r["outcome"]["status"] == "fail"), "a")
    admin.page.goto(f"{server.url}/runs/{server.runs[failed]}")
    shots["run"] = out / "run-1280x800.png"
    admin.page.screenshot(path=str(shots["run"]))
    shots["run-full"] = out / "run-full.png"
    admin.page.screenshot(path=str(shots["run-full"]), full_page=True)
    admin.page.goto(server.url + "/report")
    assert "not a confidence interval" in admin.page.inner_text("main")
    assert "between" in admin.page.inner_text("main")
    shots["report"] = out / "report-1280x800.png"
    admin.page.screenshot(path=str(shots["report"]))
    print(f"\nscreenshots written to {out}")
    for name, path in shots.items():
        assert path.stat().st_size > 10_000, name
        with Image.open(path) as img:
            assert max(ImageStat.Stat(img.convert("L")).stddev) > 10, f"{name} looks blank"
        print(f"  {name}: {path}")
    for s in (rita, narrow, admin):
        assert not s.errors, s.errors
        s.context.close()


def test_reviewer_browsing_never_receives_a_model_label(server: Server, browser: Any) -> None:
    rui = Session(browser, server, "rui", bodies=True)
    for _ in range(3):
        if rui.page.locator("#review-form").count() == 0:
            break
        rui.page.locator("#toggle-masks").click()
        rui.page.wait_for_load_state("networkidle")
        rui.label("u")
    for path in ("/v1/reviews", "/v1/reviews/next", "/v1/reviews?status=resolved"):
        rui.page.goto(server.url + path)
    rui.page.goto(f"{server.url}/runs/{server.runs['a']}")
    assert rui.page.url.endswith(server.runs["a"])  # reached, but refused:
    assert "Not allowed" in rui.page.inner_text("main")
    assert len(rui.bodies) > 10
    for url, body in rui.bodies:
        for secret in SECRETS:
            assert secret.encode() not in body, f"{secret} leaked to a reviewer in {url}"
    rui.context.close()
