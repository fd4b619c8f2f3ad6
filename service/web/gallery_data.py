"""The data behind the gallery: one task's drawings, a column per model, a row per item or repeat.

Who sees what follows the run rules of :mod:`service.access.pools`: admins every run of the
task, submitters their own runs of visible tasks, reviewers every run of a visible task under
blinded column labels (``model 1``, ``model 2``… in an order keyed by the installation secret,
so neither the label nor the position says which model it is) and without run ids or links (a
reviewer never opens a run page). A reserved task that is not retired shows nothing to anyone
but admins.

A tile shows the run's frames as the sandbox stored them: one frame as that PNG, several as an
animated PNG built from them (:mod:`service.web.motion`), never the SVG itself.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from service.access.pools import hidden_refs, runs_readable_by, sees_hidden
from service.access.tokens import Principal
from service.review.views import frames_of, task_spec
from service.storage import CriterionOutcomeRow, ExperimentCaseRow, Run

OUTCOMES = ("pass", "fail", "pending", "incomplete")
MAX_RUNS = 600
"""The most runs one gallery shows (newest first are cut)."""


@dataclass(frozen=True)
class Tile:
    """One run's drawing with its outcome badge and failing criteria."""

    outcome: str
    failing: list[str]
    image: str | None
    """The image's address (a frame, or the animated PNG of the frames); None without frames."""
    animated: bool
    frames: list[str]
    """sha256 of the frames in time order (what the image is made of)."""
    run_id: str | None = None
    """Shown and linked for submitters and admins; None for reviewers."""
    href: str | None = None


@dataclass(frozen=True)
class GalleryRow:
    """One repeat: the n-th run of every model (None where a model has fewer)."""

    label: str
    tiles: list[Tile | None]


@dataclass(frozen=True)
class Gallery:
    """A task's gallery as one caller may see it (rows: experiment items and repeats first)."""

    task: str
    columns: list[str]
    rows: list[GalleryRow]
    criteria: list[str]
    blinded: bool
    outcome: str | None = None
    criterion: str | None = None
    counts: dict[str, int] = field(default_factory=dict)


def motion_url(shas: Sequence[str]) -> str:
    """The address of the animated PNG of these frames (in this order)."""
    return "/ui/motion?" + urlencode({"frames": ".".join(shas)})


def _visible_runs(session: Session, principal: Principal, task: str) -> Select[Run]:
    """Runs of ``task`` this caller may see in a gallery (see the module's rules)."""
    query = select(Run).where(Run.task_ref == task, Run.outcome.is_not(None))
    if principal.role == "reviewer":
        return query.where(Run.task_ref.not_in(sorted(hidden_refs(session))))
    principal.require("submitter")
    return query.where(runs_readable_by(principal, session))


def gallery_tasks(session: Session, principal: Principal) -> list[tuple[str, int]]:
    """Task versions with runs this caller may see in a gallery, and how many."""
    query = select(Run.task_ref, func.count(Run.id)).where(Run.outcome.is_not(None))
    if principal.role == "reviewer":
        query = query.where(Run.task_ref.not_in(sorted(hidden_refs(session))))
    else:
        principal.require("submitter")
        query = query.where(runs_readable_by(principal, session))
    rows = session.execute(query.group_by(Run.task_ref).order_by(Run.task_ref)).all()
    return [(str(ref), int(n)) for ref, n in rows]


def column_order(labels: Sequence[str], key: bytes, blinded: bool) -> list[tuple[str, str]]:
    """(model label, shown label) of each column: by name, or blinded in a keyed order."""
    if not blinded:
        return [(m, m) for m in sorted(labels)]
    keyed = sorted(labels, key=lambda m: hmac.new(key, m.encode(), hashlib.sha256).hexdigest())
    return [(m, f"model {i + 1}") for i, m in enumerate(keyed)]


def _failing(session: Session, runs: Sequence[Run]) -> dict[int, list[str]]:
    """Failed criteria of each current evaluation (by evaluation id)."""
    ids = [r.current_evaluation_id for r in runs if r.current_evaluation_id is not None]
    out: dict[int, list[str]] = defaultdict(list)
    for ev_id, crit in session.execute(
        select(CriterionOutcomeRow.evaluation_id, CriterionOutcomeRow.criterion)
        .where(CriterionOutcomeRow.evaluation_id.in_(ids), CriterionOutcomeRow.status == "fail")
        .order_by(CriterionOutcomeRow.id)
    ):
        out[ev_id].append(crit)
    return out


