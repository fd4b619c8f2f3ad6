"""Render-and-revise through the real pipeline (checks, sandboxed render, static judges) with a
fake model on loopback that fixes its drawing once it has been shown a frame.

What is checked: the chain's runs are linked round by round, the model was sent its own frames
(and never a verdict), the conversation is stored as an artifact of each revised run, a chain
resumes without asking the model again, a model that stops answering stops its chain with the
reason, and the report keeps "first answer" and "after k rounds" apart from each other and out
of every ranking.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from regua.llm.testing import FixesAfterFrame, Reply, Scripted, serving
from sandbox import WorkerPool
from service.context import ServiceContext
from service.generation.feedback import FINDINGS_HEAD
from service.generation.request import GenerationParams
from service.generation.revise import ReviseOptions, generate_and_revise, revise_chain
from service.generation.revision_store import CONVERSATION_KIND, revision_view
from service.generation.runner import plan_generation
from service.pairwise.compare import PairRequest, plan_pairs
from service.pipeline.submit import Submission
from service.reports.db import generate_report
from service.storage import Artifact, GenerationRow, RunRevisionRow, StageRecord
from tests.helpers.revise import BROKEN, FIXED, TASK, revise_context, wait_done

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]
VERDICT_WORDS = ("verdict", "outcome", "pending", "criterion", "F1")


@pytest.fixture
def rctx(tmp_path: Path, render_pool: WorkerPool) -> Iterator[ServiceContext]:
    """SQLite, the session's render pool, the executor running, ``revise-mini@1`` registered."""
    with revise_context(tmp_path / "data", render_pool) as ctx:
        yield ctx


def _params(url: str) -> GenerationParams:
    return GenerationParams(api="openai", model="reviser", base_url=f"{url}/v1")


