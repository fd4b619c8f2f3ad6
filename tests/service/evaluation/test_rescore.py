"""Acceptance: re-scoring 2,000 stored runs with a new geometry profile renders nothing, appends
2,000 evaluations (old ones readable and superseded), and the diff names exactly the runs moved."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session

import judges
from service.evaluation.diff import diff_evaluations
from service.evaluation.inputs import StoredRun
from service.evaluation.rescore import PROCESS_MIN, RescoreOptions, RescoreResult, rescore
from service.pipeline.rerender import rerenderer
from service.storage import (
    Artifact,
    CriterionOutcomeRow,
    Evaluation,
    RescoreBatch,
    RescoreItem,
    Run,
    VerdictRow,
)
from service.storage.blobs import LocalBlobStore
from tests.helpers.runs import STRICT_PANEL, STRICT_PROFILE, TASK, machinery
from tests.service.evaluation.conftest import FRACTIONS, TOTAL, World

FORKED_PER_DRAWING = 12
"""Runs per drawing of the threads-against-processes comparison."""

pytestmark = [pytest.mark.heavy, pytest.mark.browser, pytest.mark.sandbox, pytest.mark.timeout(900)]


def _status(world: World, evaluation_id: int | None, criterion: str) -> str:
    with world.ctx.db.read() as s:
        return str(
            s.scalar(
                select(CriterionOutcomeRow.status).where(
                    CriterionOutcomeRow.evaluation_id == evaluation_id,
                    CriterionOutcomeRow.criterion == criterion,
                )
            )
        )


def test_the_stored_world_is_what_the_test_claims(rescore_world: World) -> None:
    world = rescore_world
    assert len(world.all_runs()) == TOTAL
    with world.ctx.db.read() as s:
        assert s.scalar(select(func.count(Run.id))) == TOTAL
        current = dict(s.execute(select(Run.id, Run.current_evaluation_id)).all())
    # geometry@1 decides R2 (it holds a vote): pass up to 2 %, uncertain at 4 % and 6 %
    expected = {"good": "pass", "lift-1.5": "pass", "lift-2": "pass"}
    expected |= {"lift-4": "uncertain", "lift-6": "uncertain"}
    for name, ids in world.by_drawing.items():
        assert _status(world, current[ids[0]], "R2") == expected[name], name
        assert _status(world, current[ids[-1]], "R2") == expected[name], name  # a clone


def test_rescore_2000_runs_renders_nothing_and_diff_lists_the_moved_runs(
    rescore_world: World,
) -> None:
    world = rescore_world
    before = _snapshot(world)
    result = _rescore_timed(world)

    # 2,000 evaluations appended, nothing rendered
    _assert_nothing_rendered(world, result, before)
    with world.ctx.db.read() as s:
        _assert_evaluations_appended_and_no_render_artifact(s, before)
        _assert_old_evaluations_readable_and_superseded(s, result, before)
    assert _blob_file_count(world) == before.blob_files

    # the diff names exactly the runs of the four perturbed drawings, all on R2
    _assert_diff_names_exactly_the_moved_runs(world, result)


@dataclass(frozen=True)
class _Before:
    """What the re-scoring must not change (or only add to), read before it runs."""

    renders: int
    pool_jobs: dict[str, int]
    evaluations: int
    render_artifacts: int
    current: dict[str, int | None]
    blob_files: int


def _render_artifact_count(s: Session) -> int:
    return int(
        s.scalar(
            select(func.count(Artifact.id)).where(
                Artifact.kind.in_(("frame", "mask", "render_log"))
            )
        )
        or 0
    )


def _blob_file_count(world: World) -> int:
    blobs = world.ctx.blobs
    assert isinstance(blobs, LocalBlobStore)
    return sum(1 for p in blobs.root.rglob("*") if p.is_file())


def _snapshot(world: World) -> _Before:
    renders = world.renderer.calls
    pool_jobs = dict(world.renderer.pool.stats)
    with world.ctx.db.read() as s:
        evaluations = s.scalar(select(func.count(Evaluation.id)))
        render_artifacts = _render_artifact_count(s)
        current = dict(s.execute(select(Run.id, Run.current_evaluation_id)).all())
    return _Before(
        renders, pool_jobs, evaluations or 0, render_artifacts, current, _blob_file_count(world)
    )


def _rescore_timed(world: World) -> RescoreResult:
    """Re-score every run with the strict panel (re-rendering allowed), printing the rate."""
    db = world.ctx.db
    started = time.perf_counter()
    rerender = rerenderer(db, world.ctx.blobs, machinery(world.ctx, world.renderer))
    result = rescore(db, world.ctx.blobs, task_ref=TASK, panel_id=STRICT_PANEL, rerender=rerender)
    elapsed = time.perf_counter() - started
    print(
        f"\nre-scored {len(result.appended)} runs in {elapsed:.2f} s "
        f"({len(result.appended) / elapsed:.0f} runs/s; {result.judged} distinct inputs judged; "
        f"fresh pipeline for the 5 originals took {world.fresh_seconds:.1f} s)"
    )
    return result


def _assert_nothing_rendered(world: World, result: RescoreResult, before: _Before) -> None:
    assert len(result.appended) == TOTAL and not result.skipped
    assert world.renderer.calls == before.renders and result.rerendered == []
    assert dict(world.renderer.pool.stats) == before.pool_jobs  # the sandbox pool ran no job
    assert result.judged == len(world.by_drawing)  # one judgement per distinct stored render


def _assert_evaluations_appended_and_no_render_artifact(s: Session, before: _Before) -> None:
    assert s.scalar(select(func.count(Evaluation.id))) == before.evaluations + TOTAL
    assert _render_artifact_count(s) == before.render_artifacts


def _assert_old_evaluations_readable_and_superseded(
    s: Session, result: RescoreResult, before: _Before
) -> None:
    new = {
        ev.run_id: ev for ev in s.scalars(select(Evaluation).where(Evaluation.kind == "rescore"))
    }
    assert len(new) == TOTAL
    for run_id, ev in new.items():
        assert ev.supersedes_id == before.current[run_id]
        assert ev.judge_panel["id"] == STRICT_PANEL
    old = {before.current[r] for r in new}  # each still loads: one query, not 2,000 gets
    assert {e.id for e in s.scalars(select(Evaluation).where(Evaluation.id.in_(old)))} == old
    now_current = dict(s.execute(select(Run.id, Run.current_evaluation_id)).all())
    assert all(now_current[r] == new[r].id for r in new)
    batch = s.get(RescoreBatch, result.batch_id)
    assert batch is not None and batch.summary["appended"] == TOTAL
    assert s.scalar(select(func.count(RescoreItem.id))) == TOTAL


def _assert_diff_names_exactly_the_moved_runs(world: World, result: RescoreResult) -> None:
    db = world.ctx.db
    with db.read() as s:
        diff = diff_evaluations(s, f"previous:{result.batch_id}", result.batch_id)
    moved = {r for name in FRACTIONS for r in world.by_drawing[name]}
    assert diff.runs_compared == TOTAL
    assert set(diff.moved_runs) == moved
    assert set(diff.criteria["R2"].runs) == moved
    assert diff.criteria["R2"].moved == len(moved)
    assert diff.criteria["R2"].transitions == {
        "pass->uncertain": len(world.by_drawing["lift-1.5"]) + len(world.by_drawing["lift-2"]),
        "uncertain->fail": len(world.by_drawing["lift-4"]) + len(world.by_drawing["lift-6"]),
    }
    assert all(e.moved == 0 for c, e in diff.criteria.items() if c != "R2")
    # the same diff by panel id (each run's newest evaluation of that panel)
    with db.read() as s:
        by_panel = diff_evaluations(s, "pelican-bicycle-default@1", STRICT_PANEL, TASK)
    assert set(by_panel.moved_runs) == moved


def test_judging_in_forked_processes_gives_the_same_verdicts_as_threads(
    rescore_world: World,
) -> None:
    world = rescore_world
    db = world.ctx.db
    # every drawing with some of its clones: enough runs to fork (PROCESS_MIN), and the same
    # judging either way; the 2,000-run batch is the acceptance test's
    some = [i for ids in world.by_drawing.values() for i in ids[:FORKED_PER_DRAWING]]
    assert len(some) >= 2 * PROCESS_MIN
    threaded = rescore(db, world.ctx.blobs, task_ref=TASK, panel_id=STRICT_PANEL, run_ids=some)
    forked = rescore(
        db,
        world.ctx.blobs,
        task_ref=TASK,
        panel_id=STRICT_PANEL,
        run_ids=some,
        options=RescoreOptions(use_processes=True),
    )
    assert len(threaded.appended) == len(forked.appended) == len(some)
    assert forked.judged == threaded.judged == len(world.by_drawing)
    with db.read() as s:
        diff = diff_evaluations(s, threaded.batch_id, forked.batch_id)
    assert diff.runs_compared == len(some)
    assert diff.moved_runs == []


def test_rescore_reads_the_stored_measurements_and_judges_exactly_like_measuring_again(
    rescore_world: World,
) -> None:
    """The first evaluation stored each run's mask measurements; re-scoring with another profile
    measures nothing new, and its verdicts equal those of the same panel judging the same stored
    masks with no memo (every mask decoded and measured again)."""
    import dataclasses

    import judges
    from service.evaluation.gate import gate_table
    from service.evaluation.inputs import load_eval_inputs
    from service.pipeline.runner import load_task

    world = rescore_world
    db, blobs = world.ctx.db, world.ctx.blobs
    originals = list(world.originals.values())
    with db.read() as s:
        stored = s.scalars(
            select(Artifact.run_id).where(
                Artifact.kind == "measurements", Artifact.run_id.in_(originals)
            )
        ).all()
    assert set(stored) == set(originals)  # written by the initial evaluation
    result = rescore(
        db,
        blobs,
        task_ref=TASK,
        panel_id=STRICT_PANEL,
        run_ids=originals,
        options=RescoreOptions(memo=False),
    )
    assert len(result.appended) == len(originals)
    assert result.judged == len(originals) and result.remeasured == 0
    panel = judges.get_panel(STRICT_PANEL)
    with db.read() as s:
        eligibility = gate_table(s)
    for run_id, evaluation_id, _previous in result.appended:
        with db.read() as s:
            run = s.get(Run, run_id)
            assert run is not None
            task = load_task(s, run)
            rows = s.scalars(
                select(VerdictRow)
                .where(VerdictRow.evaluation_id == evaluation_id)
                .order_by(VerdictRow.id)
            ).all()
            got = [(r.criterion, r.judge_profile_id, r.status, r.details) for r in rows]
            described = [r.evidence[0]["description"] for r in rows]
        inp = load_eval_inputs(db, blobs, {run_id: task}, [run_id])[0].inp
        assert inp.measurements is not None and inp.masks
        memo = judges.MeasurementMemo()
        fresh = judges.evaluate(dataclasses.replace(inp, measurements=memo), panel, eligibility)
        assert memo.added  # measured from the PNGs this time
        want = [
            (v.criterion, v.judge_profile_id, v.status.value, v.to_dict()["details"])
            for v in fresh.verdicts
        ]
        assert got == want, run_id
        assert described == [v.evidence.description for v in fresh.verdicts]


def test_the_judges_disagreement_is_stored(rescore_world: World) -> None:
    """Two calibrated judges on one panel that read the same lifted foot differently: the
    criterion is left to people and the disagreement is kept on the stored outcome."""
    import judges

    world = rescore_world
    both = "pelican-bicycle-both-geometries@1"
    judges.register_panel(
        judges.JudgePanel(
            id=both,
            family="pelican-bicycle",
            assignments={"*": ("static@1", "geometry@1", STRICT_PROFILE)},
            description="Both geometry profiles side by side.",
        )
    )
    run_id = world.originals["lift-2"]  # geometry@1 passes R2, the strict profile does not
    result = rescore(world.ctx.db, world.ctx.blobs, task_ref=TASK, panel_id=both, run_ids=[run_id])
    (_, evaluation_id, _) = result.appended[0]
    with world.ctx.db.read() as s:
        row = s.scalar(
            select(CriterionOutcomeRow).where(
                CriterionOutcomeRow.evaluation_id == evaluation_id,
                CriterionOutcomeRow.criterion == "R2",
            )
        )
    assert row is not None and row.status == "uncertain"
    assert row.review_reason == "judges_disagree" and row.review_required
    assert row.disagreement is not None
    assert "geometry@1=pass" in row.disagreement and f"{STRICT_PROFILE}=" in row.disagreement
    assert {v["judge_profile_id"] for v in row.votes or [] if v["eligible"]} >= {
        "geometry@1",
        STRICT_PROFILE,
    }


class _ReadsRecorded:
    """The world's blob store, noting the address of every blob read (a spy, not a fake)."""

    def __init__(self, inner: LocalBlobStore) -> None:
        self.inner = inner
        self.read: list[str] = []

    def put(self, data: bytes) -> str:
        return self.inner.put(data)

    def get(self, sha256: str) -> bytes:
        self.read.append(sha256)
        return self.inner.get(sha256)

    def exists(self, sha256: str) -> bool:
        return self.inner.exists(sha256)

    def locate(self, sha256: str) -> str:
        return self.inner.locate(sha256)


