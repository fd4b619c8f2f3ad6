"""Acceptance: a script using :mod:`regua.client` submits 60 runs with one token to a real
``regua serve`` that rate-limits each token (20 in a row, 120 per minute) and gets every
outcome without an error, because the client waits as the 429 answers tell it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import httpx
import pytest

from regua.client import Client, RunInput
from service.api.client import read_token
from tests.helpers.server import Served, require_real_rendering

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "outputs"
TASK = "pelican-bicycle-structured@1"
KINDS = ("structured-good.svg", "fail-F1-wrong-viewbox.svg", "no-svg-prose.txt")


class CountingTransport(httpx.HTTPTransport):
    """The real transport, counting the answers' statuses (the test's own eyes)."""

    def __init__(self) -> None:
        super().__init__()
        self.statuses: Counter[int] = Counter()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send as usual; count the status."""
        response = super().handle_request(request)
        self.statuses[response.status_code] += 1
        return response


@pytest.mark.heavy  # mostly waiting out the limit: its unit is handed out first (overlaps CPU work)
@pytest.mark.browser
@pytest.mark.sandbox
@pytest.mark.timeout(900)
def test_sixty_runs_with_one_token_despite_the_rate_limit(tmp_path: Path) -> None:
    require_real_rendering()
    data = tmp_path / "data"
    data.mkdir()
    server = Served(data, REGUA_SUBMIT_RATE_PER_MINUTE="120", REGUA_SUBMIT_BURST="20")
    try:
        with server.client() as admin:
            token = admin.typed.request("POST", "/v1/tokens", json={"role": "submitter"})["token"]
        counted = CountingTransport()
        progress: list[tuple[int, int]] = []
        with Client(server.url, token, transport=counted) as client:
            ids = []
            for i in range(60):
                reply = (SAMPLES / KINDS[i % 3]).read_text() + f"\n<!-- copy {i} -->\n"
                ids.append(client.submit(RunInput(task=TASK, output=reply, model="m")).run_id)
            views = client.wait(
                ids, timeout_s=800, poll_s=1.0, on_progress=lambda d, t: progress.append((d, t))
            )
            listed = client.runs(task=TASK, limit=100)
            report = client.report([TASK])
        with Client(server.url, read_token(data)) as as_admin:
            calibrations = as_admin.calibrations()
    finally:
        server.stop()
    assert counted.statuses[429] > 0, counted.statuses  # the limit was met, and waited out
    assert counted.statuses[202] == 60 and set(counted.statuses) <= {200, 202, 429}
    assert sorted(views) == sorted(ids) and len(set(ids)) == 60
    outcomes = {i: v.outcome.status for i, v in views.items() if v.outcome is not None}
    assert len(outcomes) == 60, views
    by_kind = {KINDS[k]: {outcomes[ids[i]] for i in range(k, 60, 3)} for k in range(3)}
    assert by_kind["no-svg-prose.txt"] == {"fail"}, by_kind
    assert by_kind["fail-F1-wrong-viewbox.svg"] == {"fail"}, by_kind
    assert by_kind["structured-good.svg"] <= {"pass", "pending"}, by_kind
    assert progress[-1] == (60, 60) and all(t == 60 for _d, t in progress)
    # the other typed answers of the same service
    assert sorted(line.run_id for line in listed.runs) == sorted(ids)
    assert {line.outcome for line in listed.runs} == set(outcomes.values())
    assert report.schema_.startswith("regua.report") and report.model_extra, report
    assert calibrations.calibrations == []  # a fresh installation calibrated nothing
