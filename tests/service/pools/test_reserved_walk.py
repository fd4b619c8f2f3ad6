"""A reserved task's prompt and drawings reach no submitter or reviewer.

The walk is generic: it expands every route of the served app (API and pages), fills each path
parameter with real ids (failing on a parameter it cannot fill, so a new route is covered or
the test says why not), calls every method with a bearer token and with a logged-in web
session, and asserts that no body holds the reserved prompt, its title or the bytes of any of
its run's artifacts. The admin walk must see the prompt, so the test can fail.

Every route that creates work (runs, batches, generations, experiments, pairwise comparisons,
calibrations, re-scoring) is sent a valid request for a reserved task by the submitter and the
reviewer: each answers 403 and stores nothing. The world also holds runs of a second reserved
task that the submitter owns (made past the routes, by the generation runner with an echo
prompt variant and by the submit path, as the generation and experiment routes once allowed):
the walk shows the submitter none of their criterion questions, prompt, echoed prompt,
family or prompt hash.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from sandbox import WorkerPool
from service.server import create_app
from service.storage import (
    CalibrationRunRow,
    ExperimentRow,
    GenerationRow,
    PairwiseComparisonRow,
    RescoreBatch,
    ReviewRow,
    Run,
)
from tests.helpers.web import web_login
from tests.service.pools.world import (
    ECHO_VARIANT,
    FAMILY_PROMPT_SHA,
    GOOD,
    SECRET_PIECE,
    SECRET_PROMPT,
    SECRETS,
    PoolWorld,
    pool_world,
)

STATIC = sorted(p.name for p in (Path(__file__).parents[3] / "service/web/static").iterdir())
QUICK = {"resamples": "0"}
"""Sent to every route (reports take it: no bootstrap, so the walk stays quick)."""
PARAM = re.compile(r"{([^}:]+)(?::[^}]*)?}")
SKIPPED = {
    ("POST", "/logout"): "ends the session the walk uses; answers a redirect, no data",
    ("POST", "/login"): "the login form (answers the form or a redirect); web_login covers it",
}
ADMIN_SKIPPED = {
    ("POST", "/v1/tasks/{ref}/retire"): "would unhide the reserved task for the other walks",
    ("DELETE", "/v1/tokens/{token_id}"): "would revoke the admin's own token",
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, render_pool: WorkerPool) -> Iterator[PoolWorld]:
    """One served app for the module (see :mod:`tests.service.pools.world`)."""
    yield from pool_world(tmp_path_factory.mktemp("pools"), render_pool)


def endpoints(routes: list[Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    """(method, path template) of every route, entering included routers (any FastAPI)."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            sub = prefix + str(getattr(route.include_context, "prefix", ""))
            yield from endpoints(list(included.routes), sub)
        elif getattr(route, "methods", None) and getattr(route, "path", None):
            for method in sorted(set(route.methods) - {"HEAD"}):
                yield method, prefix + route.path
        else:
            raise AssertionError(f"the walker cannot enter route {route!r}; teach it")


def fillers(world: PoolWorld) -> dict[str, list[str]]:
    """Real values for every path parameter name the app uses."""
    runs = [world.reserved_run, world.canary_run, world.prompt_run, *world.owned_runs]
    return {
        "run_id": runs,
        "ref": [world.spec.ref, world.family.ref],
        # every artifact of the reserved run, and a few the caller may read (the canary run's)
        "sha256": [sha for sha, _ in world.artifacts(world.reserved_run)]
        + [sha for sha, _ in world.artifacts(world.canary_run)][:3],
        "item_id": world.reserved_items() + world.owned_items()[:2],
        "token_id": [str(world.token_ids["admin"])],
        "job_id": ["job-of-nobody"],
        "batch_id": ["1"],
        "proposal_id": ["1"],  # admin-only routes: the walk checks the others get nothing
        "experiment_id": ["experiment-of-nobody"],
        "name": STATIC,
    }


def concrete(template: str, fill: dict[str, list[str]]) -> list[str]:
    """Every path of ``template`` with its parameters filled (fails on an unknown one)."""
    paths = [template]
    for name in PARAM.findall(template):
        assert name in fill, f"no value for path parameter {name!r} of {template}; add one"
        assert fill[name], f"no real value for {name!r} of {template}"
        one = re.compile(r"{" + name + r"(?::[^}]*)?}")
        paths = [one.sub(v, p) for p in paths for v in fill[name]]
    return paths


