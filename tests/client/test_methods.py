"""Both clients' methods are one set of plans: the same names and signatures, one carried out
plainly and one awaited, with the same calls and pauses."""

from __future__ import annotations

import asyncio
import inspect
from types import SimpleNamespace
from typing import Any

import httpx

from regua.client import AsyncClient, Client
from regua.client.methods import Method, Methods, Pause, Steps, wait
from regua.client.transport import Call


def _job(done: int) -> dict[str, Any]:
    state = "done" if done >= 3 else "running"
    return {
        **{"job_id": "j", "state": state, "task": "t@1", "api": "openai", "model": "m"},
        **{"mock": True, "repeats": 3, "done": done, "run_ids": [], "status_url": "/s"},
        **{"elapsed_s": 0.1, "submitted_at": "2026-01-01T00:00:00Z"},
    }


def _generations() -> httpx.MockTransport:
    looks = [0]

    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/generations/j"
        looks[0] += 1
        return httpx.Response(200, json=_job(looks[0]))

    return httpx.MockTransport(answer)


def test_the_clients_offer_the_same_methods_with_the_same_signatures() -> None:
    names = [n for n, v in vars(Methods).items() if isinstance(v, Method)]
    assert {"submit", "wait", "evaluate", "wait_generation", "request"} <= set(names)
    sync = Client("http://x", "t", timeout_s=5)
    aio = AsyncClient("http://x", "t", timeout_s=5)
    for name in names:
        assert inspect.signature(getattr(sync, name)) == inspect.signature(getattr(aio, name))
        assert getattr(sync, name).__doc__ == getattr(Methods, name).__doc__
    assert "client" not in inspect.signature(sync.wait).parameters
    sync.close()


def test_a_generation_is_polled_to_its_end_by_either_client() -> None:
    seen: list[tuple[int, int]] = []
    with Client("http://x", "t", timeout_s=5, transport=_generations()) as sync:
        job = sync.wait_generation("j", poll_s=0.01, on_progress=lambda d, t: seen.append((d, t)))
    assert (job.state, seen) == ("done", [(1, 3), (2, 3), (3, 3)])

    async def awaited() -> str:
        async with AsyncClient("http://x", "t", timeout_s=5, transport=_generations()) as aio:
            return (await aio.wait_generation("j", poll_s=0.01)).state

    assert asyncio.run(awaited()) == "done"


def test_polling_every_run_pauses_between_rounds() -> None:
    looked = {"a": 0, "b": 0}
    with Client("http://x", "t", timeout_s=5) as client:
        steps = Steps(wait(client, ["a", "b"], wait_s=0, poll_s=0.5))
    log: list[str | Pause] = []
    answer: Any = None
    while (step := steps.next(answer)) is not None:
        if isinstance(step, Call):
            run_id = step.path.rsplit("/", 1)[1]
            looked[run_id] += 1
            log.append(run_id)
            done = looked[run_id] >= (2 if run_id == "a" else 3)
            answer = SimpleNamespace(status="done" if done else "queued")
        else:
            log.append(step)
            answer = None
    assert log == ["a", "b", Pause(0.5), "a", "b", Pause(0.5), "b"]
    assert sorted(steps.result) == ["a", "b"]
