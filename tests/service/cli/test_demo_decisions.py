"""Issue 13 item 6: the demo shows decisions, every one marked as the MOCK judge's.

``regua demo --keep`` (the code ``make run`` uses: ``service/demo/run.py``, ``serve.py`` and
``mock_service.py``) starts the mock vision judge (a local HTTP server speaking the OpenAI API,
answering from the samples' declared truth by the sha256 of their frames), the service on it,
and submits the bundled samples. Before: every structured pelican was pending (no judge could
vote on P1) and no run passed. Now the user sees passes, fails and a pending run, each with
its reasons, and the mock is named on the console, in every run's votes, on the runs page and
the report page. Real rendering, real HTTP.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from service.api.client import read_token
from service.demo.serve import MARKER
from tests.helpers.api_client import JsonClient
from tests.helpers.httpclient import Http
from tests.helpers.ports import free_port
from tests.helpers.server import require_real_rendering
from tests.helpers.web import web_login
from tests.service.cli.test_demo_hints import Lines

pytestmark = [pytest.mark.heavy, pytest.mark.browser, pytest.mark.sandbox]
MOCK = "vision-llm-mock@1"
ONE_WORKER = {"REGUA_RENDER_WORKERS": "1"}
"""Like every served test's service (tests/helpers/server.py): a second render worker costs
~2.5 CPU s to start and these renders do not need it."""
ROW = re.compile(
    r"│ (\S+)\s+│ (\S+)\s+│ (pass|fail|pending|incomplete)\s+│ (.*?)│ (.*?)│ ([0-9a-f]{32}) │"
)


@dataclass
class Kept:
    """A CLI process that ran the whole demo and keeps serving, with what it printed."""

    lines: Lines
    printed: str
    data: Path


@pytest.fixture(scope="module")
def kept_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kept]:
    """One ``regua demo --keep`` over every bundled sample, shared by this module's tests (the
    whole demo renders every sample: once is enough); Ctrl-C must end it with exit code 0."""
    require_real_rendering()
    data = tmp_path_factory.mktemp("demo")
    demo = Lines("demo", "--keep", "--data-dir", str(data), env={"COLUMNS": "220", **ONE_WORKER})
    try:
        printed = demo.until("press Ctrl-C", timeout_s=400)
        yield Kept(demo, printed, data)
    finally:
        assert demo.interrupt() == 0


@pytest.fixture(scope="module")
def made_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kept]:
    """One ``regua run`` (what ``make run`` calls), shared by this module's tests."""
    require_real_rendering()
    port = free_port()
    data = tmp_path_factory.mktemp("run") / "data"
    env = {"COLUMNS": "200", **ONE_WORKER}
    served = Lines("run", "--port", str(port), "--data-dir", str(data), env=env)
    try:
        printed = served.until("press Ctrl-C", timeout_s=400)
        yield Kept(served, printed, data)
    finally:
        served.interrupt()


def test_demo_shows_pass_fail_and_pending_all_marked_mock(kept_demo: Kept) -> None:
    printed = kept_demo.printed
    assert f"MOCK judge: {MOCK}" in printed, printed
    rows = {m.group(6): (m.group(1), m.group(3), m.group(5).strip()) for m in ROW.finditer(printed)}
    outcomes = [o for _f, o, _w in rows.values()]
    assert {"pass", "fail", "pending"} <= set(outcomes), printed
    assert "incomplete" not in outcomes, printed
    for sample, outcome, why in rows.values():  # every decision that is not a pass says why
        assert outcome == "pass" or why, (sample, outcome)
    by_sample = {f: o for f, o, _w in rows.values()}
    assert by_sample["structured-good.svg"] == "pass"
    assert by_sample["animated-pedalling.svg"] == "pass"  # its feet now follow the pedals
    assert by_sample["fail-R2-foot-off-pedal.svg"] == "fail"
    assert by_sample["uncertain-R2-foot-hovering.svg"] == "pending"
    url = re.search(r"stays up at (http://\S+) ", printed)
    assert url, printed
    token = (kept_demo.data / "admin-token").read_text().strip()
    with Http(
        base_url=url.group(1), headers={"Authorization": f"Bearer {token}"}, timeout=60
    ) as http:
        _every_run_is_marked_mock(http, rows)
    with Http(base_url=url.group(1), timeout=60, follow_redirects=True) as page:
        web_login(page, token)  # the pages take a session made by the login form
        _pages_show_mock(page, next(iter(rows)))


