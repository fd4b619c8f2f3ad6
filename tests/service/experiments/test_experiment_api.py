"""``/v1/experiments`` and ``regua experiment run``: what a caller sees for each bad request,
and that nothing is stored for it (a real service on loopback, no rendering needed)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from regua.settings import Settings
from service.access.tokens import create_token
from service.cli import app
from service.context import ServiceContext
from service.experiments.builtin import RUNNER
from service.experiments.plan import case_key, resolve_plan
from service.experiments.runner import generate_cases
from service.experiments.spec import load_experiment_text
from service.experiments.store import open_experiment
from service.generation.request import GenerationParams
from service.generation.runner import generate_runs
from service.server import create_app
from service.storage import ExperimentCaseRow, ExperimentRow, GenerationRow, Run
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread
from tests.helpers.web import web_login

GOOD = """
id: tiny
items: [pelican-bicycle-static]
arms:
  - {name: a, model: {api: mock, model: m1}}
"""


class Served:
    def __init__(self, client: httpx.Client, ctx: ServiceContext) -> None:
        self.client, self.ctx = client, ctx
        self.submitter = {"Authorization": f"Bearer {create_token(ctx.db, 'submitter', 's')[0]}"}
        self.reviewer = {"Authorization": f"Bearer {create_token(ctx.db, 'reviewer', 'r')[0]}"}

    def post(
        self, body: dict[str, object], headers: dict[str, str] | None = None
    ) -> httpx.Response:
        return self.client.post("/v1/experiments", json=body, headers=headers or self.submitter)

    def stored(self) -> list[ExperimentRow]:
        with self.ctx.db.read() as s:
            return list(s.scalars(select(ExperimentRow)))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One service for the module (SQLite; the tables' PostgreSQL form is checked by the
    storage tests' migration test)."""
    tmp = tmp_path_factory.mktemp("exp-api")
    settings = Settings(data_dir=tmp / "data", database_url=f"sqlite:///{tmp / 'r.sqlite3'}")
    ctx = ServiceContext.open(settings)
    try:
        with (
            serve_in_thread(create_app(ctx)) as url,
            Http(base_url=url, timeout=120) as client,
        ):
            yield Served(client, ctx)
    finally:
        ctx.close()


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        (
            {"file": GOOD.replace("api: mock", "api: gpt")},
            422,
            "file: arms.0.model.api: Input should be 'openai', 'anthropic' or 'mock'",
        ),
        ({"file": GOOD.replace("static", "nope")}, 422, "arms.0 (a): unknown task"),
        ({"file": GOOD, "experiment": {"id": "x"}}, 422, "give exactly one of 'file'"),
        ({"file": GOOD, "generator": "nope"}, 404, "unknown experiment generator 'nope'"),
        ({"file": GOOD + "panel: pelican-bicycle-llm@9\n"}, 422, "pelican-bicycle-llm@9"),
        (
            {"file": GOOD.replace("api: mock", "api: openai, base_url: 'http://10.0.0.1/v1'")},
            403,
            "base URL http://10.0.0.1/v1 is not one a submitter may use",
        ),
        (
            {"file": GOOD.replace("api: mock", "api: openai, api_key_env: REGUA_SECRET")},
            403,
            "no key REGUA_SECRET may be sent to openai",
        ),
    ],
)
def test_a_bad_request_is_refused_before_anything_is_stored(
    served: Served, body: dict[str, object], status: int, detail: str
) -> None:
    before = len(served.stored())
    r = served.post(body)
    assert r.status_code == status, r.text
    assert detail in r.json()["detail"]
    assert len(served.stored()) == before


def test_a_reviewer_may_not_start_an_experiment(served: Served) -> None:
    before = len(served.stored())
    r = served.post({"file": GOOD}, served.reviewer)
    assert r.status_code == 403 and "needs submitter" in r.json()["detail"]
    assert len(served.stored()) == before


