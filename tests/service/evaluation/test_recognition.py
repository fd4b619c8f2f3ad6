"""Acceptance (issue 13): a drawing of labelled rectangles with every required id is not passed
on the structured task without a recognising judge's vote.

Through the real pipeline — static checks, sandboxed Chromium render with part masks, the
service's evaluator and the stored gate — with the geometry judges calibrated (eligible) on every
criterion they answer. Geometry on the masks measures the relations as met (the drawing is built
so); recognition (P1, and "recognisable" in B1) stays open with a reason, and the run view says
why each vote did or did not count.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import judges
from judges.calibration import GateDecision
from regua.llm.testing import Reply, scripted_server
from regua.settings import Settings
from sandbox import WorkerPool
from service.context import ServiceContext
from service.evaluation.gate import store_decisions
from service.pipeline.submit import Submission
from service.reports.runs import run_view
from service.storage import Run
from tests.helpers.rectangles import labelled_rectangles
from tests.service.conftest import drain

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]
TASK = "pelican-bicycle-structured@2"
RELATIONS = ("B2", "R1", "R2", "R3")


def grant_geometry(ctx: ServiceContext, *profiles: judges.JudgeProfile) -> None:
    """Passing gate decisions for both geometry profiles (and ``profiles``, as they vote) on
    every criterion of the family."""
    criteria = {c.id for c in ctx.registry.get(TASK).criteria}
    voters = [judges.get_profile(p) for p in ("geometry@1", "geometry@2")] + list(profiles)
    decisions = [
        GateDecision(
            voter.id,
            c,
            "pelican-bicycle",
            True,
            ("granted by the test",),
            {},
            {},
            "test",
            "test-synthetic",
            None,
            "2026-01-01T00:00:00+00:00",
            profile_hash=voter.content_hash(),
        )
        for voter in voters
        for c in sorted(criteria)
    ]
    with ctx.db.write() as s:
        store_decisions(s, decisions)


def judged(ctx: ServiceContext, panel: str | None = None) -> dict[str, Any]:
    """Submit the drawing (asking for ``panel`` when given), run the pipeline, return the view."""
    (run_id,) = ctx.submit([Submission(TASK, "m", labelled_rectangles(), panel=panel)], None)
    drain(ctx)
    with ctx.db.read() as s:
        run = s.get(Run, run_id)
        assert run is not None
        return run_view(s, run, include_model=False).model_dump(mode="json")


def criteria_of(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["criterion"]: c for c in view["evaluation"]["criteria"]}


def test_labelled_rectangles_wait_for_a_recognising_judge(ctx: ServiceContext) -> None:
    grant_geometry(ctx)
    view = judged(ctx)
    evaluation = view["evaluation"]
    assert evaluation["versions"]["judge_panel"]["id"] == "pelican-bicycle-default@2"
    assert view["checks"]["status"] == "pass"  # every required id is there
    got = criteria_of(view)
    # what the user sees: pending, never pass; P1 and B1 open with the reason
    assert view["outcome"]["status"] == "pending"
    for cid in ("P1", "B1"):  # no recognising judge sits on the panel: nobody may pass them
        assert got[cid]["status"] == "uncertain"
        assert got[cid]["review_required"] is True
        assert got[cid]["review_reason"] == "no_reliable_judge"
        assert f"{cid}: no_reliable_judge" in view["outcome"]["reasons"]
    # geometry, calibrated and eligible, measures every relation as met
    for cid in RELATIONS:
        assert got[cid]["status"] == "pass", got[cid]
        (vote,) = [v for v in got[cid]["votes"] if v["judge_profile_id"] == "geometry@2"]
        assert vote["eligible"] is True
        assert vote["gate"]["passed"] is True and vote["gate"]["set_id"] == "test-synthetic"
        assert vote["basis"] == "the gate passed its calibration"
    assert got["B1"]["votes"] == []  # geometry@2 never confirms recognition: it abstained
    (static,) = got["F1"]["votes"]
    assert static["judge_profile_id"] == "static@1" and static["gate"] is None
    assert static["basis"] == "static rules need no calibration"


def test_geometry_that_would_pass_b1_is_recorded_but_not_counted(ctx: ServiceContext) -> None:
    """geometry@1 (no veto list) measures B1 as met on the rectangles; on the new task version
    its pass is kept as evidence but cannot make a recognisable bicycle."""
    grant_geometry(ctx)
    view = judged(ctx, panel="pelican-bicycle-default@1")
    assert view["evaluation"]["versions"]["judge_panel"]["id"] == "pelican-bicycle-default@1"
    b1 = criteria_of(view)["B1"]
    assert [v["status"] for v in b1["verdicts"]] == ["pass"]  # the masks do look like a bike
    (vote,) = b1["votes"]
    assert vote["judge_profile_id"] == "geometry@1" and vote["eligible"] is False
    assert vote["note"].startswith("not a recognising judge")
    assert vote["gate"]["passed"] is True  # calibrated, yet its pass does not count here
    assert b1["status"] == "uncertain" and b1["review_reason"] == "no_recognising_judge"
    assert view["outcome"]["status"] == "pending"


def test_a_recognising_judges_vote_decides(settings: Settings, render_pool: WorkerPool) -> None:
    """The same drawing on the vision panel: a calibrated vision model (a real local HTTP server
    imitating it) sees labelled boxes, no pelican and no bicycle, and its votes fail the work."""
    seen = json.dumps({"status": "fail", "evidence": "labelled boxes, no pelican", "time_s": 0})
    with scripted_server() as llm:
        llm.script = [Reply(seen) for _ in range(20)]
        conf = settings.model_copy(update={"judge_base_url": llm.url, "judge_model": "looker"})
        ctx = ServiceContext.open(conf, render_pool=render_pool)
        try:
            vision = judges.create_judge("vision-llm-openai@1", conf).profile
            grant_geometry(ctx, vision)
            view = judged(ctx, panel="pelican-bicycle-vision@1")
        finally:
            ctx.close()
    got = criteria_of(view)
    for cid in ("P1", "B1"):
        assert got[cid]["status"] == "fail"
        votes = {v["judge_profile_id"]: v for v in got[cid]["votes"]}
        assert votes["vision-llm-openai+looker@1"]["eligible"] is True
    assert view["outcome"]["status"] == "fail"
