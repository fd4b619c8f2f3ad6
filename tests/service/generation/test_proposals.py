"""Acceptance of issue 26.4: ``regua tasks propose`` with a fake model stores proposals (with the
model, prompt and reply), and nothing is registered until a person accepts one — on the
command line (``regua tasks proposals accept``) or on the page ``/tasks/proposals``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner, Result

from regua.llm.testing import FakeModelServer, Proposer, Reply, Scripted, serving
from regua.settings import Settings
from service.access.tokens import create_token
from service.cli import app
from service.context import ServiceContext
from service.server import create_app
from service.storage import TaskProposalDecisionRow, TaskProposalRow, TaskVersionRow
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread
from tests.helpers.web import csrf_in, web_login

SAMPLE = Path(__file__).resolve().parents[3] / "samples/tasks/pelican-personas.yaml"
PERSONAS = ["night-nurse", "bus-driver", "beekeeper", "Chess Champion", "night-nurse"]


def _values(i: int) -> dict[str, str]:
    """Variant i: a persona (the 4th is no slug; the 5th repeats the 1st) and a style."""
    return {"persona": PERSONAS[i % len(PERSONAS)], "style": "woodcut"}


@dataclass
class Service:
    ctx: ServiceContext
    url: str
    admin: str
    submitter: str
    model: FakeModelServer[Proposer]

    def regua(self, *args: str, token: str | None = None) -> Result:
        env = {"REGUA_URL": self.url, "REGUA_TOKEN": token or self.admin, "COLUMNS": "250"}
        return CliRunner().invoke(app, list(args), env=env)

    def registered(self) -> set[str]:
        with self.ctx.db.read() as s:
            return set(s.scalars(select(TaskVersionRow.ref)))


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    ctx = ServiceContext.open(Settings(data_dir=tmp_path / "data", generation_backoff_s=0.01))
    admin = create_token(ctx.db, "admin", "ada")[0]
    submitter = create_token(ctx.db, "submitter", "sam")[0]
    with serving(Proposer(_values)) as model, serve_in_thread(create_app(ctx)) as url:
        yield Service(ctx, url, admin, submitter, model)
    ctx.close()


def _propose(service: Service, n: int = 5) -> Result:
    base = f"{service.model.url}/v1"
    return service.regua(
        "tasks", "propose", str(SAMPLE), "--dimensions", "persona,style,language",
        "--n", str(n), "--api", "openai", "--base-url", base, "--model", "proposer-m",
    )  # fmt: skip


def test_proposals_are_stored_and_nothing_is_registered_until_accepted(service: Service) -> None:
    before = service.registered()
    done = _propose(service)
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "5 proposals stored (3 make a new task version); none is registered" in done.stdout
    assert service.registered() == before  # nothing registered by proposing
    with service.ctx.db.read() as s:
        rows = list(s.scalars(select(TaskProposalRow).order_by(TaskProposalRow.id)))
    assert len(rows) == 5 and {r.model for r in rows} == {"proposer-m"}
    (prompt,) = service.model.model.prompts
    assert all(r.prompt == prompt and r.reply and r.api == "openai" for r in rows)
    assert [r.proposed for r in rows] == [["persona", "style"]] * 5
    assert "not a short slug" in (rows[3].problem or "")
    assert "repeats variant 1 of this batch" in (rows[4].problem or "")
    with Http(base_url=service.url, timeout=60) as http:
        auth = {"Authorization": f"Bearer {service.admin}"}
        listed = http.get("/v1/tasks", headers=auth).json()["tasks"]
        assert not {t["ref"] for t in listed} & {r.ref for r in rows if r.ref}
        denied = http.get(
            "/v1/task-proposals", headers={"Authorization": f"Bearer {service.submitter}"}
        )
        assert denied.status_code == 403  # proposals become task versions: admins only
    first, second = rows[0], rows[1]
    accepted = service.regua("tasks", "proposals", "accept", str(first.id), "--reason", "good")
    assert accepted.exit_code == 0, accepted.stdout + accepted.stderr
    assert f"#{first.id} accepted: {first.ref} created" in accepted.stdout
    rejected = service.regua("tasks", "proposals", "reject", str(second.id), "--reason", "dull")
    assert rejected.exit_code == 0 and f"#{second.id} rejected" in rejected.stdout
    assert service.registered() == before | {first.ref}  # only the accepted one
    with service.ctx.db.read() as s:
        source = s.scalar(select(TaskVersionRow.source).where(TaskVersionRow.ref == first.ref))
        decisions = s.scalar(select(func.count()).select_from(TaskProposalDecisionRow))
    assert source == f"proposal:{first.id}" and decisions == 2
    spec = service.ctx.registry.get(str(first.ref))
    assert spec.template == "pelican-personas" and spec.dimensions["persona"] == "night-nurse"
    again = service.regua("tasks", "proposals", "accept", str(second.id), str(rows[3].id))
    assert again.exit_code == 1
    assert (
        f"proposal {second.id}: HTTP 409" in again.stderr and "a decision is final" in again.stderr
    )
    assert f"proposal {rows[3].id}: HTTP 422" in again.stderr and "only be" in again.stderr
    assert service.registered() == before | {first.ref}
    listing = service.regua("tasks", "proposals", "--state", "proposed")
    assert listing.exit_code == 0 and "3 proposal(s)" in listing.stdout


def test_the_page_lists_proposals_and_accepts_with_its_csrf_token(service: Service) -> None:
    assert _propose(service, n=2).exit_code == 0
    with service.ctx.db.read() as s:
        first, second = s.scalars(select(TaskProposalRow).order_by(TaskProposalRow.id))
    with Http(base_url=service.url, timeout=60, follow_redirects=True) as http:
        web_login(http, service.admin)
        page = http.get("/tasks/proposals")
        assert page.status_code == 200 and str(first.ref) in page.text
        assert "Task proposals" in page.text and "(proposed)" in page.text
        forged = http.post(
            f"/tasks/proposals/{first.id}/accept", data={"csrf": "nope"}, follow_redirects=False
        )
        assert forged.status_code == 403 and str(first.ref) not in service.registered()
        token = csrf_in(page.text)
        ok = http.post(
            f"/tasks/proposals/{first.id}/accept", data={"csrf": token}, follow_redirects=False
        )
        assert ok.status_code == 303 and ok.headers["location"].endswith("saved=accepted")
        no = http.post(
            f"/tasks/proposals/{second.id}/reject",
            data={"csrf": token, "reason": "too close"},
            follow_redirects=False,
        )
        assert no.status_code == 303
        decided = http.get("/tasks/proposals?state=all")
        assert "accepted" in decided.text and "too close" in decided.text
    assert str(first.ref) in service.registered() and str(second.ref) not in service.registered()
    with Http(base_url=service.url, timeout=60, follow_redirects=True) as http:
        web_login(http, service.submitter)
        assert http.get("/tasks/proposals", follow_redirects=False).status_code == 403


def test_a_reply_without_variants_stores_nothing_and_says_why(tmp_path: Path) -> None:
    ctx = ServiceContext.open(Settings(data_dir=tmp_path / "data", generation_backoff_s=0.01))
    admin = create_token(ctx.db, "admin", "ada")[0]
    try:
        with (
            serving(Scripted([Reply("Happy to help! Some ideas: a nurse, a pilot.")])) as model,
            serve_in_thread(create_app(ctx)) as url,
        ):
            env = {"REGUA_URL": url, "REGUA_TOKEN": admin}
            args = ["tasks", "propose", str(SAMPLE), "--dimensions", "persona,style", "--n", "3"]
            args += ["--api", "openai", "--base-url", f"{model.url}/v1", "--model", "m"]
            done = CliRunner().invoke(app, args, env=env)
        assert done.exit_code == 2
        assert "HTTP 502" in done.stderr and "not JSON" in done.stderr
        with ctx.db.read() as s:
            assert s.scalar(select(func.count()).select_from(TaskProposalRow)) == 0
    finally:
        ctx.close()
