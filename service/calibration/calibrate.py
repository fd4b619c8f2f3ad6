"""One calibration, for the CLI and the HTTP API alike: render the set, judge it, decide the gate.

:func:`calibrate` seats the judge exactly as a panel would (a vision judge takes its model from
the settings and is calibrated under that effective id and hash), renders through the caller's
render client (the service's pool over HTTP, the command's own on the CLI), reuses renders kept
in the artifact store when one is given, and returns the
:class:`judges.calibration.CalibrationRun`; :func:`store_run` keeps it with its gate decisions.
"""

from __future__ import annotations

from dataclasses import dataclass

import judges
from judges.calibration import DEFAULT_GATE, CalibrationRun, GateConfig, run_calibration
from judges.calibration.runner import SPLIT_NAMES
from regua.errors import InputError
from regua.settings import Settings
from service.calibration.sets import LoadedSet, load_set
from service.calibration.store import store_calibration_run
from service.calibration.verdicts import PipelineVerdicts, StoredRenders
from service.pipeline.render_client import RenderClient
from service.storage import Database
from service.storage.blobs import BlobStore
from tasks import TaskRegistry, bundled_registry


@dataclass(frozen=True)
class CalibrationRequest:
    """What to calibrate, on what, and how."""

    judge: str
    """The judge profile id as registered (``vision-llm-openai@1`` …)."""
    set_name: str = "bundled"
    """``bundled``, a ``.jsonl`` set or a folder of drawings with ``labels.csv``."""
    split: str = "held_out"
    repeats: int = 2
    seed: int = 0
    n_boot: int = 1000
    gate: GateConfig | None = None
    task: str | None = None
    """The task a label folder is labelled against (default: the structured pelican task)."""
    uploaded: LoadedSet | None = None
    """A set given in the request (HTTP upload) instead of by name."""
    replace: bool = False
    """Store the decisions even where a smaller set demotes a trusted judge."""


def calibrate(
    request: CalibrationRequest,
    settings: Settings,
    renderer: RenderClient,
    *,
    db: Database | None = None,
    blobs: BlobStore | None = None,
    registry: TaskRegistry | None = None,
) -> CalibrationRun:
    """Calibrate a judge on a labelled set through the real pipeline.

    Args:
        request: the judge, the set, the split and the gate.
        settings: the settings the judge is seated with (model, endpoint, key).
        renderer: the render client to render the set's drawings with.
        db: where kept renders are read from and stored (with ``blobs``).
        blobs: the artifact store of ``db``.
        registry: the task versions the set may be labelled against (default: the bundled
            ones); its decisions are stored for that task's family.

    Returns:
        The run, with the judge's effective id and hash and one gate decision per criterion.
    """
    split = SPLIT_NAMES.get(request.split)
    if split is None:
        raise InputError(f"split must be one of {sorted(SPLIT_NAMES)}, got {request.split!r}")
    tasks = registry or bundled_registry()
    cal_set, artifact = request.uploaded or load_set(request.set_name, request.task, tasks)
    task = tasks.get(cal_set.task_ref)
    judge = judges.create_judge(judges.get_profile(request.judge), settings)
    renders = StoredRenders(db, blobs, task) if db is not None and blobs is not None else None
    verdicts = PipelineVerdicts(
        task, judge, artifact, renderer, renders=renders, workers=settings.render_workers
    )
    return run_calibration(
        judge.profile.id.partition("@")[0],
        judge.profile,
        cal_set,
        verdicts,
        split=split,
        repeats=request.repeats,
        seed=request.seed,
        n_boot=request.n_boot,
        gate=request.gate or DEFAULT_GATE,
        task_family=task.family,
    )


def store_run(
    run: CalibrationRun, db: Database, *, requested_by: int | None = None, replace: bool = False
) -> str:
    """Store a run and its gate decisions; returns the run id.

    A run that would demote a trusted judge on a smaller set is refused unless ``replace``
    (:class:`~regua.errors.GateDemotionError`; nothing is stored).
    """
    with db.write() as s:
        store_calibration_run(s, run, requested_by=requested_by, replace=replace)
    return run.run_id
