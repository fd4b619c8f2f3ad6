"""``regua judges propose``: candidate judges for a criterion, calibrated, the trusted seated.

1. :func:`judges.candidates.candidates` makes N profiles of a vision judge that differ only in
   their prompt's wording (strict, balanced, lenient, rubric); they are written as one judge file
   into the judges folder (``regua judges add``: frozen, locked).
2. Each is calibrated on the label folder's items of that criterion, through the real pipeline
   (:func:`service.calibration.calibrate.calibrate`), and its gate decision is stored.
3. The candidates the gate trusts on that criterion join the base panel's judges of that
   criterion in a new panel version (another file in the folder); the base panel is unchanged.
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

import judges
from judges.calibration import CalibrationRun, CalibrationSet, GateConfig, GateDecision
from judges.candidates import Candidate, candidates, judge_file_text
from judges.panel import ALL_CRITERIA, JudgePanel
from regua.errors import InputError
from regua.settings import Settings
from service.calibration.calibrate import CalibrationRequest, calibrate, store_run
from service.calibration.sets import LoadedSet, load_set
from service.pipeline.render_client import RenderClient
from service.storage import Database
from service.storage.blobs import BlobStore
from tasks import TaskRegistry, TaskSpec, bundled_registry


@dataclass(frozen=True)
class ProposeJudges:
    """What to propose and how to calibrate it."""

    task_ref: str
    criterion: str
    n: int
    labels: str
    """A label folder (or any calibration set name) holding items of the criterion."""
    base: str = "vision-llm-openai@1"
    prefix: str | None = None
    panel: str | None = None
    """The panel the new version extends (default: the service's, else the task's)."""
    split: str = "all"
    repeats: int = 2
    seed: int = 0
    n_boot: int = 1000
    gate: GateConfig | None = None


@dataclass
class Calibrated:
    """One candidate with its calibration and its gate decision on the criterion."""

    candidate: Candidate
    run: CalibrationRun
    decision: GateDecision | None
    run_stored: str | None = None

    @property
    def trusted(self) -> bool:
        """Whether the gate gave it a vote on the criterion."""
        return self.decision is not None and self.decision.status == "trusted"


@dataclass
class Proposed:
    """Everything ``propose`` did: the candidates, the files written, the new panel (if any)."""

    calibrated: list[Calibrated]
    base_panel: JudgePanel
    files: list[Path] = field(default_factory=list)
    panel: JudgePanel | None = None


def only_criterion(loaded: LoadedSet, criterion: str) -> LoadedSet:
    """The set cut to one criterion's items (labels and split with them)."""
    cal, artifact = loaded
    items = tuple(i for i in cal.items if i.criterion == criterion)
    if not items:
        raise InputError(f"the label set {cal.set_id} has no item of criterion {criterion}")
    ids = {i.item_id for i in items}
    split = cal.split
    if split is not None:
        split = dataclasses.replace(
            split,
            tuning=tuple(i for i in split.tuning if i in ids),
            held_out=tuple(i for i in split.held_out if i in ids),
        )
    cut = CalibrationSet(
        set_id=cal.set_id,
        task_ref=cal.task_ref,
        items=items,
        labels=tuple(lab for lab in cal.labels if lab.item_id in ids),
        split=split,
        description=cal.description,
        label_provenance=cal.label_provenance,
    )
    return cut, artifact