def work_bodies(world: PoolWorld) -> dict[tuple[str, str], dict[str, Any]]:
    """A valid request for a reserved task to every route that creates work."""
    task, family = world.spec.ref, world.family.ref
    run = {"task": task, "model": {"label": "x", "provider": "p"}, "output": GOOD}
    arm = {"name": "echo", "model": {"api": "mock", "model": "m"}, "prompt": "echo"}
    experiment = {"id": "echo", "items": [family], "prompts": {"echo": ECHO_VARIANT}}
    criterion = world.family.criteria[0].id
    return {
        ("POST", "/v1/runs"): run,
        ("POST", "/v1/runs/batch"): {"runs": [run]},
        ("POST", "/v1/generations"): {"task": family, "api": "mock", "model": "m", "wait": True},
        ("POST", "/v1/experiments"): {"experiment": {**experiment, "arms": [arm]}},
        ("POST", "/v1/pairwise/comparisons"): {
            "task": family,
            "criterion": criterion,
            "models": ["mock:m", "m-echo"],
        },
        ("POST", "/v1/calibrations"): {"judge": "static@1", "task": family, "wait": True},
        ("POST", "/v1/evaluations"): {"task": family, "panel": "static-only@1", "wait": True},
    }


def bodies(world: PoolWorld, csrf: str, *, admin: bool) -> dict[tuple[str, str], dict[str, Any]]:
    """Valid bodies for the routes that take one (JSON for /v1, form fields for pages).

    The admin walk sends the work routes no body (422): it must not start work for the walks
    that follow.
    """
    return {
        **({} if admin else work_bodies(world)),
        ("POST", "/v1/reviews/{item_id}"): {"status": "pass", "note": ""},
        ("POST", "/review/{item_id}"): {"status": "pass", "csrf": csrf},
    }


def _call(
    http: httpx.Client, method: str, path: str, query: dict[str, str], body: Any
) -> httpx.Response:
    if method == "GET":
        return http.get(path, params=query)
    if path.startswith("/v1"):
        return http.request(method, path, params=query, json=body)
    return http.request(method, path, params=query, data=body)


def work_stored(world: PoolWorld) -> dict[str, int]:
    """How much work is stored or running: rows of every kind of work, and jobs in memory."""
    kinds = {
        "runs": Run.id,
        "generations": GenerationRow.id,
        "experiments": ExperimentRow.id,
        "comparisons": PairwiseComparisonRow.id,
        "calibrations": CalibrationRunRow.id,
        "rescore_batches": RescoreBatch.id,
    }
    with world.ctx.db.read() as s:
        out = {k: int(s.scalar(select(func.count(col))) or 0) for k, col in kinds.items()}
    out["jobs"] = len(world.ctx.jobs.jobs(limit=10_000)) if world.ctx.jobs is not None else 0
    return out


def walk(
    world: PoolWorld, http: httpx.Client, csrf: str, *, admin: bool = False, bearer: bool = True
) -> dict[str, str]:
    """Call every endpoint with ``http``; the text of each answer by ``METHOD path query``.

    Without ``admin``, every route that creates work is sent a reserved task's request and must
    answer 403 (401 for a web session without a ``bearer`` token) with nothing stored.

    Routes without path parameters are also called with ``?item=`` (a reserved review item) and
    ``?task=`` (the reserved ref), the query parameters pages and reports take.
    """
    fill = fillers(world)
    body_of = bodies(world, csrf, admin=admin)
    work = work_bodies(world)
    before = work_stored(world)
    secret_bytes = [(s, d) for s, d in world.secret_artifacts() if len(d) >= 64]
    assert any(d[:4] == b"\x89PNG" for _, d in secret_bytes), "the reserved run has own frames"
    skipped = SKIPPED | (ADMIN_SKIPPED if admin else {})
    seen: dict[str, str] = {}
    got_secret_bytes = False
    for method, template in endpoints(list(create_app(world.ctx).routes)):
        if (method, template) in skipped:
            continue
        queries: list[dict[str, str]] = [QUICK]
        if "{" not in template:
            queries.append({**QUICK, "item": fill["item_id"][0], "task": world.spec.ref})
        for path in concrete(template, fill):
            for query in queries:
                got = _call(http, method, path, query, body_of.get((method, template), {}))
                content = got.content
                seen[f"{method} {path} {query}"] = content.decode("utf-8", "replace")
                if not admin and (method, template) in work:
                    refused = 403 if bearer else 401
                    assert got.status_code == refused, f"{method} {path}: {got.text}"
                for sha, data in secret_bytes:
                    if admin:
                        got_secret_bytes = got_secret_bytes or data in content
                    else:
                        assert data not in content, f"{method} {path} sent reserved artifact {sha}"
    assert got_secret_bytes or not admin, "the admin walk must get the reserved drawings"
    if not admin:
        assert work_stored(world) == before, "a refused request for a reserved task stored work"
    return seen


