"""The verdict function a calibration runs: render each drawing once in the sandbox, then judge.

:class:`PipelineVerdicts` is the ``verdict_fn`` of :func:`judges.calibration.run_calibration`:
it renders every distinct drawing of the set once (in parallel over the render pool), keeps the
render in the artifact store when it has one (:class:`StoredRenders`: calibrating another
profile or gate later re-judges the stored frames and masks instead of rendering again), and
asks the judge — seated exactly as it will vote, so its identity is the one calibrated.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from sqlalchemy import select

import judges
from judges.calibration import CalibrationItem, VerdictLike
from service.calibration.sets import ArtifactBytes
from service.pipeline.render_client import RENDERER_VERSION, RenderClient
from service.pipeline.render_log import RenderLog
from service.storage import Artifact, Database
from service.storage.blobs import BlobStore, NewArtifact, record_artifact
from tasks import TaskSpec

KIND = "calibration_render"
"""Artifact kind of a kept calibration render (no run; named by drawing, profile, renderer)."""


@dataclass(frozen=True)
class Rendered:
    """A drawing's frames, masks and render summary (what the judge sees)."""

    frames: tuple[judges.FrameImage, ...]
    masks: tuple[judges.MaskImage, ...]
    render: judges.RenderSummary


class StoredRenders:
    """Look up (:meth:`find`) and keep (:meth:`keep`) renders of calibration drawings."""

    def __init__(self, db: Database, blobs: BlobStore, task: TaskSpec) -> None:
        """Renders of ``task``'s render profile in ``db`` and ``blobs``."""
        self.db, self.blobs, self.task = db, blobs, task
        self.hits = 0
        self.kept = 0
        self._known: set[str] = set()
        self._lock = threading.Lock()

    def key(self, sha256: str) -> str:
        """The artifact name of a drawing's render under this task's render profile."""
        return f"{sha256}|{self.task.render.id}|{RENDERER_VERSION}"

    def find(self, item: CalibrationItem) -> Rendered | None:
        """The stored render of the item's drawing, or ``None``."""
        with self.db.read() as s:
            sha = s.scalar(
                select(Artifact.sha256).where(
                    Artifact.kind == KIND, Artifact.name == self.key(item.artifact_sha256)
                )
            )
        if sha is None:
            return None
        log = RenderLog.model_validate(json.loads(self.blobs.get(sha)))
        frames = tuple(
            judges.FrameImage(f.time_s, self.blobs.get(f.sha256), f.sha256) for f in log.frames
        )
        masks = tuple(
            judges.MaskImage(
                m.time_s, m.part, judges.mask_kind(m.kind), self.blobs.get(m.sha256), m.sha256
            )
            for m in log.masks
        )
        with self._lock:
            self.hits += 1
            self._known.add(item.artifact_sha256)
        return Rendered(frames, masks, log.summary())

    def keep(self, item: CalibrationItem, log: RenderLog, rendered: Rendered) -> None:
        """Store a successful render once (failures are not kept: they are machinery)."""
        with self._lock:
            if item.artifact_sha256 in self._known:
                return
            self._known.add(item.artifact_sha256)
        for png in [f.png for f in rendered.frames] + [m.png for m in rendered.masks]:
            self.blobs.put(png)
        name = self.key(item.artifact_sha256)
        new = NewArtifact(KIND, log.to_json(), "render", RENDERER_VERSION, name)
        with self.db.write() as s:
            record_artifact(s, self.blobs, None, new)
        with self._lock:
            self.kept += 1


class PipelineVerdicts:
    """A ``verdict_fn`` over the real pipeline: sandboxed render once per drawing, then the judge.

    Repeats re-run the judge on the same render (a render is a stored artifact; re-rendering is
    a machinery question, not the judge's). :meth:`prepare` renders every drawing up front, in
    parallel. The judge abstains (``None``) on criteria it does not answer.
    """

    def __init__(
        self,
        task: TaskSpec,
        judge: judges.Judge,
        artifact: ArtifactBytes,
        renderer: RenderClient,
        *,
        renders: StoredRenders | None = None,
        workers: int = 2,
    ) -> None:
        """Judge ``task``'s items with ``judge``, rendering through ``renderer``."""
        self.task = task
        self.judge = judge
        self._artifact = artifact
        self._renderer = renderer
        self.renders = renders
        self.workers = workers
        self._cache: dict[str, Rendered | str] = {}
        self._lock = threading.Lock()

    def render(self, item: CalibrationItem) -> Rendered | str:
        """The item's drawing rendered (once), or the machinery failure as text."""
        key = item.artifact_sha256
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        found = self.renders.find(item) if self.renders is not None else None
        result: Rendered | str
        if found is not None:
            result = found
        else:
            out = self._renderer.render(self._artifact(item).decode("utf-8"), self.task)
            if out.status != "ok":
                result = f"render_{out.status}: {out.cause}"
            else:
                result = Rendered(out.frames(), out.masks(), out.log.summary())
                if self.renders is not None:
                    self.renders.keep(item, out.log, result)
        with self._lock:
            self._cache[key] = result
        return result

    def prepare(self, items: Sequence[CalibrationItem]) -> None:
        """Render every distinct drawing the judge will look at once, in parallel."""
        unique = {i.artifact_sha256: i for i in items if self._answers(i)}
        with ThreadPoolExecutor(max_workers=max(1, self.workers)) as ex:
            list(ex.map(self.render, unique.values()))

    def _answers(self, item: CalibrationItem) -> bool:
        return bool(self.judge.answers(self.task, self.task.criterion(item.criterion)))

    def __call__(self, item: CalibrationItem, repeat: int) -> VerdictLike:
        """The judge's verdict on one item (``None`` when it does not answer the criterion)."""
        del repeat  # every repeat asks the judge again on the same render
        if not self._answers(item):
            return None
        rendered = self.render(item)
        if isinstance(rendered, str):
            return judges.JudgeFailure(
                item.criterion, self.judge.profile.id, "render_incomplete", rendered
            )
        criterion = self.task.criterion(item.criterion)
        inp = judges.JudgeInput(
            self.task, criterion, rendered.frames, rendered.masks, None, rendered.render
        )
        result: VerdictLike = self.judge.judge(inp)
        return result
