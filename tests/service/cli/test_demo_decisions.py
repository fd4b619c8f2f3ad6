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

import re
from pathlib import Path

import httpx
import pytest

from service.api.client import ReguaClient, read_token
from service.demo.serve import MARKER
from tests.helpers.ports import free_port
from tests.helpers.server import require_real_rendering
from tests.helpers.web import web_login
from tests.service.cli.test_demo_hints import Lines

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]
MOCK = "vision-llm-mock@1"
ROW = re.compile(
    r"│ (\S+)\s+│ (\S+)\s+│ (pass|fail|pending|incomplete)\s+│ (.*?)│ (.*?)│ ([0-9a-f]{32}) │"
)


def test_demo_shows_pass_fail_and_pending_all_marked_mock(tmp_path: Path) -> None:
    require_real_rendering()
    demo = Lines("demo", "--keep", "--data-dir", str(tmp_path), env={"COLUMNS": "220"})
    try:
        printed = demo.until("press Ctrl-C", timeout_s=400)
        assert f"MOCK judge: {MOCK}" in printed, printed
        rows = {
            m.group(6): (m.group(1), m.group(3), m.group(5).strip()) for m in ROW.finditer(printed)
        }
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
        token = (tmp_path / "admin-token").read_text().strip()
        with httpx.Client(
            base_url=url.group(1), headers={"Authorization": f"Bearer {token}"}, timeout=60
        ) as http:
            _every_run_is_marked_mock(http, rows)
        with httpx.Client(base_url=url.group(1), timeout=60, follow_redirects=True) as page:
            web_login(page, token)  # the pages take a session made by the login form
            _pages_show_mock(page, next(iter(rows)))
    finally:
        assert demo.interrupt() == 0


def test_make_run_serves_pass_fail_and_pending_all_marked_mock(tmp_path: Path) -> None:
    """``regua run`` (what ``make run`` calls): the loaded demo runs end as the mock decides."""
    require_real_rendering()
    port = free_port()
    data = tmp_path / "data"
    served = Lines("run", "--port", str(port), "--data-dir", str(data), env={"COLUMNS": "200"})
    try:
        printed = served.until("press Ctrl-C", timeout_s=400)
        assert f"MOCK judge: {MOCK}" in printed, printed
        ids = (data / MARKER).read_text().split()
        url = f"http://127.0.0.1:{port}"
        with ReguaClient(url, read_token(data)) as client:
            views = client.wait(ids, timeout_s=300)
            rows = {
                rid: (str(v["model"]["params"]["sample"]), str(v["outcome"]["status"]), "")
                for rid, v in views.items()
            }
            assert {"pass", "fail", "pending"} <= {o for _s, o, _w in rows.values()}, rows
            _every_run_is_marked_mock(client.http, rows)
    finally:
        served.interrupt()


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