def _add_file(folder: Path, name: str, text: str) -> Path:
    """``regua judges add`` of a generated file (written to a temporary folder first)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_text(text, encoding="utf-8")
        judges.add_judge_file(path, folder)
    return folder / name


def next_panel_id(name: str) -> str:
    """``NAME@k`` with ``k`` one past the highest numeric version registered under ``name``."""
    versions = [
        int(v)
        for p in judges.list_panels()
        for n, _, v in [p.id.partition("@")]
        if n == name and v.isdigit()
    ]
    return f"{name}@{max(versions, default=0) + 1}"


def panel_text(base: JudgePanel, criterion: str, trusted: Sequence[str], new_id: str) -> str:
    """The judge file of the new panel version: the base panel plus the trusted on ``criterion``."""
    assignments = {k: list(v) for k, v in base.assignments.items()}
    seated = list(base.profiles_for(criterion))
    assignments[criterion] = seated + [t for t in trusted if t not in seated]
    if ALL_CRITERIA in assignments:  # keep "*" first, as people write it
        assignments = {ALL_CRITERIA: assignments.pop(ALL_CRITERIA), **assignments}
    doc: dict[str, object] = {
        "id": new_id,
        "family": base.family,
        "assignments": assignments,
        "description": f"{base.id} plus the candidate judges the gate trusts on {criterion}",
    }
    if base.exclude_own_provider:
        doc["exclude_own_provider"] = True
    return yaml.safe_dump({"panels": [doc]}, sort_keys=False, width=100)


def _base_panel(request: ProposeJudges, settings: Settings, task: TaskSpec) -> JudgePanel:
    if request.panel is not None:
        return judges.require_panel(request.panel)
    if settings.panel is not None:
        panel = judges.require_panel(settings.panel)
        if panel.fits(task.family):
            return panel
    return judges.panel_for_task(task, settings)


def propose_judges(
    request: ProposeJudges,
    settings: Settings,
    renderer: RenderClient,
    folder: Path,
    *,
    db: Database | None = None,
    blobs: BlobStore | None = None,
    registry: TaskRegistry | None = None,
) -> Proposed:
    """Write, calibrate and seat candidate judges for one criterion (see the module's steps).

    Checked before anything is written: the task (in ``registry``, default the bundled ones), the
    criterion, ``n``, the base profile (a vision judge), the base panel and the label set (items
    of the criterion).
    """
    tasks = registry or bundled_registry()
    task = tasks.get(request.task_ref)
    base_panel = _base_panel(request, settings, task)
    prefix = request.prefix or f"{task.id}-v{task.version}-{request.criterion.lower()}"
    found = candidates(
        judges.get_profile(request.base),
        task,
        request.criterion,
        request.n,
        prefix=prefix,
        taken=judges.list_profiles(),
    )
    labels = only_criterion(load_set(request.labels, task.ref, tasks), request.criterion)
    text = judge_file_text(found, f"# candidate judges for {task.ref} {request.criterion}\n")
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    out = Proposed([], base_panel, [_add_file(folder, f"candidates-{prefix}-{digest}.yaml", text)])
    out.calibrated = [
        _calibrated(c, request, labels, settings, renderer, db, blobs, tasks) for c in found
    ]
    trusted = [c.candidate.doc.id for c in out.calibrated if c.trusted]
    if trusted:
        new_id = next_panel_id(base_panel.id.partition("@")[0])
        body = panel_text(base_panel, request.criterion, trusted, new_id)
        name = f"panel-{new_id.replace('@', '-')}.yaml"
        out.files.append(_add_file(folder, name, body))
        out.panel = judges.require_panel(new_id)
    return out


def _calibrated(
    c: Candidate,
    request: ProposeJudges,
    labels: LoadedSet,
    settings: Settings,
    renderer: RenderClient,
    db: Database | None,
    blobs: BlobStore | None,
    tasks: TaskRegistry,
) -> Calibrated:
    """One candidate calibrated on the criterion's items (stored when ``db`` is given)."""
    run = calibrate(
        CalibrationRequest(
            c.doc.id,
            request.labels,
            request.split,
            request.repeats,
            request.seed,
            request.n_boot,
            request.gate,
            request.task_ref,
            uploaded=labels,
        ),
        settings,
        renderer,
        db=db,
        blobs=blobs,
        registry=tasks,
    )
    decision = next((d for d in run.decisions if d.criterion == request.criterion), None)
    stored = store_run(run, db) if db is not None else None
    return Calibrated(c, run, decision, stored)
