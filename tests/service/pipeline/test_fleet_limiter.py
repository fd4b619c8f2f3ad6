"""The fleet-wide limiter of model calls on PostgreSQL: one key per endpoint across processes,
waits (never fails) for a slot, frees a dead holder's slot when its lease ends, and is the
limiter every model call of a PostgreSQL context takes."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from regua.llm.endpoint import limit_key
from regua.llm.limits import LayeredLimiter, limiter_for
from regua.settings import Settings
from service.context import ServiceContext
from service.pipeline.slots import FleetLimiter, slot_key
from service.storage import Database

KEY = limit_key("openai", "http://gpu.example:8000/v1")


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_two_holders_share_one_slot_of_an_endpoint(database_url: str) -> None:
    db = Database(database_url)
    try:
        one, two = FleetLimiter(db, "w1", 1), FleetLimiter(db, "w2", 1, poll_s=0.02)
        released: list[float] = []
        started: list[float] = []
        with one.slot(KEY, 30):
            assert one.in_flight(limit_key("openai", "http://GPU.example:8000/v1/")) == 1

            def other() -> None:
                with two.slot(KEY, 30):
                    started.append(time.monotonic())

            waiting = threading.Thread(target=other)
            waiting.start()
            time.sleep(0.4)
            assert not started  # the fleet's only slot is taken: it waits, it does not fail
            released.append(time.monotonic())
        waiting.join(10)
        assert started and started[0] >= released[0]
        assert one.in_flight(KEY) == 0
    finally:
        db.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_a_dead_holders_slot_frees_itself_and_long_keys_fit(database_url: str) -> None:
    db = Database(database_url)
    try:
        dead, alive = FleetLimiter(db, "dead", 1), FleetLimiter(db, "alive", 1, poll_s=0.02)
        # the clock is read before the lease is taken: the lease starts after t0, so its end
        # is at least 0.3 s after t0 however long the call takes on a loaded machine
        t0 = time.monotonic()
        assert dead.slots.try_take(slot_key(KEY), 1, ttl_s=0.3) == 0  # never given back
        with alive.slot(KEY, 30):
            assert time.monotonic() - t0 >= 0.25  # waited for the lease to end
        long_key = limit_key("openai", "http://h/" + "p" * 400 + "/v1")
        assert len(slot_key(long_key)) <= 200
        with alive.slot(long_key, 30):
            assert alive.in_flight(long_key) == 1
    finally:
        db.dispose()


@pytest.mark.postgres
def test_a_postgres_context_installs_the_fleet_limiter_and_puts_it_back(
    tmp_path: Path, pg_url: str
) -> None:
    settings = Settings(data_dir=tmp_path / "data", database_url=pg_url, judge_fleet_limit=3)
    before = limiter_for(settings)
    ctx = ServiceContext.open(settings)
    try:
        installed = limiter_for(settings)
        assert isinstance(installed, LayeredLimiter) and installed is ctx.model_limiter
        fleet = installed.limiters[-1]
        assert isinstance(fleet, FleetLimiter) and fleet.limit == 3
    finally:
        ctx.close()
    assert limiter_for(settings) is before