def test_a_changed_file_under_a_stored_id_is_refused_and_the_stored_one_kept(
    served: Served,
) -> None:
    first = served.post({"file": GOOD})
    assert first.status_code == 202, first.text
    url = first.json()["status_url"]
    deadline = time.monotonic() + 30
    while served.client.get(url, headers=served.submitter).json()["generated"] < 1:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    changed = served.post({"file": GOOD + "repeats: 2\n"})
    assert changed.status_code == 409
    assert "give a new --window (or 'window') or a new id" in changed.json()["detail"]
    (stored_row,) = [r for r in served.stored() if r.id == "tiny@default"]
    # was: "(hash 1a2b3c4d5e6f, this one ...)": 12 hex of the stored file's hash
    assert stored_row.spec_hash[:12] not in changed.text
    assert re.search(r"[0-9a-f]{12}", changed.json()["detail"]) is None
    (row,) = [r for r in served.stored() if r.id == "tiny@default"]
    assert row.spec["repeats"] == 1
    with served.ctx.db.read() as s:
        assert len(s.scalars(select(ExperimentCaseRow)).all()) == 1
    other_window = served.post({"file": GOOD + "repeats: 2\n", "window": "2026-12-02"})
    assert (
        other_window.status_code == 202
        and other_window.json()["experiment_id"] == "tiny@2026-12-02"
    )


