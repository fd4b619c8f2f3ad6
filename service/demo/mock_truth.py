"""The declared truth of the bundled samples, and how the demo's mock judge recognises them.

A sample's truth is declared in ``manifest.json``: ``truth`` (criterion → status) when given,
else derived from ``intent``: ``good`` → every visual criterion passes; ``fail:X`` → X fails,
the rest pass; ``uncertain:X`` → X is a case a person must look at, the rest pass. The mock
knows a drawing only by the sha256 of its rendered frames. It learns them from the renders the
service makes anyway: a frame it does not know yet is looked up in the service's store, and it is
a sample's when the SVG it was rendered from (its parent artifact) is, comments aside, the SVG the
static checks extract from that sample, for the sample's task: the same XML document (canonical
XML without comments, C14N 2.0), so the same frames. Nothing is rendered for the mock: the static
checks of the samples are all it costs up front.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree
from sqlalchemy import select
from sqlalchemy.orm import aliased

import checks
from checks.parse import hardened_parser
from service.context import ServiceContext
from service.demo.mock_judge import VISUAL, MockTruth
from service.demo.samples import Sample
from service.storage import Artifact, Database, Run
from service.storage.blobs import BlobStore

DrawingKey = tuple[str, str]
"""(:func:`drawing_id` of the extracted SVG, task ref): a drawing as the render stage renders it."""


def drawing_id(svg: str) -> str:
    """The sha256 of the SVG's canonical XML without comments (of its text if it does not parse).

    Two SVGs with one id are the same XML document but for comments (outside the root element,
    too) and attribute order: the renderer draws the same frames for both.
    """
    try:
        tree = etree.fromstring(svg.encode("utf-8"), hardened_parser()).getroottree()
        text = b"c14n:" + etree.canonicalize(tree, with_comments=False).encode("utf-8")
    except (etree.XMLSyntaxError, ValueError):
        text = b"text:" + svg.encode("utf-8")
    return hashlib.sha256(text).hexdigest()


def declared_truth(sample: Sample) -> dict[str, str]:
    """Criterion → status the sample declares for the criteria the mock answers."""
    if sample.truth:
        return dict(sample.truth)
    statuses = dict.fromkeys(VISUAL, "pass")
    kind, _, criterion = sample.intent.partition(":")
    if kind in ("fail", "uncertain") and criterion in statuses:
        statuses[criterion] = kind
    return statuses


@dataclass
class StoredSampleFrames:
    """Recognises the frames of the bundled samples among the frames the service stored."""

    db: Database
    blobs: BlobStore
    drawings: dict[DrawingKey, dict[str, str]]
    """Each sample's drawing → its declared truth."""
    ids: dict[str, str] = field(default_factory=dict)
    """sha256 of a stored extracted SVG → its :func:`drawing_id` (each parsed once)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, shas: Sequence[str]) -> dict[str, dict[str, str]]:
        """Frame sha256 → declared truth, for those of ``shas`` a sample's drawing rendered."""
        frame, svg = aliased(Artifact), aliased(Artifact)
        query = (
            select(frame.sha256, svg.sha256, Run.task_ref)
            .join(svg, frame.parent_id == svg.id)
            .join(Run, frame.run_id == Run.id)
            .where(frame.kind == "frame", svg.kind == "extracted", frame.sha256.in_(set(shas)))
            .order_by(frame.id)
        )
        with self.db.read() as s:
            rows = s.execute(query).all()
        found: dict[str, dict[str, str]] = {}
        for sha, svg_sha, task_ref in rows:
            truth = self.drawings.get((self._drawing_id(svg_sha), task_ref))
            if truth is not None:
                found.setdefault(sha, {}).update(truth)
        return found

    def _drawing_id(self, svg_sha: str) -> str:
        with self.lock:
            known = self.ids.get(svg_sha)
        if known is None:
            known = drawing_id(self.blobs.get(svg_sha).decode("utf-8"))
            with self.lock:
                self.ids[svg_sha] = known
        return known


def extracted_svg(folder: Path, sample: Sample, ctx: ServiceContext) -> str | None:
    """The SVG the static checks extract from the sample for its task (as the check stage does)."""
    report = checks.check_reply((folder / sample.file).read_bytes(), ctx.registry.get(sample.task))
    return report.extraction.svg_text if report.extraction is not None else None


def teach(model: MockTruth, ctx: ServiceContext, folder: Path, samples: list[Sample]) -> int:
    """Let the mock recognise the samples' frames in the service's store as they are rendered.

    Returns how many distinct (sample, task) drawings it can recognise (replies without SVG have
    no frames to learn).
    """
    drawings: dict[DrawingKey, dict[str, str]] = {}
    count = 0
    for sample in {(s.file, s.task): s for s in samples}.values():
        svg = extracted_svg(folder, sample, ctx)
        if svg is not None:
            key = (drawing_id(svg), ctx.registry.get(sample.task).ref)
            drawings.setdefault(key, {}).update(declared_truth(sample))
            count += 1
    model.recognise = StoredSampleFrames(ctx.db, ctx.blobs, drawings)
    return count
