"""``GET /v1/runs/{id}?wait_s=N``: a long poll answered once the run is done, or after N seconds.

The wait is asynchronous (no server thread is held while it waits): many waiting requests
leave the server free to answer others. Out-of-range waits answer 422, unknown runs 404 at
once, another submitter's run 404 as without a wait. The clients' ``wait`` long-polls.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from regua.client import Client
from service.access.tokens import Principal
from service.api.routes import runs as runs_route
from service.context import ServiceContext
from tests.service.conftest import Api

TASK = "pelican-bicycle-structured@1"
GOOD = (Path(__file__).resolve().parents[3] / "samples/outputs/structured-good.svg").read_text()
WAITERS = 48
"""More waiting requests than the server's thread pool has threads (40)."""


def _submit(api: Api, tag: str = "") -> str:
    body = {"task": TASK, "model": {"label": "m"}, "output": f"{GOOD}<!-- {tag} -->"}
    r = api.client.post("/v1/runs", json=body, headers=api.h("submitter"))
    assert r.status_code == 202
    return str(r.json()["run_id"])


def _get(api: Api, run_id: str, role: str = "submitter", **params: Any) -> Any:
    return api.client.get(f"/v1/runs/{run_id}", params=params, headers=api.h(role))


@pytest.mark.parametrize("wait", ["-1", "60.5", "nan", "soon"])
def test_a_wait_out_of_range_is_refused(api: Api, wait: str) -> None:
    run_id = _submit(api)
    r = _get(api, run_id, wait_s=wait)
    assert r.status_code == 422
    assert "wait_s" in r.text


def test_unknown_and_foreign_runs_are_not_found_at_once(api: Api) -> None:
    run_id = _submit(api)
    assert _get(api, "nope", wait_s=60).status_code == 404
    assert _get(api, run_id, role="other", wait_s=60).status_code == 404


def test_a_wait_ends_with_the_run_as_it_is_then(api: Api) -> None:
    run_id = _submit(api)
    r = _get(api, run_id, wait_s=0.2)
    assert r.status_code == 200 and r.json()["status"] == "queued"


def test_waiting_requests_hold_no_thread_and_end_when_the_run_is_done(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _submit(api, "waited")
    entered = [0]
    seen = threading.Condition()
    readable_status = runs_route._readable_status

    def counted(ctx: ServiceContext, caller: Principal, rid: str) -> str:
        found = readable_status(ctx, caller, rid)
        with seen:  # this request is about to wait
            entered[0] += 1
            seen.notify_all()
        return found

    monkeypatch.setattr(runs_route, "_readable_status", counted)
    with ThreadPoolExecutor(WAITERS) as pool:
        waits = [pool.submit(_get, api, run_id, wait_s=60) for _ in range(WAITERS)]
        with seen:  # every waiter has entered its wait
            assert seen.wait_for(lambda: entered[0] >= WAITERS, timeout=60)
        # more waiters than the server has threads, yet a plain request is answered now
        assert _get(api, run_id).json()["status"] == "queued"
        api.drain()
        answers = [w.result(timeout=60) for w in waits]
    assert all(a.status_code == 200 and a.json()["status"] == "done" for a in answers)


def test_the_client_waits_by_long_polling(api: Api) -> None:
    ids = [_submit(api, f"c{i}") for i in range(2)]
    drained = threading.Thread(target=api.drain)
    drained.start()
    url = str(api.client.base_url)
    with Client(url, api.tokens["submitter"], timeout_s=30) as client:
        progress: list[tuple[int, int]] = []
        views = client.wait(ids, timeout_s=120, on_progress=lambda d, t: progress.append((d, t)))
        assert client.run(ids[0], wait_s=5).status == "done"
    drained.join()
    assert sorted(views) == sorted(ids) and all(v.status == "done" for v in views.values())
    assert progress[-1] == (2, 2)
