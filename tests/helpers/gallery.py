"""A seeded site for the gallery: three models on one task, one of them animated.

Runs (all of ``pelican-bicycle-structured@1``, none rendered: frames are made PNGs):

- ``alpha-model``: ``a1`` pass, ``a2`` fail (R1, R2 failed);
- ``beta-model``: ``b1`` pending (R1 uncertain), ``b2`` pass (three frames: 0, 0.5 and 1.25 s);
- ``gamma-model``: ``g1`` fail (B1 failed);

plus the seeded site's own ``runpending`` and ``runpassed`` (model ``zz-secret-model-QX7``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update

from service.storage import Artifact, Run
from service.storage.blobs import NewArtifact, record_artifact
from tests.helpers.review_runs import add_run, png
from tests.helpers.web import Site

MODELS = ("alpha-model", "beta-model", "gamma-model")
RUNS = {
    "a1": ("alpha-model", "pass", {}),
    "a2": ("alpha-model", "fail", {"R1": "fail", "R2": "fail"}),
    "b1": ("beta-model", "pending", {"R1": "uncertain"}),
    "b2": ("beta-model", "pass", {}),
    "g1": ("gamma-model", "fail", {"B1": "fail"}),
}
ANIMATED = "b2"
ANIMATED_TIMES = (0.0, 0.5, 1.25)
COLOURS = ("#d33", "#3a3", "#33d")


def seed_gallery(site: Site) -> None:
    """Add the gallery's runs to ``site`` (submitted by alice, in the order of :data:`RUNS`)."""
    ctx = site.ctx
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for i, (run_id, (model, outcome, statuses)) in enumerate(RUNS.items()):
        add_run(ctx.db, ctx.blobs, run_id, statuses, outcome=outcome, model=model)
        with ctx.db.write() as s:
            s.execute(
                update(Run)
                .where(Run.id == run_id)
                .values(submitted_by=site.ids["alice"], submitted_at=start + timedelta(minutes=i))
            )
    with ctx.db.write() as s:
        raw = s.scalar(select(Run.raw_artifact_id).where(Run.id == ANIMATED))
        for t, colour in zip(ANIMATED_TIMES[1:], COLOURS[1:], strict=True):
            record_artifact(
                s,
                ctx.blobs,
                ANIMATED,
                NewArtifact(
                    "frame",
                    png(colour, f"{ANIMATED} {t}"),
                    f"frame-{int(t * 1000)}.png",
                    "render",
                    "1",
                    parent_id=raw,
                    meta={"time_s": t},
                ),
            )


def frame_shas(site: Site, run_id: str) -> list[str]:
    """The run's frame shas in time order."""
    with site.ctx.db.read() as s:
        rows = s.scalars(
            select(Artifact).where(Artifact.run_id == run_id, Artifact.kind == "frame")
        )
        return [a.sha256 for a in sorted(rows, key=lambda a: float((a.meta or {})["time_s"]))]
