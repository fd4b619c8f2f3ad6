"""Calibrating a whole panel (its adjudicator included) on a label set, through the real pipeline.

``regua calibrate --panel PANEL --set DIR`` renders every drawing of the split once in the
sandbox (reusing kept calibration renders), runs the static checks, and judges it with
:func:`judges.evaluate` exactly as the service would — the panel's judges, the stored gate's
eligibility, its adjudicator on disputed criteria — then measures the panel's verdicts, each judge
alone and the adjudications against the labels (:mod:`judges.calibration.panel_agreement`).
Nothing is stored: each judge's own gate decision comes from ``regua calibrate --judge``.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import checks
import judges
from judges.calibration import CalibrationItem, CalibrationSet
from judges.calibration.panel_agreement import PanelAgreement, PanelItem, panel_agreement
from judges.calibration.runner import SPLIT_NAMES
from regua.errors import InputError
from regua.settings import Settings
from service.calibration.sets import ArtifactBytes, load_set
from service.calibration.verdicts import PipelineVerdicts, StoredRenders
from service.evaluation.evaluator import check_panel
from service.evaluation.gate import gate_table
from service.pipeline.render_client import RenderClient
from service.storage import Database
from service.storage.blobs import BlobStore
from tasks import TaskRegistry, TaskSpec, bundled_registry


@dataclass(frozen=True)
class PanelCalibrationRequest:
    """Which panel, on which labelled set and split."""

    panel: str
    set_name: str
    task: str | None = None
    split: str = "all"
    seed: int = 0
    n_boot: int = 1000


def _judged(
    task: TaskSpec,
    panel: judges.JudgePanel,
    seated: dict[str, judges.Judge],
    eligibility: judges.Eligibility,
    verdicts: PipelineVerdicts,
    artifact: ArtifactBytes,
    item: CalibrationItem,
) -> judges.PanelResult | None:
    """The panel's result on one drawing (None when it could not be rendered)."""
    rendered = verdicts.render(item)
    if isinstance(rendered, str):
        return None
    report = checks.check_reply(artifact(item), task)
    inp = judges.EvalInput(
        task,
        judges.CheckSummary.from_doc(report.to_dict()),
        rendered.render,
        rendered.frames,
        rendered.masks,
    )
    return judges.evaluate(inp, panel, eligibility, seated=seated)


def panel_item(
    cal_set: CalibrationSet, item: CalibrationItem, result: judges.PanelResult | None
) -> PanelItem:
    """One labelled item as the panel, each judge and the adjudicator answered it."""
    reference = cal_set.reference(item.item_id).status
    if result is None:
        return PanelItem(item.item_id, item.criterion, item.necessary, reference, None)
    outcome = result.criterion(item.criterion)
    adj = result.adjudication(item.criterion)
    verdict = adj.verdict if adj is not None else None
    return PanelItem(
        item.item_id,
        item.criterion,
        item.necessary,
        reference,
        outcome.status,
        judges={
            v.judge_profile_id: v.status.value
            for v in result.verdicts
            if v.criterion == item.criterion
        },
        counted=tuple(v.status.value for v in outcome.votes if v.eligible),
        adjudication=None if verdict is None else verdict.status.value,
        adjudication_decided=adj is not None and adj.decided,
    )


def calibrate_panel(
    request: PanelCalibrationRequest,
    settings: Settings,
    renderer: RenderClient,
    *,
    db: Database | None = None,
    blobs: BlobStore | None = None,
    registry: TaskRegistry | None = None,
) -> PanelAgreement:
    """Judge the set's split with the panel and measure it (see the module text).

    The gate's eligibility is read from ``db`` (without one no judge is trusted: every
    criterion goes to people, as a service without calibrations would do); ``registry`` holds the
    task versions a label folder may name (default: the bundled ones).
    """
    split = SPLIT_NAMES.get(request.split)
    if split is None:
        raise InputError(f"split must be one of {sorted(SPLIT_NAMES)}, got {request.split!r}")
    tasks = registry or bundled_registry()
    cal_set, artifact = load_set(request.set_name, request.task, tasks)
    task = tasks.get(cal_set.task_ref)
    panel = check_panel(request.panel, task)
    seated = judges.seat_panel(panel, settings)
    eligibility: judges.Eligibility = None
    if db is not None:
        with db.read() as s:
            eligibility = gate_table(s)
    renders = StoredRenders(db, blobs, task) if db is not None and blobs is not None else None
    any_judge = next(iter(seated.values()))
    verdicts = PipelineVerdicts(
        task, any_judge, artifact, renderer, renders=renders, workers=settings.render_workers
    )
    items: Sequence[CalibrationItem] = cal_set.part(split)
    drawings = {i.artifact_sha256: i for i in items}
    with ThreadPoolExecutor(max_workers=max(1, settings.render_workers)) as ex:
        list(ex.map(verdicts.render, drawings.values()))
    results = {
        sha: _judged(task, panel, seated, eligibility, verdicts, artifact, item)
        for sha, item in drawings.items()
    }
    return panel_agreement(
        panel.id,
        panel.content_hash(),
        cal_set.set_id,
        [panel_item(cal_set, i, results[i.artifact_sha256]) for i in items],
        seed=request.seed,
        n_boot=request.n_boot,
    )