SECRET_HASHES = (FAMILY_PROMPT_SHA, hashlib.sha256(SECRET_PROMPT.encode()).hexdigest())
"""sha256 of the prompts sent for the reserved tasks (a templated prompt is brute-forced from
its hash): shown to admins only."""


def _leaks(seen: dict[str, str]) -> list[str]:
    secrets = (*SECRETS, *SECRET_HASHES)
    return [
        k
        for k, text in seen.items()
        if SECRET_PIECE in text.casefold() or any(secret in text for secret in secrets)
    ]


@pytest.mark.parametrize("name", ["submitter", "reviewer"])
def test_reserved_prompt_reaches_no_submitter_or_reviewer(world: PoolWorld, name: str) -> None:
    assert world.reserved_items(), "the reserved run has a review item to walk"
    bearer = walk(world, world.client(name), csrf="")
    assert _leaks(bearer) == []
    walked = {template for _, template in endpoints(list(create_app(world.ctx).routes))}
    schema = world.client(name).get("/v1/openapi.json").json()["paths"]
    assert set(schema) <= walked  # every documented route is walked, and the pages too:
    assert {"/review", "/runs/{run_id}", "/report/full", "/v1/tasks/{ref}"} <= walked
    page = world.client()
    csrf = web_login(page, world.tokens[name])
    pages = walk(world, page, csrf, bearer=False)
    assert _leaks(pages) == []
    # what they do see: the ref and pool
    listing = world.client(name).get("/v1/tasks").json()["tasks"]
    line = next(t for t in listing if t["ref"] == world.spec.ref)
    assert line["pool"] == "reserved" and line["redacted"] and line["title"] is None


def test_admin_sees_the_reserved_prompt(world: PoolWorld) -> None:
    seen = walk(world, world.client("admin"), csrf="", admin=True)
    assert _leaks(seen), "the admin walk must see the reserved prompt"
    detail = world.client("admin").get(f"/v1/tasks/{world.spec.ref}").json()
    assert detail["spec"]["prompt"] == SECRET_PROMPT and not detail["redacted"]
    assert detail["canary"] == world.spec.canary_text()
    page = world.client()
    web_login(page, world.tokens["admin2"])  # admin did submit it; another admin reviews
    item = world.reserved_items()[0]
    shown = page.get("/review", params={"item": item})
    assert shown.status_code == 200 and SECRET_PROMPT in shown.text
    frame = next(sha for sha, d in world.artifacts(world.reserved_run) if d[:4] == b"\x89PNG")
    assert world.client("admin").get(f"/v1/artifacts/{frame}").status_code == 200


def test_a_submitters_run_of_a_reserved_task_is_for_admins_only(world: PoolWorld) -> None:
    """Runs the submitter owns of a reserved task: the generation runner's (echo variant) and
    a reply echoing the prompt. Was: the run JSON and page showed the criterion questions, the
    echoed prompt and ``generation.prompt_sha256``; reports, ``summary.csv`` and
    ``/report/full`` the family. Now each such run answers 404 and leaves every listing."""
    submitter, admin = world.client("submitter"), world.client("admin")
    generated, echoed = world.owned_runs
    for run_id in world.owned_runs:
        got = submitter.get(f"/v1/runs/{run_id}")
        assert got.status_code == 404 and got.json()["detail"] == f"no run {run_id!r}"
    listed = {r["run_id"] for r in submitter.get("/v1/runs").json()["runs"]}
    assert world.canary_run in listed and not listed & set(world.owned_runs)
    report = submitter.get("/v1/reports", params={"resamples": 0}).json()
    assert report["provenance"]["task_versions"] == ["pelican-bicycle-structured@1"]
    csv = submitter.get("/v1/reports/summary.csv", params={"resamples": 0}).text
    assert world.family.family not in csv and world.family.ref not in csv
    # what the admin sees (the run is stored with its hash): so the test can fail
    shown = admin.get(f"/v1/runs/{generated}").json()
    assert shown["generation"]["prompt_sha256"] == FAMILY_PROMPT_SHA
    assert world.family.family in admin.get("/v1/reports/summary.csv").text
    page = world.client()
    web_login(page, world.tokens["submitter"])
    assert page.get(f"/runs/{echoed}").status_code == 404
    assert world.family.family not in page.get("/report/full").text
    assert world.family.ref not in page.get("/report").text


def test_a_family_experiment_leaves_out_reserved_tasks(world: PoolWorld) -> None:
    """``family:`` names a reserved task's family: as if no task had it (nothing stored)."""
    before = work_stored(world)
    arm = {"name": "a", "model": {"api": "mock", "model": "m"}}
    doc = {"id": "fam", "family": world.family.family, "arms": [arm]}
    got = world.client("submitter").post("/v1/experiments", json={"experiment": doc})
    assert got.status_code == 422
    detail = got.json()["detail"]
    assert detail.startswith(f"family: no task of family {world.family.family!r} (")
    assert "pelican-bicycle" in detail and detail.count(world.family.family) == 1
    assert work_stored(world) == before