def test_demo_runs_every_sample_and_writes_its_report(kept_demo: Kept) -> None:
    """The summary names every sample, the outcomes and the artifacts; the report is written."""
    printed = kept_demo.printed
    for name in (
        "structured-good.svg",
        "script-carrying.svg",
        "no-svg-refusal.txt",
        "animated-pedalling.svg",
    ):
        assert name in printed
    assert "outcomes:" in printed and "artifacts:" in printed
    assert (kept_demo.data / "artifacts").is_dir()
    report_dir = kept_demo.data / "report"
    html = (report_dir / "report.html").read_text(encoding="utf-8")
    assert "<svg" in html and "not a confidence interval" in html
    exported = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    assert exported["provenance"]["runs"] >= 10
    assert list(report_dir.glob("*.csv"))


def test_make_run_serves_pass_fail_and_pending_all_marked_mock(made_run: Kept) -> None:
    """``regua run`` (what ``make run`` calls): the loaded demo runs end as the mock decides."""
    printed = made_run.printed
    assert f"MOCK judge: {MOCK}" in printed, printed
    ids = (made_run.data / MARKER).read_text().split()
    url = _base(printed)
    with JsonClient(url, read_token(made_run.data)) as client:
        views = client.wait(ids, timeout_s=300)
        rows = {
            rid: (str(v["model"]["params"]["sample"]), str(v["outcome"]["status"]), "")
            for rid, v in views.items()
        }
        assert {"pass", "fail", "pending"} <= {o for _s, o, _w in rows.values()}, rows
        _every_run_is_marked_mock(client.http, rows)


def test_make_run_prints_the_web_pages(made_run: Kept) -> None:
    """``regua run`` (``make run``) lists /login, /runs, /runs/<id>, /review and /report."""
    printed = made_run.printed
    base = _base(printed)
    for path in ("/login", "/runs", "/review", "/report"):
        assert f"{base}{path}" in printed, printed
    one = re.search(rf"{base}/runs/([0-9a-f]{{32}})", printed)
    assert one, printed
    with Http(follow_redirects=False, timeout=30) as http:
        got = http.get(f"{base}/runs/{one.group(1)}")
    assert got.status_code == 303  # the page exists and asks for a login


def _base(printed: str) -> str:
    found = re.search(r"(http://127\.0\.0\.1:\d+)/login", printed)
    assert found, printed
    return found.group(1)


def _every_run_is_marked_mock(http: httpx.Client, rows: dict[str, tuple[str, str, str]]) -> None:
    for run_id, (sample, outcome, _why) in rows.items():
        view = http.get(f"/v1/runs/{run_id}").json()
        assert view["outcome"]["status"] == outcome
        assert "mock" in view["model"]["label"], view["model"]
        if outcome == "pending":
            assert view["outcome"]["reasons"], view["outcome"]
        votes = [v for c in view["evaluation"]["criteria"] for v in c["votes"]]
        mine = [v for v in votes if v["judge_profile_id"] == MOCK]
        assert all(v["judge_profile_id"] in ("static@1", MOCK) for v in votes), sample
        if sample.startswith("no-svg"):
            continue  # nothing to show the judge: F1 fails on the static rules alone
        assert mine, sample
        for vote in mine:
            assert vote["eligible"] is True
            assert vote["basis"].startswith("MOCK judge: trusted by the demo's declaration")
            assert vote["gate"]["gate_id"].startswith("mock-")


def _pages_show_mock(http: httpx.Client, run_id: str) -> None:
    runs = http.get("/runs")
    assert runs.status_code == 200 and "(mock judge)" in runs.text
    one = http.get(f"/runs/{run_id}")
    assert one.status_code == 200 and MOCK in one.text and "MOCK" in one.text
    # the run page shows each vote, whether it counted, and the gate decision behind it
    assert "counted" in one.text and "trusted by the demo&#39;s declaration" in one.text
    report = http.get("/report")
    assert report.status_code == 200 and "(mock judge)" in report.text
