"""Issue 14 items 9 and 10: a refused submission writes nothing; fairness between submitters.

A full queue, a submitter over its share and a token over its rate answer 429 with
``Retry-After``; a batch that can never fit answers 422. The blob folder and the database are
counted before and after: a refused request must add no file, no run and no artifact row.
"""

from __future__ import annotations

from sqlalchemy import event, select

from regua.settings import Settings
from service.pipeline.admission import Admission, Limits, unfinished_runs
from service.storage import Run
from tests.service.api.store_counts import GOOD, body, stored
from tests.service.conftest import Api


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _distinct(i: int, size: int = 0) -> str:
    """A distinct output (so every post would need its own blob), ``size`` bytes of padding."""
    return GOOD.replace("</svg>", f"<!-- {i} {'x' * size} --></svg>")


def test_refused_posts_write_no_blob_and_no_row(api: Api) -> None:
    """Queue full: 10 posts of 1.4 MB are answered 429 and the store grows by nothing."""
    assert api.ctx.settings.queue_capacity == 8 and api.ctx.admission.limits.share == 4
    alice, bob = api.h("submitter"), api.h("other")
    for who in (alice, bob):
        runs = [body(_distinct(i)) for i in range(4)]
        assert (
            api.client.post("/v1/runs/batch", json={"runs": runs}, headers=who).status_code == 202
        )
    before = stored(api.ctx)
    assert before.runs == 8
    for i in range(10):
        r = api.client.post("/v1/runs", json=body(_distinct(100 + i, 1_400_000)), headers=bob)
        assert r.status_code == 429, r.text
        assert r.json()["error"] == "queue_full" and int(r.headers["Retry-After"]) >= 1
    after = stored(api.ctx)
    # the old code wrote (and fsynced) every refused reply: +10 files, +14 MB
    assert after == before, f"refused posts stored {after.blob_bytes - before.blob_bytes} bytes"


def test_batch_that_can_never_fit_is_422_not_429(api: Api) -> None:
    """A batch over the capacity (or over one submitter's share) is refused for good."""
    before = stored(api.ctx)
    h = api.h("submitter")
    too_big = [body(_distinct(i)) for i in range(9)]  # capacity 8
    r = api.client.post("/v1/runs/batch", json={"runs": too_big}, headers=h)
    assert r.status_code == 422 and "Retry-After" not in r.headers
    assert r.json()["error"] == "batch_too_large" and "holds 8" in r.json()["detail"]
    over_share = [body(_distinct(i)) for i in range(5)]  # share 4
    r = api.client.post("/v1/runs/batch", json={"runs": over_share}, headers=h)
    assert r.status_code == 422 and "Retry-After" not in r.headers
    assert "may have 4 runs waiting" in r.json()["detail"]
    assert stored(api.ctx) == before  # neither wrote a blob nor a row


def test_one_submitter_cannot_fill_the_queue(api: Api) -> None:
    """Alice's share is 4 of 8: her next run waits (Retry-After from her backlog), Bob's not."""
    alice, bob = api.h("submitter"), api.h("other")
    runs = [body(_distinct(i)) for i in range(4)]
    assert api.client.post("/v1/runs/batch", json={"runs": runs}, headers=alice).status_code == 202
    before = stored(api.ctx)
    one = api.client.post("/v1/runs", json=body(_distinct(10)), headers=alice)
    assert one.status_code == 429 and one.json()["error"] == "queue_share_full"
    assert "4 runs waiting and may have 4" in one.json()["detail"]
    three = api.client.post(
        "/v1/runs/batch", json={"runs": [body(_distinct(i)) for i in (11, 12, 13)]}, headers=alice
    )
    assert three.status_code == 429
    # waiting for 3 of her runs to finish takes longer than waiting for 1
    assert int(three.headers["Retry-After"]) > int(one.headers["Retry-After"]) >= 1
    assert three.json()["retry_after_s"] == int(three.headers["Retry-After"])
    assert stored(api.ctx) == before
    assert api.client.post("/v1/runs", json=body(_distinct(20)), headers=bob).status_code == 202
    api.drain()
    assert api.client.post("/v1/runs", json=body(_distinct(10)), headers=alice).status_code == 202


def test_rate_limit_per_token_on_an_injected_clock(api: Api) -> None:
    """30 requests a minute, 2 in a row: the third waits 2 s (by the clock), other tokens not."""
    clock = FakeClock()
    api.ctx.admission = Admission(Limits(capacity=8, share=4, rate_per_minute=30, burst=2), clock)
    alice, bob = api.h("submitter"), api.h("other")
    for i in range(2):
        assert (
            api.client.post("/v1/runs", json=body(_distinct(i)), headers=alice).status_code == 202
        )
    before = stored(api.ctx)
    r = api.client.post("/v1/runs", json=body(_distinct(2)), headers=alice)
    assert r.status_code == 429 and r.json()["error"] == "rate_limited"
    assert r.headers["Retry-After"] == "2" and "30 per minute" in r.json()["detail"]
    assert stored(api.ctx) == before
    assert api.client.post("/v1/runs", json=body(_distinct(3)), headers=bob).status_code == 202
    clock.now += 1.0  # half a request refilled: still refused, 1 s to go
    r = api.client.post("/v1/runs", json=body(_distinct(2)), headers=alice)
    assert r.status_code == 429 and r.headers["Retry-After"] == "1"
    clock.now += 1.0
    assert api.client.post("/v1/runs", json=body(_distinct(2)), headers=alice).status_code == 202


def test_limits_come_from_settings() -> None:
    """``REGUA_SUBMITTER_QUEUE_SHARE``, ``REGUA_SUBMIT_RATE_PER_MINUTE``, ``REGUA_SUBMIT_BURST``."""
    limits = Limits.from_settings(
        Settings(
            queue_capacity=1000,
            submitter_queue_share=0.25,
            submit_rate_per_minute=0,
            submit_burst=5,
        )
    )
    assert limits == Limits(capacity=1000, share=250, rate_per_minute=0, burst=5)
    assert Limits.from_settings(Settings()).share == 500  # the default: half the queue


def test_the_queue_and_the_share_are_counted_in_one_statement(api: Api) -> None:
    """Admission reads the queue's depth and the submitter's share with one round trip."""
    h = api.h("submitter")
    r = api.client.post(
        "/v1/runs/batch", json={"runs": [body(_distinct(i)) for i in range(3)]}, headers=h
    )
    assert r.status_code == 202
    statements: list[str] = []

    def seen(*args: object) -> None:
        statements.append(str(args[2]))

    event.listen(api.ctx.db.engine, "before_cursor_execute", seen)
    try:
        with api.ctx.db.read() as s:
            token = s.scalar(select(Run.submitted_by).where(Run.submitted_by.is_not(None)))
            assert token is not None
            assert unfinished_runs(s, token) == (3, 3)
            assert unfinished_runs(s, token + 1) == (3, 0)
            assert unfinished_runs(s, None) == (3, 0)
            statements.clear()
            api.ctx.admission.check_queue(s, 1, token)
    finally:
        event.remove(api.ctx.db.engine, "before_cursor_execute", seen)
    assert len(statements) == 1, statements
