"""Issue 26, acceptance: a disagreeing trio, its adjudicator, and the worked rubric, end to end.

Through the real service (checks, sandboxed render, judges over HTTP, the one writer, the run
view over a live HTTP server and the run page): the vision judges are fake models behind one
local server (:class:`regua.llm.testing.ByModel`): ``strict`` answers fail, ``balanced``
uncertain, ``lenient`` pass. With a trusted adjudicator seated the run is decided without a
person and the adjudication is on the run view; with an untrusted one the run is pending as
before. The graded example ``lighthouse-night-graded@1``: a grader answering P4 I4 C4 L4 H0 gives
``Q = 83`` and a pass; P5 I3 C4 L4 H0 gives ``Q = 84`` and a fail naming ``I >= 4``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import judges
from judges.calibration import GateDecision
from judges.judge_files import register_files
from regua.llm.testing import ByModel, FakeModelServer, FrameTruth, is_adjudication, serving
from service.access.tokens import create_token
from service.evaluation.gate import store_decisions
from tests.helpers.httpclient import Http
from tests.helpers.web import web_login
from tests.service.conftest import Api

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]
ROOT = Path(__file__).resolve().parents[3]
PELICAN = "pelican-bicycle-structured@2"
GOOD = (ROOT / "samples/outputs/structured-good.svg").read_text()
LIGHTHOUSE = "lighthouse-night-graded@1"
LIGHT = (ROOT / "samples/graded/lighthouse-good.svg").read_text()
VISUAL = ("P1", "B1", "B2", "R1", "R2", "R3", "Q1")
GRADED = ("X1", "P", "I", "C", "L", "H")
LEVELS_83 = {"P": 4, "I": 4, "C": 4, "L": 4, "H": 0}
LEVELS_84 = {"P": 5, "I": 3, "C": 4, "L": 4, "H": 0}


def judge_file(tag: str, url: str) -> str:
    """Three stances and two adjudicators for the pelicans; two graders for the lighthouse."""

    def profile(name: str, model: str, prompt: str = "criterion-json@1") -> str:
        return (
            f"  - {{id: {tag}-{name}@1, kind: vision-llm, api: openai, model: {model}, "
            f'base_url: "{url}", prompt_version: {prompt}, params: {{max_retries: 0}}}}\n'
        )

    trio = f"[static@1, {tag}-strict@1, {tag}-balanced@1, {tag}-lenient@1]"
    return (
        "profiles:\n"
        + profile("strict", "strict-m", "criterion-json-strict@1")
        + profile("balanced", "balanced-m")
        + profile("lenient", "lenient-m", "criterion-json-lenient@1")
        + profile("referee", "referee-m")
        + profile("untrusted", "untrusted-m")
        + profile("grader-a", "grader-a")
        + profile("grader-b", "grader-b")
        + f"""panels:
  - id: {tag}-trio@1
    family: pelican-bicycle
    adjudicator: {tag}-referee@1
    assignments: {{"*": {trio}, F1: [static@1]}}
  - id: {tag}-trio-untrusted@1
    family: pelican-bicycle
    adjudicator: {tag}-untrusted@1
    assignments: {{"*": {trio}, F1: [static@1]}}
  - id: {tag}-graded-a@1
    family: lighthouse-night
    assignments: {{"*": [static@1, {tag}-grader-a@1], F1: [static@1]}}
  - id: {tag}-graded-b@1
    family: lighthouse-night
    assignments: {{"*": [static@1, {tag}-grader-b@1], F1: [static@1]}}