def test_the_report_page_needs_a_login_then_shows_the_charts(served: Served) -> None:
    if not any(r.id == "tiny@default" for r in served.stored()):
        assert served.post({"file": GOOD}).status_code == 202
    with Http(base_url=served.client.base_url, follow_redirects=True, timeout=120) as browser:
        r = browser.get("/report/experiments/tiny@default", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"].startswith("/login?next=")
        web_login(browser, served.submitter["Authorization"].removeprefix("Bearer "))
        page = browser.get("/report/experiments/tiny@default")
    assert page.status_code == 200 and page.text.count("<svg") == 3
    assert "Experiment tiny@default" in page.text and "Reproducibility" in page.text


def test_an_unknown_experiment_is_404_saying_what_an_id_is(served: Served) -> None:
    r = served.client.get("/v1/experiments/nope@default", headers=served.submitter)
    assert r.status_code == 404 and "an id is NAME@WINDOW" in r.json()["detail"]


def test_only_its_submitter_and_admins_read_an_experiment_never_a_reviewer(served: Served) -> None:
    if not any(r.id == "tiny@default" for r in served.stored()):
        assert served.post({"file": GOOD}).status_code == 202
    other = {"Authorization": f"Bearer {create_token(served.ctx.db, 'submitter', 'o')[0]}"}
    admin = {"Authorization": f"Bearer {create_token(served.ctx.db, 'admin', 'a')[0]}"}
    unknown = served.client.get("/v1/experiments/nope@default", headers=other).json()["detail"]
    for path in ("", "/report", "/report.html"):
        url = f"/v1/experiments/tiny@default{path}"
        assert served.client.get(url, headers=served.reviewer).status_code == 403
        # another token's experiment is "not found", word for word like an unknown id (was 403)
        theirs = served.client.get(url, headers=other)
        assert theirs.status_code == 404
        assert theirs.json()["detail"] == unknown.replace("nope@default", "tiny@default")
        assert served.client.get(url, headers=admin).status_code == 200
    history = served.client.get("/v1/experiments/tiny/history", headers=other)
    assert history.status_code == 404 and "m1" not in history.text
    r = served.client.get("/v1/experiments/tiny/report", headers=served.reviewer)
    assert r.status_code in (403, 404) and "m1" not in r.text


def test_posting_another_tokens_exact_file_does_not_resume_it(served: Served) -> None:
    """Was: 202 ``resumed: true``, the stored experiment's missing cases generated under the
    poster's token. Now 409 with the changed-file message (nothing tells the two apart) and
    nothing stored: the experiment keeps its creator and its cases."""
    doc = GOOD.replace("id: tiny", "id: mine") + "repeats: 2\n"
    first = served.post({"file": doc})
    assert first.status_code == 202, first.text
    other = {"Authorization": f"Bearer {create_token(served.ctx.db, 'submitter', 'o2')[0]}"}

    def state() -> tuple[list[tuple[str, int | None]], int]:
        with served.ctx.db.read() as s:
            rows = s.execute(select(ExperimentRow.id, ExperimentRow.created_by)).all()
            cases = s.scalars(
                select(ExperimentCaseRow).where(ExperimentCaseRow.experiment_id == "mine@default")
            ).all()
            return sorted((str(i), c) for i, c in rows), len(cases)

    deadline = time.monotonic() + 30
    while state()[1] < 2:  # the creator's job generated both cases
        assert time.monotonic() < deadline
        time.sleep(0.05)
    before = state()
    again = served.post({"file": doc}, other)
    assert again.status_code == 409, again.text
    assert again.json()["detail"] == (
        "experiment mine@default is already stored, with another file or by another token; "
        "give a new --window (or 'window') or a new id"
    )
    assert state() == before
    assert served.post({"file": doc}).json()["resumed"] is True  # its creator resumes it


def test_cli_run_of_a_bad_file_names_the_field_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "exp.yaml"
    bad.write_text(GOOD.replace("items:", "itemz:"))
    res = CliRunner().invoke(app, ["experiment", "run", str(bad), "--data-dir", str(tmp_path)])
    assert res.exit_code == 2
    assert f"{bad}: itemz: Extra inputs are not permitted" in res.output
    assert not (tmp_path / "regua.sqlite3").exists()


def test_cases_generated_before_a_crash_are_taken_over_not_generated_again(served: Served) -> None:
    """The process died after the runner stored two generations but before the experiment
    wrote its case rows: the next run finds them by case key and calls nobody."""
    ctx = served.ctx
    spec = load_experiment_text(GOOD.replace("id: tiny", "id: crash") + "repeats: 2\n")
    ident, resumed = open_experiment(ctx.db, spec, resolve_plan(spec, ctx.registry), "w", None)
    keys = [case_key(ident, "a", "pelican-bicycle-static", r) for r in range(2)]
    params = GenerationParams(api="mock", model="m1")
    before = generate_runs(
        ctx, "pelican-bicycle-static@1", params, 2, token_id=None, case_keys=keys
    )
    new, finished = generate_cases(ctx, ident, RUNNER, token_id=None)
    assert (resumed, new, finished) == (False, 2, True)
    with ctx.db.read() as s:
        rows = s.scalars(select(ExperimentCaseRow).where(ExperimentCaseRow.experiment_id == ident))
        assert [c.run_id for c in sorted(rows, key=lambda c: c.repeat)] == before
        gens = s.scalars(select(GenerationRow.case_key).where(GenerationRow.case_key.in_(keys)))
        assert sorted(str(g) for g in gens) == sorted(keys)  # still one generation per key


def test_unjudged_runs_stay_visible_and_windows_sit_side_by_side(served: Served) -> None:
    """No executor runs here: every case is still ``running``, counted, never a pass."""
    bodies: list[dict[str, object]] = [
        {"file": GOOD},
        {"file": GOOD + "repeats: 2\n", "window": "2026-12-02"},
    ]
    for body in bodies:
        r = served.post(body)
        assert r.status_code == 202 or r.status_code == 409, r.text
    deadline = time.monotonic() + 30
    url = "/v1/experiments/tiny@2026-12-02"
    while served.client.get(url, headers=served.submitter).json()["generated"] < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    report = served.client.get(f"{url}/report", headers=served.submitter).json()
    (arm,) = report["arms"]
    assert arm["counts"]["running"] == 2 and arm["pass_rate"] == 0.0
    assert report["experiment"]["status"] == "evaluating"
    hist = served.client.get("/v1/experiments/tiny/history", headers=served.submitter).json()
    windows = [p["window"] for s in hist["series"] for p in s["points"]]
    assert windows == ["default", "2026-12-02"]


def test_the_experiment_panel_reaches_every_run(served: Served) -> None:
    text = GOOD.replace("id: tiny", "id: paneled") + "panel: static-only@1\n"
    r = served.post({"file": text})
    assert r.status_code == 202, r.text
    deadline = time.monotonic() + 30
    while (
        served.client.get(r.json()["status_url"], headers=served.submitter).json()["generated"] < 1
    ):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    with served.ctx.db.read() as s:
        (run_id,) = s.scalars(
            select(ExperimentCaseRow.run_id).where(
                ExperimentCaseRow.experiment_id == "paneled@default"
            )
        )
        assert s.scalar(select(Run.panel_id).where(Run.id == run_id)) == "static-only@1"