def test_two_rounds_give_three_linked_runs_and_the_report_keeps_them_apart(
    rctx: ServiceContext,
) -> None:
    model = FixesAfterFrame(BROKEN, FIXED)
    with serving(model) as server:
        (chain,) = generate_and_revise(
            rctx, TASK, _params(server.url), 1, ReviseOptions(2), token_id=None
        )
        requests = list(server.requests)
    assert chain.stopped is None and len(chain.run_ids) == 3
    first, one, two = chain.run_ids
    outcomes = wait_done(rctx, chain.run_ids)
    assert [outcomes[r] for r in chain.run_ids] == ["fail", "pass", "pass"]
    # the model saw no image first, then the frames of the run it revises
    assert model.shown[0] == 0 and all(n >= 1 for n in model.shown[1:])
    with rctx.db.read() as s:
        links = {r.run_id: r for r in s.scalars(select(RunRevisionRow))}
        assert (links[one].revision_of, links[one].round, links[one].first_run_id) == (
            first,
            1,
            first,
        )
        assert (links[two].revision_of, links[two].round) == (one, 2)
        assert first not in links  # the first answer is round 0: no link row
        view = revision_view(s, two)
        frames_of_first = set(
            s.scalars(
                select(Artifact.sha256).where(Artifact.run_id == first, Artifact.kind == "frame")
            )
        )
        conversation = _conversation(rctx, s, two)
    assert view is not None and view.chain == [first, one, two] and view.revised_by is None
    # the conversation: prompt, first reply, feedback with the first run's frames, ...
    roles = [t["role"] for t in conversation["turns"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    assert conversation["turns"][1]["parts"][0]["text"] == BROKEN
    shown = {p["image_sha256"] for p in conversation["turns"][2]["parts"] if "image_sha256" in p}
    assert shown and shown <= frames_of_first
    assert conversation["reply"] == FIXED
    # nothing a judge decided reached the model
    sent = "\n".join("\n".join(r.texts()) for r in requests[1:])
    assert not any(word in sent for word in VERDICT_WORDS)
    assert FINDINGS_HEAD not in sent  # findings only when asked for
    with rctx.db.read() as s:
        report, inputs = generate_report(s, [TASK])
    # the main report holds the first answer only: 0 of 1 passed, one model, no revised run
    (tv,) = report["task_versions"]
    (group,) = tv["groups"]
    assert group["counts"]["runs"] == 1 and group["counts"]["pass"] == 0
    assert [r.run_id for r in inputs.rows] == [first]
    (rev,) = report["revisions"]["groups"]
    series = {s["series"]: s for s in rev["series"]}
    assert series["first answer"]["counts"]["pass"] == 0
    assert series["after 1 round of feedback"]["counts"]["pass"] == 1
    assert series["after 2 rounds of feedback"]["pass_range"] == "100 %"
    assert rev["rounds_to_pass"] == {"1": 1}


def _conversation(ctx: ServiceContext, s: Session, run_id: str) -> dict[str, Any]:
    art = s.scalars(
        select(Artifact).where(Artifact.run_id == run_id, Artifact.kind == CONVERSATION_KIND)
    ).one()
    doc: dict[str, Any] = json.loads(ctx.blobs.get(art.sha256))
    return doc


def test_findings_on_request_and_a_resumed_chain_asks_nothing_again(rctx: ServiceContext) -> None:
    model = FixesAfterFrame(BROKEN, FIXED)
    with serving(model) as server:
        params = _params(server.url)
        (chain,) = generate_and_revise(
            rctx, TASK, params, 1, ReviseOptions(1, findings=True), token_id=None
        )
        feedback = "\n".join(server.requests[1].texts())
        assert FINDINGS_HEAD in feedback and "viewbox: fail" in feedback
        assert not any(word in feedback for word in VERDICT_WORDS)
        calls = len(server.requests)
        plan = plan_generation(rctx, TASK, params, token_id=None)
        again = revise_chain(plan, chain.first_run_id, 1, ReviseOptions(1, findings=True))
        assert again.run_ids == chain.run_ids and len(server.requests) == calls
        longer = revise_chain(plan, chain.first_run_id, 1, ReviseOptions(2, findings=True))
        assert longer.run_ids[:2] == chain.run_ids and len(longer.run_ids) == 3
        assert len(server.requests) == calls + 1  # only the new round was asked
    with rctx.db.read() as s:
        (link,) = s.scalars(select(RunRevisionRow).where(RunRevisionRow.round == 1)).all()
        assert link.findings_shown and link.frames_shown >= 1


def test_a_model_that_stops_answering_stops_its_chain_with_the_reason(
    rctx: ServiceContext,
) -> None:
    script = Scripted([Reply(BROKEN), Reply(status=400, body='{"error": {"message": "bad"}}')])
    with serving(script) as server:
        (chain,) = generate_and_revise(
            rctx, TASK, _params(server.url), 1, ReviseOptions(3), token_id=None
        )
    assert len(chain.run_ids) == 2 and chain.stopped is not None
    assert chain.stopped.startswith("round 1: the model gave no reply")
    outcomes = wait_done(rctx, chain.run_ids)
    assert outcomes[chain.run_ids[1]] == "incomplete"  # machinery, never a fail of the work
    with rctx.db.read() as s:
        gen = s.scalar(select(GenerationRow).where(GenerationRow.run_id == chain.run_ids[1]))
        assert gen is not None and gen.cause is not None
        check = s.scalar(
            select(StageRecord.status).where(
                StageRecord.run_id == chain.run_ids[1], StageRecord.stage == "check"
            )
        )
    assert check == "incomplete"


def test_revise_refuses_a_round_count_out_of_range() -> None:
    from regua.errors import InputError

    for rounds in (0, 6):
        with pytest.raises(InputError, match="revise must be 1 to 5 rounds"):
            ReviseOptions(rounds)


def test_pairwise_by_model_pairs_first_answers_never_a_revision(rctx: ServiceContext) -> None:
    with serving(FixesAfterFrame(BROKEN, FIXED)) as server:
        (chain,) = generate_and_revise(
            rctx, TASK, _params(server.url), 1, ReviseOptions(1), token_id=None
        )
    others = rctx.submit([Submission(TASK, "other", FIXED + f"<!-- {i} -->") for i in (1, 2)], None)
    wait_done(rctx, [*chain.run_ids, *others])
    _task, pairs = plan_pairs(rctx.db, PairRequest(TASK, "F1", models=("reviser", "other")))
    # two runs of 'other', one first answer of 'reviser': one pair, never with the revision
    assert [(a.run_id, b.run_id) for a, b in pairs] == [(others[0], chain.first_run_id)]