def _statements(world: World, work: Callable[[], object]) -> list[str]:
    """The SQL statements ``work`` sends (throttled batch progress writes left out)."""
    sent: list[str] = []

    def note(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        if not statement.startswith("UPDATE rescore_batches"):  # progress: also every few s
            sent.append(statement)

    event.listen(world.ctx.db.engine, "before_cursor_execute", note)
    try:
        work()
    finally:
        event.remove(world.ctx.db.engine, "before_cursor_execute", note)
    return sent


def _memo(stored: StoredRun) -> dict[str, object]:
    assert stored.inp.measurements is not None
    return stored.inp.measurements.to_doc()


def test_a_runs_input_is_its_stored_rows_and_only_the_newest_memo_is_read(
    rescore_world: World,
) -> None:
    """A batch's inputs are read with one query per table, whatever the number of runs, and
    equal those read run by run; a batch is written with one statement per table; of a run's
    measurement memos only the newest is fetched and decoded. (Runs last: it re-scores.)"""
    from service.evaluation.inputs import load_eval_inputs
    from service.evaluation.record import MEASUREMENTS_KIND
    from service.pipeline.runner import load_task
    from service.storage.blobs import NewArtifact, record_artifact

    world = rescore_world
    db, store = world.ctx.db, world.ctx.blobs
    assert isinstance(store, LocalBlobStore)
    few, many = world.by_drawing["good"][-5:], world.by_drawing["good"][-65:-5]
    with db.read() as s:
        tasks = {r.id: load_task(s, r) for r in s.scalars(select(Run).where(Run.id.in_(many)))}
    tasks |= {r: tasks[many[0]] for r in few}
    batched: list[StoredRun] = []
    small = _statements(world, lambda: load_eval_inputs(db, store, tasks, few))
    large = _statements(world, lambda: batched.extend(load_eval_inputs(db, store, tasks, many)))
    assert len(large) == len(small) <= 6, large
    assert [b.run_id for b in batched] == many
    assert batched[:3] == [load_eval_inputs(db, store, tasks, [r])[0] for r in many[:3]]

    # one statement per table for the writes too: 5 runs or 60 cost the same statements
    def rescored(ids: list[str]) -> Callable[[], object]:
        return lambda: rescore(db, store, task_ref=TASK, panel_id=STRICT_PANEL, run_ids=ids)

    assert len(_statements(world, rescored(many))) == len(_statements(world, rescored(few)))

    # an older memo (empty) and a newer one: only the newest is fetched and decoded
    run_id = few[0]
    (before,) = load_eval_inputs(db, store, tasks, [run_id])
    newest = json.dumps(_memo(before), sort_keys=True).encode()
    older = json.dumps(judges.MeasurementMemo().to_doc(), sort_keys=True).encode()
    with db.write() as s:
        for name, data in (("older.json", older), ("newest.json", newest)):
            new = NewArtifact(MEASUREMENTS_KIND, data, "judge-measurements", "test", name)
            record_artifact(s, store, run_id, new)
    spy = _ReadsRecorded(store)
    (after,) = load_eval_inputs(db, spy, tasks, [run_id])
    assert hashlib.sha256(older).hexdigest() not in spy.read
    assert hashlib.sha256(newest).hexdigest() in spy.read
    assert _memo(after) == _memo(before) != judges.MeasurementMemo().to_doc()
    assert after.inp.masks == before.inp.masks and after.inp.frames == before.inp.frames
