"""Renders of calibration artifacts kept in the artifact store.

A calibration renders every drawing of the set in the sandbox. :class:`StoredRenders` keeps each
render (frames and masks as content-addressed blobs, render.json as an ``Artifact`` row of kind
``calibration_render`` with no run, named by drawing sha256, render profile and renderer version),
and is the ``stored=`` hook of :class:`service.cli.calibrate_cmd.PipelineVerdicts`: calibrating a
new profile or gate later re-judges the stored frames and masks instead of rendering again.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from sqlalchemy import select

import judges
from judges.calibration import CalibrationItem
from service.artifacts import BlobStore, NewArtifact, record_artifact
from service.cli.calibrate_cmd import PipelineVerdicts, Rendered
from service.db import Artifact, Database
from service.pipeline import dumps
from tasks import TaskSpec

KIND = "calibration_render"


class StoredRenders:
    """Look up (``__call__``) and keep (``keep``) renders of calibration drawings."""

    def __init__(self, db: Database, blobs: BlobStore, task: TaskSpec) -> None:
        from service.rendering import RENDERER_VERSION

        self.db, self.blobs, self.task = db, blobs, task
        self.version = RENDERER_VERSION
        self.hits = 0
        self.kept = 0
        self._known: set[str] = set()
        self._lock = threading.Lock()

    def key(self, sha256: str) -> str:
        """The artifact name of a drawing's render under this task's render profile."""
        return f"{sha256}|{self.task.render.id}|{self.version}"

    def __call__(self, item: CalibrationItem) -> Rendered | None:
        """The stored frames, masks and render.json of the item's drawing, or ``None``."""
        with self.db.read() as s:
            sha = s.scalar(
                select(Artifact.sha256).where(
                    Artifact.kind == KIND, Artifact.name == self.key(item.artifact_sha256)
                )
            )
        if sha is None:
            return None
        doc: dict[str, Any] = json.loads(self.blobs.get(sha))
        frames = tuple(
            judges.FrameImage(f["time_s"], self.blobs.get(f["sha256"]), f["sha256"])
            for f in doc.get("frames", [])
        )
        masks = tuple(
            judges.MaskImage(
                m["time_s"],
                m["part"],
                judges.mask_kind(m["kind"]),
                self.blobs.get(m["sha256"]),
                m["sha256"],
            )
            for m in doc.get("masks", [])
        )
        with self._lock:
            self.hits += 1
            self._known.add(item.artifact_sha256)
        return frames, masks, doc

    def keep(self, item: CalibrationItem, rendered: Rendered) -> None:
        """Store a successful render once (failures are not kept: they are machinery)."""
        if isinstance(rendered, str):
            return
        with self._lock:
            if item.artifact_sha256 in self._known:
                return
            self._known.add(item.artifact_sha256)
        frames, masks, doc = rendered
        for image in (*frames, *masks):
            self.blobs.put(image.png)
        new = NewArtifact(
            KIND, dumps(dict(doc)), "render", self.version, self.key(item.artifact_sha256)
        )
        with self.db.write() as s:
            record_artifact(s, self.blobs, None, new)
        with self._lock:
            self.kept += 1


class KeepingVerdicts(PipelineVerdicts):
    """``PipelineVerdicts`` that reads stored renders first and keeps every new one."""

    def __init__(self, task: TaskSpec, profile_id: str, artifact: Any, renders: StoredRenders,
                 *, pool: Any = None) -> None:  # fmt: skip
        super().__init__(task, profile_id, artifact, pool=pool, stored=renders)
        self.renders = renders

    def render(self, item: CalibrationItem) -> Rendered:
        """Render (or read) the item's drawing, keeping a new render in the store."""
        rendered = super().render(item)
        self.renders.keep(item, rendered)
        return rendered