RowKey = tuple[int, str, int, int]
"""(0 for an experiment case, 1 otherwise; the case's item; its repeat, or the run's place among
its model's other runs; a tie-breaker when one model has two runs for one cell)."""


def row_keys(session: Session, runs: Sequence[Run]) -> list[RowKey]:
    """Each run's row: its experiment case's item and repeat, else its model's n-th run."""
    cases = {
        run_id: (item, repeat)
        for run_id, item, repeat in session.execute(
            select(
                ExperimentCaseRow.run_id, ExperimentCaseRow.item, ExperimentCaseRow.repeat
            ).where(ExperimentCaseRow.run_id.in_([r.id for r in runs]))
        )
    }
    nth: Counter[str] = Counter()
    taken: set[tuple[str, RowKey]] = set()
    out: list[RowKey] = []
    for run in runs:
        if run.id in cases:
            item, repeat = cases[run.id]
            key: RowKey = (0, item, repeat, 0)
        else:
            key = (1, "", nth[run.model_label], 0)
            nth[run.model_label] += 1
        while (run.model_label, key) in taken:  # two arms of one model: one more row
            key = (key[0], key[1], key[2], key[3] + 1)
        taken.add((run.model_label, key))
        out.append(key)
    return out


def _row_label(key: RowKey) -> str:
    group, item, repeat, extra = key
    label = f"repeat {repeat + 1}" + (f" ({extra + 1})" if extra else "")
    return f"{item} · {label}" if group == 0 else label


def _tile(session: Session, run: Run, failing: list[str], blinded: bool) -> Tile:
    """One run's tile (its frames read in time order)."""
    shas = [f.sha256 for f in frames_of(session, run.id)]
    image = None
    if len(shas) == 1:
        image = f"/ui/artifacts/{shas[0]}"
    elif shas:
        image = motion_url(shas)
    return Tile(
        outcome=run.outcome or "pending",
        failing=failing,
        image=image,
        animated=len(shas) > 1,
        frames=shas,
        run_id=None if blinded else run.id,
        href=None if blinded else f"/runs/{run.id}",
    )


def build_gallery(
    session: Session,
    principal: Principal,
    task: str,
    key: bytes,
    outcome: str | None = None,
    criterion: str | None = None,
) -> Gallery:
    """The gallery of ``task`` for ``principal``.

    ``outcome`` keeps runs with that outcome, ``criterion`` runs whose current evaluation failed
    that criterion (the other cells stay, empty).
    """
    blinded = principal.role == "reviewer" and not sees_hidden(principal.role)
    runs = list(
        session.scalars(
            _visible_runs(session, principal, task)
            .order_by(Run.submitted_at, Run.id)
            .limit(MAX_RUNS)
        )
    )
    failing = _failing(session, runs)
    counts = {k: sum(1 for r in runs if r.outcome == k) for k in OUTCOMES}
    cells: dict[RowKey, dict[str, Tile | None]] = defaultdict(dict)
    for run, row_key in zip(runs, row_keys(session, runs), strict=True):
        fails = failing.get(run.current_evaluation_id or -1, [])
        keep = (outcome in (None, run.outcome)) and (criterion in (None, *fails))
        cells[row_key][run.model_label] = _tile(session, run, fails, blinded) if keep else None
    columns = column_order(sorted({r.model_label for r in runs}), key, blinded)
    rows = [
        GalleryRow(label=_row_label(k), tiles=[cells[k].get(m) for m, _ in columns])
        for k in sorted(cells)
        if any(t is not None for t in cells[k].values())
    ]
    spec = task_spec(session, task)
    return Gallery(
        task=task,
        columns=[shown for _, shown in columns],
        rows=rows,
        criteria=[c.id for c in spec.criteria] if spec else [],
        blinded=blinded,
        outcome=outcome,
        criterion=criterion,
        counts=counts,
    )