"""
    )


def trusted(profile_id: str, criteria: tuple[str, ...], family: str) -> list[GateDecision]:
    """What a passed calibration stores for a judge (here declared, as an import would)."""
    profile = judges.get_profile(profile_id)
    now = datetime.now(UTC).isoformat()
    return [
        GateDecision(
            profile_id=profile_id,
            criterion=c,
            task_family=family,
            passed=True,
            reasons=("declared by the test",),
            metrics={},
            thresholds={},
            gate_id="test-gate",
            set_id="test-set",
            split_seed=None,
            decided_at=now,
            profile_hash=profile.content_hash(),
            status="trusted",
        )
        for c in criteria
    ]


@dataclass
class Jury:
    tag: str
    models: ByModel
    server: FakeModelServer[ByModel]


@pytest.fixture
def jury(api: Api) -> Iterator[Jury]:
    tag = f"t{uuid.uuid4().hex[:8]}"
    models = ByModel(
        {
            "strict-m": FrameTruth(default="fail"),
            "balanced-m": FrameTruth(default="uncertain"),
            "lenient-m": FrameTruth(default="pass"),
            "referee-m": FrameTruth(default="pass"),
            "untrusted-m": FrameTruth(default="pass"),
            "grader-a": FrameTruth(default="pass", criterion_levels=LEVELS_83),
            "grader-b": FrameTruth(default="pass", criterion_levels=LEVELS_84),
        }
    )
    with serving(models) as server:
        register_files([judges.parse_judge_text(judge_file(tag, server.url), "jury.yaml")])
        decisions: list[GateDecision] = []
        for name in ("strict", "balanced", "lenient", "referee"):
            decisions += trusted(f"{tag}-{name}@1", VISUAL, "pelican-bicycle")
        for name in ("grader-a", "grader-b"):
            decisions += trusted(f"{tag}-{name}@1", GRADED, "lighthouse-night")
        with api.ctx.db.write() as s:
            store_decisions(s, decisions)
        yield Jury(tag, models, server)


def submit(api: Api, task: str, svg: str, panel: str) -> dict[str, Any]:
    posted = api.client.post(
        "/v1/runs",
        json={"task": task, "model": {"label": "m"}, "output": svg, "panel": panel},
        headers=api.h("admin"),
    )
    assert posted.status_code in (200, 201, 202), posted.text
    run_id = posted.json()["run_id"]
    api.drain()
    view = api.client.get(f"/v1/runs/{run_id}", headers=api.h("admin"))
    assert view.status_code == 200, view.text
    body: dict[str, Any] = view.json()
    return body


def queued(api: Api, kind: str) -> set[str]:
    """The criteria the review queue offers people, of one item kind."""
    listed = api.client.get("/v1/reviews", headers=api.h("admin"))
    assert listed.status_code == 200, listed.text
    return {i["criterion"] for i in listed.json()["items"] if i["kind"] == kind}


def run_page(api: Api, run_id: str) -> str:
    """The run page as an admin's browser gets it."""
    token, _ = create_token(api.ctx.db, "admin", "page-reader")
    with Http(base_url=str(api.client.base_url), follow_redirects=True, timeout=60) as web:
        web_login(web, token)
        page = web.get(f"/runs/{run_id}")
    assert page.status_code == 200, page.text
    return page.text


def criteria(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["criterion"]: c for c in view["evaluation"]["criteria"]}


def test_a_trusted_adjudicator_decides_the_trio_without_a_person(api: Api, jury: Jury) -> None:
    view = submit(api, PELICAN, GOOD, f"{jury.tag}-trio@1")
    assert view["outcome"]["status"] == "pass", view["outcome"]
    by = criteria(view)
    for c in VISUAL:
        row = by[c]
        assert (row["status"], row["review_required"], row["review_reason"]) == (
            "pass",
            False,
            None,
        )
        adj = row["adjudication"]
        assert adj["decided"] and adj["trusted"] and adj["result"] == "decided", (c, adj)
        assert adj["adjudicator_id"] == f"{jury.tag}-referee@1" and adj["status"] == "pass"
        assert adj["reason"].startswith("judges disagree (rule split)")
        assert sorted(a["status"] for a in adj["answers"]) == ["fail", "pass", "uncertain"]
        assert adj["prompt_artifact"] and adj["raw_artifact"]
        assert {v["judge_profile_id"] for v in row["votes"] if v["eligible"]} == {
            f"{jury.tag}-{s}@1" for s in ("strict", "balanced", "lenient")
        }
    # what the adjudicator was sent names no judge, provider or model
    asked = [r for r in jury.server.requests if r.json.get("model") == "referee-m"]
    assert len(asked) == len(VISUAL) and all(is_adjudication(r) for r in asked)
    for request in asked:
        text = "\n".join(request.texts())
        for leak in ("strict", "lenient", "balanced-m", jury.tag, "openai"):
            assert leak not in text, leak
    prompt = api.client.get(
        f"/v1/artifacts/{by['R1']['adjudication']['prompt_artifact']}", headers=api.h("admin")
    )
    assert prompt.status_code == 200 and "Answers of the other judges" in prompt.text
    assert queued(api, "uncertain") == set()  # nothing goes to a person
    panels = api.client.get("/v1/panels", headers=api.h("admin")).json()["panels"]
    line = next(p for p in panels if p["id"] == f"{jury.tag}-trio@1")
    assert (line["adjudicator"], line["disagreement"]) == (f"{jury.tag}-referee@1", "split")
    page = run_page(api, view["run_id"])
    assert "decided by adjudication" in page and "decided the criterion" in page
    assert f"{jury.tag}-referee@1" in page and "trusted by the gate" in page


