"""Calibrate a pairwise judge on imported human preferences: render, judge both orders, store.

Each distinct pair of drawings that people compared (for the task version and criterion, or
imported without either) is rendered in the sandbox through the caller's render client — the
same path a submitted run takes — and judged in both orders; the comparison is stored with no
runs (its sides named by the drawings' file names), so the ranking of models leaves it out and
the judge's calibration (:func:`judges.pairwise.calibrate_pairwise`) counts it.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import or_, select

import judges
from judges.pairwise import PairFailure, PairOutcome, PairwiseJudge, both_orders
from regua.errors import InputError
from service.pairwise.compare import PairReport, require_configured
from service.pairwise.store import PairSide, record_comparison
from service.pipeline.render_client import RenderClient
from service.storage import Database, PairwisePreferenceRow
from service.storage.blobs import BlobStore
from tasks import TaskSpec

Frames = tuple[judges.FrameImage, ...] | str
"""A drawing's rendered frames, or why it could not be rendered."""


def preference_pairs(
    db: Database, task_ref: str, criterion: str
) -> list[tuple[PairSide, PairSide]]:
    """The distinct pairs of drawings in the preferences that apply (first orientation kept)."""
    query = (
        select(PairwisePreferenceRow)
        .where(
            or_(
                PairwisePreferenceRow.task_ref.is_(None), PairwisePreferenceRow.task_ref == task_ref
            )
        )
        .where(
            or_(
                PairwisePreferenceRow.criterion.is_(None),
                PairwisePreferenceRow.criterion == criterion,
            )
        )
        .order_by(PairwisePreferenceRow.id)
    )
    seen: set[frozenset[str]] = set()
    pairs: list[tuple[PairSide, PairSide]] = []
    with db.read() as s:
        for p in s.scalars(query):
            key = frozenset((p.left_sha256, p.right_sha256))
            if key not in seen:
                seen.add(key)
                left = PairSide(None, p.left_name[:200], p.left_sha256)
                pairs.append((left, PairSide(None, p.right_name[:200], p.right_sha256)))
    if not pairs:
        raise InputError(
            f"no human preferences for {task_ref} {criterion}: import some first "
            "(regua pairwise import FILE.csv --task REF --criterion ID)"
        )
    return pairs


def _render(blobs: BlobStore, renderer: RenderClient, task: TaskSpec, sha: str) -> Frames:
    out = renderer.render(blobs.get(sha).decode("utf-8"), task)
    if out.status != "ok":
        return f"render_{out.status}: {out.cause}"
    return out.frames()


def calibrate_preferences(
    db: Database,
    blobs: BlobStore,
    renderer: RenderClient,
    judge: PairwiseJudge,
    key: tuple[TaskSpec, str],
    progress: Callable[[int, int], None] | None = None,
) -> PairReport:
    """Judge every preferred pair of drawings of ``key`` (task, criterion id) and store it."""
    require_configured(judge)
    task, cid = key
    criterion = task.criterion(cid) if cid in {c.id for c in task.criteria} else None
    if criterion is None:
        raise InputError(f"{task.ref} has no criterion {cid!r}")
    pairs = preference_pairs(db, task.ref, cid)
    shas = sorted({side.sha256 for pair in pairs for side in pair if side.sha256})
    with ThreadPoolExecutor(max_workers=2) as pool:
        frames = dict(
            zip(shas, pool.map(lambda h: _render(blobs, renderer, task, h), shas), strict=True)
        )
    report = PairReport()
    for done, (a, b) in enumerate(pairs, start=1):
        fa, fb = frames[a.sha256 or ""], frames[b.sha256 or ""]
        if isinstance(fa, str) or isinstance(fb, str):
            failure = PairFailure("render_incomplete", fa if isinstance(fa, str) else str(fb))
            outcome = PairOutcome(judge.judge_id, failure, failure, None, False)
        else:
            outcome = both_orders(judge, task, criterion, fa, fb)
        with db.write() as s:
            row = record_comparison(s, blobs, (task.ref, cid), (a, b), outcome)
        report.count(row.id, outcome)
        if progress is not None:
            progress(done, len(pairs))
    return report
