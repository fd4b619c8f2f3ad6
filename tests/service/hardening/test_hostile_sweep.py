"""0 HTTP 500 over a generated bad-input sweep of every route (see :mod:`.sweep`).

Was (among others): ``offset=2^70`` on runs and reviews, ``seed=-1`` on reports and
``summary.csv``, ``/runs/{id}?evaluation=2^70``, ``DELETE /v1/tokens/2^70``,
``/v1/evaluations/diff?a=2^70``, lone surrogates in ``POST /v1/evaluations`` and
``/v1/pairwise/comparisons``, an arm label with a lone surrogate or over 200 characters: each a
500. Now each is a 4xx naming the field; the sweep reports every 500 it meets.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from sandbox import WorkerPool
from service.server import create_app
from service.tasks_store import StoredTaskRegistry
from tests.helpers.web import web_login
from tests.service.hardening.sweep import Sweep, endpoints, sweep_app
from tests.service.pools.world import BASE_REF, GOOD, PoolWorld, pool_world

SKIPPED = {
    ("POST", "/logout"): "ends the session the sweep uses",
    ("POST", "/login"): "the login form; its fields are swept without a session below",
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, render_pool: WorkerPool) -> Iterator[PoolWorld]:
    """One served app with real runs, review items and tokens (:mod:`tests.service.pools`),
    its tasks kept in the task store (``POST /v1/tasks`` registers there)."""
    for world in pool_world(tmp_path_factory.mktemp("sweep"), render_pool):
        world.ctx.registry = StoredTaskRegistry(world.ctx.db, world.ctx.registry)
        yield world


def good_bodies(world: PoolWorld) -> dict[tuple[str, str], Any]:
    """A valid body for each route that takes one and whose schema alone says too little."""
    run = {"task": BASE_REF, "model": {"label": "x", "provider": "p"}, "output": GOOD}
    arm = {"name": "a", "model": {"api": "mock", "model": "m", "label": "lab"}, "prompt": "p"}
    experiment = {"id": "e", "items": [BASE_REF], "arms": [arm], "prompts": {"p": "{prompt}!"}}
    spec = world.ctx.registry.get(BASE_REF).to_wire()
    return {
        ("POST", "/v1/runs"): run,
        ("POST", "/v1/runs/batch"): {"runs": [run]},
        ("POST", "/v1/generations"): {"task": BASE_REF, "api": "mock", "model": "m"},
        ("POST", "/v1/experiments"): {"experiment": experiment},
        ("POST", "/v1/pairwise/comparisons"): {
            "task": BASE_REF,
            "criterion": world.ctx.registry.get(BASE_REF).criteria[0].id,
            "models": ["m-pools", "m-echo"],
        },
        ("POST", "/v1/calibrations"): {"judge": "static@1", "task": BASE_REF, "set": "bundled"},
        ("POST", "/v1/evaluations"): {"task": BASE_REF, "panel": "static-only@1"},
        ("POST", "/v1/tasks"): {**spec, "id": "swept-task", "title": "Swept"},
        ("POST", "/v1/tokens"): {"role": "submitter", "name": "swept"},
        ("POST", "/v1/reviews/{item_id}"): {"status": "pass", "note": ""},
    }


def fill(world: PoolWorld) -> dict[str, str]:
    """A real value for each path parameter."""
    return {
        "run_id": world.canary_run,
        "ref": BASE_REF,
        "sha256": world.artifacts(world.canary_run)[0][0],
        "item_id": world.items()[0],
        "token_id": "999999",  # never a real token: the sweep must not revoke one
        "job_id": "job-of-nobody",
        "batch_id": "1",
        "experiment_id": "e@default",
        "proposal_id": "1",
        "name": "regua.css",
    }


@pytest.mark.heavy  # minutes of requests, mostly waiting on the database: a unit per role
@pytest.mark.parametrize(
    "role",
    [
        pytest.param("admin", marks=pytest.mark.xdist_group("hostile-sweep-admin")),
        pytest.param("submitter", marks=pytest.mark.xdist_group("hostile-sweep-submitter")),
    ],
)
def test_no_route_answers_500_to_hostile_input(world: PoolWorld, role: str) -> None:
    """As a token and as a web session of ``role`` (admins reach every route's work)."""
    app = create_app(world.ctx)
    api = world.client(role)
    doc = api.get("/v1/openapi.json").json()
    swept = {ep.path for ep in endpoints(list(app.routes))}
    assert set(doc["paths"]) <= swept  # every documented route is swept
    page = world.client()
    csrf = web_login(page, world.tokens[role])
    bodies = good_bodies(world)
    bodies[("POST", "/review/{item_id}")] = {"status": "pass", "csrf": csrf}
    failed: list[str] = []
    sent = 0
    reached: set[tuple[str, str]] = set()
    # the token sweeps /v1 and the web session the pages: /v1 reads only the Authorization
    # header (a cookie gets 401) and a page only the session (a token gets the login form), so
    # the other pairing would reach no handler
    for http, is_api in ((api, True), (page, False)):
        http.timeout = httpx.Timeout(120)
        sweep = Sweep(http, fill(world), bodies, doc["components"]["schemas"], doc["paths"])
        failed += sweep_app(app, sweep, set(SKIPPED), api=is_api)
        sent += sweep.sent
        reached |= sweep.reached
    # every endpoint that takes a parameter or a body was sent its hostile values
    takes_input = {
        (ep.method, ep.path)
        for ep in endpoints(list(app.routes))
        if ep.path_params or ep.query_params or ep.form_fields or ep.method != "GET"
    } - set(SKIPPED)
    assert takes_input - reached <= {
        (m, p) for m, p in takes_input if m != "GET" and not p.startswith("/v1")
    }, sorted(takes_input - reached)
    # a submitter is refused the admin routes before they read a body, so those get each hostile
    # value whole rather than in every field (Sweep.requests): fewer requests, nothing less reached
    assert sent > (1500 if role == "admin" else 1000)
    if failed:
        pytest.fail(f"{len(failed)} answers were 500:\n" + "\n".join(failed))