def test_an_untrusted_adjudicator_leaves_the_run_pending_as_today(api: Api, jury: Jury) -> None:
    view = submit(api, PELICAN, GOOD, f"{jury.tag}-trio-untrusted@1")
    assert view["outcome"]["status"] == "pending"
    by = criteria(view)
    for c in ("P1", "B1", "B2", "R1", "R2", "R3"):
        row = by[c]
        assert (row["status"], row["review_required"]) == ("uncertain", True)
        assert row["review_reason"] == "adjudicator_not_trusted"
        adj = row["adjudication"]
        assert (adj["decided"], adj["trusted"], adj["status"]) == (False, False, "pass")
        assert f"{c}: adjudicator_not_trusted" in view["outcome"]["reasons"]
    assert queued(api, "uncertain") >= {"P1", "B1", "B2", "R1", "R2", "R3"}
    page = run_page(api, view["run_id"])
    assert "not trusted by the gate" in page and "adjudicator not trusted: left to a person" in page


def test_the_worked_rubric_through_the_service(api: Api, jury: Jury) -> None:
    good = submit(api, LIGHTHOUSE, LIGHT, f"{jury.tag}-graded-a@1")
    rubric = good["evaluation"]["rubric"]
    assert (rubric["score"], rubric["score_text"], rubric["threshold_met"]) == (83.0, "83", True)
    assert rubric["levels"] == LEVELS_83 and rubric["verdict"] == "pass"
    assert all(b["held"] for b in rubric["bounds"])
    assert good["outcome"]["status"] == "pass"
    assert {c: r.get("level") for c, r in criteria(good).items() if c in LEVELS_83} == LEVELS_83
    worse = submit(api, LIGHTHOUSE, LIGHT, f"{jury.tag}-graded-b@1")
    rubric = worse["evaluation"]["rubric"]
    assert rubric["score"] == 84.0 and rubric["score"] >= 83 and rubric["threshold_met"] is True
    assert [b["text"] for b in rubric["bounds"] if b["held"] is False] == ["I >= 4"]
    assert rubric["verdict"] == "fail" and worse["outcome"]["status"] == "fail"
    assert worse["outcome"]["reasons"] == ["I: level 3 fails the minimum I >= 4"]
    page = run_page(api, worse["run_id"])
    assert "Q = 84" in page and "I &gt;= 4" in page and "failed" in page
    report = api.client.get(f"/v1/reports?task={LIGHTHOUSE}", headers=api.h("admin")).json()
    (scores,) = report["scores"]
    (group,) = scores["groups"]
    assert group["verdicts"]["pass"] == 1 and group["verdicts"]["fail"] == 1
    assert [d["score"] for d in group["distribution"]] == [83.0, 84.0]
    assert group["mean_interval"] is not None and scores["score_step"] == 2.0
    html = api.client.get(f"/v1/reports/html?task={LIGHTHOUSE}", headers=api.h("admin")).text
    assert "Graded tasks: pass rates and score distributions" in html and "83 (1), 84 (1)" in html
