"""Rendering a stored run again (re-scoring under a rubric whose render profile changed)."""

from __future__ import annotations

from service.evaluation.rescore import Rerender
from service.pipeline.runner import Machinery, StageContext, run_stage
from service.pipeline.stages import RENDER_STAGE
from service.storage import Database
from service.storage.blobs import BlobStore
from tasks import TaskSpec


def rerenderer(db: Database, blobs: BlobStore, machinery: Machinery) -> Rerender:
    """A ``rerender(run_id, task)`` that runs the pipeline's render stage for ``task``."""

    def rerender(run_id: str, task: TaskSpec) -> bool:
        return run_stage(StageContext(db, blobs, machinery, run_id, task), RENDER_STAGE)

    return rerender
