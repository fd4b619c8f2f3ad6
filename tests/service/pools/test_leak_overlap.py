"""Leaks by overlap: a reply quoting one 9-word sentence of a reserved prompt is flagged with that
sentence and the share of the prompt's 8-grams, through the real pipeline, the run JSON, the run
page and the report."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from regua.settings import Settings
from sandbox import WorkerPool
from service.access.tokens import create_token
from service.context import ServiceContext
from service.pipeline.submit import Submission
from service.server import create_app
from tasks import TaskRegistry, TaskSpec, bundled_registry
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread
from tests.helpers.web import web_login
from tests.service.conftest import drain

BASE_REF = "pelican-bicycle-structured@1"
SENTENCE = "The heron balances three lemons above its yellow beak"
PROMPT = f"Draw a heron on a unicycle in the rain. {SENTENCE}. Keep the background plain."
# 9 + 9 + 4 = 22 words: 15 8-grams; the quoted sentence holds 2 of them
GOOD = (Path(__file__).resolve().parents[3] / "samples/outputs/structured-good.svg").read_text()


def _reserved() -> TaskSpec:
    doc = {**bundled_registry().get(BASE_REF).to_wire(), "id": "heron-overlap", "pool": "reserved"}
    doc.update(title="Heron overlap", prompt=PROMPT)
    return TaskSpec.model_validate(doc)


@pytest.fixture
def served(tmp_path: Path, render_pool: WorkerPool) -> Iterator[tuple[ServiceContext, str, str]]:
    """A served context knowing one reserved task, and an admin token."""
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=f"sqlite:///{tmp_path / 'regua.sqlite3'}",
        queue_capacity=8,
        render_workers=2,
    )
    ctx = ServiceContext.open(settings, render_pool=render_pool)
    ctx.registry = TaskRegistry(bundled_registry().all())  # never the shared, cached one
    ctx.registry.register(_reserved())
    admin = create_token(ctx.db, "admin", "admin")[0]
    try:
        with serve_in_thread(create_app(ctx)) as url:
            yield ctx, url, admin
    finally:
        ctx.close()


def test_a_quoted_sentence_of_a_reserved_prompt_is_flagged_with_it(
    served: tuple[ServiceContext, str, str],
) -> None:
    ctx, url, admin = served
    quoted = GOOD.replace("</svg>", f"<!-- note: {SENTENCE.upper()}! --></svg>")
    clean = GOOD.replace("</svg>", "<!-- The heron balances three lemons above it --></svg>")
    subs = [Submission(BASE_REF, "m", quoted), Submission(BASE_REF, "m", clean)]
    flagged, unflagged = ctx.submit(subs, None)
    drain(ctx)
    headers = {"Authorization": f"Bearer {admin}"}
    with Http(base_url=url, timeout=60, headers=headers) as client:
        run = client.get(f"/v1/runs/{flagged}").json()
        (leak,) = run["leaks"]
        assert (leak["task"], leak["kind"]) == ("heron-overlap@1", "overlap")
        assert leak["overlap"] == SENTENCE.upper()  # the reply's own text, case and all
        assert leak["share"] == pytest.approx(2 / 15)
        assert client.get(f"/v1/runs/{unflagged}").json()["leaks"] == []  # 7 words: no 8-gram
        report = client.get("/v1/reports", params={"resamples": 0}).json()
        (entry,) = report["leaks"]
        assert (entry["overlap"], entry["prompt"], entry["runs"]) == (1, 0, [flagged])
    with Http(base_url=url, timeout=60, follow_redirects=True) as browser:
        web_login(browser, admin)
        page = browser.get(f"/runs/{flagged}").text
        assert f"(overlap): “{SENTENCE.upper()}” (13 % of the prompt's 8-grams)" in page