def test_reviewer_is_never_offered_a_reserved_item(world: PoolWorld) -> None:
    reviewer = world.client("reviewer")
    reserved = set(world.reserved_items())
    offered: list[str] = []
    while True:
        got = reviewer.get("/v1/reviews/next", params={"skip": offered}).json()["item"]
        if got is None or got["item_id"] in offered:
            break
        offered.append(got["item_id"])
    assert offered and not reserved & set(offered)
    before = _stored(world)
    posted = reviewer.post(f"/v1/reviews/{sorted(reserved)[0]}", json={"status": "pass"})
    assert posted.status_code == 404 and "no review item" in posted.text  # as if unknown
    submit = world.client("submitter").post(
        "/v1/runs",
        json={"task": world.spec.ref, "model": {"label": "m"}, "output": GOOD},
    )
    assert submit.status_code == 403 and "admin token" in submit.text
    assert SECRET_PIECE not in submit.text
    assert _stored(world) == before  # neither refusal stored anything


def test_review_listing_shows_reserved_items_to_admins_only(world: PoolWorld) -> None:
    """Was: ``GET /v1/reviews`` listed a reviewer every reserved item with its final label."""
    reserved = set(world.reserved_items()) | set(world.owned_items())
    assert reserved
    listed = world.client("reviewer").get("/v1/reviews").json()["items"]
    assert listed and not reserved & {i["item_id"] for i in listed}
    assert not {world.spec.ref, world.family.ref} & {i["task"] for i in listed}
    everything = world.client("admin").get("/v1/reviews").json()["items"]
    assert reserved <= {i["item_id"] for i in everything}


def _stored(world: PoolWorld) -> tuple[int, int]:
    """How many runs and review labels are stored."""
    with world.ctx.db.read() as s:
        runs = s.scalar(select(func.count(Run.id))) or 0
        labels = s.scalar(select(func.count(ReviewRow.id))) or 0
    return int(runs), int(labels)


def test_reply_with_a_reserved_canary_or_prompt_is_flagged(world: PoolWorld) -> None:
    admin = world.client("admin")
    canary = admin.get(f"/v1/runs/{world.canary_run}").json()
    assert canary["leaks"] and {(x["task"], x["kind"]) for x in canary["leaks"]} == {
        (world.spec.ref, "canary")
    }
    quoted = admin.get(f"/v1/runs/{world.prompt_run}").json()
    assert [(x["task"], x["kind"]) for x in quoted["leaks"]] == [(world.spec.ref, "prompt")]
    own = admin.get(f"/v1/runs/{world.reserved_run}").json()
    assert own["leaks"] == []  # neither its canary nor another reserved prompt
    mine = world.client("submitter").get(f"/v1/runs/{world.canary_run}").json()
    assert "leaks" not in mine  # flags are for admins
    report = admin.get("/v1/reports", params={"resamples": 0}).json()
    (entry,) = report["leaks"]
    assert entry["task"] == world.spec.ref and entry["canary"] == 1 and entry["prompt"] == 1
    assert sorted(entry["runs"]) == sorted([world.canary_run, world.prompt_run])
    assert {p["pool"] for p in report["aggregates"]} == {"core", "reserved"}  # kept apart
    html = admin.get("/v1/reports/html", params={"resamples": 0}).text
    assert f"<td>leak: {world.spec.ref}</td><td>1</td><td>1</td><td>2</td>" in html
    page = world.client()
    web_login(page, world.tokens["admin"])
    assert (
        f"leak: <code>{world.spec.ref}</code> (canary)"
        in page.get(f"/runs/{world.canary_run}").text
    )


def test_retiring_unhides_the_reserved_task(world: PoolWorld) -> None:
    """Last in the module: it retires the reserved task for good."""
    submitter = world.client("submitter")
    assert submitter.post(f"/v1/tasks/{world.spec.ref}/retire").status_code == 403
    r = world.client("admin").post(f"/v1/tasks/{world.spec.ref}/retire", json={"note": "rotated"})
    assert r.status_code == 200 and r.json()["note"] == "rotated"
    again = world.client("admin").post(f"/v1/tasks/{world.spec.ref}/retire")
    assert again.json()["retired_at"] == r.json()["retired_at"]  # idempotent
    shown = submitter.get(f"/v1/tasks/{world.spec.ref}").json()
    assert shown["retired"] and not shown["redacted"] and shown["spec"]["prompt"] == SECRET_PROMPT
    assert world.client("admin").post("/v1/tasks/nope@1/retire").status_code == 404
