"""What a test counts to prove a refused request stored nothing: runs, artifact rows, blob files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, select

from service.context import ServiceContext
from service.storage import Artifact, Run

TASK = "pelican-bicycle-structured@1"
GOOD = (Path(__file__).resolve().parents[3] / "samples/outputs/structured-good.svg").read_text()


@dataclass(frozen=True)
class Stored:
    """How much the database and the blob folder hold."""

    runs: int
    artifacts: int
    blob_files: int
    blob_bytes: int


def stored(ctx: ServiceContext) -> Stored:
    """Count the runs and artifact rows in the database and the files in the blob folder."""
    with ctx.db.read() as s:
        runs = int(s.scalar(select(func.count(Run.id))) or 0)
        artifacts = int(s.scalar(select(func.count(Artifact.id))) or 0)
    files = [p for p in ctx.settings.resolved_artifact_dir().rglob("*") if p.is_file()]
    return Stored(runs, artifacts, len(files), sum(p.stat().st_size for p in files))


def body(output: str = GOOD, **params: object) -> dict[str, object]:
    """A run request of the structured task."""
    return {"task": TASK, "model": {"label": "m1", "params": params or None}, "output": output}
